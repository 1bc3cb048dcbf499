"""Shapes, views and indexing: reshape, transpose, permute, squeeze, expand, cat and stack, flip, roll,
repeat, triangles and diagonals, split and chunk, gather and scatter, masks, and casts."""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.ops.op import Composite
from gradcli.engine import views as V
from gradcli.engine.narrow import BFLOAT16, is_bfloat16, same
from gradcli.engine.batched import physical
from gradcli.errors import ArgumentError, ShapeError
from gradcli.engine.state import warn_once
from gradcli.engine.tensor import GradMode, Tensor, _root, _wrap, apply, broadcast_shape, check_elements
from gradcli.engine.functions.arguments import _dim, _int, _number, _shape_args, size, _tensor_arg, _with_dims


# -- shapes ----------------------------------------------------------------------------------
def reshape(x: Any, *shape: Any) -> Tensor:
    x = _tensor_arg(x, "reshape")
    dims = _shape_args(shape)
    unknown = [i for i, s in enumerate(dims) if s == -1]
    known = int(np.prod([s for s in dims if s != -1], dtype=np.int64))
    if len(unknown) > 1 or builtins.any(s < -1 for s in dims) or (
            not unknown and known != x.numel()) or (unknown and (known == 0 or x.numel() % known)):
        raise ShapeError(f"shape '{list(dims)}' is invalid for input of size {x.numel()}",
                         hint=f"the new shape must hold exactly {x.numel()} elements (shape {tuple(x.shape)}); "
                              "use -1 for one size to be inferred")
    if unknown:
        dims = tuple(x.numel() // known if s == -1 else s for s in dims)
    return apply(O.RESHAPE, x, shape=dims)


def view(x: Any, *shape: Any) -> Tensor:
    """reshape, which must give a view of x: PyTorch refuses a shape its strides cannot give without a copy
    (and an in-place update of a copy would not reach x)."""
    x = _tensor_arg(x, "view")
    out = reshape(x, *shape)
    if out.numel() and _root(physical(out)._data) is not _root(physical(x)._data):
        raise ShapeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                         "spans across two contiguous subspaces). Use .reshape(...) instead.",
                         hint="write x.reshape(...) (a copy where it must be), or x.contiguous().view(...)")
    return out


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim; PyTorch returns the tensor itself, without a node, when that
    merges nothing (a vector, or start_dim == end_dim)."""
    x = _tensor_arg(x, "flatten")
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = _dim(start_dim, x.ndim), _dim(end_dim, x.ndim)
    if start > end:
        raise ArgumentError("flatten() has invalid args: start_dim cannot come after end_dim",
                            hint=f"here start_dim is {start} and end_dim {end}")
    if start == end:
        return x
    return reshape(x, x.shape[:start] + (-1,) + x.shape[end + 1:])


def _same(x: Tensor, name: str) -> Tensor:
    """A view that changes nothing still gets its node in PyTorch (`v.t()` of a vector is a TBackward0)."""
    return apply(O.RESHAPE, x, shape=x.shape, name=name)


def transpose(x: Any, dim0: int, dim1: int) -> Tensor:
    x = _tensor_arg(x, "transpose")
    d0, d1 = _dim(dim0, x.ndim), _dim(dim1, x.ndim)
    if x.ndim == 0:
        return _same(x, "TransposeBackward0")
    return apply(O.TRANSPOSE, x, dim0=d0, dim1=d1)


def swapaxes(input: Any, axis0: int, axis1: int) -> Tensor:
    """`torch.swapaxes`/`x.swapaxes`: transpose under NumPy's names, which are its only keywords in PyTorch."""
    return transpose(input, axis0, axis1)


def t(x: Any) -> Tensor:
    x = _tensor_arg(x, "t")
    if x.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D",
                         hint="use transpose(x, dim0, dim1) or permute for more dimensions")
    if x.ndim < 2:
        return _same(x, "TBackward0")
    return apply(O.TRANSPOSE, x, dim0=0, dim1=1, name="TBackward0")


def permute(x: Any, *order: Any, dims: Any = None) -> Tensor:
    """`x.permute(2, 0, 1)`, `x.permute((2, 0, 1))` and PyTorch's keyword `permute(dims=(2, 0, 1))`."""
    x = _tensor_arg(x, "permute")
    if dims is not None:
        if order:
            raise ArgumentError("permute() got multiple values for argument 'dims'", hint="x.permute(dims=(1, 0))")
        order = (dims,)
    order = tuple(_dim(d, x.ndim) for d in _shape_args(order))
    if sorted(order) != list(range(x.ndim)):
        raise ShapeError(f"permute(): dims {order} are not a permutation of the {x.ndim} dimensions",
                         hint=f"name each of 0..{x.ndim - 1} exactly once, e.g. permute(1, 0) for a matrix")
    return apply(O.PERMUTE, x, dims=order)


