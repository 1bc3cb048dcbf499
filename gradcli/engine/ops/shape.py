"""Indexing and shape: views (reshape, transpose, permute, expand), indexing and index_put, cat and
stack, flip/roll/repeat, triangles and diagonals, scatter, and the copies (clone, to)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from gradcli.engine.narrow import astype
from gradcli.engine.ops.op import diagonal_jvp, linear_jvp, Op, sum_linear_jvp, _unary


def _index_forward(x: np.ndarray, key: Any) -> np.ndarray:
    """x[key]; where NumPy would give a scalar (every dimension indexed by an integer), the 0-d view of
    the same element, since PyTorch's `x[0]` is a view that an in-place update writes through."""
    out = x[key]
    return out if type(out) is np.ndarray else x[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]


def _index_put_forward(g: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
    """Scatter-add `g` into zeros of `shape`: repeated integer indices accumulate."""
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def _cat_forward(*xs: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.concatenate(xs, axis=dim)


def _stack_forward(*xs: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.stack(xs, axis=dim)


def _piece(ns: Any, g: Any, xs: tuple, i: int, dim: int) -> Any:
    start = sum(x.shape[dim] for x in xs[:i])
    key = (slice(None),) * dim + (slice(start, start + xs[i].shape[dim]),)
    return ns.index(g, key)


def _cat_vjps(count: int) -> tuple[Callable, ...]:
    return tuple((lambda i: lambda ns, g, out, *xs, dim=0: _piece(ns, g, xs, i, dim))(i) for i in range(count))


def _stack_vjps(count: int) -> tuple[Callable, ...]:
    return tuple((lambda i: lambda ns, g, out, *xs, dim=0: ns.index(g, (slice(None),) * dim + (i,)))(i)
                 for i in range(count))


def _expand_forward(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only broadcast view; where nothing is repeated (only sizes of 1 added), a writeable view,
    since PyTorch writes an in-place update of that one through to the input."""
    return np.reshape(x, shape) if math.prod(shape) == x.size else np.broadcast_to(x, shape)


def _swap(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    return np.swapaxes(x, dim0, dim1)

RESHAPE = Op(name="reshape", node="ViewBackward0", forward=lambda x, shape: np.reshape(x, shape),
             vjps=(lambda ns, g, o, x, shape: ns.reshape(g, x.shape),),
             jvp=linear_jvp, rule="reshape back to the input's shape",
             nests=False, sym=lambda S, x, shape: x.reshape(shape))
TRANSPOSE = Op(name="transpose", node="TransposeBackward0", forward=_swap,
               vjps=(lambda ns, g, o, x, dim0, dim1: ns.transpose(g, dim0, dim1),),
               jvp=linear_jvp, rule="transpose the gradient back",
               nests=False, sym=lambda S, x, dim0, dim1: np.swapaxes(x, dim0, dim1))
PERMUTE = Op(name="permute", node="PermuteBackward0", forward=lambda x, dims: np.transpose(x, dims),
             vjps=(lambda ns, g, o, x, dims: ns.permute(g, tuple(np.argsort(dims))),),
             jvp=linear_jvp, rule="permute the gradient back",
             nests=False, sym=lambda S, x, dims: np.transpose(x, dims))
EXPAND = Op(name="expand", node="ExpandBackward0", forward=_expand_forward,
            vjps=(lambda ns, g, o, x, shape: g,), jvp=linear_jvp, rule="sum the gradient over the expanded axes",
            nests=False, sym=lambda S, x, shape: np.broadcast_to(x, shape))
INDEX = Op(name="index", node="IndexBackward0", forward=_index_forward,
           vjps=(lambda ns, g, o, x, key: ns.index_put(g, x.shape, key),),
           jvp=linear_jvp, rule="scatter the gradient back into zeros",
           nests=False, sym=lambda S, x, key: S.as_array(x[key]))
INDEX_PUT = Op(name="index_put", node="IndexPutBackward0", forward=_index_put_forward,
               vjps=(lambda ns, g, o, v, shape, key: ns.index(g, key),),
               jvp=linear_jvp, rule="gather the gradient at the indices",
               nests=False, sym=lambda S, v, shape, key: S.index_put(v, shape, key))
CAT = Op(name="cat", node="CatBackward0", forward=_cat_forward, vjps=(),
         jvp=sum_linear_jvp, rule="split the gradient back along dim",
         nests=False, sym=lambda S, *xs, dim=0: np.concatenate(xs, axis=dim))
STACK = Op(name="stack", node="StackBackward0", forward=_stack_forward, vjps=(),
           jvp=sum_linear_jvp, rule="select each input's slice of the gradient",
           nests=False, sym=lambda S, *xs, dim=0: np.stack(xs, axis=dim))


# -- more shapes and indexing (flip ... einsum) ----------------------------------------------------
def _repeat_forward(x: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    return np.tile(x, repeats)


def _repeat_vjp(ns: Any, g: Any, out: Any, x: Any, repeats: tuple[int, ...]) -> Any:
    """Each output axis of size r·n splits into (r, n); summing the r copies gives the input's gradient."""
    lead = len(repeats) - x.ndim
    shape = (1,) * lead + tuple(x.shape)
    split = tuple(n for r, s in zip(repeats, shape) for n in (r, s))
    summed = ns.sum(ns.reshape(g, split), dim=tuple(range(0, 2 * len(repeats), 2)))
    return ns.reshape(summed, x.shape)


def _triangle(upper: bool) -> Callable:
    def forward(x: np.ndarray, diagonal: int = 0) -> np.ndarray:
        return np.triu(x, diagonal) if upper else np.tril(x, diagonal)
    return forward


def _triangle_mask(shape: tuple[int, ...], diagonal: int, upper: bool) -> np.ndarray:
    rows, cols = np.indices(shape[-2:], sparse=True)
    return cols - rows >= diagonal if upper else cols - rows <= diagonal


def _diagonal_forward(x: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(x, offset, dim1, dim2).copy()


def _diag_embed_forward(x: np.ndarray, offset: int = 0, dim1: int = -2, dim2: int = -1) -> np.ndarray:
    """The last axis of x on the `offset` diagonal of two new axes (dim1, dim2) of the output."""
    m = x.shape[-1]
    n = m + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    row, col = max(-offset, 0), max(offset, 0)
    np.einsum("...ii->...i", out[..., row:row + m, col:col + m])[...] = x
    ndim = out.ndim
    return np.moveaxis(out, (-2, -1), (dim1 % ndim, dim2 % ndim))


def _diag_embed_vjp(ns: Any, g: Any, out: Any, x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    return ns.diagonal(g, offset, dim1 % g.ndim, dim2 % g.ndim)


def _scatter_forward(x: np.ndarray, src: Any, key: tuple) -> np.ndarray:
    out = np.array(x, copy=True)
    out[key] = _scattered(src, key)
    return out


def _scattered(src: Any, key: tuple) -> Any:
    """The source values that land at `key`: the leading block of src (index's shape), or a number."""
    src = np.asarray(src)
    if src.ndim == 0:
        return src
    shape = np.broadcast_shapes(*(np.shape(k) for k in key))
    return src[tuple(slice(0, n) for n in shape)]


def _scatter_add_forward(x: np.ndarray, src: np.ndarray, key: tuple) -> np.ndarray:
    out = np.array(x, copy=True)
    np.add.at(out, key, _scattered(src, key))
    return out


def _untouched(shape: tuple[int, ...], key: tuple, dtype: np.dtype) -> np.ndarray:
    """1 where scatter keeps the input, 0 where it writes over it."""
    mask = np.ones(shape, dtype=dtype)
    mask[key] = 0
    return mask


def _src_gradient(ns: Any, g: Any, src: Any, key: tuple) -> Any:
    """The gradient gathered at `key`, put back in src's shape (zeros past index's block)."""
    picked = ns.index(g, key)
    if picked.shape == src.shape:
        return picked
    pieces = tuple(slice(0, n) for n in picked.shape)
    return ns.index_put(picked, src.shape, pieces)


def _roll_forward(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...] | None = None) -> np.ndarray:
    """Without dims, the flattened tensor rolls (by its one shift) and keeps its shape."""
    return np.roll(x, shifts[0] if dims is None else shifts, dims)


def _roll_vjp(ns: Any, g: Any, out: Any, x: Any, shifts: tuple[int, ...], dims: tuple[int, ...] | None) -> Any:
    return ns.roll(g, tuple(-s for s in shifts), dims)

FLIP = Op(name="flip", node="FlipBackward0", forward=lambda x, dims: np.flip(x, dims).copy(),  # a copy, as PyTorch's
          vjps=(lambda ns, g, o, x, dims: ns.flip(g, dims),), jvp=linear_jvp, rule="flip the gradient back",
          nests=False, sym=lambda S, x, dims: np.flip(x, dims))
ROLL = Op(name="roll", node="RollBackward0", forward=_roll_forward, vjps=(_roll_vjp,),
          jvp=linear_jvp,
          rule="roll the gradient back", nests=False, sym=lambda S, x, shifts, dims: _roll_forward(x, shifts, dims))
REPEAT = Op(name="repeat", node="RepeatBackward0", forward=_repeat_forward, vjps=(_repeat_vjp,),
            jvp=linear_jvp,
            rule="sum the gradient over the copies", nests=False, sym=lambda S, x, repeats: np.tile(x, repeats))
TRIL = Op(name="tril", node="TrilBackward0", forward=_triangle(upper=False),
          vjps=(lambda ns, g, o, x, diagonal=0: ns.tril(g, diagonal),),
          jvp=linear_jvp, rule="keep the gradient's lower triangle",
          nests=False, sym=lambda S, x, diagonal=0: S.masked(x, _triangle_mask(x.shape, diagonal, upper=False)))
TRIU = Op(name="triu", node="TriuBackward0", forward=_triangle(upper=True),
          vjps=(lambda ns, g, o, x, diagonal=0: ns.triu(g, diagonal),),
          jvp=linear_jvp, rule="keep the gradient's upper triangle",
          nests=False, sym=lambda S, x, diagonal=0: S.masked(x, _triangle_mask(x.shape, diagonal, upper=True)))
DIAG_EMBED = Op(name="diag_embed", node="DiagEmbedBackward0", forward=_diag_embed_forward, vjps=(_diag_embed_vjp,),
                jvp=linear_jvp, rule="take the gradient's diagonal", nests=False,
                sym=lambda S, x, offset=0, dim1=-2, dim2=-1: S.diag_embed(x, offset, dim1, dim2))
SCATTER = Op(name="scatter", node="ScatterBackward0", forward=_scatter_forward,
             vjps=(lambda ns, g, o, x, src, key: g * _untouched(g.shape, key, g.dtype),
                   lambda ns, g, o, x, src, key: _src_gradient(ns, g, src, key)),
             jvp=sum_linear_jvp, rule="∂/∂input = 1 where not written, ∂/∂src = the gradient at the index", args="xs",
             nests=False, sym=lambda S, x, src, key: S.scatter(x, _scattered(src, key), key, add=False))
SCATTER_ADD = Op(name="scatter_add", node="ScatterAddBackward0", forward=_scatter_add_forward,
                 vjps=(lambda ns, g, o, x, src, key: g, lambda ns, g, o, x, src, key: _src_gradient(ns, g, src, key)),
                 jvp=sum_linear_jvp, rule="∂/∂input = 1, ∂/∂src = the gradient at the index", args="xs",
                 nests=False, sym=lambda S, x, src, key: S.scatter(x, _scattered(src, key), key, add=True))
CLONE = _unary(name="clone", node="CloneBackward0", forward=np.array, vjp=lambda ns, g, o, x: g,
               rule="∂copy(x)/∂x = 1", saves="",
               nests=False, sym=lambda S, x: x)
SEEN_THROUGH = _unary(name="detach", node="AliasBackward0", forward=lambda x: x, vjp=lambda ns, g, o, x: g,
                      rule="x.detach() or x.data inside a Function's forward, as --check records it: the identity",
                      saves="", nests=False, sym=lambda S, x: x, function=False, method=False)
"""Recorded only while `--check` records a Function's forward (`engine.function`): PyTorch runs that forward
with gradients off, so a detach there cuts nothing and the forward's math goes through it. Not in `OPS`:
no program calls it."""
CAST = Op(name="to", node="ToCopyBackward0", forward=astype,
          vjps=(lambda ns, g, o, x, dtype: ns.cast(g, x.dtype),),
          jvp=diagonal_jvp, rule="cast the gradient back to the input's dtype",
          nests=False, elementwise=True, sym=lambda S, x, dtype: x)


OPS: tuple[Op, ...] = (
    RESHAPE, TRANSPOSE, PERMUTE, EXPAND, INDEX, INDEX_PUT, CAT, STACK, CLONE, CAST, FLIP, ROLL, REPEAT, TRIL, TRIU,
    DIAG_EMBED, SCATTER, SCATTER_ADD,
)
"""This family's primitives, in `TABLE` (the package joins the families)."""
