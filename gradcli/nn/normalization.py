"""Group and instance normalisation (`F.group_norm`, `F.instance_norm`, `nn.GroupNorm`, `nn.InstanceNorm1d/2d`).

Group norm normalises each sample over its channel groups with the biased variance, composed of the
differentiable ops. Instance norm is batch norm over a (1, N·C, ...) view, as PyTorch computes it: each
sample's channel is its own "channel" of one primitive (`NativeBatchNormBackward0`), and the running
statistics, when tracked, are the per-sample updates averaged over the batch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.ops.op import functional
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import conv as C
from gradcli.nn.modules import Module, Parameter


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-05) -> Tensor:
    x = F._tensor_arg(input, "group_norm")
    groups = int(F.number_arg(num_groups, "group_norm", "num_groups", integer=True))
    if x.ndim < 2 or groups <= 0 or x.shape[1] % groups:
        raise ShapeError(f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
                         f"{list(x.shape)} and num_groups={groups}",
                         hint="the input is (batch, channels, ...); channels split into equal groups")
    eps = float(F.number_arg(eps, "group_norm", "eps"))
    grouped = F.reshape(x, (x.shape[0], groups, -1))
    centred = grouped - F.mean(grouped, -1, keepdim=True)
    variance = F.mean(centred * centred, -1, keepdim=True)
    y = F.reshape(centred / F.sqrt(variance + eps), x.shape)
    per_channel = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * F.reshape(C._per_channel_arg(weight, "weight", x.shape[1]), per_channel)
    if bias is not None:
        y = y + F.reshape(C._per_channel_arg(bias, "bias", x.shape[1]), per_channel)
    return y


def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None, weight: Any = None,
                  bias: Any = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    x = F._tensor_arg(input, "instance_norm")
    if x.ndim < 3:
        raise ShapeError(f"instance_norm: expected at least 3D input (batch, channels, ...), got {x.ndim}D",
                         hint="an unbatched input goes through nn.InstanceNorm1d/2d, which adds the batch")
    n, c = x.shape[0], x.shape[1]
    if use_input_stats and x.numel() // (n * c) <= 1:
        raise ShapeError(f"Expected more than 1 spatial element when training, got input size {list(x.shape)}",
                         hint="instance norm normalises over the positions of each channel")
    stats = [None if s is None else F.repeat(C._per_channel_arg(s, name, c).detach(), n)
             for s, name in ((running_mean, "running_mean"), (running_var, "running_var"))]
    affine = [None if v is None else F.repeat(C._per_channel_arg(v, name, c), n)
              for v, name in ((weight, "weight"), (bias, "bias"))]
    flat = F.reshape(x, (1, n * c) + tuple(x.shape[2:]))
    out = C.batch_norm(flat, stats[0], stats[1], affine[0], affine[1], use_input_stats, momentum, eps)
    if use_input_stats:
        with no_grad():
            for given, moved in zip((running_mean, running_var), stats):
                if given is not None:
                    given.copy_(F.reshape(F.mean(F.reshape(moved, (n, c)), 0), given.shape))
    return F.reshape(out, x.shape)


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-05, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        from gradcli.engine.creation import ones, zeros
        if not isinstance(num_groups, int) or not isinstance(num_channels, int) or num_groups <= 0 or \
                num_channels % num_groups:
            raise ArgumentError("num_channels must be divisible by num_groups",
                                hint="e.g. nn.GroupNorm(2, 4): 4 channels in 2 groups of 2")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, bool(affine)
        self._parameters["weight"] = Parameter(ones(num_channels, dtype=dtype)) if affine else None
        self._parameters["bias"] = Parameter(zeros(num_channels, dtype=dtype)) if affine and bias else None

    def forward(self, input: Any) -> Tensor:
        return group_norm(input, self.num_groups, self._parameters["weight"], self._parameters["bias"], self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, " \
               f"bias={self._parameters['bias'] is not None}"


class _InstanceNorm(Module):
    nd = 1

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        from gradcli.engine.creation import ones, zeros
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self._parameters["weight"] = Parameter(ones(num_features, dtype=dtype)) if affine else None
        self._parameters["bias"] = Parameter(zeros(num_features, dtype=dtype)) if affine and bias else None
        self.register_buffer("running_mean", zeros(num_features, dtype=dtype) if track_running_stats else None)
        self.register_buffer("running_var", ones(num_features, dtype=dtype) if track_running_stats else None)
        if track_running_stats:
            self.register_buffer("num_batches_tracked", _wrap(np.array(0, dtype=np.int64)))

    def forward(self, input: Any) -> Tensor:
        name = type(self).__name__
        x = F._tensor_arg(input, name)
        if x.ndim not in (self.nd + 1, self.nd + 2):
            raise ShapeError(f"expected {self.nd + 1}D or {self.nd + 2}D input (got {x.ndim}D input)",
                             hint=f"{name} takes (batch, channels, ...) or (channels, ...)")
        channels = x.shape[-self.nd - 1]
        if channels != self.num_features and self.affine:
            raise ShapeError(f"expected input's size at dim={x.ndim - self.nd - 1} to match num_features "
                             f"({self.num_features}), but got: {channels}.",
                             hint=f"the layer was made for {self.num_features} channels")
        unbatched = x.ndim == self.nd + 1
        x = F.unsqueeze(x, 0) if unbatched else x
        use_input_stats = self.training or not self.track_running_stats
        out = instance_norm(x, self.running_mean, self.running_var, self._parameters["weight"],
                            self._parameters["bias"], use_input_stats, self.momentum, self.eps)
        return F.squeeze(out, 0) if unbatched else out

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, " \
               f"bias={self._parameters['bias'] is not None}, track_running_stats={self.track_running_stats}"


class InstanceNorm1d(_InstanceNorm):
    nd = 1


class InstanceNorm2d(_InstanceNorm):
    nd = 2


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (GroupNorm, InstanceNorm1d, InstanceNorm2d)}
MEMBERS: dict[type, frozenset] = {
    GroupNorm: frozenset({"weight", "bias", "num_groups", "num_channels", "eps", "affine"}),
    **dict.fromkeys((InstanceNorm1d, InstanceNorm2d), frozenset({
        "weight", "bias", "running_mean", "running_var", "num_features", "eps", "momentum", "affine",
        "track_running_stats"})),
}
COMPOSITES = (functional(group_norm), functional(instance_norm))
"""The functions of `torch.nn.functional` this file adds (recording no one primitive of their own)."""
