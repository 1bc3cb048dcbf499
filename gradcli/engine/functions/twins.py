"""The tensor twins of `ops.NUMPY`'s hand-written array helpers, for VJPs under create_graph."""
from __future__ import annotations

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.engine.functions.elementwise import where
from gradcli.engine.functions.shape import expand, permute, reshape, unsqueeze
from gradcli.engine.functions.reductions import prod


# -- for VJPs under create_graph (the tensor twin of ops.NUMPY) -------------------------------
def first_along(mask: Tensor, axis: int) -> Tensor:
    return _wrap(O.NUMPY.first_along(mask._data, axis))


def prod_others(x: Tensor, dim: tuple[int, ...] | None, out: Tensor) -> Tensor:
    """The product of the other elements of each slice, differentiable to any order.

    Without zeros it is out / x. With zeros each slice of n elements becomes an n x n matrix with
    ones on its diagonal, whose row products are exact and built from differentiable ops (O(n²),
    only under create_graph, where a Hessian needs prod's second derivative at a zero).
    """
    if np.all(x._data != 0):
        return _back(out, x, dim) / x
    axes = tuple(range(x.ndim)) if dim is None else dim
    order = tuple(d for d in range(x.ndim) if d not in axes) + axes
    moved = permute(x, order)
    lead = moved.shape[:x.ndim - len(axes)]
    n = int(np.prod(moved.shape[len(lead):], dtype=np.int64))
    rows = expand(unsqueeze(reshape(moved, lead + (n,)), -2), lead + (n, n))
    others = prod(where(np.eye(n, dtype=bool), 1.0, rows), dim=-1)
    return permute(reshape(others, moved.shape), tuple(np.argsort(order)))


def _back(out: Tensor, x: Tensor, dim: tuple[int, ...] | None) -> Tensor:
    return reshape(out, O.reduced_shape(x.shape, dim))


# -- for the VJPs of torch.nn.functional under create_graph -----------------------------------
def gelu_backward(g: Tensor, x: Tensor, approximate: str) -> Tensor:
    return apply(O.GELU_BACKWARD, g, x, approximate=approximate)


def constant_pad_nd(x: Tensor, pad: tuple[int, ...], value: float = 0.0) -> Tensor:
    return apply(O.CONSTANT_PAD, x, pad=tuple(pad), value=float(value))


def im2col(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...],
           stride: tuple[int, ...]) -> Tensor:
    """Unfold (N, C, *spatial) into (N, C·∏kernel, ∏out): a convolution's and an unfold's primitive."""
    return apply(O.IM2COL, x, kernel=kernel, dilation=dilation, padding=padding, stride=stride)


def col2im(cols: Tensor, output_size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> Tensor:
    """Fold columns back into (N, C, *output_size), adding overlaps: im2col's transpose."""
    return apply(O.COL2IM, cols, output_size=output_size, kernel=kernel, dilation=dilation, padding=padding,
                 stride=stride)
