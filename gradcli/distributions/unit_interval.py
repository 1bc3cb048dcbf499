"""ContinuousBernoulli and Kumaraswamy: densities on [0, 1] with a closed-form inverse CDF, so draws are
reparameterised.

ContinuousBernoulli (Loaiza-Ganem and Cunningham, 2019) is the normalised density p^x (1-p)^(1-x) that
VAEs with [0, 1] pixels should have used instead of the Bernoulli; its normaliser is 0/0 at p = ½, so
PyTorch switches to a Taylor polynomial inside `lims` and to the closed form outside, with `where` on both
sides (the cut probabilities keep the unused branch finite, so its gradient is zero and never nan). Every
formula here is PyTorch's, branch for branch.
"""
from __future__ import annotations

import math
from typing import Any

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.nn.functional as NF
import gradcli.distributions.constraints as constraints
from gradcli.distributions.discrete import _Binary, clamp_probs
from gradcli.distributions.distribution import ExponentialFamily, broadcast_all
from gradcli.distributions.continuous import Uniform
from gradcli.distributions.transformed import EULER_GAMMA, TransformedDistribution
from gradcli.distributions.transforms import AffineTransform, PowerTransform
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor
from gradcli.errors import ValueDomainError


class ContinuousBernoulli(_Binary, ExponentialFamily):
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if probs is not None and logits is None:
            (probs,) = broadcast_all(probs) if not isinstance(probs, Tensor) else (probs,)
            if validate_args is not None and not bool(constraints.unit_interval.holds(probs._data).all()):
                raise ValueDomainError("The parameter probs has invalid values",
                                       hint="ContinuousBernoulli's probs lie in [0, 1]")
            probs = clamp_probs(probs)
        self._lims = lims
        super().__init__(probs, logits, validate_args=validate_args)

    def _probs_from(self, logits: Tensor) -> Tensor:
        return clamp_probs(F.sigmoid(logits))

    def _outside_unstable_region(self) -> Tensor:
        return F.maximum(self.probs <= self._lims[0], self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return F.where(self._outside_unstable_region(), self.probs, self._lims[0] * C.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        cut = self._cut_probs()
        below_half = F.where(cut <= 0.5, cut, C.zeros_like(cut))
        above_half = F.where(cut >= 0.5, cut, C.ones_like(cut))
        log_norm = F.log(F.abs(F.log1p(-cut) - F.log(cut))) - F.where(
            cut <= 0.5, F.log1p(-2.0 * below_half), F.log(2.0 * above_half - 1.0))
        x = F.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return F.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (F.log1p(-cut) - F.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * F.pow(x, 2)) * x
        return F.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        exact = cut * (cut - 1.0) / F.pow(1.0 - 2.0 * cut, 2) + 1.0 / F.pow(F.log1p(-cut) - F.log(cut), 2)
        x = F.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return F.where(self._outside_unstable_region(), exact, taylor)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        u = C.rand(size=self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(C.rand(size=self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        return -NF.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        cut = self._cut_probs()
        cdfs = (F.pow(cut, value) * F.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = F.where(self._outside_unstable_region(), cdfs, value)
        return F.where(value <= 0.0, C.zeros_like(value),
                       F.where(value >= 1.0, C.ones_like(value), unbounded))

    def icdf(self, value: Any) -> Tensor:
        cut = self._cut_probs()
        return F.where(self._outside_unstable_region(),
                       (F.log1p(-cut + value * (2.0 * cut - 1.0)) - F.log1p(-cut)) / (F.log(cut) - F.log1p(-cut)),
                       value)

    def entropy(self) -> Tensor:
        log_probs0 = F.log1p(-self.probs)
        log_probs1 = F.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X^n] of a Kumaraswamy: b·B(1 + n/a, b), through log-gammas."""
    arg1 = 1 + n / a
    return b * F.exp(F.lgamma(arg1) + F.lgamma(b) - F.lgamma(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """(1 - U^(1/b))^(1/a) for U ~ Uniform(0, 1): a Beta look-alike whose CDF has a closed form."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"concentration1", "concentration0"}

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(C.zeros_like(self.concentration0), C.ones_like(self.concentration0),
                       validate_args=validate_args)
        super().__init__(base, [PowerTransform(exponent=F.reciprocal(self.concentration0)),
                                AffineTransform(loc=1.0, scale=-1.0),
                                PowerTransform(exponent=F.reciprocal(self.concentration1))],
                         validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.concentration1 = F.expand(self.concentration1, *shape)
        self.concentration0 = F.expand(self.concentration0, *shape)
        super()._expand_parameters(shape)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = F.reciprocal(b) * F.log1p(-b) - F.log1p(-b * a)
        log_mode[(b < 1) | (a < 1)] = math.nan
        return F.exp(log_mode)

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - F.pow(self.mean, 2)

    def entropy(self) -> Tensor:
        t1 = 1 - F.reciprocal(self.concentration1)
        t0 = 1 - F.reciprocal(self.concentration0)
        h0 = F.digamma(self.concentration0 + 1) + EULER_GAMMA
        return t0 + t1 * h0 - F.log(self.concentration1) - F.log(self.concentration0)


CLASSES = {"ContinuousBernoulli": ContinuousBernoulli, "Kumaraswamy": Kumaraswamy}