def squeeze(x: Any, dim: Any = None) -> Tensor:
    x = _tensor_arg(x, "squeeze")
    if dim is None:
        return apply(O.RESHAPE, x, shape=tuple(s for s in x.shape if s != 1), name="SqueezeBackward0")
    if isinstance(dim, (list, tuple)):
        dims = {_dim(d, x.ndim) for d in dim}
        return apply(O.RESHAPE, x, shape=tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1)),
                     name="SqueezeBackward2")
    d = _dim(dim, x.ndim)
    if x.ndim == 0 or x.shape[d] != 1:
        return _same(x, "SqueezeBackward1")
    return apply(O.RESHAPE, x, shape=x.shape[:d] + x.shape[d + 1:], name="SqueezeBackward1")


def unsqueeze(x: Any, dim: int) -> Tensor:
    x = _tensor_arg(x, "unsqueeze")
    d = _dim(dim, x.ndim + 1)
    return apply(O.RESHAPE, x, shape=x.shape[:d] + (1,) + x.shape[d:], name="UnsqueezeBackward0")


def expand(x: Any, *sizes: Any) -> Tensor:
    x = _tensor_arg(x, "expand")
    shape = _shape_args(sizes)
    if len(shape) < x.ndim:
        raise ShapeError(f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
                         f"number of dimensions in the tensor ({x.ndim})",
                         hint=f"give one size per dimension of {tuple(x.shape)} (use -1 to keep one), plus any new "
                              "leading ones")
    lead = len(shape) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    for i, s in enumerate(x.shape):
        if s != 1 and s != shape[lead + i]:
            raise ShapeError(f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                             f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(shape)}.  "
                             f"Tensor sizes: {list(x.shape)}", hint="only dimensions of size 1 can be expanded")
    check_elements(shape, "the result of expand", x.dtype)
    return apply(O.EXPAND, x, shape=shape)


def _index_key(key: Any) -> tuple[Any, ...]:
    """Normalise an index to NumPy's form, rejecting what NumPy would misread."""
    out = []
    for p in key if isinstance(key, tuple) else (key,):
        if isinstance(p, Tensor):
            p = p._data
        if isinstance(p, (list, range)):  # x[range(n), target]: "What is torch.nn really?" picks so
            p = np.asarray(p)
        if isinstance(p, np.ndarray):
            if p.dtype.kind == "f":
                raise ArgumentError("tensors used as indices must be long, int, byte or bool tensors",
                                    hint="index with integers, e.g. x[[0, 2]]")
            if p.dtype.kind != "b":
                p = int(p) if p.ndim == 0 else p.astype(np.intp)
        elif isinstance(p, bool) or not isinstance(p, (int, np.integer, slice, type(None), type(Ellipsis))):
            raise ArgumentError(f"index {p!r} is not supported", hint="use integers, slices, lists of integers, "
                                                                    "None or ...")
        out.append(p)
    return tuple(out)


def _index_node(shape: tuple[int, ...], parts: tuple[Any, ...], single: bool) -> str:
    """PyTorch's node name: indexing applies select/slice/unsqueeze left to right, the last one shows.

    Like PyTorch, a slice covering a whole dimension inside a tuple is skipped, and a key that
    changes nothing is an alias.
    """
    if builtins.any(isinstance(p, np.ndarray) for p in parts):
        return "IndexBackward0"
    rest = len(shape) - builtins.sum(1 for p in parts if p is not None and p is not Ellipsis)
    name, dim = "AliasBackward0", 0
    for p in parts:
        if p is Ellipsis:
            dim += rest
        elif p is None:
            name = "UnsqueezeBackward0"
        else:
            if not isinstance(p, slice):
                name = "SelectBackward0"
            elif single or p.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
    return name


def index(x: Any, key: Any) -> Tensor:
    x = _tensor_arg(x, "index")
    k = _index_key(key)
    try:  # a batched tensor's key is tried on one example's shape (a view of one element)
        (x._data if type(x) is Tensor else np.broadcast_to(np.empty((), bool), x.shape))[k]
    except IndexError as exc:
        raise ShapeError(str(exc).replace(" axis ", " dimension "), hint=f"the tensor has shape {tuple(x.shape)}; "
                         "indices run from 0 to size-1 (or from -size to -1)") from None
    name = _index_node(x.shape, k, not isinstance(key, tuple))
    return apply(O.INDEX, x, key=_single(k), name=name)


