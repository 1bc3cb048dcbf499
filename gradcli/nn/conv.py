"""`torch.nn.functional` for images and sequences: convolution, pooling, unfold/fold, batch norm,
channel dropout and embeddings, with PyTorch's argument rules and error texts.

Each convolution, pooling or unfold is one primitive of the op table (`ConvolutionBackward0`,
`MaxPool2DWithIndicesBackward0`, ...), so `--check` proves it, and so is batch norm
(`NativeBatchNormBackward0`); an embedding is one row gather (INDEX) under PyTorch's name
`EmbeddingBackward0`.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.ops.op import functional
from gradcli.engine.modes import no_grad
from gradcli.engine.batched import BatchedTensor, folded
from gradcli.engine.sliding import max_pool_at, out_size
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError, DtypeError, ShapeError, ValueDomainError


def ntuple(value: Any, nd: int, fn: str, name: str) -> tuple[int, ...]:
    """An int, or a tuple of `nd` ints (PyTorch's `_pair`, `_single`)."""
    if isinstance(value, Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * nd
    values = F.ints_arg(value, fn, name)
    if len(values) == 1:
        return values * nd
    if len(values) != nd:
        raise ArgumentError(f"{fn}(): argument '{name}' must be an int or a tuple of {nd} ints, got {list(values)}",
                            hint=f"e.g. {name}=1 or {name}={(1,) * nd}")
    return values


def _batched(input: Any, nd: int, fn: str) -> tuple[Tensor, bool]:
    """(N, C, *spatial), adding N=1 for an unbatched input as PyTorch does."""
    x = F._tensor_arg(input, fn)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                         f"size: {list(x.shape)}",
                         hint=f"{fn} takes (batch, channels, {', '.join('HW'[-nd:] if nd <= 2 else 'DHW')})")
    if x.dtype.kind != "f":
        raise DtypeError(f"{fn}: expected a floating point input, got {x.dtype}", hint="convert with x.float()")
    return (F.unsqueeze(x, 0), True) if x.ndim == nd + 1 else (x, False)


def _unbatched(out: Tensor, squeeze: bool) -> Tensor:
    return F.squeeze(out, 0) if squeeze else out


def _padding(padding: Any, nd: int, kernel: tuple[int, ...], dilation: tuple[int, ...], stride: tuple[int, ...],
             fn: str) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ArgumentError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}",
                                hint="padding='same' keeps the size, 'valid' pads nothing")
        if any(s != 1 for s in stride):
            raise ArgumentError("padding='same' is not supported for strided convolutions",
                                hint="use stride=1 with padding='same', or give the padding as a number")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pads = ntuple(padding, nd, fn, "padding")
    if any(p < 0 for p in pads):
        raise ValueDomainError("negative padding is not supported", hint="padding counts zeros added on each side")
    return tuple((p, p) for p in pads)


def _positive(values: tuple[int, ...], fn: str, name: str) -> None:
    if any(v <= 0 for v in values):
        raise ValueDomainError(f"{fn}: {name} should be greater than zero, but got {name}: {list(values)}",
                               hint=f"e.g. {name}=1")


def _check_fits(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...],
                stride: tuple[int, ...]) -> None:
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding)]
    reach = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < r for p, r in zip(padded, reach)):
        raise ShapeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
                         f"({' x '.join(map(str, reach))}). Kernel size can't be greater than actual input size",
                         hint="use a smaller kernel, more padding, or a larger input")


