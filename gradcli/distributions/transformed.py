"""TransformedDistribution and the families PyTorch builds from it: LogNormal, HalfNormal, Gumbel,
RelaxedBernoulli, RelaxedOneHotCategorical.

A draw is the base's draw pushed through the transforms; a log-density is the base's at the pulled-back
value minus each transform's log-Jacobian, summed over the event dimensions, in PyTorch's order of
operations (so float32 roundings and node names agree). The relaxed families are the Gumbel-softmax
("concrete") relaxations of Bernoulli and Categorical: a temperature-scaled logistic or Gumbel perturbation
of the logits, differentiable in the logits, as discrete-latent VAEs use them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.continuous import Normal, Uniform
from gradcli.distributions.discrete import Categorical, _Binary, clamp_probs
from gradcli.distributions.distribution import Distribution, broadcast_all, sum_rightmost
from gradcli.distributions.gamma import Gamma
from gradcli.distributions.multivariate import Independent
from gradcli.distributions.transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform,
                                             PowerTransform, SigmoidTransform, StickBreakingTransform, Transform)
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor
from gradcli.errors import ValueDomainError

EULER_GAMMA = 0.57721566490153286060


class TransformedDistribution(Distribution):
    arg_constraints: dict[str, Any] = {}
    program_attributes = Distribution.program_attributes | {"base_dist", "transforms"}

    def __init__(self, base_distribution: Any, transforms: Any, validate_args: bool | None = None) -> None:
        hint = "e.g. TransformedDistribution(Normal(0., 1.), [TanhTransform()])"
        if not isinstance(base_distribution, Distribution):
            raise ValueDomainError("TransformedDistribution transforms a distribution", hint=hint)
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, list):
            raise ValueDomainError(f"transforms must be a Transform or list, but was {transforms!r}", hint=hint)
        if not all(isinstance(t, Transform) for t in transforms):
            raise ValueDomainError("transforms must be a Transform or a list of Transforms", hint=hint)
        self.transforms = list(transforms)
        reinterpreted = ComposeTransform(self.transforms).domain.event_dim - len(base_distribution.event_shape)
        if reinterpreted > 0:  # as PyTorch: the batch dimensions the transforms take as an event become the base's
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = max([len(base_distribution.event_shape)] + [t.event_dim for t in self.transforms])
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        for transform in self.transforms:
            shape = transform.forward_shape(shape)  # StickBreakingTransform adds a category
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        extra = len(self._event_shape) - support.event_dim
        return constraints.IndependentConstraint(support, extra) if extra > 0 else support

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        base_shape = tuple(shape) + tuple(self._event_shape)
        for transform in reversed(self.transforms):
            base_shape = transform.inverse_shape(base_shape)
        self.base_dist = self.base_dist.expand(base_shape[:len(base_shape) - len(self.base_dist.event_shape)])

    def _pushed(self, x: Tensor) -> Tensor:
        for transform in self.transforms:
            x = transform(x)
        return x

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            return self._pushed(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._pushed(self.base_dist.rsample(sample_shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        event_dim = len(self._event_shape)
        log_prob: Any = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y), event_dim - transform.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"loc", "scale"}

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return False  # they live in the base Normal: PyTorch prints LogNormal()

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.base_dist = self.base_dist.expand(shape)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return F.exp(self.loc + F.pow(self.scale, 2) / 2)

    @property
    def mode(self) -> Tensor:
        return F.exp(self.loc - F.pow(self.scale, 2))

    @property
    def variance(self) -> Tensor:
        scale_sq = F.pow(self.scale, 2)
        return F.expm1(scale_sq) * F.exp(2 * self.loc + scale_sq)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


class LogisticNormal(TransformedDistribution):
    """A normal vector broken onto the simplex (StickBreakingTransform): one more category than the normal has."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"loc", "scale"}

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return False  # they live in the base Normal: PyTorch prints LogisticNormal()

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale


class ParametersInBase(TransformedDistribution):
    """A family whose parameters live in its base distribution: PyTorch prints it with none (`HalfNormal()`),
    validates them all the same, and expands the base."""

    def _holds_parameter(self, name: str) -> bool:
        return False

    def _validates(self, name: str) -> bool:
        return True

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.base_dist = self.base_dist.expand(shape)


