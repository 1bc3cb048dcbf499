"""Reductions and scans: sum, mean, max/min (with indices), prod, var/std, norms, softmax, logsumexp,
argmax, sort, topk, kthvalue, median, cumsum/cumprod."""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import budget, costs
from gradcli.engine import ops as O
from gradcli.engine.ops.op import Composite
from gradcli.engine.ties import note_order
from gradcli.errors import ArgumentError, ShapeError
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.engine.functions.arguments import _dim, _dims, size, _tensor_arg
from gradcli.engine.functions.elementwise import abs
from gradcli.engine.functions.shape import _same
from gradcli.engine.functions.declared import MaxMin, arg_along as _arg_along, declared, _nonempty_input as _nonempty


# -- reductions --------------------------------------------------------------------------
globals().update(declared(O.reductions.OPS))
"""sum, mean, prod, var, std, norm, logsumexp, amax, amin, max, min, softmax, log_softmax, cumsum and cumprod, from their
declarations."""


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """`torch.linalg.vector_norm`: the norm of the elements over `dim` (all of them by default)."""
    return norm(x, ord, dim, keepdim)


def matrix_norm(x: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """Frobenius ('fro') and the induced 1- and inf-norms (max column / row sum of |x|, and -1/-inf's minimum)."""
    x = _tensor_arg(x, "matrix_norm")
    if x.ndim < 2:
        raise ShapeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
                         hint="use torch.linalg.vector_norm for a vector")
    dims = _dims(dim, x.ndim)
    if dims is None or len(dims) != 2:
        raise ArgumentError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim!r}", hint="e.g. dim=(-2, -1)")
    rows, cols = (_dim(d, x.ndim) for d in dim)
    if ord == "fro":
        return norm(x, 2, dims, keepdim)
    if ord in (1, -1, float("inf"), -float("inf")):
        summed, reduced = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = sum(abs(x), dim=summed, keepdim=keepdim)
        return (amax if ord > 0 else amin)(sums, dim=reduced - (not keepdim and summed < reduced), keepdim=keepdim)
    raise ArgumentError(f"linalg.matrix_norm: ord {ord!r} is not supported by gradcli",
                        hint="use 'fro', 1, -1, inf or -inf (2, -2 and 'nuc' need singular values)")