def _conv(nd: int, fn: str, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: Any) -> Tensor:
    x, squeeze = _batched(input, nd, fn)
    w = F._tensor_arg(weight, fn)
    if w.ndim != nd + 2:
        raise ShapeError(f"{fn}: expected a {nd + 2}-D weight (out_channels, in_channels/groups, kernel...), got "
                         f"size {list(w.shape)}", hint="e.g. nn.Conv2d(1, 6, 5).weight has size [6, 1, 5, 5]")
    stride_, dilation_ = ntuple(stride, nd, fn, "stride"), ntuple(dilation, nd, fn, "dilation")
    _positive(stride_, fn, "stride")
    _positive(dilation_, fn, "dilation")
    groups = int(F.number_arg(groups, fn, "groups", integer=True))
    if groups <= 0:
        raise ValueDomainError("non-positive groups is not supported", hint="groups=1 connects every channel")
    kernel = tuple(w.shape[2:])
    if w.shape[0] % groups or x.shape[1] != w.shape[1] * groups:
        raise ShapeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
                         f"have {w.shape[1] * groups} channels, but got {x.shape[1]} channels instead",
                         hint="the input's dimension 1 is its channels: it must equal in_channels of the layer")
    b: Any = 0.0
    if bias is not None:
        b = F._tensor_arg(bias, fn)
        if b.shape != (w.shape[0],):
            raise ShapeError(f"Given weight of size {list(w.shape)}, expected bias to be 1-dimensional with "
                             f"{w.shape[0]} elements, but got bias of size {list(b.shape)} instead",
                             hint="one bias per output channel")
    pads = _padding(padding, nd, kernel, dilation_, stride_, fn)
    _check_fits(x, kernel, dilation_, pads, stride_)
    out = apply(O.CONVOLUTION, x, w, b, stride=stride_, padding=pads, dilation=dilation_, groups=groups)
    return _unbatched(out, squeeze)


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Tensor:
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Tensor:
    return _conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1) -> Tensor:
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


