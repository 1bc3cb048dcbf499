"""Normal, Uniform, Laplace and Exponential: location-scale families with reparameterised draws.

Each formula is PyTorch's own, op for op (so node names and float32 roundings agree), and each draw
consumes PyTorch's generator as PyTorch's does: Normal draws standard normals (`normal_`), Uniform
`rand`, Laplace `uniform_(eps - 1, 1)`, Exponential `exponential_()`.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.distribution import Distribution, ExponentialFamily
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor

_HALF_LOG_TWO_PI = math.log(math.sqrt(2 * math.pi))


def _draw(like: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A fresh tensor of `like`'s dtype for an in-place random fill (PyTorch's `new(shape)` / `empty(shape)`)."""
    return C.zeros(*shape, dtype=like.dtype)


class _CentredOnLoc(Distribution):
    """A symmetric unimodal family: its mean and its mode are both its `loc`."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class _LocScale(_CentredOnLoc):
    """Normal and Laplace: the same real `loc` and positive `scale`, taken the same way."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    batch_parameters = ("loc", "scale")
    support = constraints.real
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"loc", "scale"}

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(loc, scale, validate_args=validate_args)


class Normal(_LocScale, ExponentialFamily):
    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return F.pow(self.stddev, 2)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return C.normal(F.expand(self.loc, *shape), F.expand(self.scale, *shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _draw(self.loc, self._extended_shape(sample_shape)).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - F.log(self.scale) - _HALF_LOG_TWO_PI

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return 0.5 * (1 + F.erf((value - self.loc) * F.reciprocal(self.scale) / math.sqrt(2)))

    def icdf(self, value: Any) -> Tensor:
        return self.loc + self.scale * F.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + F.log(self.scale)


class Uniform(Distribution):
    has_rsample = True
    batch_parameters = ("low", "high")
    program_attributes = Distribution.program_attributes | {"low", "high"}

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(low, high, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict[str, Any]:  # type: ignore[override]
        return {"low": constraints.LessThan(self.high), "high": constraints.GreaterThan(self.low)}

    @property
    def support(self) -> constraints.Constraint:
        return constraints.Interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return F.pow(self.high - self.low, 2) / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rand = C.rand(size=shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        lb = F.to_dtype(self.low <= value, self.low.dtype)
        ub = F.to_dtype(self.high > value, self.low.dtype)
        return F.log(lb * ub) - F.log(self.high - self.low)

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return F.clamp((value - self.low) / (self.high - self.low), min=0, max=1)

    def icdf(self, value: Any) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return F.log(self.high - self.low)


class Laplace(_LocScale):
    @property
    def variance(self) -> Tensor:
        return 2 * F.pow(self.scale, 2)

    @property
    def stddev(self) -> Tensor:
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = float(np.finfo(self.loc.dtype).eps)
        u = _draw(self.loc, self._extended_shape(sample_shape)).uniform_(eps - 1, 1)
        return self.loc - self.scale * F.sign(u) * F.log1p(-F.abs(u))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return -F.log(2 * self.scale) - F.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return 0.5 - 0.5 * F.sign(value - self.loc) * F.expm1(-F.abs(value - self.loc) / self.scale)

    def entropy(self) -> Tensor:
        return 1 + F.log(2 * self.scale)


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": constraints.positive}
    batch_parameters = ("rate",)
    support = constraints.nonnegative
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"rate"}

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(rate, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return F.reciprocal(self.rate)

    @property
    def mode(self) -> Tensor:
        return C.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return F.reciprocal(self.rate)

    @property
    def variance(self) -> Tensor:
        return F.pow(self.rate, -2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return _draw(self.rate, self._extended_shape(sample_shape)).exponential_() / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return F.log(self.rate) - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return 1 - F.exp(-self.rate * value)

    def icdf(self, value: Any) -> Tensor:
        return -F.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - F.log(self.rate)


CLASSES = {"Normal": Normal, "Uniform": Uniform, "Laplace": Laplace, "Exponential": Exponential}
