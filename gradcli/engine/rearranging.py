"""Functions the census of tutorial code (docs/coverage.md) found missing, built from the existing primitives.

Each records the nodes PyTorch's own composition records where that is a single primitive here
(`ravel` a view, `hstack`/`vstack` a cat, `index_add` a scatter-add named IndexAddBackward0), so the
op table, the checker and forward mode need nothing new for them.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.ops.op import Composite
from gradcli.engine.functions import (cat, expand, index_select, number_arg, permute, reshape, sort, sub, unsqueeze,
                                      vector_norm)
from gradcli.engine.functions.arguments import _dim, _tensor_arg
from gradcli.engine.functions.shape import _along_key, _index_array, _sequence_arg

from gradcli.engine.inplace import type_word
from gradcli.engine.tensor import Tensor, _wrap, apply, check_elements
from gradcli.errors import ArgumentError, DtypeError, NotAllowedError, ShapeError


def ravel(x: Any) -> Tensor:
    """`torch.ravel` / `x.ravel()`: the elements in one dimension (a view, ViewBackward0)."""
    return reshape(_tensor_arg(x, "ravel"), -1)


def repeat_interleave(x: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times in place; `repeats` a number or one count per
    element. `torch.repeat_interleave(counts)` alone repeats each index by its count, as PyTorch does."""
    x = _tensor_arg(x, "repeat_interleave")
    if repeats is None:
        counts = x._data
        if x.ndim != 1 or counts.dtype.kind not in "iu":
            raise ArgumentError("repeat_interleave: repeats must be a 1-D integer tensor",
                                hint="e.g. torch.repeat_interleave(torch.tensor([1, 3]))")
        return _wrap(np.repeat(np.arange(len(counts)), counts))
    if dim is None or x.ndim == 0:
        x, d = reshape(x, -1), 0
    else:
        d = _dim(dim, x.ndim)
    size = x.shape[d]
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        counts = _index_array(repeats, "repeat_interleave")
        if counts.ndim != 1 or len(counts) != size:
            raise ShapeError("repeats must have the same size as input along dim",
                             hint=f"give {size} counts, one per element along dim {d}")
        if np.any(counts < 0):
            raise ArgumentError("repeats can not be negative", hint="each count is 0 or more")
        check_elements((int(counts.sum()),) + x.shape[d + 1:], "the result of repeat_interleave")
        return index_select(x, d, _wrap(np.repeat(np.arange(size), counts)))
    count = int(number_arg(repeats, "repeat_interleave", "repeats", integer=True))
    if count < 0:
        raise ArgumentError("repeats can not be negative", hint="each count is 0 or more")
    # one count for all: PyTorch expands a new dimension and flattens it (ViewBackward0), no index
    spread = x.shape[:d + 1] + (count,) + x.shape[d + 1:]
    check_elements(spread, "the result of repeat_interleave")
    return reshape(expand(unsqueeze(x, d + 1), *spread), *x.shape[:d], size * count, *x.shape[d + 1:])


