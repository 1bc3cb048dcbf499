"""Transposed convolution (`F.conv_transpose1d/2d/3d`, `nn.ConvTranspose1d/2d/3d`), composed of the convolution primitive.

A transposed convolution is the gradient of a convolution with respect to its input, and equals a
plain convolution of the input spread out by the stride (zeros between its elements), padded by
dilation·(kernel−1)−padding (plus output_padding at the end), with the kernel flipped and its in/out
channels swapped per group. Written so, it records a `ConvolutionBackward0` node on top (as PyTorch's
does) and `--check` proves it through the primitives it uses. The layer's weight is (in_channels,
out_channels/groups, *kernel) and is drawn as PyTorch draws it: its fan-in is dimension 1 times the kernel.
"""
from __future__ import annotations

import math
from typing import Any


from gradcli.engine import functions as F
from gradcli.engine.ops.op import functional
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.nn import conv as C
from gradcli.nn import functional as NF
from gradcli.nn import init as I
from gradcli.nn.layers import _ConvNd
from gradcli.nn.modules import weight_of


def _conv_transpose(nd: int, fn: str, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                    output_padding: Any, groups: Any, dilation: Any) -> Tensor:
    x, squeeze = C._batched(input, nd, fn)
    w = F._tensor_arg(weight, fn)
    if w.ndim != nd + 2:
        raise ShapeError(f"{fn}: expected a {nd + 2}-D weight (in_channels, out_channels/groups, kernel...), got size "
                         f"{list(w.shape)}", hint="e.g. nn.ConvTranspose2d(6, 1, 5).weight has size [6, 1, 5, 5]")
    stride_, dilation_ = C.ntuple(stride, nd, fn, "stride"), C.ntuple(dilation, nd, fn, "dilation")
    C._positive(stride_, fn, "stride")
    C._positive(dilation_, fn, "dilation")
    pads, extra = C.ntuple(padding, nd, fn, "padding"), C.ntuple(output_padding, nd, fn, "output_padding")
    if any(p < 0 for p in pads + extra):
        raise ValueDomainError("negative padding is not supported", hint="padding counts positions cropped per side")
    if any(e >= s and e >= d for e, s, d in zip(extra, stride_, dilation_)):
        raise ValueDomainError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(extra)}, stride={list(stride_)}, dilation={list(dilation_)}",
                               hint="output_padding only picks among the sizes a stride > 1 makes possible")
    groups = int(F.number_arg(groups, fn, "groups", integer=True))
    if groups <= 0:
        raise ValueDomainError("non-positive groups is not supported", hint="groups=1 connects every channel")
    if x.shape[1] != w.shape[0] or w.shape[0] % groups:
        raise ShapeError(f"Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} to have "
                         f"{w.shape[0]} channels, but got {x.shape[1]} channels instead",
                         hint="the input's dimension 1 is its channels: it must equal in_channels of the layer")
    kernel = tuple(w.shape[2:])
    out_channels = w.shape[1] * groups
    if bias is not None:
        b = F._tensor_arg(bias, fn)
        if b.shape != (out_channels,):
            raise ShapeError(f"Given transposed=1, weight of size {list(w.shape)}, expected bias to be 1-dimensional "
                             f"with {out_channels} elements, but got bias of size {list(b.shape)} instead",
                             hint="one bias per output channel")
    sizes = [(n - 1) * s - 2 * p + d * (k - 1) + e + 1
             for n, s, p, d, k, e in zip(x.shape[2:], stride_, pads, dilation_, kernel, extra)]
    if any(n <= 0 for n in sizes):
        raise ShapeError(f"{fn}: the output size {sizes} is not positive", hint="use less padding or a larger input")
    if any(s > 1 for s in stride_):
        spread = tuple(x.shape[:2]) + tuple((n - 1) * s + 1 for n, s in zip(x.shape[2:], stride_))
        x = F.index_put(x, spread, (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride_))
    widths: tuple[int, ...] = ()
    for p, d, k, e in reversed(list(zip(pads, dilation_, kernel, extra))):
        widths += (d * (k - 1) - p, d * (k - 1) - p + e)
    x = NF.pad(x, widths)
    inner = w.shape[0] // groups
    flipped = F.flip(w, tuple(range(2, nd + 2)))
    turned = F.reshape(F.transpose(F.reshape(flipped, (groups, inner, w.shape[1]) + kernel), 1, 2),
                       (out_channels, inner) + kernel)
    out = C._conv(nd, fn, x, turned, bias, 1, 0, dilation_, groups)
    return C._unbatched(out, squeeze)


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transpose(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transpose(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _conv_transpose(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


class _ConvTransposeNd(_ConvNd):
    functional = staticmethod(conv_transpose2d)
    _shown_unless = _ConvNd._shown_unless + (("output_padding", 0),)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if isinstance(padding, str):
            raise ArgumentError(f'padding="{padding}" is not supported for {type(self).__name__}',
                                hint="give the padding as a number")
        self.output_padding = C.ntuple(output_padding, self.nd, type(self).__name__, "output_padding")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, dtype)

    def _weight_shape(self) -> tuple[int, ...]:
        return (self.in_channels, self.out_channels // self.groups) + self.kernel_size

    def reset_parameters(self) -> None:
        """PyTorch's: kaiming_uniform_(a=√5), then U(±1/√fan_in), fan_in = weight.size(1) × the kernel."""
        weight = self._parameters["weight"]
        I.kaiming_uniform_(weight, a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            fan_in = weight.shape[1] * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            I.uniform_(self._parameters["bias"], -bound, bound)

    def forward(self, input: Any, output_size: Any = None) -> Tensor:
        extra = self.output_padding if output_size is None else self._output_padding(input, output_size)
        return type(self).functional(input, weight_of(self), self._parameters["bias"], self.stride,
                                     self.padding, extra, self.groups, self.dilation)

    def _output_padding(self, input: Any, output_size: Any) -> tuple[int, ...]:
        """The output_padding that makes the output `output_size` (its last nd sizes), as PyTorch picks it."""
        x = F._tensor_arg(input, type(self).__name__)
        wanted = F.ints_arg(list(output_size), type(self).__name__, "output_size")[-self.nd:]
        smallest = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
                    zip(x.shape[-self.nd:], self.stride, self.padding, self.dilation, self.kernel_size)]
        extra = tuple(w - m for w, m in zip(wanted, smallest))
        if any(e < 0 or e >= s for e, s in zip(extra, self.stride)):
            largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
            raise ShapeError(f"requested an output size of {list(wanted)}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {list(x.shape[-self.nd:])})",
                             hint="output_size picks among the sizes the stride makes possible")
        return extra


class ConvTranspose1d(_ConvTransposeNd):
    nd = 1
    functional = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    nd = 2
    functional = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    nd = 3
    functional = staticmethod(conv_transpose3d)


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)}
MEMBERS: dict[type, frozenset] = dict.fromkeys(LAYERS.values(), frozenset({
    "weight", "bias", "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
    "output_padding"}))
COMPOSITES = tuple(map(functional, (conv_transpose1d, conv_transpose2d, conv_transpose3d)))
"""The functions of `torch.nn.functional` this file adds (recording no one primitive of their own)."""
