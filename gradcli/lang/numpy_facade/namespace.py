"""The `numpy` and `numpy.linalg` namespaces, made from the allowlist: each name NumPy's own, wrapped by
the dispatcher; a refused name's reason is given where the program reaches for it."""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.errors import ArgumentError, NotAllowedError, ValueDomainError
from gradcli.lang import type_tests
from gradcli.lang.namespace import Namespace
from gradcli.lang.numpy_facade import allowlist, dispatch, index_tricks
from gradcli.lang.stdlib.runtime import RESETS


def ndarray(*args: Any, **kwargs: Any) -> Any:
    """`np.ndarray` is for `isinstance` and `type(a) is np.ndarray`; its constructor hands out raw memory."""
    raise NotAllowedError("np.ndarray(...) makes an array of uninitialised memory",
                          hint="make arrays with np.array, np.zeros, np.empty or np.arange")


type_tests.register(ndarray, "ndarray", (np.ndarray,), "numpy")
_SCALARS = {name: dispatch.ScalarType(name) for name in allowlist.SCALAR_TYPES}
for _name, _stand_in in _SCALARS.items():
    if np.dtype(_name).type.__name__ == _name.rstrip("_") or _name == "bool_":  # one stand-in per scalar type
        type_tests.register(_stand_in, np.dtype(_name).type.__name__, (np.dtype(_name).type,), "numpy")

_PRINT_DEFAULTS = np.get_printoptions()


class _FloatInfo:
    """`np.finfo(np.float32)`: NumPy's figures for a float type (eps, max, min, tiny, ...), printed as NumPy does."""

    program_attributes = frozenset({"bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype",
                                    "precision"})
    program_str = True  # print() shows NumPy's table, as str() of NumPy's finfo does

    def __init__(self, dtype: Any) -> None:
        info = np.finfo(dtype)
        self._text, self._str = repr(info), str(info)
        for name in self.program_attributes - {"dtype"}:
            setattr(self, name, dispatch.outward(getattr(info, name), "np.finfo"))
        self.dtype = dispatch.DtypeText(info.dtype.name)

    def __repr__(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._str


def _finfo(dtype: Any = float) -> _FloatInfo:
    where = "np.finfo"
    value = dispatch.inward(dtype, where)
    try:
        return _FloatInfo(value)
    except (ValueError, TypeError) as exc:
        raise ValueDomainError(f"{where}: {exc}", hint="np.finfo(np.float32) or np.finfo(np.float64)") from None


def _set_printoptions(*args: Any, **kwargs: Any) -> None:
    if kwargs.get("formatter") is not None:
        raise NotAllowedError("np.set_printoptions(formatter=...) is not supported",
                              hint="set precision=, suppress=, threshold=, linewidth= or edgeitems=")
    dispatch.call("np.set_printoptions", np.set_printoptions, *args, **kwargs)


def _reset_printing() -> None:
    np.set_printoptions(**_PRINT_DEFAULTS)


RESETS.append(_reset_printing)

LINALG = Namespace("numpy.linalg", {name: dispatch.function(f"np.linalg.{name}", getattr(np.linalg, name))
                                    for name in sorted(allowlist.LINALG)})

def _repmat(a: Any, m: int, n: int) -> Any:
    """`numpy.matlib.repmat(a, m, n)`: `a` seen as a matrix (a number 1x1, a vector one row), tiled m by n."""
    arr = np.asarray(a)
    if arr.ndim > 2:
        raise ArgumentError(f"repmat(): a must have at most 2 dimensions, not {arr.ndim}",
                            hint="np.tile(a, reps) repeats an array of any dimension")
    rows, cols = (1, 1) if arr.ndim == 0 else (1, arr.shape[0]) if arr.ndim == 1 else arr.shape
    return _TILE(arr.reshape(rows, cols), (m, n))


_TILE = dispatch.function("np.tile", np.tile)
MATLIB = Namespace("numpy.matlib", {"repmat": _repmat})

NUMPY = Namespace("numpy", {
    **{name: dispatch.function(f"np.{name}", getattr(np, name)) for name in sorted(allowlist.FUNCTIONS)},
    **_SCALARS,
    **{name: getattr(np, name) for name in allowlist.CONSTANTS},
    "set_printoptions": _set_printoptions, "ndarray": ndarray, "linalg": LINALG, "matlib": MATLIB, "finfo": _finfo,
    **index_tricks.NAMES,
})
"""`np`: the random module joins it where the standard modules are made (`builtins`)."""


def refusal(name: str) -> str | None:
    """Why `np.name` is refused, for the names a program might reach for."""
    return allowlist.REFUSED.get(name)