def nonzero(x: Any, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: one row per element (int64), or one index tensor per dimension."""
    data = _tensor_arg(x, "nonzero")._data
    found = np.argwhere(data).astype(np.int64)
    if as_tuple:
        return tuple(_wrap(found[:, k].copy()) for k in range(max(data.ndim, 1)))
    return _wrap(found)


def _at_least(x: Tensor, ndim: int) -> Tensor:
    while x.ndim < ndim:
        x = unsqueeze(x, 0)
    return x


def hstack(tensors: Sequence[Any]) -> Tensor:
    """Joined column-wise: along dim 0 for 1-D tensors, dim 1 otherwise (CatBackward0)."""
    xs = [_at_least(_tensor_arg(t, "hstack"), 1) for t in _sequence_arg(tensors, "hstack")]
    return cat(xs, 0 if xs[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Any]) -> Tensor:
    """Joined row-wise, 1-D tensors as rows (CatBackward0)."""
    return cat([_at_least(_tensor_arg(t, "vstack"), 2) for t in _sequence_arg(tensors, "vstack")], 0)


def index_add(x: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Tensor:
    """`x.index_add(dim, index, source)`: source's slices added into x at the positions `index` names along dim
    (repeated positions add up), as one scatter-add."""
    x = _tensor_arg(x, "index_add")
    d = _dim(dim, x.ndim)
    idx = _index_array(index, "index_add")
    source = _tensor_arg(source, "index_add")
    if idx.ndim > 1 or source.ndim != x.ndim or (x.ndim and source.shape[d] != len(idx)) or any(
            s != t for k, (s, t) in enumerate(zip(source.shape, x.shape)) if k != d):
        raise ShapeError(f"index_add_(): source of shape {tuple(source.shape)} does not fit self of shape "
                         f"{tuple(x.shape)} with {idx.size} indices along dim {d}",
                         hint="source has self's shape except along dim, where it has one slice per index")
    positions = np.broadcast_to(idx.reshape((-1,) + (1,) * (x.ndim - d - 1)), source.shape)
    key = _along_key(x, np.ascontiguousarray(positions), d, "index_add")
    alpha = number_arg(alpha, "index_add", "alpha")
    return apply(O.SCATTER_ADD, x, source if alpha == 1 else source * alpha, key=key, name="IndexAddBackward0")


def unique(x: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:
    """The distinct values (or distinct slices along `dim`), sorted, with the inverse indices and counts if asked.

    PyTorch records a node whose backward raises ("the derivative for '_unique2' is not implemented"); here a
    tensor that requires grad is refused at once, so no gradient can silently leave this path out.
    """
    from gradcli.engine.tensor import GradMode
    x = _tensor_arg(x, "unique")
    if x.requires_grad and GradMode.enabled:
        raise NotAllowedError("the derivative for 'unique' is not implemented",
                              hint="unique is not differentiable: call it on x.detach()")
    axis = None if dim is None else _dim(dim, x.ndim)
    values, inverse, counts = np.unique(x._data, return_inverse=True, return_counts=True, axis=axis)
    out = [_wrap(values.astype(x.dtype))]
    if return_inverse:
        out.append(_wrap(inverse.reshape(x.shape if axis is None else -1).astype(np.int64)))
    if return_counts:
        out.append(_wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def argsort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices `sort` orders by (no graph: indices are integers)."""
    return sort(x, dim, descending, stable).indices


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids: each 1-D input viewed along its own axis and expanded (ExpandBackward0), PyTorch's way;
    `indexing='xy'` builds the grids of the first two inputs swapped, as NumPy's Cartesian grids are."""
    xs = [_tensor_arg(t, "meshgrid") for t in (tensors[0] if len(tensors) == 1 and isinstance(
        tensors[0], (list, tuple)) else tensors)]
    if indexing not in ("ij", "xy"):
        raise ArgumentError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}",
                            hint="indexing='ij' (matrix) or 'xy' (Cartesian)")
    if any(t.ndim > 1 for t in xs):
        raise ShapeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list", hint="pass 1-D tensors")
    xs = [reshape(t, -1) for t in xs]
    swap = indexing == "xy" and len(xs) >= 2
    if swap:
        xs[0], xs[1] = xs[1], xs[0]
    shape = tuple(t.shape[0] for t in xs)
    check_elements(shape, "the result of meshgrid")
    grids = [expand(reshape(t, *(-1 if k == i else 1 for k in range(len(xs)))), *shape) for i, t in enumerate(xs)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def all_(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """`torch.all`: whether every element (along `dim`) is nonzero, as a bool tensor outside the graph."""
    data = _tensor_arg(x, "all")._data
    return _wrap(np.asarray(np.all(data, axis=None if dim is None else _dim(dim, data.ndim), keepdims=keepdim)))


def any_(x: Any, dim: int | None = None, keepdim: bool = False) -> Tensor:
    data = _tensor_arg(x, "any")._data
    return _wrap(np.asarray(np.any(data, axis=None if dim is None else _dim(dim, data.ndim), keepdims=keepdim)))


def broadcast_to(x: Any, size: Any) -> Tensor:
    return expand(_tensor_arg(x, "broadcast_to"), *size) if isinstance(size, (tuple, list)) else \
        expand(_tensor_arg(x, "broadcast_to"), size)


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The index of each value's bucket among sorted `boundaries` (right=False: boundaries[i-1] < x <= boundaries[i]);
    a count, so no gradient flows, as in PyTorch."""
    edges = _tensor_arg(boundaries, "bucketize")
    if edges.ndim != 1:
        raise ShapeError("boundaries tensor must be 1 dimension, but got dim(" + str(edges.ndim) + ")",
                         hint="bucketize takes one sorted list of boundaries")
    values = input._data if isinstance(input, Tensor) else np.asarray(number_arg(input, "bucketize", "input"))
    found = np.searchsorted(edges._data, values, side="right" if right else "left")
    return _wrap(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs, or the sum of its weights (in the weights' dtype)."""
    x = _tensor_arg(input, "bincount")
    if x.dtype.kind == "f":
        raise ArgumentError(f'"bincount_cpu" not implemented for \'{"Float" if x.dtype == np.float32 else "Double"}\'',
                            hint="count integers: x.long().bincount()")
    if x.ndim != 1 or x.dtype.kind not in "iu" or (x.numel() and x._data.min() < 0):
        raise DtypeError("bincount only supports 1-d non-negative integral inputs.",
                               hint="bincount counts the values 0, 1, 2, ... of a 1-D integer tensor")
    length = max(int(number_arg(minlength, "bincount", "minlength", integer=True)),
                 int(x._data.max()) + 1 if x.numel() else 0)
    check_elements((length,), "bincount")
    if weights is None:
        return _wrap(np.bincount(x._data, minlength=length).astype(np.int64))
    w = _tensor_arg(weights, "bincount")
    if w.shape != x.shape:
        raise ShapeError("weights should be 1-d and have the same length as input",
                         hint=f"one weight per value: {x.numel()} of them")
    return _wrap(np.bincount(x._data, weights=w._data, minlength=length).astype(w.dtype))


def unfold(x: Any, dimension: int, size: int, step: int) -> Tensor:
    """`x.unfold(dim, size, step)`: every window of `size` elements along `dim`, `step` apart, in a new last
    dimension (the sliding windows of time-series tutorials). Recorded as an index_select and views, so its
    gradient sums each element's windows, as PyTorch's UnfoldBackward0 does."""
    x = _tensor_arg(x, "unfold")
    if x.ndim == 0:
        return reshape(unfold(reshape(x, 1), 0, size, step), -1)
    d = _dim(dimension, x.ndim)
    size = int(number_arg(size, "unfold", "size", integer=True))
    step = int(number_arg(step, "unfold", "step", integer=True))
    length = x.shape[d]
    if size > length or size < 0:
        raise ShapeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}",
                         hint=f"a window holds at most the {length} elements along dimension {d}")
    if step <= 0:
        raise ArgumentError(f"step is {step} but must be > 0", hint="windows start `step` elements apart: 1 or more")
    count = (length - size) // step + 1
    check_elements(x.shape[:d] + (count, size) + x.shape[d + 1:], "the result of unfold")
    starts = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    windows = reshape(index_select(x, d, _wrap(starts.reshape(-1))), *x.shape[:d], count, size, *x.shape[d + 1:])
    return permute(windows, *range(d + 1), *range(d + 2, x.ndim + 1), d + 1)


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """`torch.cdist`: the p-norm distance between each row of x1 and each row of x2 (batched over leading
    dimensions), as the norm of their differences, so a zero distance has PyTorch's zero gradient."""
    a, b = _tensor_arg(x1, "cdist"), _tensor_arg(x2, "cdist")
    if a.ndim < 2 or b.ndim < 2:
        raise ShapeError(f"cdist only supports at least 2D tensors, X{1 if a.ndim < 2 else 2} got: "
                         f"{a.ndim if a.ndim < 2 else b.ndim}D", hint="rows of points: shape (n, features)")
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}",
                         hint="both sets of points need the same number of features")
    p = float(number_arg(p, "cdist", "p"))
    if p < 0:
        raise ArgumentError("cdist only supports non-negative p values", hint="p = 1, 2, ... or float('inf')")
    differences = sub(unsqueeze(a, -2), unsqueeze(b, -3))
    if p == 0:  # how many coordinates differ: a count, outside the graph
        return _wrap((differences._data != 0).sum(-1).astype(differences.dtype))
    return vector_norm(differences, p, -1)