def linalg_norm(x: Any, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Tensor:
    """`torch.linalg.norm`: a vector norm, or a matrix norm for a string ord or a 2-tuple dim."""
    x = _tensor_arg(x, "linalg.norm")
    matrix = isinstance(ord, str) or (isinstance(dim, (list, tuple)) and len(dim) == 2) or (
        dim is None and ord is not None and x.ndim == 2)
    if matrix:
        return matrix_norm(x, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim)
    return norm(x, 2 if ord is None else ord, dim, keepdim)


def cummax(x: Any, dim: int) -> MaxMin:
    """The running maximum along dim and where it was reached (the latest of tied maxima, as PyTorch's)."""
    return _running(x, dim, np.maximum, "cummax", "CummaxBackward0")


def cummin(x: Any, dim: int) -> MaxMin:
    return _running(x, dim, np.minimum, "cummin", "CumminBackward0")


def _running(x: Any, dim: int, keep: Any, fn: str, name: str) -> MaxMin:
    """One indexing node picks each running extreme, so its gradient goes to exactly that element (summed where
    it stays the extreme). Inside vmap the indices are taken on every example at once."""
    from gradcli.engine.batched import levels_of, physical, rewrap
    x = _tensor_arg(x, fn)
    d = _dim(dim, x.ndim)
    if x.ndim == 0:
        return MaxMin(apply(O.INDEX, x, key=(Ellipsis,), name=name), _wrap(np.asarray(0, dtype=np.int64)))
    levels = levels_of(x)
    phys = physical(x)
    axis = d + len(levels)
    data = phys._data
    at = np.arange(data.shape[axis]).reshape((-1,) + (1,) * (data.ndim - axis - 1))
    order = np.maximum.accumulate(np.where(data == keep.accumulate(data, axis=axis), at, 0), axis=axis)
    grids = list(np.indices(order.shape, sparse=True))
    grids[axis] = order
    values = apply(O.INDEX, phys, key=tuple(grids), name=name)
    return MaxMin(rewrap(values, levels), rewrap(_wrap(order.astype(np.int64)), levels))


def argmax(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg_extremum(np.argmax, x, dim, keepdim, "argmax")


def argmin(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg_extremum(np.argmin, x, dim, keepdim, "argmin")


def _arg_extremum(arg: Any, x: Any, dim: Any, keepdim: bool, fn: str) -> Tensor:
    """Indices (int64, outside the graph): of the flattened tensor without `dim`, first on ties."""
    x = _tensor_arg(x, fn)
    _nonempty(x, fn)
    return _arg_along(arg, x, None if dim is None else _dim(dim, x.ndim), keepdim)


def _along(x: Tensor, order: np.ndarray, d: int, name: str) -> MaxMin:
    """The elements at `order` (indices along dim d; without dim d when it has fewer dimensions than
    x) and those indices: one indexing node, so the gradient goes back to exactly those elements."""
    if x.requires_grad:
        note_order(x._node if x._node is not None else x, x._data, d, name)
    grids = list(np.indices(order.shape, sparse=True))
    if order.ndim == x.ndim:
        grids[d] = order
    else:
        grids.insert(d, order)
    return MaxMin(apply(O.INDEX, x, key=tuple(grids), name=name), _wrap(order.astype(np.int64)))


def _order(x: Tensor, d: int, descending: bool) -> np.ndarray:
    """A stable order along d; descending keeps equal elements in their original order too."""
    data = x._data
    budget.spend(costs.sort(data.size), "sorting")
    return np.argsort(-data if descending else data, axis=d, kind="stable")


def sort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> MaxMin:
    x = _tensor_arg(x, "sort")
    if x.ndim == 0:
        return MaxMin(_same(x, "SortBackward0"), _wrap(np.asarray(0)))
    d = _dim(dim, x.ndim)
    return _along(x, _order(x, d, bool(descending)), d, "SortBackward0")


def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MaxMin:
    x = _tensor_arg(x, "topk")
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= size:
        raise ShapeError("selected index k out of range",
                         hint=f"k must be between 0 and the size of dim {d} ({size})")
    if x.ndim == 0:
        return MaxMin(_same(x, "TopkBackward0"), _wrap(np.asarray(0)))
    order = np.take(_order(x, d, bool(largest)), range(int(k)), axis=d)
    return _along(x, order, d, "TopkBackward0")


def kthvalue(x: Any, k: int, dim: int = -1, keepdim: bool = False) -> MaxMin:
    x = _tensor_arg(x, "kthvalue")
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= size:
        raise ShapeError(f"kthvalue(): selected number k out of range for dimension {d}",
                         hint=f"k counts from 1 (the smallest) to the size of dim {d} ({size})")
    return _selected(x, d, int(k) - 1, keepdim, "KthvalueBackward0")


def median(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor | MaxMin:
    """Without dim the lower median, its gradient shared among ties; with dim (values, indices)."""
    x = _tensor_arg(x, "median")
    if dim is None:
        _nonempty(x, "median")
        flat = x._data.reshape(-1)
        budget.spend(costs.sort(flat.size), "median")
        at = int(np.argsort(flat, kind="stable")[(flat.size - 1) // 2])
        return apply(O.MEDIAN, x, at=at)
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    return _selected(x, d, (size - 1) // 2, keepdim, "MedianBackward1")


def _selected(x: Tensor, d: int, k: int, keepdim: bool, name: str) -> MaxMin:
    """The k-th smallest along d (0-based), and its index."""
    if x.ndim == 0:
        return MaxMin(_same(x, name), _wrap(np.asarray(0)))
    return _along(x, np.take(_order(x, d, False), [k] if keepdim else k, axis=d), d, name)


def mode(x: Any, dim: int = -1, keepdim: bool = False) -> MaxMin:
    """The most frequent value along dim (the smallest of several) and where it is, as PyTorch's CPU kernel finds
    them: it sorts the row and takes the last element of the first longest run. Its sort keeps equal elements in
    order up to 16 elements (so the index is the value's last position); above that the pick among equal elements
    is the sort's own, noted as ties are. A row with NaN is refused: where NaN lands in that sort is not defined."""
    x = _tensor_arg(x, "mode")
    if x.ndim == 0:
        return MaxMin(_same(x, "ModeBackward0"), _wrap(np.asarray(0)))
    d = _dim(dim, x.ndim)
    _nonempty(x, "mode")
    if x._data.dtype.kind == "f" and np.isnan(x._data).any():
        raise ArgumentError("mode(): the input holds NaN, whose place in PyTorch's sort (and so the mode it "
                            "reports) is not defined", hint="replace NaN first, e.g. torch.nan_to_num(x)")
    rows = np.moveaxis(x._data, d, -1).reshape(-1, x.shape[d])
    budget.spend(costs.sort(rows.size), "mode")
    at = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        ordered = np.sort(row, kind="stable")
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        counts = np.diff(np.append(starts, len(ordered)))
        at[i] = np.flatnonzero(row == ordered[starts[int(np.argmax(counts))]])[-1]
    if x.shape[d] > 16 and x.requires_grad:
        note_order(x._node if x._node is not None else x, x._data, d, "ModeBackward0")
    order = at.reshape(tuple(np.delete(np.array(x.shape), d)))
    return _along(x, np.expand_dims(order, d) if keepdim else order, d, "ModeBackward0")


COMPOSITES: tuple[Composite, ...] = (
    Composite(vector_norm, op=O.NORM, linalg=("vector_norm",)), Composite(matrix_norm, op=O.NORM, linalg=("matrix_norm",)),
    Composite(linalg_norm, op=O.NORM, linalg=("norm",)),
    Composite(argmax, ("argmax",), ("argmax",), None),
    Composite(argmin, ("argmin",), ("argmin",), None),
    Composite(sort, ("sort",), ("sort",), O.INDEX),
    Composite(topk, ("topk",), ("topk",), O.INDEX),
    Composite(kthvalue, ("kthvalue",), ("kthvalue",), O.INDEX),
    Composite(mode, ("mode",), ("mode",), O.INDEX),
    Composite(cummax, ("cummax",), ("cummax",), O.INDEX),
    Composite(cummin, ("cummin",), ("cummin",), O.INDEX),
)
"""The torch.X of this family that are also Tensor.X with the same arguments, declared with their names and the
primitive they record: Tensor.X and the language's tables are derived from these (`engine/tensor.py`,
`lang/builtins.py`)."""
