"""Layers that move values without weights: constant and zero padding, pixel (un)shuffle, upsampling
(`nn.Upsample`, `nn.UpsamplingBilinear2d`, `nn.UpsamplingNearest2d`, `F.interpolate`), and the module
forms of `unfold`, `fold` and `avg_pool1d`.

Each is indexing, padding, reshaping, permuting or matmul on the op table, so gradients flow and
`--check` covers them. Upsampling itself (nearest and interpolating modes) is in `resample`.
"""
from __future__ import annotations

from typing import Any

from gradcli.engine import functions as F
from gradcli.engine.ops.op import functional
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import conv as C
from gradcli.nn import functional as NF
from gradcli.nn import resample as R
from gradcli.nn.modules import Module


def pixel_shuffle(input: Any, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) → (*, C, H·r, W·r)."""
    x, r = NF._tensor(input, "pixel_shuffle"), int(F.number_arg(upscale_factor, "pixel_shuffle", "upscale_factor",
                                                                   integer=True))
    if x.ndim < 3 or r <= 0 or x.shape[-3] % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         f"upscale_factor, but input.size(-3)={x.shape[-3] if x.ndim >= 3 else 0} is not divisible "
                         f"by {r * r}", hint="(*, channels·r², H, W)")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = F.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = F.permute(y, *range(k), k, k + 3, k + 1, k + 4, k + 2)
    return F.reshape(y, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) → (*, C·r², H, W)."""
    x, r = NF._tensor(input, "pixel_unshuffle"), int(F.number_arg(downscale_factor, "pixel_unshuffle",
                                                                     "downscale_factor", integer=True))
    if x.ndim < 3 or r <= 0 or x.shape[-1] % r or x.shape[-2] % r:
        raise ShapeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                         f"{list(x.shape[-2:])} and {r}", hint="(*, C, H·r, W·r)")
    *lead, c, h, w = x.shape
    k = len(lead)
    y = F.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = F.permute(y, *range(k), k, k + 2, k + 4, k + 1, k + 3)
    return F.reshape(y, (*lead, c * r * r, h // r, w // r))


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None, antialias: bool = False) -> Tensor:
    """Nearest-neighbour resampling, or one of the interpolating modes, both in `resample`."""
    x = NF._tensor(input, "interpolate")
    if mode not in R.ALL_MODES:
        raise ArgumentError(f"interpolate(): mode='{mode}' is not supported by gradcli",
                            hint=f"one of {', '.join(map(repr, R.ALL_MODES))}")
    if x.ndim < 3:
        raise ShapeError(f"interpolate(): expected a 3-D, 4-D or 5-D input (batch, channels, ...), got {x.ndim}-D",
                         hint="(N, C, L) or (N, C, H, W)")
    if (size is None) == (scale_factor is None):
        raise ArgumentError("only one of size or scale_factor should be defined",
                            hint="e.g. scale_factor=2, or size=(8, 8)")
    if antialias:
        raise ArgumentError("interpolate(): antialias=True is not supported by gradcli",
                            hint="leave antialias out: gradcli does not build the filter PyTorch widens when "
                                 "downsampling")
    if mode in R.MODES:
        return R.interpolate(x, mode, size, scale_factor, align_corners, recompute_scale_factor)
    if align_corners is not None:
        raise ArgumentError("align_corners option can only be set with the interpolating modes: "
                            "linear | bilinear | bicubic | trilinear", hint="leave align_corners out for 'nearest'")
    if mode == "area":
        return R.area(x, size, scale_factor)
    return R.nearest(x, mode, size, scale_factor, recompute_scale_factor)


class _ConstantPadNd(Module):
    nd = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__()
        self.padding = C.ntuple(padding, 2 * self.nd, type(self).__name__, "padding")
        self.value = value

    def forward(self, input: Any) -> Tensor:
        return NF.pad(input, self.padding, value=self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    nd = 1


class ConstantPad2d(_ConstantPadNd):
    nd = 2


class ZeroPad1d(_ConstantPadNd):
    nd = 1

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    nd = 2


class PixelShuffle(Module):
    functional = staticmethod(pixel_shuffle)

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Any) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    functional = staticmethod(pixel_unshuffle)

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Any) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    functional = staticmethod(interpolate)

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: Any = None,
                 recompute_scale_factor: Any = None) -> None:
        super().__init__()
        self.size, self.mode = size, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(F.number_arg(s, "Upsample", "scale_factor")) for s in scale_factor)
        else:
            self.scale_factor = float(F.number_arg(scale_factor, "Upsample", "scale_factor")) if scale_factor else None
        if mode not in R.ALL_MODES:
            raise ArgumentError(f"Upsample(): mode='{mode}' is not supported by gradcli",
                                hint=f"one of {', '.join(map(repr, R.ALL_MODES))}")

    def forward(self, input: Any) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        shown = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{shown}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """PyTorch's deprecated alias: `Upsample(mode='nearest')`."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """PyTorch's deprecated alias: `Upsample(mode='bilinear', align_corners=True)`."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class AvgPool1d(Module):
    functional = staticmethod(C.avg_pool1d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = C.ntuple(kernel_size, 1, "AvgPool1d", "kernel_size")
        self.stride = self.kernel_size if stride is None else C.ntuple(stride, 1, "AvgPool1d", "stride")
        self.padding = C.ntuple(padding, 1, "AvgPool1d", "padding")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Any) -> Tensor:
        return C.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class Unfold(Module):
    functional = staticmethod(C.unfold)

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Any) -> Tensor:
        return C.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, " \
               f"stride={self.stride}"


class Fold(Unfold):
    functional = staticmethod(C.fold)

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Any) -> Tensor:
        return C.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (
    ConstantPad1d, ConstantPad2d, ZeroPad1d, ZeroPad2d, PixelShuffle, PixelUnshuffle, Upsample, UpsamplingNearest2d,
    UpsamplingBilinear2d, AvgPool1d, Unfold, Fold)}
"""The module classes of this file, by their `torch.nn` name."""
MEMBERS: dict[type, frozenset] = {
    **dict.fromkeys((ConstantPad1d, ConstantPad2d, ZeroPad1d, ZeroPad2d), frozenset({"padding", "value"})),
    PixelShuffle: frozenset({"upscale_factor"}), PixelUnshuffle: frozenset({"downscale_factor"}),
    **dict.fromkeys((Upsample, UpsamplingNearest2d, UpsamplingBilinear2d),
                    frozenset({"size", "scale_factor", "mode", "align_corners", "recompute_scale_factor"})),
    AvgPool1d: frozenset({"kernel_size", "stride", "padding"}),
    **dict.fromkeys((Unfold, Fold), frozenset({"kernel_size", "dilation", "padding", "stride", "output_size"})),
}
COMPOSITES = tuple(map(functional, (pixel_shuffle, pixel_unshuffle, interpolate)))
"""The functions of `torch.nn.functional` this file adds (recording no one primitive of their own)."""
