"""The 3-D layers of video and medical-image models: `Conv3d` (and its lazy twin), `MaxPool3d`, `AvgPool3d`,
`BatchNorm3d`; and the lazy batch norms, which learn their channel count from the first input.

They are their 2-D siblings with a third spatial dimension: the same op table entries (`ConvolutionBackward0`,
PyTorch's 3-D pooling nodes, `NativeBatchNormBackward0`), the same initialisation draws in PyTorch's order, the
same `extra_repr`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor, _wrap
from gradcli.engine.tensor_str import UNINITIALIZED
from gradcli.nn import conv as C
from gradcli.nn.layers import AvgPool2d, BatchNorm1d, BatchNorm2d, MaxPool2d, _BatchNorm, _ConvNd, _LazyConvNd
from gradcli.nn.modules import Module, UninitializedParameter, _default_dtype
from gradcli.engine import functions as F
from gradcli.errors import ShapeError


class Conv3d(_ConvNd):
    nd = 3
    functional = staticmethod(C.conv3d)


class LazyConv3d(_LazyConvNd):
    nd, becomes = 3, Conv3d


class MaxPool3d(MaxPool2d):
    functional = staticmethod(C.max_pool3d)

    def forward(self, input: Any) -> Tensor:
        return C.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class AvgPool3d(AvgPool2d):
    functional = staticmethod(C.avg_pool3d)

    def forward(self, input: Any) -> Tensor:
        return C.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class BatchNorm3d(_BatchNorm):
    dims = (5,)


def _uninitialized_buffer(dtype: Any) -> Tensor:
    """A lazy norm's running statistic before the first call: PyTorch's `<UninitializedBuffer>`."""
    t = _wrap(np.empty((0,), dtype=dtype))
    UNINITIALIZED.add(t)
    return t


class _LazyBatchNorm(_BatchNorm):
    """A batch norm whose num_features is the channel size (dim 1) of the first input it sees; then it becomes
    the full layer, as PyTorch's `cls_to_become` makes it."""

    becomes: type = BatchNorm2d

    def __init__(self, eps: float = 1e-05, momentum: float = 0.1, affine: bool = True,
                 track_running_stats: bool = True, dtype: Any = None) -> None:
        Module.__init__(self)
        from gradcli.engine.creation import resolve_dtype
        dt = resolve_dtype(dtype) or _default_dtype()
        self.num_features, self.eps, self.momentum, self.affine = 0, eps, momentum, affine
        self.track_running_stats, self.bias_enabled = track_running_stats, affine
        if affine:
            self._parameters["weight"] = UninitializedParameter(dtype=dt)
            self._parameters["bias"] = UninitializedParameter(dtype=dt)
        self.register_buffer("running_mean", _uninitialized_buffer(dt) if track_running_stats else None)
        self.register_buffer("running_var", _uninitialized_buffer(dt) if track_running_stats else None)
        self.register_buffer("num_batches_tracked",
                             _wrap(np.array(0, dtype=np.int64)) if track_running_stats else None)

    def forward(self, input: Any) -> Tensor:
        x = F._tensor_arg(input, type(self).__name__)
        if x.ndim not in self.becomes.dims:
            raise ShapeError(f"expected {' or '.join(f'{d}D' for d in self.becomes.dims)} input (got {x.ndim}D input)",
                             hint=f"{type(self).__name__} takes (batch, channels, ...)")
        self.num_features = x.shape[1]
        for table, name, fill in (("_parameters", "weight", 1.0), ("_parameters", "bias", 0.0),
                                  ("_buffers", "running_mean", 0.0), ("_buffers", "running_var", 1.0)):
            t = getattr(self, table).get(name)
            if t is not None:
                t._data = np.full((self.num_features,), fill, t.dtype)  # in place: an optimizer holds the tensor
                UNINITIALIZED.discard(t)
        self.__class__ = self.becomes
        return _BatchNorm.forward(self, x)


class LazyBatchNorm1d(_LazyBatchNorm):
    becomes = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm):
    becomes = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm):
    becomes = BatchNorm3d


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (
    Conv3d, LazyConv3d, MaxPool3d, AvgPool3d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)}

_CONV = frozenset({"weight", "bias", "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                   "groups"})
_NORM = frozenset({"weight", "bias", "running_mean", "running_var", "num_batches_tracked", "num_features", "eps",
                   "momentum"})
MEMBERS: dict[type, frozenset] = {
    Conv3d: _CONV, LazyConv3d: _CONV, MaxPool3d: frozenset({"kernel_size", "stride", "padding"}),
    AvgPool3d: frozenset({"kernel_size", "stride", "padding"}),
    **dict.fromkeys((BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d), _NORM)}
