"""More activations and RMS normalisation: `prelu`, `glu`, `hardshrink`, `softshrink`, `tanhshrink`, `threshold`,
`rms_norm` and their modules (`nn.PReLU` learns its slope), composed of the differentiable ops.

At each kink the composition picks PyTorch's side (`x > 0` for prelu's slope, `|x| > λ` for the
shrinks, `x > threshold`), so a gradient at the kink itself is PyTorch's number.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.ops.op import functional
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import functional as NF
from gradcli.nn.modules import Module, Parameter, _default_dtype, _module


def _zeros(x: Tensor) -> Tensor:
    return _wrap(np.zeros((), x.dtype))


def prelu(input: Any, weight: Any) -> Tensor:
    """x where x > 0, weight·x elsewhere; one weight, or one per channel (dimension 1)."""
    x, w = NF._tensor(input, "prelu"), NF._tensor(weight, "prelu")
    if w.ndim > 1 or w.numel() not in (1, x.shape[1] if x.ndim > 1 else 1):
        raise ShapeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                         f"{w.numel()} and channel size = {x.shape[1] if x.ndim > 1 else 1}.",
                         hint="nn.PReLU(num_parameters) takes 1 or the input's channel count")
    slope = F.reshape(w, (w.numel(),) + (1,) * (x.ndim - 2)) if x.ndim > 1 and w.numel() > 1 else F.reshape(w, ())
    return F.where(x._data > 0, x, slope * x)


def glu(input: Any, dim: int = -1) -> Tensor:
    """a·σ(b), a and b the two halves of `dim`."""
    x = NF._tensor(input, "glu")
    if x.ndim == 0:
        raise ShapeError("glu does not support scalars because halving size must be even",
                         hint="glu splits one dimension of a tensor into two halves")
    d = F._dim(dim, x.ndim)
    if x.shape[d] % 2:
        raise ShapeError(f"Halving dimension must be even, but dimension {d} is size {x.shape[d]}",
                         hint="glu splits the dimension into two equal halves")
    a, b = F.chunk(x, 2, d)
    return a * F.sigmoid(b)


def hardshrink(input: Any, lambd: float = 0.5) -> Tensor:
    x = NF._tensor(input, "hardshrink")
    lambd = F.number_arg(lambd, "hardshrink", "lambd")
    return F.where(np.abs(x._data) > lambd, x, _zeros(x))


def softshrink(input: Any, lambd: float = 0.5) -> Tensor:
    x = NF._tensor(input, "softshrink")
    lambd = F.number_arg(lambd, "softshrink", "lambd")
    if lambd < 0:
        raise ArgumentError(f"lambda must be greater or equal to 0, but found to be {lambd}.",
                            hint="softshrink moves values toward 0 by lambd ≥ 0")
    return F.where(x._data > lambd, x - lambd, F.where(x._data < -lambd, x + lambd, x * 0))  # x·0: PyTorch's -0.0


def tanhshrink(input: Any) -> Tensor:
    x = NF._tensor(input, "tanhshrink")
    return x - F.tanh(x)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Tensor:
    x = NF._tensor(input, "threshold")
    NF._no_inplace(inplace, "threshold")
    limit = F.number_arg(threshold, "threshold", "threshold")
    fill = _wrap(np.array(F.number_arg(value, "threshold", "value"), dtype=x.dtype))
    return F.where(x._data > limit, x, fill)


def rms_norm(input: Any, normalized_shape: Any, weight: Any = None, eps: Any = None) -> Tensor:
    """x / √(mean(x²) + eps) over the last dimensions, times `weight`; eps defaults to the dtype's epsilon."""
    x = NF._tensor(input, "rms_norm")
    shape = F.ints_arg(normalized_shape, "rms_norm", "normalized_shape", single=True)
    if not shape or len(shape) > x.ndim or tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ShapeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                         f"{', '.join(map(str, shape))}], but got input of size{list(x.shape)}",
                         hint="normalized_shape names the input's last dimensions")
    floor = float(np.finfo(x.dtype).eps) if eps is None else float(F.number_arg(eps, "rms_norm", "eps"))
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    y = x * F.rsqrt(F.mean(x * x, dims, keepdim=True) + floor)
    return y if weight is None else y * NF._tensor(weight, "rms_norm")


class PReLU(Module):
    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        from gradcli.engine.creation import resolve_dtype
        if not isinstance(num_parameters, int) or isinstance(num_parameters, bool) or num_parameters < 1:
            raise ArgumentError(f"PReLU(): num_parameters must be a positive integer, got {num_parameters!r}",
                                hint="1, or the number of input channels")
        self.num_parameters, self.init = num_parameters, F.number_arg(init, "PReLU", "init")
        data = np.full((num_parameters,), self.init, dtype=resolve_dtype(dtype) or _default_dtype())
        self._parameters["weight"] = Parameter(_wrap(data))

    def forward(self, input: Any) -> Tensor:
        return prelu(input, self._parameters["weight"])

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RMSNorm(Module):
    def __init__(self, normalized_shape: Any, eps: Any = None, elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from gradcli.engine.creation import ones
        self.normalized_shape = F.ints_arg(normalized_shape, "RMSNorm", "normalized_shape", single=True)
        self.eps, self.elementwise_affine = eps, bool(elementwise_affine)
        self._parameters["weight"] = Parameter(ones(self.normalized_shape, dtype=dtype)) if elementwise_affine \
            else None

    def forward(self, input: Any) -> Tensor:
        return rms_norm(input, self.normalized_shape, self._parameters["weight"], self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Any) -> Tensor:
        return type(self).functional(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


Hardshrink.functional = staticmethod(hardshrink)
Softshrink = type("Softshrink", (Hardshrink,), {"functional": staticmethod(softshrink),
                                                "__doc__": "`nn.Softshrink`: `softshrink` as a module."})


class Threshold(Module):
    functional = staticmethod(threshold)

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Any) -> Tensor:
        return threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (
    PReLU, RMSNorm, Hardshrink, Softshrink, Threshold,
    _module("GLU", glu, {"dim": -1}, ("dim",), ("dim",)), _module("Tanhshrink", tanhshrink, {}),
    _module("CosineSimilarity", NF.cosine_similarity, {"dim": 1, "eps": 1e-08}, ("dim", "eps")),
    _module("PairwiseDistance", NF.pairwise_distance, {"p": 2.0, "eps": 1e-06, "keepdim": False},
            ("p", "eps", "keepdim")))}
"""The module classes of this file, by their `torch.nn` name."""
MEMBERS: dict[type, frozenset] = {PReLU: frozenset({"weight", "num_parameters"}),
                                  RMSNorm: frozenset({"weight", "normalized_shape", "eps", "elementwise_affine"}),
                                  Hardshrink: frozenset({"lambd"}), Softshrink: frozenset({"lambd"}),
                                  Threshold: frozenset({"threshold", "value"})}
COMPOSITES = tuple(map(functional, (prelu, glu, hardshrink, softshrink, tanhshrink, threshold, rms_norm)))
"""The functions of `torch.nn.functional` this file adds (recording no one primitive of their own)."""
