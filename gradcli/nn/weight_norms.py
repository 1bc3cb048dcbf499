"""Spectral and weight normalisation of a layer's weight, both of PyTorch's kinds.

`nn.utils.spectral_norm` and `nn.utils.weight_norm` (the older kind) replace `weight` by parameters named
`weight_orig` (with buffers `weight_u`, `weight_v`) or `weight_g`, `weight_v`, and recompute `module.weight`
in a forward pre-hook. `nn.utils.parametrizations.spectral_norm` and `.weight_norm` register a
parametrization instead (`parametrizations.weight.original`, or `original0` = g and `original1` = v).

Spectral normalisation divides the weight by σ = uᵀ·W·v, where u and v are kept from call to call and moved
one power-iteration step (or `n_power_iterations`) in training mode, without gradient, as PyTorch moves them:
the older kind updates v then u; the parametrization updates u then v and runs 15 steps when it is registered.
Their first values are PyTorch's draws (`normal_` of u, then of v), so a seeded model holds PyTorch's numbers.
Weight normalisation is w = v·(g/‖v‖), the norm over every dim but `dim`: PyTorch's fused kernel (its node
`WeightNormInterfaceBackward0`) when `dim` is the first or last, else the same formula of ordinary ops.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError
from gradcli.nn import functional as NF
from gradcli.nn.conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from gradcli.nn.modules import Module, Parameter
from gradcli.nn.parametrize import register_parametrization


def _weight(module: Any, name: str, fn: str) -> Tensor:
    if not isinstance(module, Module):
        raise ArgumentError(f"{fn}() takes an nn.Module, not {type(module).__name__}", hint=f"e.g. {fn}(nn.Linear(3, 2))")
    weight = module.__dict__["_parameters"].get(name)
    if weight is None:
        raise ArgumentError(f"Module '{type(module).__name__}' has no parameter or buffer with name '{name}'",
                            hint=f"{fn} normalises a registered parameter, e.g. 'weight'")
    return weight


def _spectral_dim(module: Module, dim: Any) -> int:
    if dim is not None:
        return int(dim)
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def _matrix(weight: Tensor, dim: int) -> Tensor:
    """The weight as a matrix with `dim` as its rows, as PyTorch flattens it."""
    if dim != 0:
        weight = F.permute(weight, dim, *(d for d in range(weight.ndim) if d != dim))
    return F.reshape(weight, weight.shape[0], -1)


def _drawn_unit(n: int, like: Tensor, eps: float) -> Tensor:
    draw = _wrap(np.empty(n, dtype=like._data.dtype))
    draw.normal_(0, 1)
    return NF.normalize(draw, dim=0, eps=eps)


def _into(buffer: Tensor, value: Tensor) -> Tensor:
    buffer._data[...] = value._data  # PyTorch's `out=`: the buffer keeps its identity
    return buffer


def _eps(value: Any, fn: str) -> float:
    return float(F.number_arg(value, fn, "eps"))


def _iterations(value: Any) -> int:
    n = int(F.number_arg(value, "spectral_norm", "n_power_iterations", integer=True))
    if n <= 0:
        raise ArgumentError(f"Expected n_power_iterations to be positive, but got n_power_iterations={n}")
    return n


# -- the older kind: parameters renamed, a forward pre-hook ---------------------------------------
class _SpectralNormHook:
    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        self.name, self.n, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = _matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n):
                    _into(v, NF.normalize(F.mv(F.t(mat), u), dim=0, eps=self.eps))
                    _into(u, NF.normalize(F.mv(mat, v), dim=0, eps=self.eps))
                if self.n > 0:
                    u, v = F.clone(u), F.clone(v)
        return weight / F.dot(u, F.mv(mat, v))

    def __call__(self, module: Module, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module: Any, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: Any = None) -> Any:
    weight = _weight(module, name, "spectral_norm")
    hook = _SpectralNormHook(name, _iterations(n_power_iterations), _spectral_dim(module, dim),
                             _eps(eps, "spectral_norm"))
    with no_grad():
        mat = _matrix(weight, hook.dim)
        u = _drawn_unit(mat.shape[0], weight, hook.eps)
        v = _drawn_unit(mat.shape[1], weight, hook.eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    object.__setattr__(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    if dim == -1:
        return F.norm(v)
    return F.norm(v, 2, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


def weight_norm_of(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """torch._weight_norm: the fused primitive along the first or last dim, else v·(g/‖v‖) of ordinary ops."""
    if dim in (0, v.ndim - 1) and v.ndim > 0 and dim != -1:
        return apply(O.WEIGHT_NORM, v, g, dim=dim)
    return v * (g / _norm_except_dim(v, dim))


class _WeightNormHook:
    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module) -> Tensor:
        return weight_norm_of(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, inputs: Any) -> None:
        object.__setattr__(module, self.name, self.compute_weight(module))


def _weight_norm_dim(weight: Tensor, dim: Any) -> int:
    if dim is None:
        return -1
    dim = int(dim)
    return dim + weight.ndim if dim < -1 else dim


def weight_norm(module: Any, name: str = "weight", dim: Any = 0) -> Any:
    """Deprecated in PyTorch for parametrizations.weight_norm, and still what many tutorials call."""
    weight = _weight(module, name, "weight_norm")
    hook = _WeightNormHook(name, _weight_norm_dim(weight, dim))
    del module._parameters[name]
    with no_grad():
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, hook.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
    object.__setattr__(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


# -- the parametrizations -------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int, dim: int, eps: float) -> None:
        super().__init__()
        ndim = weight.ndim
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps, self.n_power_iterations = eps, n_power_iterations
        if ndim > 1:
            with no_grad():
                mat = _matrix(weight, self.dim)
                self.register_buffer("_u", _drawn_unit(mat.shape[0], weight, eps))
                self.register_buffer("_v", _drawn_unit(mat.shape[1], weight, eps))
                self._power_method(mat, 15)

    def _power_method(self, mat: Tensor, n: int) -> None:
        with no_grad():
            for _ in range(n):
                _into(self._u, NF.normalize(F.mv(mat, self._v), dim=0, eps=self.eps))
                _into(self._v, NF.normalize(F.mv(F.t(mat), self._u), dim=0, eps=self.eps))

    def forward(self, weight: Any) -> Tensor:
        if weight.ndim == 1:
            return NF.normalize(weight, dim=0, eps=self.eps)
        mat = _matrix(weight, self.dim)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = F.clone(self._u), F.clone(self._v)
        return weight / F.vdot(u, F.mv(mat, v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


class _WeightNorm(Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, weight_g: Any, weight_v: Any) -> Tensor:
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def parametrized_spectral_norm(module: Any, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                               dim: Any = None) -> Any:
    weight = _weight(module, name, "spectral_norm")
    norm = _SpectralNorm(weight, _iterations(n_power_iterations), _spectral_dim(module, dim),
                         _eps(eps, "spectral_norm"))
    return register_parametrization(module, name, norm)


def parametrized_weight_norm(module: Any, name: str = "weight", dim: Any = 0) -> Any:
    weight = _weight(module, name, "weight_norm")
    return register_parametrization(module, name, _WeightNorm(_weight_norm_dim(weight, dim)))


OP = O.WEIGHT_NORM
"""The primitive `gradcli ops` lists for weight_norm (spectral_norm records only ordinary ops)."""
NAMES = {"spectral_norm": spectral_norm, "weight_norm": weight_norm}
PARAMETRIZATIONS = {"spectral_norm": parametrized_spectral_norm, "weight_norm": parametrized_weight_norm}
