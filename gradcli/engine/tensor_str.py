"""`repr(tensor)` the way PyTorch prints it, so pasted tutorial output looks familiar."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcli.engine.creation import get_default_dtype
from gradcli.engine.narrow import name_of, same
from gradcli.engine.tensor import WeakIds

if TYPE_CHECKING:
    from gradcli.engine.tensor import Tensor


class Size(tuple):
    """`torch.Size`: a tuple of ints that prints as PyTorch prints a shape; a slice of one is one too."""

    program_attributes = frozenset({"numel", "count", "index"})

    def __getitem__(self, key: Any) -> Any:
        part = tuple.__getitem__(self, key)
        return Size(part) if isinstance(key, slice) else part

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__


class PrintOptions:
    """`torch.set_printoptions`: what `print(tensor)` shows (PyTorch's defaults; one program's setting)."""

    precision, threshold, edgeitems, linewidth = 4, 1000, 3, 80
    sci_mode: bool | None = None

    @classmethod
    def saved(cls) -> tuple:
        return cls.precision, cls.threshold, cls.edgeitems, cls.linewidth, cls.sci_mode

    @classmethod
    def restore(cls, values: tuple) -> None:
        cls.precision, cls.threshold, cls.edgeitems, cls.linewidth, cls.sci_mode = values


_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """PyTorch's rules: a profile sets all four numbers first, then each option given overrides it;
    sci_mode is set every call (None lets the values decide)."""
    from gradcli.errors import ArgumentError
    if profile is not None:
        if profile not in _PROFILES:
            raise ArgumentError(f"set_printoptions: unknown profile '{profile}'",
                                hint="profile='default', 'short' or 'full'")
        PrintOptions.precision, PrintOptions.threshold, PrintOptions.edgeitems, PrintOptions.linewidth = \
            _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (
                    name != "threshold" and (value != int(value) or value > 10_000)):
                raise ArgumentError(f"set_printoptions: {name} must be a non-negative integer, got {value!r}",
                                    hint=f"e.g. torch.set_printoptions({name}=2)")
            setattr(PrintOptions, name, int(value) if name != "threshold" or value != math.inf else value)
    PrintOptions.sci_mode = None if sci_mode is None else bool(sci_mode)


PARAMETERS = WeakIds()
"""The tensors `nn.Parameter` made, by id: PyTorch prints a parameter as `Parameter containing:`."""

UNINITIALIZED = WeakIds()
"""A lazy module's parameters and buffers before its first call, which PyTorch prints as `<UninitializedParameter>`
and `<UninitializedBuffer>`."""


def nonfinite_text(v: float) -> str | None:
    """`"nan"`, `"inf"` or `"-inf"` for a non-finite number, None for a finite one."""
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return None


class _Formatter:
    """PyTorch's `_Formatter`: one number style and one width for all the values a print shows.

    The style and width come from the nonzero finite values only: scientific past a ratio of 1000,
    above 1e8 or below 1e-4 (or as `sci_mode` says), else integral floats as `3.` and the others
    fixed with `precision` digits; integers and bools by their text.
    """

    def __init__(self, arr: np.ndarray) -> None:
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        p = PrintOptions.precision
        if not self.floating:
            self.max_width = max((len(str(v)) for v in arr.reshape(-1).tolist()), default=1)
            return
        values = arr[np.isfinite(arr) & (arr != 0)].astype(np.float64).reshape(-1)
        if not values.size:
            return
        big, small = float(np.abs(values).max()), float(np.abs(values).min())
        self.int_mode = bool(np.all(np.ceil(values) == values))
        self.sci_mode = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4 if PrintOptions.sci_mode is None \
            else PrintOptions.sci_mode
        if self.sci_mode:
            texts = [("{:.%de}" % p).format(v) for v in values.tolist()]
        elif self.int_mode:
            texts = [f"{v:.0f}." for v in values.tolist()]
        else:
            texts = [("{:.%df}" % p).format(v) for v in values.tolist()]
        self.max_width = max(len(t) for t in texts)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = ("{:%d.%de}" % (self.max_width, PrintOptions.precision)).format(value)
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = ("{:.%df}" % PrintOptions.precision).format(value)
        return text.rjust(self.max_width)


def _summarized(arr: np.ndarray, edge: int) -> np.ndarray:
    """The elements a summarized print shows (edgeitems at each end of every long dimension): PyTorch
    picks the number format from these alone."""
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            arr = np.concatenate([np.take(arr, range(edge), axis), np.take(arr, range(n - edge, n), axis)], axis)
    return arr


def _body(arr: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    """PyTorch's `_tensor_str_with_formatter`: a row holds as many values as fit the line width at
    their common width (each with its ", "), rows of a matrix are joined by ",\n" and an indent, blank
    lines between the blocks of higher dimensions, and a summarized dimension elides its middle."""
    edge = PrintOptions.edgeitems
    if arr.ndim == 0:
        return formatter.format(arr.item())
    if arr.ndim == 1:
        values = arr.tolist()
        if summarize and not edge:
            data = ["..."]
        elif summarize and len(values) > 2 * edge:
            data = [formatter.format(v) for v in values[:edge]] + [" ..."] + \
                [formatter.format(v) for v in values[-edge:]]
        else:
            data = [formatter.format(v) for v in values]
        per_line = max(1, int(math.floor((PrintOptions.linewidth - indent) / (formatter.max_width + 2))))
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"
    n = arr.shape[0]
    rows = range(n) if not (summarize and n > 2 * edge) else [*range(edge), None, *range(n - edge, n)]
    slices = ["..." if i is None else _body(arr[i], indent + 1, summarize, formatter) for i in rows]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def tensor_repr(t: "Tensor") -> str:
    if UNINITIALIZED and UNINITIALIZED.has(t):
        return "<UninitializedParameter>" if PARAMETERS.has(t) else "<UninitializedBuffer>"
    arr = t._data
    o = PrintOptions
    threshold = o.threshold if o.threshold != math.inf else np.iinfo(np.int64).max
    summarize = arr.size > threshold
    shown = _summarized(arr, o.edgeitems) if summarize else arr
    body = "[]" if arr.size == 0 else _body(arr, len("tensor("), summarize, _Formatter(shown))
    extras = []
    if arr.size == 0 and arr.ndim != 1 or arr.size and not o.edgeitems:  # an empty tensor shows its shape
        extras.append(f"size={tuple(arr.shape)}")  # (unless (0,)), as does a print of no edge items
    if arr.dtype.kind == "f" and not same(arr.dtype, get_default_dtype()) or (
            arr.dtype.kind in "iub" and (arr.dtype not in (np.int64, np.bool_) or arr.size == 0)):
        extras.append(f"dtype=torch.{name_of(arr.dtype)}")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    from gradcli.engine.forward_ad import tangent_of
    tangent = tangent_of(t)
    if tangent is not None:  # a dual tensor: PyTorch shows a one-element tangent as a Python number
        extras.append("tangent=" + (repr(float(tangent)) if tangent.ndim == 0 else tensor_repr(_plain(tangent))))
    text = _suffixed("tensor(" + body, extras)
    return "Parameter containing:\n" + text if PARAMETERS.has(t) else text


def _plain(array: np.ndarray) -> "Tensor":
    from gradcli.engine.tensor import _wrap
    return _wrap(array)


def _suffixed(text: str, suffixes: list[str], indent: int = len("tensor(")) -> str:
    """PyTorch's suffixes (dtype, grad_fn, tangent) after the values: on the last line while it stays
    within the line width, else each on a line of its own."""
    last = len(text) - text.rfind("\n") + 1
    parts = [text]
    for suffix in suffixes:
        if last + len(suffix) + 2 > PrintOptions.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"
