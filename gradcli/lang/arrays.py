"""NumPy arrays as tutorials use them: the listed attributes and methods of an `ndarray` (the same
allowlist as a tensor's), comparisons with numbers, and `if array:` as NumPy decides it.

A program gets arrays from `np.array(...)` and `x.numpy()`; every method here returns numbers or
arrays of numbers (never of objects), and no array grows: reshape and transpose only rearrange.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.errors import ArgumentError, ShapeError

NDARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "T"})


def _astype(a: np.ndarray, dtype: Any) -> np.ndarray:
    """`a.astype(np.float32)`: to a numeric dtype only (an object array could hold anything)."""
    from gradcli.engine.creation import resolve_dtype
    return a.astype(resolve_dtype(dtype))


def _reshape(a: np.ndarray, *shape: Any) -> np.ndarray:
    dims = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    try:
        return a.reshape(tuple(int(d) for d in dims))
    except (ValueError, TypeError) as exc:
        raise ShapeError(f"cannot reshape array of size {a.size} into shape {tuple(dims)}",
                         hint="the new shape must hold the same number of elements") from exc


NDARRAY_METHODS: dict[str, Callable[..., Any]] = {
    "reshape": _reshape, "astype": _astype, "tolist": np.ndarray.tolist, "item": np.ndarray.item,
    "sum": np.ndarray.sum, "mean": np.ndarray.mean, "max": np.ndarray.max, "min": np.ndarray.min,
    "std": np.ndarray.std, "argmax": np.ndarray.argmax, "argmin": np.ndarray.argmin, "flatten": np.ndarray.flatten,
    "copy": np.ndarray.copy, "transpose": np.ndarray.transpose, "squeeze": np.ndarray.squeeze, "all": np.ndarray.all,
    "any": np.ndarray.any, "round": np.ndarray.round, "cumsum": np.ndarray.cumsum, "cumprod": np.ndarray.cumprod,
    "prod": np.ndarray.prod, "var": np.ndarray.var, "clip": np.ndarray.clip, "argsort": np.ndarray.argsort,
    "nonzero": np.ndarray.nonzero, "dot": np.ndarray.dot,
}


def bound(a: np.ndarray, name: str) -> Callable[..., Any]:
    """`a.reshape`, `a.sum`...: the listed method bound to `a`, NumPy's errors as the user's."""
    method = NDARRAY_METHODS[name]

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(a, *args, **kwargs)
        except (ValueError, TypeError) as exc:
            raise ArgumentError(f"ndarray.{name}: {exc}", hint=f"check the arguments of .{name}()") from None
    call.__name__ = name
    return call


def compare(fn: Callable[[Any, Any], Any], left: Any, right: Any, symbol: str) -> np.ndarray:
    """An array compared with a number or an array of numbers: NumPy's elementwise answer."""
    numeric = (np.ndarray, int, float, np.integer, np.floating, np.bool_)
    if not isinstance(left, numeric) or not isinstance(right, numeric):
        raise ArgumentError(f"cannot compare a {type(left).__name__} with a {type(right).__name__} using '{symbol}'",
                            hint="compare an array with a number or another array")
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