def index_key(key: Any) -> Any:
    """A program's index as NumPy takes it (what `index` records), for writing through it."""
    return _single(_index_key(key))


def _single(k: tuple[Any, ...]) -> Any:
    return k[0] if len(k) == 1 and not isinstance(k[0], np.ndarray) else k


def constant(value: np.ndarray) -> Tensor:
    """An array a VJP holds fixed (batch norm's running statistics in eval mode) as a Tensor of its own
    dtype: an ndarray operand would be converted as a nested list, in the default dtype."""
    return _wrap(value)


def index_put(g: Any, shape: tuple[int, ...], key: Any) -> Tensor:
    """Scatter-add into zeros: the VJP of indexing, differentiable itself."""
    return apply(O.INDEX_PUT, g, shape=tuple(shape), key=key)


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    xs = [_tensor_arg(x, "cat") for x in _sequence_arg(tensors, "cat")]
    d = _dim(dim, xs[0].ndim)
    shapes = ", ".join(str(tuple(y.shape)) for y in xs)
    hint = f"cat joins along dim {d}; every other dimension must agree (shapes {shapes})"
    for k, x in enumerate(xs[1:], 1):
        if x.ndim != xs[0].ndim:
            raise ShapeError(f"Tensors must have same number of dimensions: got {xs[0].ndim} and {x.ndim}", hint=hint)
        for i, (a, b) in enumerate(zip(xs[0].shape, x.shape)):
            if i != d and a != b:
                raise ShapeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                 f"size {b} for tensor number {k} in the list.", hint=hint)
    return apply(O.variadic(O.CAT, len(xs)), *xs, dim=d)


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    xs = [_tensor_arg(x, "stack") for x in _sequence_arg(tensors, "stack")]
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got {list(xs[0].shape)} at entry 0 "
                             f"and {list(x.shape)} at entry {i}",
                             hint="stack puts tensors of one shape side by side; use cat to join along a dimension")
    return apply(O.variadic(O.STACK, len(xs)), *xs, dim=_dim(dim, xs[0].ndim + 1))


def _sequence_arg(tensors: Any, fn: str) -> list:
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ArgumentError(f"{fn}() expects a non-empty list of tensors", hint=f"e.g. {fn}([a, b], dim=0)")
    return list(tensors)


def to_dtype(x: Any, dtype: Any) -> Tensor:
    x = _tensor_arg(x, "to")
    dt = dtype if is_bfloat16(dtype) else np.dtype(dtype)
    if same(x.dtype, dt):
        return x
    if is_bfloat16(dt) or dt.kind in "fc":
        return apply(O.CAST, x, dtype=dt)
    previous, GradMode.enabled = GradMode.enabled, False  # an integer or bool tensor cannot require grad:
    try:  # PyTorch's cast to one leaves the graph
        return apply(O.CAST, x, dtype=dt)
    finally:
        GradMode.enabled = previous

cast = to_dtype


def _cast_method(name: str, dtype: Any) -> Any:
    """`x.float()`, `x.long()` and their kin: the tensor in one dtype (itself when it has it, else CastBackward0)."""
    def method(self: Any) -> Tensor:
        return to_dtype(self, dtype)
    method.__name__ = method.__qualname__ = name
    return method


_CASTS = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": BFLOAT16, "long": np.int64,
          "int": np.int32, "short": np.int16, "char": np.int8, "byte": np.uint8, "bool": np.bool_}
"""The Tensor methods that cast, by the dtype each names (`torch.float` is a dtype, not a function)."""


# -- more shapes and indexing ----------------------------------------------------------------
def view_as(x: Any, other: Any) -> Tensor:
    return view(x, _tensor_arg(other, "view_as").shape)


def reshape_as(x: Any, other: Any) -> Tensor:
    return reshape(x, _tensor_arg(other, "reshape_as").shape)


