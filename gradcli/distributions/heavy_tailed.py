"""Cauchy, HalfCauchy, Pareto, GeneralizedPareto and Weibull: the families whose tails outlast the normal's.

Cauchy has no mean or variance (PyTorch answers nan and inf in the batch's shape) and draws with
`cauchy_`, consuming PyTorch's generator as PyTorch does. The other three are PyTorch's
TransformedDistributions of a Cauchy or an Exponential, transform for transform, so draws, densities and
node names follow from the transforms.
"""
from __future__ import annotations

import math
from typing import Any

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.continuous import Exponential, _LocScale, _draw
from gradcli.distributions.distribution import Distribution, broadcast_all
from gradcli.distributions.transformed import Folded, TransformedDistribution, EULER_GAMMA
from gradcli.distributions.transforms import AffineTransform, ExpTransform, PowerTransform
from gradcli.engine.tensor import Tensor


class Cauchy(_LocScale):
    @property
    def mean(self) -> Tensor:
        return C.full(self._extended_shape(), float("nan"), dtype=self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        return C.full(self._extended_shape(), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _draw(self.loc, self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return -math.log(math.pi) - F.log(self.scale) - F.log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return F.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        return F.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + F.log(self.scale)


class HalfCauchy(Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    unfolded = Cauchy

    @property
    def mean(self) -> Tensor:
        return C.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance


class Pareto(TransformedDistribution):
    """scale·exp(E) for E ~ Exponential(alpha): a power-law tail from `scale` up."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True
    batch_parameters = ("scale", "alpha")
    program_attributes = TransformedDistribution.program_attributes | {"scale", "alpha"}

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.scale, self.alpha = F.expand(self.scale, *shape), F.expand(self.alpha, *shape)
        super()._expand_parameters(shape)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.GreaterThanEq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = F.clamp(self.alpha, min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = F.clamp(self.alpha, min=2)
        return F.pow(self.scale, 2) * a / (F.pow(a - 1, 2) * (a - 2))

    def entropy(self) -> Tensor:
        return F.log(self.scale / self.alpha) + (1 + F.reciprocal(self.alpha))


class Weibull(TransformedDistribution):
    """scale·E^(1/concentration) for E ~ Exponential(1)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"scale", "concentration"}

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = F.reciprocal(self.concentration)
        super().__init__(Exponential(C.ones_like(self.scale), validate_args=validate_args),
                         [PowerTransform(exponent=self.concentration_reciprocal),
                          AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.scale, self.concentration = F.expand(self.scale, *shape), F.expand(self.concentration, *shape)
        self.concentration_reciprocal = F.reciprocal(self.concentration)
        self.transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                           AffineTransform(loc=0, scale=self.scale)]
        super()._expand_parameters(shape)

    @property
    def mean(self) -> Tensor:
        return self.scale * F.exp(F.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        return self.scale * ((self.concentration - 1) / self.concentration) ** F.reciprocal(self.concentration)

    @property
    def variance(self) -> Tensor:
        return F.pow(self.scale, 2) * (F.exp(F.lgamma(1 + 2 * self.concentration_reciprocal))
                                       - F.exp(2 * F.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self) -> Tensor:
        return (EULER_GAMMA * (1 - self.concentration_reciprocal)
                + F.log(self.scale * self.concentration_reciprocal) + 1)


class GeneralizedPareto(Distribution):
    """The tail of any distribution past a high threshold: Exponential at concentration 0, Pareto above, bounded
    below 0. A draw is the inverse CDF of `rand`, as PyTorch's; where the concentration is 0 (PyTorch's
    `isclose`) the formulas take their limits, computed with a safe concentration of 1 as PyTorch's do."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    batch_parameters = ("loc", "scale", "concentration")
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"loc", "scale", "concentration"}

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(loc, scale, concentration, validate_args=validate_args)

    def _safe(self) -> tuple[Tensor, Tensor]:
        """Where the concentration is zero (within PyTorch's isclose), and the concentration with those set to 1."""
        eq_zero = F.abs(self.concentration.detach()) <= 1e-8
        return eq_zero, F.where(eq_zero, C.ones_like(self.concentration), self.concentration)

    @property
    def support(self) -> constraints.Constraint:
        upper = F.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.Interval(self.loc, upper)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(C.rand(size=self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + C.ones_like(z)
        where_nonzero = F.where(y == 0, y, y * F.log1p(safe_conc * z))
        return -F.log(self.scale) - F.where(eq_zero, z, where_nonzero)

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe_conc = self._safe()
        log_survival = F.where(eq_zero, -z, -F.log1p(safe_conc * z) / safe_conc)
        return F.exp(F.log1p(-F.exp(log_survival)))

    def icdf(self, value: Any) -> Tensor:
        eq_zero, safe_conc = self._safe()
        logu = F.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * F.expm1(-safe_conc * logu)
        return F.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = F.where(valid, self.concentration, 0.5)
        return F.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = F.where(valid, self.concentration, 0.25)
        return F.where(valid, self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc)), math.nan)

    def entropy(self) -> Tensor:
        return F.expand(F.log(self.scale) + self.concentration + 1, *self._batch_shape)


CLASSES = {"Cauchy": Cauchy, "HalfCauchy": HalfCauchy, "Pareto": Pareto, "Weibull": Weibull,
           "GeneralizedPareto": GeneralizedPareto}
