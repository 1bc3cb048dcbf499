"""`repr(tensor)` the way PyTorch prints it, so pasted tutorial output looks familiar."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gradcli.engine.creation import get_default_dtype
from gradcli.engine.tensor import WeakIds

if TYPE_CHECKING:
    from gradcli.engine.tensor import Tensor


class Size(tuple):
    """`torch.Size`: a tuple of ints that prints as PyTorch prints a shape."""

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
"""A lazy module's parameters before its first call, which PyTorch prints as `<UninitializedParameter>`."""


def nonfinite_text(v: float) -> str | None:
    """`"nan"`, `"inf"` or `"-inf"` for a non-finite number, None for a finite one."""
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return None


def format_numbers(arr: np.ndarray) -> tuple[str, str] | None:
    """PyTorch's float style: `3.` when all are integral, `4.5000` fixed, or `1.0000e+08` scientific."""
    if arr.dtype.kind != "f" or arr.size == 0:
        return None
    finite = np.abs(arr[np.isfinite(arr)]).astype(np.float64)
    nonzero = finite[finite != 0]
    integral = finite.size == 0 or bool(np.all(np.floor(finite) == finite))
    big, small = (nonzero.max(), nonzero.min()) if nonzero.size else (0.0, 0.0)
    sci = nonzero.size > 0 and (big / small > 1000.0 or big > 1e8 or small < 1e-4)
    if PrintOptions.sci_mode is not None:
        sci = PrintOptions.sci_mode
    p = PrintOptions.precision
    if integral and not (nonzero.size and (big / small > 1000.0 or big > 1e8)) and not PrintOptions.sci_mode:
        return ("int", "{:.0f}.")
    return ("sci", "{:.%de}" % p) if sci else ("fixed", "{:.%df}" % p)


def _summarized(arr: np.ndarray, edge: int) -> np.ndarray:
    """The elements a summarized print shows (edgeitems at each end of every long dimension): PyTorch
    picks the number format from these alone."""
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            arr = np.concatenate([np.take(arr, range(edge), axis), np.take(arr, range(n - edge, n), axis)], axis)
    return arr


def tensor_repr(t: "Tensor") -> str:
    if UNINITIALIZED and UNINITIALIZED.has(t):
        return "<UninitializedParameter>"
    arr = t._data
    o = PrintOptions
    threshold = o.threshold if o.threshold != math.inf else np.iinfo(np.int64).max
    shown = _summarized(arr, o.edgeitems) if arr.size > threshold else arr
    style = format_numbers(shown)
    layout = {"threshold": int(threshold), "edgeitems": o.edgeitems, "max_line_width": o.linewidth}
    if style is None and arr.dtype == np.bool_:  # PyTorch pads True only where a False is as wide; NumPy always
        width = 5 if not shown.all() else 4
        body = np.array2string(arr, separator=", ", prefix="tensor(", **layout,
                               formatter={"bool": lambda v: str(bool(v)).rjust(width)})
    elif style is None:
        body = np.array2string(arr, separator=", ", prefix="tensor(", **layout)
    else:
        fmt = style[1]

        def cell(v: float) -> str:
            return nonfinite_text(v) or fmt.format(v)
        # PyTorch's column width counts the nonzero finite numbers only: tensor([nan, 0.]) is unpadded
        counted = shown[np.isfinite(shown) & (shown != 0)].reshape(-1)
        width = max((len(fmt.format(v)) for v in counted), default=1)
        body = np.array2string(arr, separator=", ", prefix="tensor(", **layout,
                               formatter={"float_kind": lambda v: cell(v).rjust(width)})
    if arr.size > threshold:  # PyTorch's elided run inside a row is " ..." joined by ", " (NumPy's is "...")
        body = body.replace(", ...,", ",  ...,")
    extras = []
    if arr.size == 0 and arr.ndim != 1:  # an empty tensor shows its shape (unless (0,)) and any other dtype
        extras.append(f"size={tuple(arr.shape)}")
    if arr.dtype.kind == "f" and arr.dtype != get_default_dtype() or (
            arr.dtype.kind in "iub" and (arr.dtype not in (np.int64, np.bool_) or arr.size == 0)):
        extras.append(f"dtype=torch.{arr.dtype}")
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
