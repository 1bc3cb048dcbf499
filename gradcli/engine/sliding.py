"""The arithmetic of sliding windows: convolution, pooling, unfold and fold, for the op table.

Every such op reads its input through the same window geometry: a kernel of `kernel` positions
`dilation` apart, moved `stride` at a time over the input padded by `padding` ((low, high) per
spatial dimension). `windows` gathers each kernel position as one strided slice, so the work is a
loop over the kernel's few positions, never over pixels, and the very same lines build the SymPy
meaning on object arrays. A convolution is then one matmul of the weight with the unfolded input
(im2col), and its backward the matmul's transpose folded back (col2im).

The entries themselves (node names, rules, saves) are in `ops`; this module does not know them.
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

Geometry = tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...], tuple[int, ...]]
"""kernel, dilation, padding ((low, high) per spatial dimension), stride."""


def out_size(size: int, k: int, d: int, pad: tuple[int, int], s: int) -> int:
    return (size + pad[0] + pad[1] - d * (k - 1) - 1) // s + 1


def _padded(x: np.ndarray, padding: tuple[tuple[int, int], ...], fill: Any) -> np.ndarray:
    if not any(lo or hi for lo, hi in padding):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=fill)


def windows(x: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...],
            padding: tuple[tuple[int, int], ...], stride: tuple[int, ...], fill: Any = 0.0) -> np.ndarray:
    """(N, C, *spatial) -> (N, C, *kernel, *out): a read-only strided view of the padded input, no copy
    (each kernel position's slice of it is strided by `stride`, its offsets by `dilation`)."""
    p = _padded(x, padding, fill)
    sizes = tuple(out_size(n, k, d, pad, s) for n, k, d, pad, s in zip(x.shape[2:], kernel, dilation, padding, stride))
    steps = p.strides[2:]
    strides = p.strides[:2] + tuple(t * d for t, d in zip(steps, dilation)) + tuple(t * s for t, s in zip(steps, stride))
    return as_strided(p, x.shape[:2] + tuple(kernel) + sizes, strides, writeable=False)


def im2col(x: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...], zero: Any = None) -> np.ndarray:
    """`F.unfold`'s layout: (N, C·∏kernel, ∏out). `zero` is SymPy's 0 for a meaning."""
    w = windows(x, kernel, dilation, padding, stride, x.dtype.type(0) if zero is None else zero)
    cols = w.reshape(x.shape[0], x.shape[1] * math.prod(kernel), -1)
    return cols if cols.flags.writeable else cols.copy()  # a 1x1 kernel reshapes without a copy: still a new array


def col2im(cols: np.ndarray, output_size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...], zero: Any = None) -> np.ndarray:
    """`F.fold`: every column entry added back at the input position it was read from (im2col's transpose).

    The sums run with the spatial dimensions outermost (N and C innermost), so each kernel position's
    strided add walks long contiguous runs instead of one short row per pixel row."""
    n, ck, _ = cols.shape
    c, nd = ck // math.prod(kernel), len(kernel)
    sizes = tuple(out_size(m, k, d, pad, s) for m, k, d, pad, s in zip(output_size, kernel, dilation, padding, stride))
    blocks = cols.reshape((n, c) + tuple(kernel) + sizes).transpose(tuple(range(2, 2 + 2 * nd)) + (0, 1))
    full = tuple(m + lo + hi for m, (lo, hi) in zip(output_size, padding))
    out = np.empty(full + (n, c), dtype=cols.dtype)
    out[...] = cols.dtype.type(0) if zero is None else zero
    for at in itertools.product(*map(range, kernel)):
        key = tuple(slice(i * d, i * d + s * (m - 1) + 1, s) for i, d, s, m in zip(at, dilation, stride, sizes))
        out[key] += blocks[at]
    crop = tuple(slice(lo, lo + m) for m, (lo, _) in zip(output_size, padding))
    return np.ascontiguousarray(out[crop].transpose((nd, nd + 1) + tuple(range(nd))))


# -- convolution ------------------------------------------------------------------------------------
def conv_forward(x: np.ndarray, w: np.ndarray, b: Any, stride: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                 dilation: tuple[int, ...], groups: int) -> np.ndarray:
    kernel = w.shape[2:]
    cols = im2col(x, kernel, dilation, padding, stride)
    out = _grouped_product(w, cols, groups)
    out = out.reshape(out.shape[:2] + _out_sizes(x, kernel, dilation, padding, stride))
    if isinstance(b, np.ndarray) and b.ndim:
        out += b.reshape((-1,) + (1,) * len(kernel))
    return out


