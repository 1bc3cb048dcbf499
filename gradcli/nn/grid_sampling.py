"""`F.affine_grid` and `F.grid_sample` (4-D: images), as spatial transformer tutorials use them.

`affine_grid` is the base grid of normalised coordinates (x along the width, y along the height; `linspace(-1, 1)`
stepped as PyTorch steps it, scaled by (n-1)/n without `align_corners`) times each θᵀ. `grid_sample` reads the
input at each grid point: the coordinate unnormalised as PyTorch does (`((c+1)/2)(n-1)` with `align_corners`,
else `((c+1)n-1)/2`), then `'border'` clamps it and `'reflection'` reflects it into the image; `'bilinear'` weighs
the four neighbours by their distances, `'nearest'` rounds half to even, and with `'zeros'` a neighbour outside the
image reads 0. Both are compositions of the differentiable ops (a gather, products, clamps), so the gradient to
the input and to the grid, and `--check`, need no new primitive; the last op of each takes PyTorch's node name.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.ops.op import functional
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError, ShapeError


def _tensor(x: Any, fn: str) -> Tensor:
    return F._tensor_arg(x, fn)


def _from_neg_one(n: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """PyTorch's `_linspace_from_neg_one`: linspace(-1, 1, n) stepped from each end, times (n-1)/n unaligned."""
    if n <= 1:
        return np.zeros(max(n, 1), dtype=dtype)
    step = dtype.type(2) / dtype.type(n - 1)
    i = np.arange(n)
    r = np.where(i < n // 2, dtype.type(-1) + step * i.astype(dtype), dtype.type(1) - step * (n - 1 - i).astype(dtype))
    r = r.astype(dtype)
    return r if align_corners else (r * dtype.type(n - 1) / dtype.type(n)).astype(dtype)


def affine_grid(theta: Any, size: Any, align_corners: bool | None = None) -> Tensor:
    t = _tensor(theta, "affine_grid")
    shape = F.ints_arg(size, "affine_grid", "size")
    if len(shape) != 4:
        raise ArgumentError(f"affine_grid only supports 4D sizes (2D images) in gradcli, got size {list(shape)}",
                            hint="size=(N, C, H, W), e.g. x.size()")
    n, _, h, w = shape
    if min(shape) < 0:
        raise ArgumentError(f"affine_grid: every size must be 0 or more, got size {list(shape)}",
                            hint="size=(N, C, H, W), e.g. x.size()")
    if t._data.dtype.kind != "f":
        raise ArgumentError("Expected theta to have floating point type", hint="theta = theta.float()")
    if t.shape != (n, 2, 3):
        raise ShapeError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(shape)}. Got "
                         f"{list(t.shape)}.", hint=f"theta of shape ({n}, 2, 3)")
    dtype = t._data.dtype
    base = np.empty((h, w, 3), dtype=dtype)
    base[..., 0] = _from_neg_one(w, bool(align_corners), dtype)[None, :]
    base[..., 1] = _from_neg_one(h, bool(align_corners), dtype)[:, None]
    base[..., 2] = 1
    grid = F.bmm(_wrap(np.broadcast_to(base.reshape(1, h * w, 3), (n, h * w, 3)).copy()), F.transpose(t, 1, 2))
    return apply(O.RESHAPE, grid, shape=(n, h, w, 2), name="AffineGridGeneratorBackward0")


def _unnormalize(c: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (c + 1) / 2 * (size - 1)
    return ((c + 1) * size - 1) / 2


def _reflect(c: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """PyTorch's `reflect_coordinates`: |c - low| folded into [low, high], every other span mirrored."""
    if twice_low == twice_high:
        return c * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    d = F.abs(c - low)
    with no_grad():
        flips = np.floor(d._data / span)
    extra = F.fmod(d, span)
    return F.where(_wrap(flips % 2 == 0), extra + low, (extra * -1) + (span + low))


def _source(c: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    c = _unnormalize(c, size, align_corners)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        c = F.clamp(c, 0, size - 1)
    return c


def _tap(x: Tensor, iy: np.ndarray, ix: np.ndarray, h: int, w: int) -> tuple[Tensor, np.ndarray]:
    """x[n, :, iy, ix] as (N, C, Ho, Wo), and where the tap lies inside the image."""
    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    rows = np.arange(x.shape[0])[:, None, None]
    taken = apply(O.INDEX, x, key=(rows, slice(None), np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)))
    return F.permute(taken, 0, 3, 1, 2), inside


_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    x, g = _tensor(input, "grid_sample"), _tensor(grid, "grid_sample")
    if mode not in _MODES:
        raise ArgumentError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                            f"but got: '{mode}'", hint="gradcli samples with 'bilinear' or 'nearest'")
    if padding_mode not in _PADDINGS:
        raise ArgumentError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                            f"'reflection', but got: '{padding_mode}'")
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise ShapeError(f"grid_sampler(): expected a 4D input (N, C, H, W) and a grid (N, H_out, W_out, 2) of the "
                         f"same batch, but got input {list(x.shape)} and grid {list(g.shape)}",
                         hint="gradcli samples 2-D images; grid[..., 0] is x (width), grid[..., 1] is y (height)")
    h, w = x.shape[2], x.shape[3]
    corners = bool(align_corners)
    ix = _source(g[..., 0], w, padding_mode, corners)
    iy = _source(g[..., 1], h, padding_mode, corners)
    if mode == "nearest":
        tap, inside = _tap(x, np.rint(iy._data).astype(np.int64), np.rint(ix._data).astype(np.int64), h, w)
        picked = tap * _wrap(inside[:, None].astype(x._data.dtype))
        still = F.unsqueeze((ix + iy) * 0, 1)  # PyTorch gives the grid a gradient of zeros, not none
        return apply(O.ADD, picked, still, name="GridSampler2DBackward0")
    x0, y0 = np.floor(ix._data), np.floor(iy._data)
    out = None
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        wx = (ix - _wrap(x0)) if dx else (_wrap(x0 + 1) - ix)
        wy = (iy - _wrap(y0)) if dy else (_wrap(y0 + 1) - iy)
        tap, inside = _tap(x, (y0 + dy).astype(np.int64), (x0 + dx).astype(np.int64), h, w)
        weight = F.unsqueeze(wx * wy * _wrap(inside.astype(x._data.dtype)), 1)
        term = tap * weight
        out = term if out is None else apply(O.ADD, out, term, name="GridSampler2DBackward0")
    return out


COMPOSITES = (functional(affine_grid, O.RESHAPE), functional(grid_sample, O.ADD))
"""`F.affine_grid` and `F.grid_sample`, each with the primitive of its last node (for `gradcli ops`)."""
