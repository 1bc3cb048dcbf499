"""Resampling by `F.interpolate`: the nearest modes (`'nearest'`, `'nearest-exact'`) and the interpolating ones
(`'linear'`, `'bilinear'`, `'bicubic'`, `'trilinear'`).

A nearest mode picks one source position per output position along each axis, by PyTorch's
`nearest_idx` (float32 arithmetic, clamped to the last position), so it is one gather (INDEX) under
PyTorch's node name (`UpsampleNearest2DBackward0`, ...) whose gradient sums what it picked. `'area'` is
PyTorch's adaptive average pooling: an averaging matrix per axis, like the interpolating modes.

Every one of these modes is separable: along each spatial axis the output is a fixed weighted sum of
input positions, so resampling is one constant (out, in) matrix per axis, applied with `matmul`. The
weights are PyTorch's: source coordinates as its `area_pixel_compute_source_index` computes them (in
the input's precision), linear taps clamped at 0, cubic taps (A = -0.75) with their indices clamped
into the input. Built from MATMUL, the gradient and `--check` need no new primitive; the last product
takes PyTorch's node name (`UpsampleBilinear2DBackward0`, ...).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import conv as C

MODES = {"linear": (1, "UpsampleLinear1DBackward0"), "bilinear": (2, "UpsampleBilinear2DBackward0"),
         "bicubic": (2, "UpsampleBicubic2DBackward0"), "trilinear": (3, "UpsampleTrilinear3DBackward0")}
"""Each interpolating mode: how many spatial dimensions it needs, and the node PyTorch records."""
_CUBIC_A = -0.75


def output_sizes(x: Tensor, size: Any, scale_factor: Any, spatial: int) -> tuple[tuple[int, ...], Any]:
    """The output's spatial sizes and the per-axis scale factors (None when `size=` was given), as PyTorch
    derives them: floor(input · scale_factor)."""
    if size is not None:
        return tuple(C.ntuple(size, spatial, "interpolate", "size")), None
    given = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * spatial
    if len(given) != spatial:
        raise ArgumentError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                            f"with spatial dimensions of {list(x.shape[2:])} and scale_factor of shape {list(given)}.",
                            hint=f"give {spatial} scale factor(s), or one number for every dimension")
    factors = tuple(float(F.number_arg(s, "interpolate", "scale_factor")) for s in given)
    return tuple(int(math.floor(n * s)) for n, s in zip(x.shape[2:], factors)), factors


def _sources(n_in: int, n_out: int, factor: float | None, align_corners: bool, cubic: bool,
             dtype: np.dtype) -> np.ndarray:
    """PyTorch's source coordinate of each output position, computed in the input's precision."""
    real = np.dtype(dtype).type
    dst = np.arange(n_out, dtype=dtype)
    if align_corners:
        scale = real((n_in - 1) / (n_out - 1)) if n_out > 1 else real(0)
        return (scale * dst).astype(dtype)
    scale = real(1.0 / factor) if factor is not None and factor > 0 else real(n_in / n_out)
    src = (scale * (dst + real(0.5)) - real(0.5)).astype(dtype)
    return src if cubic else np.maximum(src, real(0))


def _matrix(n_in: int, n_out: int, factor: float | None, align_corners: bool, cubic: bool,
            dtype: np.dtype) -> np.ndarray:
    """The (n_out, n_in) weights of one axis; taps that fall outside are clamped onto the edge, summing there."""
    src = _sources(n_in, n_out, factor, align_corners, cubic, dtype)
    rows = np.arange(n_out)
    weights = np.zeros((n_out, n_in), dtype=dtype)
    if cubic:
        base = np.floor(src)
        t = (src - base).astype(dtype)
        a = np.dtype(dtype).type(_CUBIC_A)

        def near(d: np.ndarray) -> np.ndarray:
            return ((a + 2) * d - (a + 3)) * d * d + 1

        def far(d: np.ndarray) -> np.ndarray:
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        one = np.dtype(dtype).type(1)
        taps = (far(t + one), near(t), near(one - t), far(2 * one - t))
        for k, w in enumerate(taps):
            np.add.at(weights, (rows, np.clip(base.astype(np.int64) + k - 1, 0, n_in - 1)), w)
        return weights
    low = src.astype(np.int64)
    high = low + (low < n_in - 1)
    frac = np.clip(src - low, 0, 1).astype(dtype)
    np.add.at(weights, (rows, low), 1 - frac)
    np.add.at(weights, (rows, high), frac)
    return weights


NEAREST = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact"}
"""Each nearest mode and the stem of the node PyTorch records (`UpsampleNearest2DBackward0`, ...)."""


def _picks(n_in: int, n_out: int, factor: float | None, exact: bool) -> np.ndarray:
    """PyTorch's `nearest_idx` / `nearest_neighbor_exact_compute_source_index`, in float32 as it computes."""
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    scale = np.float32(1.0 / factor) if factor is not None and factor > 0 else np.float32(n_in / n_out)
    src = (dst.astype(np.float32) + np.float32(0.5 if exact else 0)) * scale
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def nearest(x: Tensor, mode: str, size: Any, scale_factor: Any, recompute_scale_factor: Any) -> Tensor:
    """Nearest-neighbour resampling of `x` (N, C, *spatial) at any sizes, as one gather."""
    spatial = _spatial(x)
    sizes, factors = output_sizes(x, size, scale_factor, spatial)
    _positive(x, sizes)
    if recompute_scale_factor:
        factors = None
    picks = [_picks(n, m, None if factors is None else factors[d], mode == "nearest-exact")
             for d, (n, m) in enumerate(zip(x.shape[2:], sizes))]
    key = (slice(None), slice(None)) + np.ix_(*picks)
    return apply(O.INDEX, x, key=key, name=f"{NEAREST[mode]}{spatial}DBackward0")


