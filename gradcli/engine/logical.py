"""Tests and logic on tensors: `torch.isnan`, `torch.gt`, `torch.logical_and`, `mask & other`, `~mask`.

Their results are bool (or, for the bitwise operators on integers, integer) tensors with no
gradient, as in PyTorch: a mask is data, never a node of the graph. The bitwise operators `&`,
`|`, `^`, `~` are PyTorch's on bool and integer tensors; on a float tensor PyTorch refuses them,
and so does gradcli, naming what was probably meant (`x ^ 2` is a power written wrong).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor, _wrap, broadcast_shape
from gradcli.errors import ArgumentError, NotAllowedError

_NUMBERS = (bool, int, float, np.bool_, np.number)


def _array(x: Any, fn: str) -> np.ndarray | Any:
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, _NUMBERS):
        return x
    raise ArgumentError(f"{fn}(): expected a tensor or a number, not {type(x).__name__}",
                        hint=f"e.g. torch.{fn}(x > 0, x < 1)" if fn.startswith("logical") else f"e.g. torch.{fn}(x)")


def _binary(fn: str, ufunc: Callable[..., Any], a: Any, b: Any) -> Tensor:
    left, right = _array(a, fn), _array(b, fn)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape != b.shape:
        broadcast_shape(fn, a.shape, b.shape)
    return _wrap(np.asarray(ufunc(left, right)))


def isnan(x: Any) -> Tensor:
    return _wrap(np.isnan(_array(x, "isnan")))


def isinf(x: Any) -> Tensor:
    return _wrap(np.isinf(_array(x, "isinf")))


def isfinite(x: Any) -> Tensor:
    return _wrap(np.isfinite(_array(x, "isfinite")))


def logical_not(x: Any) -> Tensor:
    return _wrap(np.logical_not(_array(x, "logical_not")))


def logical_and(a: Any, b: Any) -> Tensor:
    return _binary("logical_and", np.logical_and, a, b)


def logical_or(a: Any, b: Any) -> Tensor:
    return _binary("logical_or", np.logical_or, a, b)


def logical_xor(a: Any, b: Any) -> Tensor:
    return _binary("logical_xor", np.logical_xor, a, b)


def _comparison(fn: str, ufunc: Callable[..., Any]) -> Callable[[Any, Any], Tensor]:
    def compare(a: Any, b: Any) -> Tensor:
        return a._compare(b, ufunc) if isinstance(a, Tensor) else _binary(fn, ufunc, a, b)  # ties noted there
    compare.__name__ = fn
    return compare


eq, ne = _comparison("eq", np.equal), _comparison("ne", np.not_equal)
lt, le = _comparison("lt", np.less), _comparison("le", np.less_equal)
gt, ge = _comparison("gt", np.greater), _comparison("ge", np.greater_equal)

_BITWISE = {"&": ("bitwise_and", np.bitwise_and, "to combine conditions on numbers write 'and'"),
            "|": ("bitwise_or", np.bitwise_or, "to combine conditions on numbers write 'or'"),
            "^": ("bitwise_xor", np.bitwise_xor, "for a power write ** (x ** 2)")}


def _integral(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x._data.dtype.kind in "biu"
    return isinstance(x, (bool, int, np.bool_, np.integer))


def bitwise(symbol: str, a: Any, b: Any) -> Tensor:
    """`a & b`, `a | b`, `a ^ b` with a tensor operand: PyTorch's on bool and integer tensors (a mask `&` a
    mask is their elementwise and); on a float tensor refused, as PyTorch refuses it."""
    name, ufunc, hint = _BITWISE[symbol]
    bad = next((x for x in (a, b) if not _integral(x)), None)
    if bad is not None:
        raise NotAllowedError(f"operator '{symbol}' is not supported on {_kind(bad)} ({name} is PyTorch's on bool "
                              "and integer tensors only)",
                              hint=f"{hint}; on masks like (x > 0) {symbol} (x < 1) it is elementwise")
    return _binary(name, ufunc, a, b)


def invert(x: Any) -> Tensor:
    """`~mask`: the elementwise not of a bool tensor (an integer tensor's bitwise complement)."""
    if not (isinstance(x, Tensor) and _integral(x)):
        raise NotAllowedError(f"operator '~' is not supported on {_kind(x)}",
                              hint="~ negates a mask such as ~(x > 0); to negate a condition on numbers write 'not'")
    return _wrap(np.invert(x._data))


def _kind(x: Any) -> str:
    what = f"{x.dtype} tensor" if isinstance(x, Tensor) else type(x).__name__
    return ("an " if what[0] in "aeiou" else "a ") + what


def bitwise_and(a: Any, b: Any) -> Tensor:
    return bitwise("&", a, b)


def bitwise_or(a: Any, b: Any) -> Tensor:
    return bitwise("|", a, b)


def bitwise_xor(a: Any, b: Any) -> Tensor:
    return bitwise("^", a, b)


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol * |b|, elementwise, as PyTorch (and NumPy) define it: not symmetric in a and b."""
    for name, value in (("input", a), ("other", b)):
        if not isinstance(value, Tensor):
            raise ArgumentError(f"isclose(): argument '{name}' must be Tensor, not {type(value).__name__}",
                                hint="torch.isclose(x, torch.tensor(1.0)) compares with a number")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise ArgumentError(f"isclose(): argument '{name}' must be float, not {type(value).__name__}",
                                hint="e.g. torch.isclose(x, y, rtol=1e-5, atol=1e-8)")
    return _binary("isclose", lambda x, y: np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=bool(equal_nan)), a, b)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isnan": isnan, "isinf": isinf, "isfinite": isfinite, "logical_not": logical_not, "logical_and": logical_and,
    "logical_or": logical_or, "logical_xor": logical_xor, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "greater": gt, "greater_equal": ge, "less": lt, "less_equal": le, "not_equal": ne,
    "bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor, "bitwise_not": invert,
    "isclose": isclose,
}
"""torch.NAME and, with the tensor first, tensor.NAME()."""
