"""Arguments as PyTorch takes them: tensors from numbers and lists, dims, shapes, numbers and integers,
with PyTorch's words for a wrong one. Every family of the functional API normalises through these."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from gradcli.engine import ops as O
from gradcli.errors import ArgumentError, ShapeError
from gradcli.engine.tensor import Tensor


def as_tensor(x: Any, dtype: Any = None) -> Tensor:
    """A Tensor for a Tensor, number or nested list (no copy for a Tensor)."""
    if isinstance(x, Tensor):
        return x
    from gradcli.engine.creation import tensor
    return tensor(x, dtype=dtype)


def as_operand(x: Any, op: O.Op) -> Any:
    """Numbers stay numbers (they are constants in the graph); anything else must be a tensor."""
    if isinstance(x, Tensor) or isinstance(x, (int, float, bool, np.number)):
        return x
    if isinstance(x, (list, tuple, np.ndarray)):
        return as_tensor(x)
    raise ArgumentError(f"{op.name}: unsupported operand of type {type(x).__name__}",
                        hint="operands must be tensors or numbers")


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
"""PyTorch's names for dtypes in its messages ("Got: Long")."""


def _dim(d: Any, ndim: int, what: str = "dim") -> int:
    if isinstance(d, Tensor):
        d = d.item()
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
        raise ArgumentError(f"{what} must be an integer, got {d!r}",
                            hint="dimensions are counted from 0, or from -1 for the last one")
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    if not lo <= d <= hi:
        raise ShapeError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})",
                         hint=f"this tensor has {ndim} dimension(s)")
    return int(d) % builtins.max(ndim, 1)


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Reduction dims, sorted and non-negative; None (and, as in PyTorch, `()`) means all of them."""
    if dim is None or isinstance(dim, (list, tuple)) and not dim:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(sorted({_dim(d, ndim) for d in dim}))
    return (_dim(dim, ndim),)


def _shape_args(shape: Sequence[Any]) -> tuple[int, ...]:
    """Accept `f(2, 3)` and `f((2, 3))` as PyTorch does."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise ArgumentError(f"sizes must be integers, got {s!r}", hint="write the shape as integers, e.g. (2, 3)")
        out.append(int(s))
    return tuple(out)


def number_arg(value: Any, fn: str, name: str, integer: bool = False) -> Any:
    """A number argument (`min=`, `fill_value`, `step`, a seed) as PyTorch takes it: a Python number or a
    one-element tensor. Anything else is the user's mistake, named, rather than a failed conversion."""
    if isinstance(value, Tensor) and value._data.size == 1:
        value = value.item()
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, kinds):
        return value
    what = "an integer" if integer else "a number"
    raise ArgumentError(f"{fn}(): argument '{name}' must be {what}, not {_type_name(value)}",
                        hint=f"pass {what} (or a one-element tensor) as '{name}'")


def ints_arg(value: Any, fn: str, name: str, single: bool = False) -> tuple[int, ...]:
    """A tuple-of-ints argument (`pad`, `normalized_shape`) as PyTorch takes it: a list or tuple of integers
    (or of one-element integer tensors), and with `single` also one integer standing for a 1-tuple."""
    if single and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if not isinstance(value, (list, tuple)):
        raise ArgumentError(f"{fn}(): argument '{name}' must be tuple of ints, not {_type_name(value)}",
                            hint=f"write '{name}' as a tuple of integers, e.g. (1, 1)")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Tensor) and v.dtype.kind in "iu" and v.numel() == 1:
            v = v.item()
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ArgumentError(f"{fn}(): argument '{name}' must be tuple of ints, but found element of type "
                                f"{_type_name(v)} at pos {i}", hint=f"every entry of '{name}' is a whole number")
        out.append(int(v))
    return tuple(out)


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def size(x: Tensor, dim: Any) -> int:
    """`x.size(dim)`: PyTorch's message for a 0-d tensor, which has no dimension to ask about."""
    if x.ndim == 0:
        raise ShapeError(f"Dimension specified as {dim!r} but tensor has no dimensions",
                         hint="a 0-d tensor has size(); ask x.size() or x.numel()")
    return x._data.shape[_dim(dim, x.ndim)]


def _tensor_arg(x: Any, fn: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, list, tuple, np.ndarray, np.number)):
        return as_tensor(x)
    raise ArgumentError(f"{fn}(): argument must be a tensor, not {type(x).__name__}",
                        hint="pass a tensor, a number or a (nested) list of numbers")


def _int(v: Any, what: str) -> int:
    """An integer argument (a Python or NumPy integer, or a 1-element integer tensor)."""
    if isinstance(v, Tensor) and v.dtype.kind in "iu" and v.numel() == 1:
        v = v.item()
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise ArgumentError(f"{what} must be an integer, got {v!r}", hint=f"write {what} as a whole number")
    return int(v)


def _number(v: Any, what: str) -> float:
    """A real-number argument (a Python or NumPy number, or a 1-element tensor)."""
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if not isinstance(v, (int, float, np.number)) or isinstance(v, bool):
        raise ArgumentError(f"{what} must be a number, got {v!r}", hint=f"write {what} as a number, e.g. 0.5")
    return float(v)


def _with_dims(x: Any, fn: str, name: str = "input") -> Tensor:
    """A tensor argument that must have a dimension to work along (a number becomes a 0-d tensor, which has none)."""
    x = _tensor_arg(x, fn)
    if x.ndim == 0:
        raise ShapeError(f"{fn}: the {name} tensor must have at least 1 dimension, but it is 0-d",
                         hint="pass a tensor with at least one dimension, e.g. tensor([1.0, 2.0])")
    return x