# -- pooling ----------------------------------------------------------------------------------------
def _pool_geometry(nd: int, fn: str, kernel_size: Any, stride: Any, padding: Any
                   ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    kernel = ntuple(kernel_size, nd, fn, "kernel_size")
    strides = kernel if stride is None or stride == [] or stride == () else ntuple(stride, nd, fn, "stride")
    _positive(kernel, fn, "kernel_size")
    _positive(strides, fn, "stride")
    pads = ntuple(padding, nd, fn, "padding")
    if any(p < 0 or p > k // 2 for p, k in zip(pads, kernel)):
        raise ValueDomainError(f"pad should be at most half of effective kernel size, but got pad={pads[0]}, "
                               f"kernel_size={kernel[0]}", hint="padding at most kernel_size // 2")
    return kernel, strides, tuple((p, p) for p in pads)


def _ceil_padding(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], pads: tuple[tuple[int, int], ...],
                  strides: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """ceil_mode=True: PyTorch's rounded-up output size (a last window may hang over the end, but must
    start inside the input or its left padding), reached by padding the high side with what never wins."""
    out = []
    for n, k, d, (lo, hi), s in zip(x.shape[2:], kernel, dilation, pads, strides):
        size = -(-(n + lo + hi - d * (k - 1) - 1) // s) + 1
        if (size - 1) * s >= n + lo:
            size -= 1
        out.append((lo, max(hi, (size - 1) * s + d * (k - 1) + 1 - n - lo)))
    return tuple(out)


def _max_pool(nd: int, fn: str, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
              ceil_mode: bool, return_indices: bool, node: str | None = None) -> Any:
    x, squeeze = _batched(input, nd, fn)
    if type(x) is BatchedTensor and not return_indices:  # inside vmap: every example's samples in one pooling
        out = folded(x, lambda t: _max_pool(nd, fn, t, kernel_size, stride, padding, dilation, ceil_mode, False))
        return F.squeeze(out, 0) if squeeze else out
    kernel, strides, pads = _pool_geometry(nd, fn, kernel_size, stride, padding)
    dilation_ = ntuple(dilation, nd, fn, "dilation")
    _positive(dilation_, fn, "dilation")
    _check_fits(x, kernel, dilation_, pads, strides)
    if nd == 1:
        x, kernel, dilation_, pads, strides = _height_one(x, kernel, dilation_, pads, strides)
    if ceil_mode:
        pads = _ceil_padding(x, kernel, dilation_, pads, strides)
    key = max_pool_at(x._data, kernel, dilation_, pads, strides)
    out = _flattened(apply(O.MAX_POOL, x, key=key, kernel=kernel, dilation=dilation_, padding=pads, stride=strides,
                           name=node or _POOL_NODES[nd][0]), nd, squeeze)
    if not return_indices:
        return out
    # PyTorch's indices count within each (sample, channel) plane, row-major
    indices = _wrap(key % math.prod(x.shape[2:]))
    return out, _flattened(indices, nd, squeeze)


def _height_one(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], pads: tuple[tuple[int, int], ...],
                strides: tuple[int, ...]) -> tuple[Tensor, tuple[int, ...], tuple[int, ...], tuple[tuple[int, int], ...],
                                                   tuple[int, ...]]:
    """A 1-D pooling as PyTorch runs it, and so with its nodes (`SqueezeBackward1` over the 2-D pooling's
    node over `UnsqueezeBackward0`): a 2-D pooling of the input lifted to height one."""
    return F.unsqueeze(x, 2), (1,) + kernel, (1,) + dilation, ((0, 0),) + pads, (1,) + strides


def _flattened(out: Tensor, nd: int, squeeze: bool) -> Tensor:
    """A pooling's result back in its input's layout: the height of one dropped (1-D), the batch too (unbatched)."""
    return _unbatched(F.squeeze(out, 2) if nd == 1 else out, squeeze)


_POOL_NODES = {1: ("MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0"),
               2: ("MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0"),
               3: ("MaxPool3DWithIndicesBackward0", "AvgPool3DBackward0")}
"""PyTorch's node of a pooling by its dimensions (a 1-D pooling runs as a 2-D one of height one)."""


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    return _max_pool(1, "max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    return _max_pool(2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Tensor:
    return _max_pool(3, "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _max_unpool(nd: int, fn: str, input: Any, indices: Any, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any) -> Tensor:
    """Each value written back at the index max pooling took it from, zeros elsewhere: an index_put
    into the unpooled planes, so its gradient gathers (PyTorch's MaxUnpool{nd}DBackward0)."""
    x, squeeze = _batched(input, nd, fn)
    idx = F._tensor_arg(indices, fn)
    if idx.dtype != np.int64:
        name = {**F._TORCH_NAMES, "float32": "Float", "float64": "Double"}.get(idx.dtype.name, idx.dtype.name)
        raise DtypeError(f"elements in indices should be type int64 but got: {name}",
                         hint="pass the indices max_pool returned (return_indices=True)")
    if squeeze and idx.ndim == nd + 1:
        idx = F.unsqueeze(idx, 0)
    if tuple(idx.shape) != tuple(x.shape):
        raise ShapeError(f"Expected shape of indices to be same as that of the input tensor ({list(x.shape)}) but got "
                         f"indices tensor with shape: {list(idx.shape)}", hint="pass the indices max_pool returned")
    kernel, strides, pads = _pool_geometry(nd, fn, kernel_size, stride, padding)
    default = tuple((n - 1) * s - 2 * lo + k for n, s, (lo, _), k in zip(x.shape[2:], strides, pads, kernel))
    size = default
    if output_size is not None:
        given = F.ints_arg(output_size, fn, "output_size")
        if len(given) not in (nd, nd + 2):
            raise ArgumentError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                                f"length of '{len(given)}'", hint=f"e.g. output_size={list(x.shape[2:])}")
        size = tuple(given[-nd:])
        for d, (m, n, s) in enumerate(zip(size, default, strides)):
            if not n - s <= m <= n + s:
                raise ValueDomainError(f'invalid output_size "{tuple(size)}" (dim {d} must be between {n - s} and '
                                       f'{n + s})', hint="output_size is the size of the input max_pool was given")
    plane = math.prod(size)
    if idx.numel() and (idx._data.min() < 0 or idx._data.max() >= plane):
        bad = int(idx._data.min()) if idx._data.min() < 0 else int(idx._data.max())
        raise ShapeError(f"Found an invalid max index: {bad} (output volumes are of size {'x'.join(map(str, size))})",
                         hint="the indices count within each plane of the unpooled output")
    flat = idx._data.reshape(-1, math.prod(x.shape[2:])) + np.arange(x.shape[0] * x.shape[1])[:, None] * plane
    if np.unique(flat).size != flat.size:
        raise ArgumentError(f"{fn}: two inputs of one plane have the same index: PyTorch keeps one of them (which one "
                            "is unspecified), gradcli refuses", hint="unpool what a max pooling with stride >= "
                            "kernel_size gave (its windows do not overlap, so its indices differ)")
    lead = np.ogrid[tuple(slice(0, m) for m in x.shape[:2])]
    key = tuple(k.reshape(k.shape + (1,) * nd) for k in lead) + np.unravel_index(idx._data, size)
    out = apply(O.INDEX_PUT, x, shape=tuple(x.shape[:2]) + size, key=key, name=f"MaxUnpool{nd}DBackward0")
    return _unbatched(out, squeeze)


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    return _max_unpool(1, "max_unpool1d", input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:
    return _max_unpool(2, "max_unpool2d", input, indices, kernel_size, stride, padding, output_size)


def _avg_divisor(x: Tensor, kernel: tuple[int, ...], strides: tuple[int, ...], given: tuple[tuple[int, int], ...],
                 pads: tuple[tuple[int, int], ...], count_include_pad: bool, divisor_override: Any, fn: str
                 ) -> np.ndarray | None:
    """PyTorch's divisor per window: the window clipped to the padded input (ceil_mode's overhang past
    it never counts), then to the input itself with count_include_pad=False; or divisor_override.
    None when every window divides by the kernel's size, the common case."""
    sizes = tuple(out_size(n, k, 1, pad, s) for n, k, pad, s in zip(x.shape[2:], kernel, pads, strides))
    if divisor_override is not None:
        override = int(F.number_arg(divisor_override, fn, "divisor_override", integer=True))
        if override == 0:
            raise ValueDomainError("divisor must be not zero", hint="divisor_override=None divides by the window")
        return np.full(sizes, float(override))
    counts = []
    for n, k, s, (p, _), size in zip(x.shape[2:], kernel, strides, given, sizes):
        start = np.arange(size) * s - p
        end = np.minimum(start + k, n + p)
        counts.append(end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0))
    divisor = functools.reduce(np.multiply.outer, counts).astype(np.float64)
    return None if (divisor == math.prod(kernel)).all() else divisor


def _avg_pool(nd: int, fn: str, input: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
              count_include_pad: bool, divisor_override: Any = None) -> Tensor:
    x, squeeze = _batched(input, nd, fn)
    kernel, strides, given = _pool_geometry(nd, fn, kernel_size, stride, padding)
    ones = (1,) * nd
    _check_fits(x, kernel, ones, given, strides)
    if nd == 1:
        x, kernel, ones, given, strides = _height_one(x, kernel, ones, given, strides)
    pads = _ceil_padding(x, kernel, ones, given, strides) if ceil_mode else given
    divisor = _avg_divisor(x, kernel, strides, given, pads, count_include_pad, divisor_override, fn)
    params = {} if divisor is None else {"divisor": divisor}
    return _flattened(apply(O.AVG_POOL, x, kernel=kernel, padding=pads, stride=strides, name=_POOL_NODES[nd][1],
                            **params), nd, squeeze)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _avg_pool(1, "avg_pool1d", input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Tensor:
    return _avg_pool(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Any = None) -> Tensor:
    return _avg_pool(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _adaptive_kernel(x: Tensor, output_size: Any, fn: str) -> tuple[int, ...]:
    """The window of an adaptive pooling when the input divides evenly into the output (PyTorch's windows then);
    otherwise refused, since PyTorch's uneven windows overlap and gradcli does not build them."""
    sizes = output_size if isinstance(output_size, (list, tuple)) else (output_size, output_size)
    target = tuple(x.shape[2 + i] if s is None else int(F.number_arg(s, fn, "output_size", integer=True))
                   for i, s in enumerate(sizes))
    if len(target) != 2 or any(t <= 0 or n % t for n, t in zip(x.shape[2:], target)):
        raise ArgumentError(f"{fn}: output size {list(target)} does not divide the input size "
                            f"{list(x.shape[2:])} evenly; gradcli supports only even windows",
                            hint="choose an output size that divides the input, e.g. (1, 1)")
    return tuple(n // t for n, t in zip(x.shape[2:], target))


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Tensor:
    x, squeeze = _batched(input, 2, "adaptive_avg_pool2d")
    kernel = _adaptive_kernel(x, output_size, "adaptive_avg_pool2d")
    if kernel == tuple(x.shape[2:]):
        return _unbatched(F.mean(x, dim=(-2, -1), keepdim=True), squeeze)
    out = apply(O.AVG_POOL, x, kernel=kernel, padding=((0, 0), (0, 0)), stride=kernel, name="AdaptiveAvgPool2DBackward0")
    return _unbatched(out, squeeze)


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Tensor:
    """PyTorch's: the 2-D pooling of the input lifted to height one (its nodes too: Squeeze over Unsqueeze)."""
    x, _ = _batched(input, 1, "adaptive_avg_pool1d")
    size = output_size[0] if isinstance(output_size, (list, tuple)) and len(output_size) == 1 else output_size
    return F.squeeze(adaptive_avg_pool2d(F.unsqueeze(input, -2), (1, size)), -2)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    x, _ = _batched(input, 2, "adaptive_max_pool2d")
    kernel = _adaptive_kernel(x, output_size, "adaptive_max_pool2d")
    return _max_pool(2, "adaptive_max_pool2d", input, kernel, kernel, 0, 1, False, return_indices,
                     node="AdaptiveMaxPool2DBackward0")


# -- unfold / fold ------------------------------------------------------------------------------------
def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    x = F._tensor_arg(input, "unfold")
    if x.ndim != 4:
        raise ShapeError(f"Input Error: Only 4D input Tensors are supported (got {x.ndim}D)",
                         hint="unfold takes (batch, channels, height, width)")
    kernel, dil, st = (ntuple(v, 2, "unfold", n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                              (stride, "stride")))
    for values, name in ((kernel, "kernel_size"), (dil, "dilation"), (st, "stride")):
        _positive(values, "unfold", name)
    pads = _padding(padding, 2, kernel, dil, st, "unfold")
    _check_fits(x, kernel, dil, pads, st)
    return F.im2col(x, kernel, dil, pads, st)


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:
    x = F._tensor_arg(input, "fold")
    size = ntuple(output_size, 2, "fold", "output_size")
    kernel, dil, st = (ntuple(v, 2, "fold", n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                            (stride, "stride")))
    pads = _padding(padding, 2, kernel, dil, st, "fold")
    blocks = math.prod(out_size(n, k, d, p, s) for n, k, d, p, s in zip(size, kernel, dil, pads, st))
    if x.ndim != 3 or x.shape[1] % math.prod(kernel) or x.shape[2] != blocks:
        raise ShapeError(f"fold: expected input of size (N, C*{math.prod(kernel)}, {blocks}), but got "
                         f"{list(x.shape)}", hint="fold takes what unfold gives with the same arguments")
    return F.col2im(x, size, kernel, dil, pads, st)


# -- normalisation, dropout, embeddings ----------------------------------------------------------------
def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None, bias: Any = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """(x - mean)/√(var + eps)·w + b over every dimension but the channels (dim 1), one primitive
    (`NativeBatchNormBackward0`, in both modes as PyTorch's). Training uses the batch's statistics
    (the biased variance) and moves the running ones by `momentum` (the unbiased variance) outside
    the graph; eval uses the running statistics as constants."""
    x = F._tensor_arg(input, "batch_norm")
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expected at least 2D input (got {x.ndim}D input)",
                         hint="batch norm takes (batch, channels, ...)")
    eps = float(F.number_arg(eps, "batch_norm", "eps"))
    running_mean, running_var, w, b = (None if v is None else _per_channel_arg(v, name, x.shape[1]) for v, name in (
        (running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"), (bias, "bias")))
    w, b = 1.0 if w is None else w, 0.0 if b is None else b
    if not training:
        if running_mean is None or running_var is None:
            raise ArgumentError("batch_norm: running_mean and running_var are needed when not training",
                                hint="pass training=True, or the running statistics")
        return apply(O.BATCH_NORM, x, w, b, eps=eps, mean=running_mean._data.copy(), var=running_var._data.copy())
    axes = (0,) + tuple(range(2, x.ndim))
    count = x.numel() // x.shape[1]
    if count <= 1:
        raise ValueDomainError(f"Expected more than 1 value per channel when training, got input size "
                               f"{list(x.shape)}", hint="use a batch of two or more, or model.eval()")
    with no_grad():
        for buffer, statistic in ((running_mean, lambda a: a.mean(axis=axes)),
                                  (running_var, lambda a: a.var(axis=axes, ddof=1))):
            if buffer is not None:
                buffer.mul_(1 - momentum).add_(_wrap(statistic(x._data).astype(buffer.dtype)) * momentum)
    return apply(O.BATCH_NORM, x, w, b, eps=eps)


def _per_channel_arg(value: Any, name: str, channels: int) -> Tensor:
    """A running statistic, weight or bias of batch norm: one element per channel, PyTorch's error otherwise."""
    t = F._tensor_arg(value, "batch_norm")
    if t.numel() != channels:
        raise ShapeError(f"{name} should contain {channels} elements not {t.numel()}",
                         hint=f"one value per channel: the input's dimension 1 has {channels}")
    return t if t.ndim == 1 else F.reshape(t, (channels,))


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Whole channels zeroed: one Bernoulli(1-p) draw per (sample, channel), as PyTorch's feature dropout."""
    from gradcli.nn.functional import _no_inplace, _probability
    _no_inplace(inplace, "dropout2d")
    x = F._tensor_arg(input, "dropout2d")
    p = _probability(p, "dropout2d")
    if x.ndim not in (3, 4):
        raise ShapeError(f"dropout2d: expected a 3D or 4D input, got {x.ndim}D", hint="(N, C, H, W) or (C, H, W)")
    if not training or p == 0:
        return x
    if p == 1:
        return x * _wrap(np.zeros((), dtype=x.dtype))
    noise_shape = x.shape[:-2] + (1, 1) if x.ndim == 4 else x.shape[:1] + (1, 1)
    noise = _wrap(np.empty(noise_shape, dtype=x.dtype)).bernoulli_(1 - p)
    return x * (noise / (1 - p))


def embedding(input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` picked by integer indices (the gradient adds up per row)."""
    if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
        raise ArgumentError("embedding: padding_idx, max_norm, scale_grad_by_freq and sparse are not supported by "
                            "gradcli", hint="call F.embedding(indices, weight) without them")
    idx = F._tensor_arg(input, "embedding")
    w = F._tensor_arg(weight, "embedding")
    if idx.dtype.kind not in "iu":
        raise DtypeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                         f"Long, Int; but got {idx.dtype} instead", hint="indices are integers: torch.tensor([0, 2])")
    if idx.numel() and (idx._data.min() < 0 or idx._data.max() >= w.shape[0]):
        raise ShapeError("index out of range in self",
                         hint=f"the embedding has {w.shape[0]} rows: indices go from 0 to {w.shape[0] - 1}")
    return apply(O.INDEX, w, key=idx._data, name="EmbeddingBackward0")  # one row gather: PyTorch's node


COMPOSITES = tuple(functional(fn, op) for fn, op in (
    (conv1d, O.CONVOLUTION), (conv2d, O.CONVOLUTION), (conv3d, O.CONVOLUTION), (max_pool1d, O.MAX_POOL),
    (max_pool2d, O.MAX_POOL), (max_pool3d, O.MAX_POOL), (max_unpool1d, O.INDEX_PUT), (max_unpool2d, O.INDEX_PUT),
    (avg_pool1d, O.AVG_POOL), (avg_pool2d, O.AVG_POOL), (avg_pool3d, O.AVG_POOL), (adaptive_avg_pool1d, O.AVG_POOL),
    (adaptive_avg_pool2d, O.AVG_POOL), (adaptive_max_pool2d, O.MAX_POOL), (unfold, O.IM2COL), (fold, O.COL2IM),
    (batch_norm, O.BATCH_NORM), (dropout2d, O.MUL), (embedding, O.INDEX)))
"""The functions of this module a program can call as `F.X`, each with the primitive it records."""