def interpolate(x: Tensor, mode: str, size: Any, scale_factor: Any, align_corners: Any,
                recompute_scale_factor: Any) -> Tensor:
    """Resample `x` (N, C, *spatial) by one of `MODES`, one matmul per spatial axis."""
    spatial, node = MODES[mode]
    if x.ndim - 2 != spatial:
        raise ShapeError(f"Got {x.ndim}D input, but {mode} mode needs {spatial + 2}D input",
                         hint=f"{mode} takes (N, C, {', '.join('DHW'[3 - spatial:])}); "
                              f"{', '.join(f'{m} needs {d + 2}D' for m, (d, _) in MODES.items() if d != spatial)}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ArgumentError(f'"upsample_{mode}" not implemented for \'{x.dtype}\'',
                            hint="convert the input with .float() first")
    _finite(x, mode)
    sizes, factors = output_sizes(x, size, scale_factor, spatial)
    _positive(x, sizes)
    if recompute_scale_factor:
        factors = None
    matrices = [_matrix(n, m, None if factors is None else factors[d], bool(align_corners), mode == "bicubic",
                        x.dtype) for d, (n, m) in enumerate(zip(x.shape[2:], sizes))]
    return _weighted(x, matrices, node)


def area(x: Tensor, size: Any, scale_factor: Any) -> Tensor:
    """`mode='area'`: PyTorch's adaptive average pooling to the output size, window i spanning
    [floor(i·in/out), ceil((i+1)·in/out)) along each axis, so also one averaging matrix per axis."""
    spatial = _spatial(x)
    _finite(x, "area")
    sizes, _ = output_sizes(x, size, scale_factor, spatial)
    _positive(x, sizes)
    matrices = []
    for n, m in zip(x.shape[2:], sizes):
        weights = np.zeros((m, n), dtype=x.dtype)
        for i in range(m):
            start, end = (i * n) // m, -((-(i + 1) * n) // m)
            weights[i, start:end] = 1 / (end - start)
        matrices.append(weights)
    return _weighted(x, matrices, AREA_NODES[spatial])


ALL_MODES = (*NEAREST, *MODES, "area")
"""Every mode gradcli's `interpolate` offers."""
AREA_NODES = {1: "SqueezeBackward1", 2: "AdaptiveAvgPool2DBackward0", 3: "AdaptiveAvgPool3DBackward0"}
"""The node PyTorch leaves on `mode='area'` (its 1-D adaptive pooling ends in a squeeze)."""


def _spatial(x: Tensor) -> int:
    if not 1 <= x.ndim - 2 <= 3:
        raise ShapeError(f"interpolate(): expected a 3-D, 4-D or 5-D input (batch, channels, ...), got {x.ndim}-D",
                         hint="(N, C, L), (N, C, H, W) or (N, C, D, H, W)")
    return x.ndim - 2


def _finite(x: Tensor, mode: str) -> None:
    if not np.isfinite(x._data).all():
        raise ArgumentError(f"interpolate(): mode='{mode}' of an input holding inf or nan is not supported by gradcli",
                            hint="its weighted sums run over whole rows, so an inf would spread nan further than "
                                 "PyTorch's; replace them first, e.g. torch.nan_to_num(x)")


def _positive(x: Tensor, sizes: tuple[int, ...]) -> None:
    if any(n <= 0 for n in sizes):
        raise ShapeError(f"Input and output sizes should be greater than 0, but got input "
                         f"({', '.join(map(str, x.shape[2:]))}) and output ({', '.join(map(str, sizes))})",
                         hint="use a larger size or scale_factor")


def _weighted(x: Tensor, matrices: list[np.ndarray], node: str) -> Tensor:
    """x with each spatial axis multiplied by its (out, in) matrix; the last product carries `node`."""
    y = x
    for d, a in enumerate(matrices[:-1]):
        axis = 2 + d
        lead, rest = tuple(y.shape[:axis]), tuple(y.shape[axis + 1:])
        flat = F.reshape(y, lead + (y.shape[axis], math.prod(rest)))
        y = F.reshape(F.matmul(_wrap(a), flat), lead + (a.shape[0],) + rest)
    return apply(O.MATMUL, y, _wrap(np.ascontiguousarray(matrices[-1].T)), name=node)