def _sorter(sorter: Any, edges: Tensor) -> np.ndarray:
    """searchsorted's `sorter`: a long tensor of the boundaries' shape holding their sorting order, as PyTorch checks."""
    if not isinstance(sorter, Tensor):
        raise DtypeError(f"searchsorted(): argument 'sorter' must be Tensor, not {type(sorter).__name__}",
                         hint="sorter=torch.argsort(sorted_sequence)")
    if sorter.dtype != np.int64:
        raise DtypeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                         f"{type_word(sorter.dtype)}", hint="sorter=torch.argsort(sorted_sequence)")
    if sorter.shape != edges.shape:
        raise ShapeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                         f"{list(edges.shape)}and got sorter tensor {list(sorter.shape)}",
                         hint="sorter=torch.argsort(sorted_sequence)")
    order = sorter._data
    if order.size and (order.min() < 0 or order.max() >= edges.shape[-1]):
        raise ShapeError("torch.searchsorted(): sorter index out of range", hint="sorter=torch.argsort(sorted_sequence)")
    return order


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Any = None) -> Tensor:
    """Where each value of `input` would go in `sorted_sequence` (one sorted sequence, or one per row of the
    leading dimensions); a count, so no gradient flows, as in PyTorch."""
    edges = _tensor_arg(sorted_sequence, "searchsorted")
    if side not in (None, "left", "right") or side == "left" and right:
        raise ArgumentError("torch.searchsorted(): side can only be 'left' or 'right', and side='left' with "
                            "right=True conflicts", hint="give one of right=True or side='right'")
    if sorter is not None:
        edges = _wrap(np.take_along_axis(edges._data, _sorter(sorter, edges), -1))
    where = "right" if right or side == "right" else "left"
    scalar = not isinstance(input, Tensor)
    values = np.asarray(number_arg(input, "searchsorted", "input")) if scalar else input._data
    if edges.ndim == 1:
        found = np.searchsorted(edges._data, values, side=where)
    elif scalar or values.shape[:-1] != edges.shape[:-1]:
        raise ShapeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                         "of boundaries tensor and input value tensor must match",
                         hint=f"input's leading dimensions must be {tuple(edges.shape[:-1])}")
    else:
        rows, inputs = edges._data.reshape(-1, edges.shape[-1]), values.reshape(-1, values.shape[-1])
        found = np.stack([np.searchsorted(r, v, side=where) for r, v in zip(rows, inputs)]).reshape(values.shape)
    return _wrap(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))