class Folded(ParametersInBase):
    """|X| for X from a family centred at 0 (`unfolded`, given `scale`): the density doubled on the
    nonnegative half line, as PyTorch's HalfNormal and HalfCauchy."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"scale"}
    unfolded: Any = None

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(self.unfolded(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return C.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return F.where(value >= 0, self.base_dist.log_prob(value) + math.log(2), float("-inf"))

    def cdf(self, value: Any) -> Tensor:
        value = self.checked(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, value: Any) -> Tensor:
        return self.base_dist.icdf((value + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(Folded):
    """|X| for X ~ Normal(0, scale)."""

    unfolded = Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return F.pow(self.scale, 2) * (1 - 2 / math.pi)


class InverseGamma(ParametersInBase):
    """1/X for X ~ Gamma(concentration, rate): PowerTransform(-1) of the gamma draw."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"concentration", "rate"}

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-C.ones((), dtype=base.rate.dtype)), validate_args=validate_args)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        return F.where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        result = F.square(self.rate) / (F.square(self.concentration - 1) * (self.concentration - 2))
        return F.where(self.concentration > 2, result, math.inf)

    def entropy(self) -> Tensor:
        return (self.concentration + F.log(self.rate) + F.lgamma(self.concentration)
                - (1 + self.concentration) * F.digamma(self.concentration))


class Gumbel(TransformedDistribution):
    """Two inverse exponentials and two affine maps of a uniform draw, as PyTorch builds it."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"loc", "scale"}

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = np.finfo(self.loc.dtype)
        base = Uniform(_full(self.loc, float(finfo.tiny)), _full(self.loc, 1 - float(finfo.eps)),
                       validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-C.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return True

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        new = Gumbel(F.expand(self.loc, *shape), F.expand(self.scale, *shape), validate_args=False)
        self.__dict__.update({k: v for k, v in new.__dict__.items() if k != "_validate_args"})

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        y = (self.loc - value) / self.scale
        return (y - F.exp(y)) - F.log(self.scale)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return F.pow(self.stddev, 2)

    def entropy(self) -> Tensor:
        return F.log(self.scale) + (1 + EULER_GAMMA)


class LogitRelaxedBernoulli(_Binary):
    """The logit of a RelaxedBernoulli draw: logistic noise plus the logits, over the temperature."""

    support = constraints.real
    has_rsample = True
    program_attributes = _Binary.program_attributes | {"temperature"}

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(probs, logits, validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(F.expand(self.probs, *shape))
        uniforms = clamp_probs(C.rand(size=shape, dtype=probs.dtype))
        return (F.log(uniforms) - F.log1p(-uniforms) + F.log(probs) - F.log1p(-probs)) / self.temperature

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return F.log(_tensor(self.temperature, diff)) + diff - 2 * F.log1p(F.exp(diff))


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: Gumbel noise plus the logits over the temperature, log-softmaxed."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"probs", "logits", "temperature"}

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        self.temperature = temperature
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return False

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(C.rand(size=shape, dtype=self.logits.dtype))
        gumbels = -F.log(-F.log(uniforms))
        scores = (self.logits + gumbels) / self.temperature
        return scores - F.logsumexp(scores, -1, True)

    def log_prob(self, value: Any) -> Tensor:
        k = self._event_shape[0]
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = _tensor(self.temperature, logits)
        log_scale = F.lgamma(_full(temperature, float(k))) - F.log(temperature) * -(k - 1)
        score = logits - value * temperature
        score = F.sum(score - F.logsumexp(score, -1, True), -1)
        return score + log_scale


def _full(like: Tensor, value: float) -> Tensor:
    return C.full(tuple(like.shape), value, dtype=like.dtype)


def _tensor(value: Any, like: Tensor) -> Tensor:
    return value if isinstance(value, Tensor) else C.tensor(float(value), dtype=like.dtype)


class _Relaxed(TransformedDistribution):
    """RelaxedBernoulli and RelaxedOneHotCategorical: a relaxed base pushed through one transform."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    has_rsample = True
    program_attributes = TransformedDistribution.program_attributes | {"probs", "logits", "temperature"}

    def _holds_parameter(self, name: str) -> bool:
        return False

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits


class RelaxedBernoulli(_Relaxed):
    support = constraints.unit_interval

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)


class RelaxedOneHotCategorical(_Relaxed):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)


CLASSES = {"TransformedDistribution": TransformedDistribution, "LogNormal": LogNormal, "HalfNormal": HalfNormal,
           "Gumbel": Gumbel,
           "LogitRelaxedBernoulli": LogitRelaxedBernoulli, "RelaxedBernoulli": RelaxedBernoulli,
           "ExpRelaxedCategorical": ExpRelaxedCategorical, "RelaxedOneHotCategorical": RelaxedOneHotCategorical,
           "LogisticNormal": LogisticNormal, "InverseGamma": InverseGamma}