def unflatten(x: Any, dim: int, sizes: Sequence[int]) -> Tensor:
    x = _tensor_arg(x, "unflatten")
    d = _dim(dim, x.ndim)
    sizes = _shape_args((sizes,))
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[d]) or (-1 in sizes and x.shape[d] % known):
        raise ShapeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                         f"({x.shape[d]}) in the input tensor", hint="the sizes must multiply to that dimension's size")
    sizes = tuple(x.shape[d] // known if s == -1 else s for s in sizes)
    return reshape(x, x.shape[:d] + sizes + x.shape[d + 1:])


def movedim(x: Any, source: Any, destination: Any) -> Tensor:
    x = _tensor_arg(x, "movedim")
    src = [_dim(d, x.ndim) for d in (source if isinstance(source, (list, tuple)) else (source,))]
    dst = [_dim(d, x.ndim) for d in (destination if isinstance(destination, (list, tuple)) else (destination,))]
    if len(src) != len(dst):
        raise ArgumentError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                            f"same number of dims as destination ({dst} dims)", hint="pair each source with a target")
    order = [d for d in range(x.ndim) if d not in src]
    for s, t in sorted(zip(dst, src)):
        order.insert(s, t)
    return apply(O.PERMUTE, x, dims=tuple(order))

moveaxis = movedim
swapdims = transpose


def flip(x: Any, dims: Any) -> Tensor:
    """`torch.flip(x, dims)`: dims a sequence (or one int); the method takes them unpacked too."""
    x = _tensor_arg(x, "flip")
    axes = tuple(sorted({_dim(d, x.ndim) for d in _shape_args((dims,))}))
    return apply(O.FLIP, x, dims=axes)


def fliplr(x: Any) -> Tensor:
    return flip(x, 1)


def flipud(x: Any) -> Tensor:
    return flip(x, 0)


def roll(x: Any, shifts: Any, dims: Any = None) -> Tensor:
    x = _tensor_arg(x, "roll")
    many = isinstance(shifts, (list, tuple))
    shift = tuple(_int(s, "roll's shifts") for s in shifts) if many else (_int(shifts, "roll's shifts"),)
    if dims is None:
        if len(shift) != 1:
            raise ArgumentError("roll: shifts and dims must align", hint="give one dim per shift")
        return apply(O.ROLL, x, shifts=shift, dims=None)
    axes = tuple(_dim(d, x.ndim) for d in (dims if isinstance(dims, (list, tuple)) else (dims,)))
    if len(axes) != len(shift):
        raise ArgumentError(f"shifts and dimensions must align. shifts: {len(shift)}, dims:{len(axes)}",
                            hint="give one dim per shift")
    return apply(O.ROLL, x, shifts=shift, dims=axes)


def repeat(x: Any, *sizes: Any) -> Tensor:
    x = _tensor_arg(x, "repeat")
    repeats = _shape_args(sizes)
    if len(repeats) < x.ndim:
        raise ShapeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
                         hint=f"give one count per dimension of {tuple(x.shape)}, plus any new leading ones")
    check_elements(tuple(r * s for r, s in zip(repeats, (1,) * (len(repeats) - x.ndim) + x.shape)),
                   "the result of repeat", x.dtype)
    return apply(O.REPEAT, x, repeats=repeats)


def tile(x: Any, *dims: Any) -> Tensor:
    x = _tensor_arg(x, "tile")
    reps = _shape_args(dims)
    return repeat(x, (1,) * (x.ndim - len(reps)) + reps)


def _matrix_arg(x: Any, fn: str) -> Tensor:
    x = _tensor_arg(x, fn)
    if x.ndim < 2:
        raise ShapeError(f"{fn}: input tensor must have at least 2 dimensions.",
                         hint="tril and triu take a matrix (or a batch of them)")
    return x


def tril(x: Any, diagonal: int = 0) -> Tensor:
    return apply(O.TRIL, _matrix_arg(x, "tril"), diagonal=_int(diagonal, "tril's diagonal"))


def triu(x: Any, diagonal: int = 0) -> Tensor:
    return apply(O.TRIU, _matrix_arg(x, "triu"), diagonal=_int(diagonal, "triu's diagonal"))


def diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    x = _tensor_arg(x, "diagonal")
    d1, d2 = _dim(dim1, x.ndim), _dim(dim2, x.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", hint="name two different dims")
    out = apply(O.INDEX, x, key=_diagonal_key(x.shape, _int(offset, "offset"), d1, d2), name="DiagonalBackward0")
    V.copied(out, x, "diagonal")
    return out


def _diagonal_key(shape: tuple[int, ...], offset: int, d1: int, d2: int) -> tuple[np.ndarray, ...]:
    """Index arrays picking the diagonal, laid out as PyTorch's (the other dims, then the diagonal)."""
    n = builtins.max(0, builtins.min(shape[d1] - builtins.max(-offset, 0), shape[d2] - builtins.max(offset, 0)))
    rest = [d for d in range(len(shape)) if d not in (d1, d2)]
    grids = np.indices(tuple(shape[d] for d in rest) + (n,), sparse=True)
    key: list[Any] = [None] * len(shape)
    for d, grid in zip(rest, grids):
        key[d] = grid
    key[d1] = grids[-1] + builtins.max(-offset, 0)
    key[d2] = grids[-1] + builtins.max(offset, 0)
    return tuple(key)


def diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    x = _tensor_arg(x, "diag_embed")
    d1, d2 = _dim(dim1, x.ndim + 1), _dim(dim2, x.ndim + 1)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", hint="name two different dims")
    return apply(O.DIAG_EMBED, x, offset=_int(offset, "offset"), dim1=d1, dim2=d2)


def diag(x: Any, diagonal: int = 0) -> Tensor:
    """A vector becomes a diagonal matrix; a matrix gives its diagonal (PyTorch's node names for each)."""
    x = _tensor_arg(x, "diag")
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim != 2:
        raise ShapeError("diag(): Supports 1D or 2D tensors. Got {}D".format(x.ndim),
                         hint="use diagonal() or diag_embed() for batches")
    return apply(O.INDEX, x, key=_diagonal_key(x.shape, _int(diagonal, "diagonal"), 0, 1),
                 name="DiagonalBackward0_copy")


def trace(x: Any) -> Tensor:
    """Σ of the diagonal; PyTorch's node name on top (the diagonal's own node sits below it)."""
    x = _tensor_arg(x, "trace")
    if x.ndim != 2:
        raise ShapeError("trace: expected a matrix, but got tensor with dim {}".format(x.ndim),
                         hint="trace takes one matrix; for a batch use diagonal(dim1=-2, dim2=-1).sum(-1)")
    return apply(O.SUM, diagonal(x), dim=None, keepdim=False, name="TraceBackward0")


def narrow(x: Any, dim: int, start: int, length: int) -> Tensor:
    x = _tensor_arg(x, "narrow")
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    start, length = _int(start, "narrow's start"), _int(length, "narrow's length")
    begin = start + size if start < 0 else start
    if not 0 <= begin <= size or length < 0 or begin + length > size:
        raise ShapeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).",
                         hint=f"dim {d} has {size} elements")
    return apply(O.INDEX, x, key=(slice(None),) * d + (slice(begin, begin + length),), name="SliceBackward0")


def split(x: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views along dim, each its own node under PyTorch's name (one multi-output node in PyTorch)."""
    x = _with_dims(x, "split")
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int(s, "split_sizes") for s in split_size_or_sections]
        if builtins.sum(sizes) != size:
            raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                             f"dimension {d}), but got split_sizes={sizes}", hint="the sizes must add up to the dim")
        name = "SplitWithSizesBackward0"
    else:
        step = _int(split_size_or_sections, "split_size")
        if step <= 0:
            raise ArgumentError(f"split expects split_size be non-negative, but got split_size={step}",
                                hint="split_size is how many elements each piece has")
        sizes = [builtins.min(step, size - k) for k in range(0, size, step)] or [0]
        name = "SplitBackward0"
    bounds = np.cumsum([0] + sizes)
    return V.multiple(tuple(apply(O.INDEX, x, key=(slice(None),) * d + (slice(int(a), int(b)),), name=name)
                            for a, b in zip(bounds[:-1], bounds[1:])), name.removesuffix("Backward0"))


def chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    x = _tensor_arg(x, "chunk")
    chunks = _int(chunks, "chunks")
    if chunks <= 0:
        raise ArgumentError("chunk expects `chunks` to be greater than 0, got: {}".format(chunks),
                            hint="chunks is how many pieces you want")
    size = x.shape[_dim(dim, x.ndim)]
    return split(x, builtins.max(-(-size // chunks), 1), dim)


def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    x = _with_dims(x, "unbind")
    d = _dim(dim, x.ndim)
    return V.multiple(tuple(apply(O.INDEX, x, key=(slice(None),) * d + (i,), name="UnbindBackward0")
                            for i in range(x.shape[d])), "Unbind")


def _index_array(index: Any, fn: str) -> np.ndarray:
    data = _tensor_arg(index, fn)._data
    if data.dtype.kind not in "iu":
        raise ArgumentError(f"{fn}(): Expected dtype int64 for index", hint="pass integer indices, e.g. tensor([0, 2])")
    return data.astype(np.intp)


def _along_key(x: Tensor, index: np.ndarray, d: int, fn: str) -> tuple:
    """gather/scatter's positions: index along d, the index's own position along every other dim."""
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise ShapeError("Index tensor must have the same number of dimensions as input tensor",
                         hint=f"the input has {x.ndim} dimensions and the index {index.ndim}")
    for k, (n, m) in enumerate(zip(index.shape, x.shape)):
        if k != d and n > m:
            raise ShapeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be smaller "
                             f"than self {list(x.shape)} apart from dimension {d}",
                             hint="the index may not be larger than the input outside dim")
    if index.size and (index.min() < -x.shape[d] or index.max() >= x.shape[d]):
        raise ShapeError(f"index {int(index.max())} is out of bounds for dimension {d} with size {x.shape[d]}",
                         hint=f"indices along dim {d} run from 0 to {x.shape[d] - 1}")
    grids = list(np.indices(index.shape, sparse=True))
    grids[d] = index
    return tuple(grids)


def gather(x: Any, dim: int, index: Any) -> Tensor:
    x = _tensor_arg(x, "gather")
    d = _dim(dim, x.ndim)
    return apply(O.INDEX, x, key=_along_key(x, _index_array(index, "gather"), d, "gather"), name="GatherBackward0")


def scatter(x: Any, dim: int, index: Any, src: Any = None, value: Any = None) -> Tensor:
    x = _tensor_arg(x, "scatter")
    d = _dim(dim, x.ndim)
    key = _along_key(x, _index_array(index, "scatter"), d, "scatter")
    source = value if src is None else src
    if isinstance(source, Tensor):
        return apply(O.SCATTER, x, source, key=key)
    return apply(O.SCATTER, x, _number(source, "scatter's value"), key=key, name="ScatterBackward1")


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Tensor:
    x = _tensor_arg(x, "scatter_add")
    d = _dim(dim, x.ndim)
    return apply(O.SCATTER_ADD, x, _tensor_arg(src, "scatter_add"),
                 key=_along_key(x, _index_array(index, "scatter_add"), d, "scatter_add"))


def index_select(x: Any, dim: int, index: Any) -> Tensor:
    x = _tensor_arg(x, "index_select")
    d = _dim(dim, x.ndim)
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise ShapeError("index_select(): Index is supposed to be a vector", hint="pass a 1-D index")
    if idx.size and (idx.min() < -x.shape[d] or idx.max() >= x.shape[d]):
        raise ShapeError("index out of range in self", hint=f"indices along dim {d} run from 0 to {x.shape[d] - 1}")
    return apply(O.INDEX, x, key=(slice(None),) * d + (idx.reshape(-1),), name="IndexSelectBackward0")


def _mask_arg(mask: Any, x: Tensor, fn: str) -> np.ndarray:
    data = _tensor_arg(mask, fn)._data
    if data.dtype != bool:
        raise ArgumentError(f"{fn} only supports boolean masks, but got mask with dtype {data.dtype}",
                            hint="compare to make a mask, e.g. x > 0")
    broadcast_shape(fn, data.shape, x.shape)
    return data


def masked_fill(x: Any, mask: Any, value: Any) -> Tensor:
    x = _tensor_arg(x, "masked_fill")
    m = _mask_arg(mask, x, "masked_fill")
    if broadcast_shape("masked_fill", m.shape, x.shape) != x.shape:
        raise ShapeError(f"masked_fill: the mask of shape {m.shape} must broadcast to the input's shape {x.shape}",
                         hint="the mask may not add dimensions to the input")
    if isinstance(value, Tensor) and value.ndim:
        raise ShapeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                         "dimension(s).", hint="fill with a number, or a 0-d tensor such as v[0]")
    fill = value if isinstance(value, Tensor) else _number(value, "masked_fill's value")
    return apply(O.WHERE, _wrap(np.broadcast_to(m, x.shape)), fill, x,
                 name="MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0")


def masked_select(x: Any, mask: Any) -> Tensor:
    x = _tensor_arg(x, "masked_select")
    m = _mask_arg(mask, x, "masked_select")
    shape = broadcast_shape("masked_select", m.shape, x.shape)
    if shape != x.shape:
        x = expand(x, shape)
    return apply(O.INDEX, x, key=(np.broadcast_to(m, shape),), name="MaskedSelectBackward0")


def take(x: Any, index: Any) -> Tensor:
    x = _tensor_arg(x, "take")
    idx = _index_array(index, "take")
    n = x.numel()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ShapeError(f"out of range: tried to access index {int(idx.max())} on a tensor of {n} elements.",
                         hint=f"take counts the elements of the flattened tensor, 0 to {n - 1}")
    return apply(O.INDEX, x, key=np.unravel_index(idx % builtins.max(n, 1), x.shape), name="TakeBackward0")

_EINSUM_OPERANDS = 8


def einsum(equation: str, *operands: Any) -> Tensor:
    """Explicit or implicit subscripts, with '...'; repeated letters for diagonals and traces."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = [_tensor_arg(x, "einsum") for x in operands]
    if not 1 <= len(xs) <= _EINSUM_OPERANDS:
        raise ArgumentError(f"einsum(): gradcli takes 1 to {_EINSUM_OPERANDS} tensors, got {len(xs)}",
                            hint="split a longer contraction into several einsums")
    eq = _explicit_einsum(str(equation).replace(" ", ""), xs)
    try:
        # NumPy's check of the subscripts against the shapes, computing nothing (views of one number)
        np.einsum_path(eq, *[np.broadcast_to(np.empty(()), x.shape) for x in xs], optimize=False)
    except ValueError as exc:
        raise ShapeError(f"einsum(): {exc}", hint="each operand needs one letter per dimension; a letter used "
                                                  "twice must name dimensions of the same size") from None
    return apply(O.variadic(O.EINSUM, len(xs)), *xs, equation=eq)


def _explicit_einsum(eq: str, xs: list) -> str:
    """'ij,jk' → 'ij,jk->ik', and each '...' spelled out with letters the equation does not use."""
    ins, _, result = eq.partition("->")
    subs = ins.split(",")
    if len(subs) != len(xs):
        raise ArgumentError(f"einsum(): {len(subs)} operands in the equation but {len(xs)} tensors were given",
                            hint="one comma-separated subscript per tensor")
    if "->" not in eq:
        counts = {c: "".join(subs).count(c) for c in "".join(subs) if c != "."}
        result = ("..." if any("..." in s for s in subs) else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1))
    if "..." in eq:
        spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
        widest = builtins.max(x.ndim - len(s.replace("...", "")) for s, x in zip(subs, xs) if "..." in s)
        letters = "".join(spare[:widest])
        subs = [s.replace("...", letters[widest - (x.ndim - len(s.replace("...", ""))):]) for s, x in zip(subs, xs)]
        result = result.replace("...", letters)
    return ",".join(subs) + "->" + result


def bmm(input: Any, mat2: Any) -> Tensor:
    a, b = _tensor_arg(input, "bmm"), _tensor_arg(mat2, "bmm")
    if a.ndim != 3 or b.ndim != 3:
        raise ShapeError("batch1 must be a 3D tensor" if a.ndim != 3 else "batch2 must be a 3D tensor",
                         hint="bmm multiplies two batches of matrices, shapes (b, n, m) and (b, m, p)")
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
                         f"but got: [{b.shape[0]}, {b.shape[1]}].", hint="both batches need the same size")
    if a.shape[2] != b.shape[1]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
                         f"but got: [{b.shape[0]}, {b.shape[1]}].", hint="the inner matrix sizes must agree")
    return apply(O.MATMUL, a, b, name="BmmBackward0")


_CROSS_DIM_DEPRECATED = ("UserWarning: Using torch.cross without specifying the dim arg is deprecated.\n"
                         "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                         "The default value of dim will change to agree with that of linalg.cross in a future release.")


def linalg_cross(input: Any, other: Any, dim: Any = -1) -> Tensor:
    """`torch.linalg.cross`: along `dim` (default the last), which must have 3 elements."""
    a, b = _tensor_arg(input, "cross"), _tensor_arg(other, "cross")
    if a.ndim != b.ndim:
        raise ShapeError("linalg.cross: inputs must have the same number of dimensions.",
                         hint=f"the shapes are {tuple(a.shape)} and {tuple(b.shape)}; unsqueeze one to match")
    shape = broadcast_shape("linalg.cross", a.shape, b.shape)
    d = _dim(dim, len(shape))
    if shape[d] != 3:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                         f"{b.shape[d]}", hint="the cross product is of 3-vectors")
    return apply(O.CROSS, a, b, dim=d - len(shape))


def cross(input: Any, other: Any, dim: Any = None) -> Tensor:
    """`torch.cross`/`x.cross(y)`: without `dim`, PyTorch 2 crosses along the input's FIRST dimension of
    size 3, not the last as `torch.linalg.cross` does, and warns that this default will change."""
    if dim is None:
        warn_once(_CROSS_DIM_DEPRECATED)
        sizes = _tensor_arg(input, "cross").shape
        if 3 not in sizes:
            raise ShapeError("no dimension of size 3 in input",
                             hint=f"the input's shape is {tuple(sizes)}; the cross product is of 3-vectors")
        dim = sizes.index(3)
    return linalg_cross(input, other, dim)


COMPOSITES: tuple[Composite, ...] = (
    *(Composite(_cast_method(name, dtype), (), (name,), O.CAST) for name, dtype in _CASTS.items()),
    Composite(linalg_cross, op=O.CROSS, linalg=("cross",)),
    Composite(t, ("t",), ("t",), O.TRANSPOSE),
    Composite(transpose, ("transpose", "swapdims"), ("transpose", "swapdims"), O.TRANSPOSE),
    Composite(swapaxes, ("swapaxes",), ("swapaxes",), O.TRANSPOSE),
    Composite(reshape, ("reshape",), ("reshape",), O.RESHAPE),
    Composite(view, (), ("view",), O.RESHAPE),
    Composite(permute, ("permute",), ("permute",), O.PERMUTE),
    Composite(expand, (), ("expand",), O.EXPAND),
    Composite(repeat, (), ("repeat",), O.REPEAT),
    Composite(tile, ("tile",), ("tile",), O.REPEAT),
    Composite(flip, ("flip",), ("flip",), O.FLIP, packs=True),
    Composite(split, ("split",), ("split",), O.INDEX, renamed=(("split_size", "split_size_or_sections"),)),
    Composite(cat, ("cat", "concat"), (), O.CAT),
    Composite(stack, ("stack",), (), O.STACK),
    Composite(einsum, ("einsum",), (), O.EINSUM),
    Composite(bmm, ("bmm",), ("bmm",), O.MATMUL),
    Composite(cross, ("cross",), ("cross",), O.CROSS),
    Composite(flatten, ("flatten",), ("flatten",), O.RESHAPE),
    Composite(unflatten, ("unflatten",), ("unflatten",), O.RESHAPE),
    Composite(view_as, (), ("view_as",), O.RESHAPE),
    Composite(reshape_as, (), ("reshape_as",), O.RESHAPE),
    Composite(movedim, ("movedim", "moveaxis"), ("movedim", "moveaxis"), O.PERMUTE),
    Composite(fliplr, ("fliplr",), ("fliplr",), O.FLIP),
    Composite(flipud, ("flipud",), ("flipud",), O.FLIP),
    Composite(roll, ("roll",), ("roll",), O.ROLL),
    Composite(tril, ("tril",), ("tril",), O.TRIL, in_place=True),
    Composite(triu, ("triu",), ("triu",), O.TRIU, in_place=True),
    Composite(diag, ("diag",), ("diag",), O.INDEX),
    Composite(diagonal, ("diagonal",), ("diagonal",), O.INDEX),
    Composite(diag_embed, ("diag_embed",), ("diag_embed",), O.DIAG_EMBED),
    Composite(trace, ("trace",), ("trace",), O.SUM),
    Composite(narrow, ("narrow",), ("narrow",), O.INDEX),
    Composite(chunk, ("chunk",), ("chunk",), O.INDEX),
    Composite(unbind, ("unbind",), ("unbind",), O.INDEX),
    Composite(gather, ("gather",), ("gather",), O.INDEX),
    Composite(scatter, ("scatter",), ("scatter",), O.SCATTER, in_place=True),
    Composite(scatter_add, ("scatter_add",), ("scatter_add",), O.SCATTER_ADD, in_place=True),
    Composite(index_select, ("index_select",), ("index_select",), O.INDEX),
    Composite(masked_fill, ("masked_fill",), ("masked_fill",), O.WHERE, in_place=True),
    Composite(masked_select, ("masked_select",), ("masked_select",), O.INDEX),
    Composite(take, ("take",), ("take",), O.INDEX),
    Composite(squeeze, ("squeeze",), ("squeeze",), O.RESHAPE),
    Composite(unsqueeze, ("unsqueeze",), ("unsqueeze",), O.RESHAPE),
)
"""The torch.X of this family that are also Tensor.X with the same arguments, declared with their names and the
primitive they record: Tensor.X and the language's tables are derived from these (`engine/tensor.py`,
`lang/builtins.py`)."""