def _repeat_interleave_method(x: Any, repeats: Any, dim: int | None = None, *,
                              output_size: int | None = None) -> Tensor:
    """`x.repeat_interleave(repeats)`: the method needs `repeats`, as PyTorch's does."""
    return repeat_interleave(x, repeats, dim, output_size=output_size)


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """`torch.index_put(x, indices, values)`: `x.index_put_` on a copy, so `x` keeps its values."""
    return index_put_(_tensor_arg(input, "index_put").clone(), indices, values, accumulate)


def index_put_(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """`torch.index_put_(x, indices, values)`, the function spelling of `x.index_put_(...)`."""
    return _tensor_arg(input, "index_put_").index_put_(indices, values, accumulate)


def put(input: Any, index: Any, source: Any, accumulate: bool = False) -> Tensor:
    """`torch.put(x, index, source)` and `x.put(...)`: `put_` on a copy, so `x` keeps its values."""
    return _tensor_arg(input, "put").clone().put_(index, source, accumulate)


COMPOSITES: tuple[Composite, ...] = (
    Composite(ravel, ("ravel",), ("ravel",), O.RESHAPE),
    Composite(repeat_interleave, ("repeat_interleave",), ("repeat_interleave",), O.INDEX,
              method=_repeat_interleave_method),
    Composite(nonzero, ("nonzero",), ("nonzero",)),
    Composite(hstack, ("hstack",), (), O.CAT),
    Composite(vstack, ("vstack", "row_stack"), (), O.CAT),
    Composite(index_add, ("index_add",), ("index_add",), O.SCATTER_ADD, in_place=True),
    Composite(index_put, ("index_put",), ("index_put",), O.INDEX_PUT),
    Composite(index_put_, ("index_put_",), (), O.INDEX_PUT),  # the method is engine/inplace.py's
    Composite(put, ("put",), ("put",), O.INDEX_PUT),
    Composite(broadcast_to, ("broadcast_to",), ("broadcast_to",), O.EXPAND),
    Composite(unique, ("unique",), ("unique",)),
    Composite(argsort, ("argsort",), ("argsort",)),
    Composite(meshgrid, ("meshgrid",), (), O.EXPAND),
    Composite(all_, ("all",)),
    Composite(any_, ("any",)),
    Composite(bucketize, ("bucketize",)),
    Composite(bincount, ("bincount",), ("bincount",)),
    Composite(unfold, (), ("unfold",), O.INDEX),
    Composite(cdist, ("cdist",), (), O.NORM),
    Composite(searchsorted, ("searchsorted",)),
)
"""The functions this module adds, declared with their names: torch.X, Tensor.X (`engine/tensor.py`) and the
language's tables (`lang/builtins.py`) are derived from these. Tensor's `all()` and `any()` of the whole
tensor are its own (`engine/tensor_methods.py`)."""