def _out_sizes(x: Any, kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...],
               stride: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(out_size(n, k, d, pad, s) for n, k, d, pad, s in zip(x.shape[2:], kernel, dilation, padding, stride))


def _grouped_product(w: np.ndarray, cols: np.ndarray, groups: int) -> np.ndarray:
    """W·cols per sample and group: (O, C/G, *k) with (N, C·∏k, L) -> (N, O, L), contiguous as PyTorch's
    output (a `view` of it must work); one batched BLAS matmul whatever the groups."""
    o, n, length = w.shape[0], cols.shape[0], cols.shape[2]
    return np.matmul(w.reshape(groups, o // groups, -1), cols.reshape(n, groups, -1, length)).reshape(n, o, length)


def conv_vjp_input(ns: Any, g: Any, out: Any, x: Any, w: Any, b: Any, stride: tuple[int, ...],
                   padding: tuple[tuple[int, int], ...], dilation: tuple[int, ...], groups: int) -> Any:
    """fold(Wᵀ·G): per sample and group, (C/G·∏k, O/G) @ (O/G, L), then each column added back where it was read."""
    n, o = g.shape[0], g.shape[1]
    wg = ns.reshape(w, (groups, o // groups, -1))
    cols = ns.matmul(ns.transpose(wg, 1, 2), ns.reshape(g, (n, groups, o // groups, -1)))  # (N, G, C/G·∏k, L)
    cols = ns.reshape(cols, (n, x.shape[1] * math.prod(w.shape[2:]), -1))
    return ns.col2im(cols, tuple(x.shape[2:]), tuple(w.shape[2:]), dilation, padding, stride)


def conv_vjp_weight(ns: Any, g: Any, out: Any, x: Any, w: Any, b: Any, stride: tuple[int, ...],
                    padding: tuple[tuple[int, int], ...], dilation: tuple[int, ...], groups: int) -> Any:
    """Σ over samples of G·unfold(x)ᵀ: (O/G, L) @ (L, C/G·∏k) per sample and group, one batched matmul."""
    n, o = g.shape[0], g.shape[1]
    cols = ns.im2col(x, tuple(w.shape[2:]), dilation, padding, stride)
    cg = ns.reshape(cols, (n, groups, cols.shape[1] // groups, -1))
    per_sample = ns.matmul(ns.reshape(g, (n, groups, o // groups, -1)), ns.transpose(cg, 2, 3))
    return ns.reshape(ns.sum(per_sample, dim=(0,)), tuple(w.shape))


def conv_vjp_bias(ns: Any, g: Any, out: Any, x: Any, w: Any, b: Any, **params: Any) -> Any:
    return ns.sum(g, dim=(0,) + tuple(range(2, g.ndim)))


def conv_sym(S: Any, x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: tuple[int, ...],
             padding: tuple[tuple[int, int], ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """Σ w·x over each window and input channel of the group, plus the bias: sums of products."""
    kernel = w.shape[2:]
    cols = im2col(x, kernel, dilation, padding, stride, S.number(0))
    n, o, length = x.shape[0], w.shape[0], cols.shape[2]
    out = S.matmul(w.reshape(groups, o // groups, -1), cols.reshape(n, groups, -1, length))
    out = out.reshape((n, o) + _out_sizes(x, kernel, dilation, padding, stride))
    bias = b.reshape((-1,) + (1,) * len(kernel)) if b.ndim else b
    return S.broadcast(S.add, out, bias)


# -- pooling ----------------------------------------------------------------------------------------
def _window_axes(nd: int) -> tuple[int, ...]:
    return tuple(range(2, 2 + nd))


def max_pool_at(x: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...],
                padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> np.ndarray:
    """The flat index (into x in row-major order) of each window's maximum, chosen as PyTorch's kernel
    does: the first of tied maxima, the last nan, and padding never (a window of -inf picks its first
    real element). The scan runs over the kernel's few offsets, each one contiguous slab of a copy of
    the windows with the kernel axes outermost: no per-pixel loop, no short strided rows."""
    nd = len(kernel)
    lead = tuple(range(2, 2 + nd))
    order = lead + (0, 1) + tuple(range(2 + nd, 2 + 2 * nd))
    slabs = np.ascontiguousarray(windows(x, kernel, dilation, padding, stride, -np.inf).transpose(order))
    slabs = slabs.reshape((-1,) + slabs.shape[nd:])
    real = None
    if any(lo or hi for lo, hi in padding):
        inside = windows(np.ones((1, 1) + x.shape[2:], bool), kernel, dilation, padding, stride, False)
        real = np.ascontiguousarray(inside.transpose(order)).reshape((-1,) + inside.shape[2 + nd:])
    nan = bool(np.isnan(x).any())
    best, pick = slabs[0].copy(), np.zeros(slabs.shape[1:], np.int32)
    seen = None if real is None else np.broadcast_to(real[0], best.shape).copy()
    for at in range(1, len(slabs)):
        v = slabs[at]
        take = v > best
        if nan:
            take |= np.isnan(v)
        if real is not None:
            take = (take | ~seen) & real[at]
            seen |= real[at]
        np.maximum(best, v, out=best)
        # offsets rise, so the last one taken is the largest: no masked write (a random mask stalls them)
        np.maximum(pick, take * np.int32(at), out=pick)
    return _flat_positions(x.shape, pick, kernel, dilation, padding, stride)


def _flat_positions(shape: tuple[int, ...], pick: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...],
                    padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> np.ndarray:
    """Window offsets (row-major within the kernel) -> flat indices into an array of `shape`."""
    nd = len(kernel)
    steps = [math.prod(shape[2 + d + 1:]) for d in range(nd)]
    lead = np.arange(shape[0] * shape[1]).reshape(shape[:2] + (1,) * nd) * math.prod(shape[2:])
    for d in range(nd):
        start = np.arange(pick.shape[2 + d]) * stride[d] - padding[d][0]
        lead = lead + (start * steps[d]).reshape((1, 1) + tuple(-1 if e == d else 1 for e in range(nd)))
    deltas = sum(np.arange(k).reshape(tuple(-1 if e == d else 1 for e in range(nd))) * dil * steps[d]
                 for d, (k, dil) in enumerate(zip(kernel, dilation)))
    return lead + np.asarray(deltas).reshape(-1)[pick]


def max_pool_sym(S: Any, x: np.ndarray, key: tuple, kernel: tuple[int, ...], dilation: tuple[int, ...],
                 padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> np.ndarray:
    """Max over each window (padding never wins)."""
    nd = len(kernel)
    w = windows(x, kernel, dilation, padding, stride, S.number(-math.inf))
    return S.reduce(S.max_all, w, _window_axes(nd), False)


def max_pool_kink(K: Any, x: np.ndarray, key: tuple, kernel: tuple[int, ...], dilation: tuple[int, ...],
                  padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> np.ndarray:
    """Elements tied for their window's maximum: PyTorch routes the gradient to the first only."""
    x = np.asarray(x, dtype=float)
    nd = len(kernel)
    flat = windows(np.arange(x.size, dtype=np.int64).reshape(x.shape), kernel, dilation, padding, stride, -1)
    tied = K.extremum_kink(windows(x, kernel, dilation, padding, stride, -np.inf), _window_axes(nd), np.max)
    mask = np.zeros(x.size, dtype=bool)
    mask[flat[tied & (flat >= 0)]] = True
    return mask.reshape(x.shape)


def avg_pool_forward(x: np.ndarray, kernel: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                     stride: tuple[int, ...], divisor: np.ndarray | None = None) -> np.ndarray:
    """Each window's sum over its size, or over `divisor` (one number per output position: PyTorch's
    count for ceil_mode's windows, count_include_pad=False or divisor_override)."""
    ones = (1,) * len(kernel)
    total = windows(x, kernel, ones, padding, stride, x.dtype.type(0)).sum(axis=_window_axes(len(kernel)))
    return total / (x.dtype.type(math.prod(kernel)) if divisor is None else divisor.astype(x.dtype))


def avg_pool_vjp(ns: Any, g: Any, out: Any, x: Any, kernel: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                 stride: tuple[int, ...], divisor: np.ndarray | None = None) -> Any:
    n, c = g.shape[0], g.shape[1]
    k = math.prod(kernel)
    share = g * (1.0 / k) if divisor is None else g * ns.constant((1.0 / divisor).astype(g.dtype))
    spread = ns.expand(ns.reshape(share, (n, c, 1, -1)), (n, c, k, math.prod(g.shape[2:])))
    return ns.col2im(ns.reshape(spread, (n, c * k, -1)), tuple(x.shape[2:]), kernel, (1,) * len(kernel), padding,
                     stride)


def avg_pool_sym(S: Any, x: np.ndarray, kernel: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                 stride: tuple[int, ...], divisor: np.ndarray | None = None) -> np.ndarray:
    """The mean of each window, padding counted as zeros (count_include_pad=True), or its sum over `divisor`."""
    ones = (1,) * len(kernel)
    w = windows(x, kernel, ones, padding, stride, S.number(0))
    if divisor is None:
        return S.reduce(S.mean_all, w, _window_axes(len(kernel)), False)
    return S.broadcast(S.div, S.reduce(S.add_all, w, _window_axes(len(kernel)), False), S.constant(divisor))
