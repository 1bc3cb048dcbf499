"""NumPy's index tricks and index iteration: `np.c_[a, b]` (columns side by side), `np.mgrid[0:3, 0:2]` (dense
coordinate grids) and `np.ndenumerate(a)` ((index, value) pairs), as objects of the facade.

`np.c_` and `np.mgrid` are objects a program subscripts; each subscript is handed to NumPy's own, with its
parts checked in and the result's size checked first, as every facade call is.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.errors import ArgumentError
from gradcli.lang.limits import Lazy
from gradcli.lang.numpy_facade import dispatch


def _slice_count(part: slice) -> int:
    """How many values `mgrid`'s slice makes (the language has no complex numbers, so no `5j` counts)."""
    step = 1 if part.step is None else part.step
    start = 0 if part.start is None else part.start
    return max(0, math.ceil((part.stop - start) / step)) if step else 0


class _Grid:
    """`np.mgrid[0:3, 0:2]`: NumPy's dense grid of the slices' values."""

    program_attributes: frozenset[str] = frozenset()

    def program_index(self, key: Any) -> Any:
        parts = key if isinstance(key, tuple) else (key,)
        if not all(isinstance(p, slice) and isinstance(p.stop, int) for p in parts):
            raise ArgumentError("np.mgrid takes slices with a stop: np.mgrid[0:3, 0:2]",
                                hint="each slice is start:stop or start:stop:step")
        dispatch.check_size("np.mgrid", math.prod(_slice_count(p) for p in parts) * (len(parts) if len(parts) > 1 else 1))
        return dispatch.call("np.mgrid", lambda k: np.mgrid[k], key)

    def __repr__(self) -> str:
        return "<numpy.lib._index_tricks_impl.MGridClass object>"


class _Columns:
    """`np.c_[a, b]`: 1-D arrays become columns, and everything is joined along the last axis."""

    program_attributes: frozenset[str] = frozenset()

    def program_index(self, key: Any) -> Any:
        parts = key if isinstance(key, tuple) else (key,)
        if any(isinstance(p, (slice, str)) for p in parts):
            raise ArgumentError("np.c_ here joins arrays and lists: np.c_[a, b]",
                                hint="make a range first with np.arange(...), then join it")
        return dispatch.call("np.c_", lambda *arrays: np.c_[arrays], *parts)

    def __repr__(self) -> str:
        return "<numpy.lib._index_tricks_impl.CClass object>"


def ndenumerate(arr: Any) -> Lazy:
    """`for index, value in np.ndenumerate(a)`: each index (a tuple) with its value, in row-major order."""
    a = np.asarray(dispatch.inward(arr, "np.ndenumerate"))
    return Lazy((tuple(int(i) for i in index), dispatch.outward(value, "np.ndenumerate"))
                for index, value in np.ndenumerate(a))


NAMES: dict[str, Any] = {"mgrid": _Grid(), "c_": _Columns(), "ndenumerate": ndenumerate}
