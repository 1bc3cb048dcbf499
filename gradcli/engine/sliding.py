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
    """(N, C, *spatial) -> (N, C, *kernel, *out): each kernel position's strided slice of the padded input."""
    p = _padded(x, padding, fill)
    sizes = tuple(out_size(n, k, d, pad, s) for n, k, d, pad, s in zip(x.shape[2:], kernel, dilation, padding, stride))
    out = np.empty(x.shape[:2] + tuple(kernel) + sizes, dtype=x.dtype)
    for at in itertools.product(*map(range, kernel)):
        key = tuple(slice(i * d, i * d + s * (n - 1) + 1, s) for i, d, s, n in zip(at, dilation, stride, sizes))
        out[(slice(None), slice(None)) + at] = p[(slice(None), slice(None)) + key]
    return out


def im2col(x: np.ndarray, kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...], zero: Any = None) -> np.ndarray:
    """`F.unfold`'s layout: (N, C·∏kernel, ∏out). `zero` is SymPy's 0 for a meaning."""
    w = windows(x, kernel, dilation, padding, stride, x.dtype.type(0) if zero is None else zero)
    return w.reshape(x.shape[0], x.shape[1] * math.prod(kernel), -1)


def col2im(cols: np.ndarray, output_size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...], zero: Any = None) -> np.ndarray:
    """`F.fold`: every column entry added back at the input position it was read from (im2col's transpose)."""
    n, ck, _ = cols.shape
    c = ck // math.prod(kernel)
    sizes = tuple(out_size(m, k, d, pad, s) for m, k, d, pad, s in zip(output_size, kernel, dilation, padding, stride))
    blocks = cols.reshape((n, c) + tuple(kernel) + sizes)
    full = tuple(m + lo + hi for m, (lo, hi) in zip(output_size, padding))
    out = np.empty((n, c) + full, dtype=cols.dtype)
    out[...] = cols.dtype.type(0) if zero is None else zero
    for at in itertools.product(*map(range, kernel)):
        key = tuple(slice(i * d, i * d + s * (m - 1) + 1, s) for i, d, s, m in zip(at, dilation, stride, sizes))
        out[(slice(None), slice(None)) + key] += blocks[(slice(None), slice(None)) + at]
    crop = tuple(slice(lo, lo + m) for m, (lo, _) in zip(output_size, padding))
    return out[(slice(None), slice(None)) + crop]


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
    """W·cols per group: (O, C/g, *k) with (N, C·∏k, L) -> (N, O, L); one BLAS call when groups == 1."""
    o, n, length = w.shape[0], cols.shape[0], cols.shape[2]
    if groups == 1:
        flat = np.ascontiguousarray(cols.transpose(1, 0, 2)).reshape(cols.shape[1], n * length)
        return (w.reshape(o, -1) @ flat).reshape(o, n, length).transpose(1, 0, 2)
    wg = w.reshape(groups, o // groups, -1)
    return np.matmul(wg, cols.reshape(n, groups, -1, length)).reshape(n, o, length)


def _by_group(ns: Any, g: Any, groups: int) -> Any:
    """(N, O, *out) -> (G, O/G, N·L): every sample's positions side by side, so each group is one matmul."""
    n, o = g.shape[0], g.shape[1]
    return ns.reshape(ns.permute(ns.reshape(g, (n, groups, o // groups, -1)), (1, 2, 0, 3)), (groups, o // groups, -1))


def conv_vjp_input(ns: Any, g: Any, out: Any, x: Any, w: Any, b: Any, stride: tuple[int, ...],
                   padding: tuple[tuple[int, int], ...], dilation: tuple[int, ...], groups: int) -> Any:
    n, o = g.shape[0], g.shape[1]
    wg = ns.reshape(w, (groups, o // groups, -1))
    cols = ns.matmul(ns.transpose(wg, 1, 2), _by_group(ns, g, groups))  # (G, C/G·∏k, N·L)
    cols = ns.permute(ns.reshape(cols, (groups, cols.shape[1], n, -1)), (2, 0, 1, 3))
    cols = ns.reshape(cols, (n, x.shape[1] * math.prod(w.shape[2:]), -1))
    return ns.col2im(cols, tuple(x.shape[2:]), tuple(w.shape[2:]), dilation, padding, stride)


def conv_vjp_weight(ns: Any, g: Any, out: Any, x: Any, w: Any, b: Any, stride: tuple[int, ...],
                    padding: tuple[tuple[int, int], ...], dilation: tuple[int, ...], groups: int) -> Any:
    n = g.shape[0]
    cols = ns.im2col(x, tuple(w.shape[2:]), dilation, padding, stride)
    cg = ns.reshape(cols, (n, groups, cols.shape[1] // groups, -1))
    cg = ns.reshape(ns.permute(cg, (1, 0, 3, 2)), (groups, -1, cols.shape[1] // groups))  # (G, N·L, C/G·∏k)
    return ns.reshape(ns.matmul(_by_group(ns, g, groups), cg), tuple(w.shape))


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
                padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """The index (into x) of each window's maximum, the first one among ties, as PyTorch picks it
    (a nan wins, as in PyTorch); padding never does."""
    nd = len(kernel)
    values = windows(x, kernel, dilation, padding, stride, -np.inf)
    lead, sizes = values.shape[:2], values.shape[2 + nd:]
    flat = values.reshape(lead + (-1,) + sizes)
    pick = np.argmax(np.where(np.isnan(flat), np.inf, flat), axis=2)  # (N, C, *out): the offset in the window
    offsets = np.unravel_index(pick, kernel)
    key = list(np.ogrid[tuple(slice(0, m) for m in lead)])
    key = [np.broadcast_to(k.reshape(k.shape + (1,) * nd), pick.shape) for k in key]
    for d, (off, dil, (lo, _), s) in enumerate(zip(offsets, dilation, padding, stride)):
        position = np.arange(sizes[d]).reshape((1, 1) + tuple(-1 if e == d else 1 for e in range(nd)))
        key.append(position * s + off * dil - lo)
    return tuple(key)


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
                     stride: tuple[int, ...]) -> np.ndarray:
    ones = (1,) * len(kernel)
    w = windows(x, kernel, ones, padding, stride, x.dtype.type(0))
    return w.sum(axis=_window_axes(len(kernel))) / x.dtype.type(math.prod(kernel))


def avg_pool_vjp(ns: Any, g: Any, out: Any, x: Any, kernel: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                 stride: tuple[int, ...]) -> Any:
    n, c = g.shape[0], g.shape[1]
    k = math.prod(kernel)
    spread = ns.expand(ns.reshape(g * (1.0 / k), (n, c, 1, -1)), (n, c, k, math.prod(g.shape[2:])))
    return ns.col2im(ns.reshape(spread, (n, c * k, -1)), tuple(x.shape[2:]), kernel, (1,) * len(kernel), padding,
                     stride)


def avg_pool_sym(S: Any, x: np.ndarray, kernel: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                 stride: tuple[int, ...]) -> np.ndarray:
    """The mean of each window, padding counted as zeros (count_include_pad=True)."""
    ones = (1,) * len(kernel)
    return S.reduce(S.mean_all, windows(x, kernel, ones, padding, stride, S.number(0)), _window_axes(len(kernel)),
                    False)
