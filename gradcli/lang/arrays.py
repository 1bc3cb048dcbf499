"""NumPy arrays as NumPy's own: the listed attributes and methods of an `ndarray` (`numpy_facade`'s
allowlist, through its dispatcher), and what the language's operators, indexing, `len`, `for`,
`float()` and `if` do to one, each as NumPy answers, within the element limit.

Mixing with tensors is PyTorch's: `tensor op ndarray` reads the array as a tensor of its dtype,
`ndarray op tensor` is refused as Python refuses it there.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ShapeError
from gradcli.lang.numpy_facade import allowlist, dispatch, sizes

NDARRAY_ATTRIBUTES = allowlist.NDARRAY_ATTRIBUTES
NDARRAY_METHODS = allowlist.NDARRAY_METHODS


def bound(a: np.ndarray, name: str) -> Callable[..., Any]:
    """`a.reshape`, `a.sum`...: NumPy's method bound to `a`, through the dispatcher."""
    method = getattr(a, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        if name == "repeat":  # the one method that grows its array: sized with the array, as np.repeat is
            return dispatch.call("ndarray.repeat", np.repeat, a, *args, **kwargs)
        return dispatch.call(f"ndarray.{name}", method, *args, **kwargs)
    call.__name__ = name
    return call


def attribute(a: np.ndarray, name: str) -> Any:
    if name == "dtype":
        return dispatch.DtypeText(a.dtype.name)
    return bound(a, name) if name in NDARRAY_METHODS else dispatch.outward(getattr(a, name), f"ndarray.{name}")


def arithmetic(symbol: str, fn: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
    """`left op right` where one side is an ndarray."""
    fn = _BITWISE.get(symbol, fn)  # `& | ^` are the language's set operators; on arrays NumPy's own
    if isinstance(left, Tensor):  # PyTorch reads the array as a tensor of its own dtype
        from gradcli.engine.creation import tensor
        return fn(left, tensor(dispatch.inward(right, "an operand")))
    if isinstance(right, Tensor):
        raise ArgumentError(f"unsupported operand type(s) for {symbol}: 'numpy.ndarray' and 'Tensor'",
                            hint="put the tensor first (t * a), or convert: torch.from_numpy(a) * t")
    left, right = dispatch.inward(left, f"'{symbol}'"), dispatch.inward(right, f"'{symbol}'")
    dispatch.check_size(f"'{symbol}'", sizes.generic((np.asarray(left), np.asarray(right)), {}))
    try:
        with np.errstate(all="ignore"):
            return dispatch.outward(fn(left, right), f"'{symbol}'")
    except ValueError as exc:
        raise ShapeError(str(exc), hint="operands must broadcast: equal sizes, or 1, dimension by dimension") \
            from None
    except (TypeError, ZeroDivisionError) as exc:
        raise ArgumentError(f"unsupported operand for {symbol}: {exc}") from None


_BITWISE = {"&": operator.and_, "|": operator.or_, "^": operator.xor}

IN_PLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
             "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "@": operator.imatmul,
             "&": operator.iand, "|": operator.ior, "^": operator.ixor}


def update(symbol: str, a: np.ndarray, value: Any) -> np.ndarray:
    """`a op= value`: NumPy's update of the same array, so every name for it and a tensor sharing its memory
    (`torch.from_numpy(a)`) see the new values; NumPy's refusal to cast (`int_array *= 0.5`) is the user's."""
    if isinstance(value, Tensor):
        raise ArgumentError(f"unsupported operand type(s) for {symbol}=: 'numpy.ndarray' and 'Tensor'",
                            hint="convert one side: a += t.numpy(), or t += torch.from_numpy(a)")
    value = dispatch.inward(value, f"'{symbol}='")
    dispatch.check_size(f"'{symbol}='", sizes.generic((a, np.asarray(value)), {}))
    try:
        with np.errstate(all="ignore"):
            return IN_PLACE[symbol](a, value)
    except ValueError as exc:
        raise ShapeError(str(exc), hint="the right side must broadcast to the array's own shape") from None
    except (TypeError, ZeroDivisionError) as exc:
        raise ArgumentError(str(exc), hint="make a new array instead: a = a * 0.5") from None


def unary(symbol: str, a: np.ndarray) -> np.ndarray:
    return -a if symbol == "-" else +a if symbol == "+" else dispatch.call("'~'", np.invert, a)


def compare(fn: Callable[[Any, Any], Any], left: Any, right: Any, symbol: str) -> np.ndarray:
    """An array compared with a number or an array of numbers: NumPy's elementwise answer."""
    numeric = (np.ndarray, int, float, np.integer, np.floating, np.bool_, list, tuple)
    if not isinstance(left, numeric) or not isinstance(right, numeric):
        raise ArgumentError(f"cannot compare a {type(left).__name__} with a {type(right).__name__} using '{symbol}'",
                            hint="compare an array with a number or another array")
    left, right = dispatch.inward(left, f"'{symbol}'"), dispatch.inward(right, f"'{symbol}'")
    dispatch.check_size(f"'{symbol}'", sizes.generic((np.asarray(left), np.asarray(right)), {}))
    try:
        return fn(np.asarray(left), np.asarray(right))
    except ValueError:
        raise ShapeError(f"operands could not be broadcast together with shapes {np.shape(left)} {np.shape(right)}",
                         hint="compare arrays of the same shape, or an array with a number") from None


def truth(a: np.ndarray) -> bool:
    if a.size != 1:
        raise ArgumentError("The truth value of an array with more than one element is ambiguous. Use a.any() or "
                            "a.all()", hint="reduce it first: if (a < 0.1).all():")
    return bool(a.reshape(()))


def _key(key: Any) -> Any:
    key = dispatch.inward(key, "an index")
    parts = key if isinstance(key, tuple) else (key,)
    dispatch.check_size("an index", sizes.generic(tuple(np.asarray(p) for p in parts if isinstance(p, (np.ndarray,
                                                                                                       list))), {}))
    return key


def index(a: np.ndarray, key: Any) -> Any:
    """`a[key]`: NumPy's basic and advanced indexing."""
    try:
        return dispatch.outward(a[_key(key)], "an index")
    except IndexError as exc:
        from gradcli.lang.exceptions import raise_python
        raise_python("IndexError", str(exc))
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"{exc}", hint="index an array with ints, slices, None, ... or arrays of ints or bools") \
            from None


def set_item(a: np.ndarray, key: Any, value: Any) -> None:
    try:
        a[_key(key)] = dispatch.inward(value, "an item assignment")
    except IndexError as exc:
        from gradcli.lang.exceptions import raise_python
        raise_python("IndexError", str(exc))
    except (TypeError, ValueError) as exc:
        raise ArgumentError(f"{exc}", hint="assign numbers or an array that broadcasts to the indexed shape") \
            from None


def length(a: np.ndarray) -> int:
    if a.ndim == 0:
        raise ArgumentError("len() of unsized object", hint="a 0-d array is one number: use a.item()")
    return len(a)


def rows(a: np.ndarray) -> Any:
    if a.ndim == 0:
        raise ArgumentError("iteration over a 0-d array", hint="a 0-d array is one number: use a.item()")
    return iter(a)


def number(a: np.ndarray, kind: type) -> Any:
    """`float(a)`, `int(a)`: NumPy's answer, for a 0-d array only."""
    if a.ndim != 0:
        raise ArgumentError("only 0-dimensional arrays can be converted to Python scalars",
                            hint="take one element first: float(a[0]), or a.item()")
    return kind(a)
