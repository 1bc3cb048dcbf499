"""Gamma, Beta, Dirichlet and Poisson, and the families PyTorch draws from gamma draws (Chi2, StudentT,
FisherSnedecor, NegativeBinomial): the families whose densities use lgamma and digamma.

Their draws are PyTorch's rejection samplers (`samplers.py`). A draw is differentiated with respect to
its concentration as PyTorch does it, by implicit reparameterisation: the sampler's output enters the
engine's `_standard_gamma` or `_sample_dirichlet` op, whose VJP is ATen's approximation
(`engine/implicit.py`), with PyTorch's node names (StandardGammaBackward0, _DirichletBackward).
Gradients through `rate`, and every `log_prob`, `entropy` and moment, are the engine's ops (lgamma,
digamma, xlogy) and `--check` proves them; the implicit gradient has no closed form and is reported not checked.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
import gradcli.distributions.samplers as samplers
from gradcli.distributions.discrete import Counted
from gradcli.distributions.distribution import Distribution, ExponentialFamily, broadcast_all, masked
import gradcli.engine.ops as O
import gradcli.nn.functional as NF
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ValueDomainError


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    batch_parameters = ("concentration", "rate")
    support = constraints.nonnegative
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"concentration", "rate"}

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(concentration, rate, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return F.clamp((self.concentration - 1) / self.rate, min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / F.pow(self.rate, 2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        alpha = F.expand(self.concentration, *shape)
        draw = samplers.standard_gamma(C.generator_arg(None), np.array(alpha._data))
        value = apply(O.STANDARD_GAMMA, alpha, draw) / F.expand(self.rate, *shape)
        value._data = np.maximum(value._data, np.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        value = F.as_tensor(value, dtype=self.rate.dtype)
        return F.xlogy(self.concentration, self.rate) + F.xlogy(self.concentration - 1, value) - \
            self.rate * value - F.lgamma(self.concentration)

    def entropy(self) -> Tensor:
        return self.concentration - F.log(self.rate) + F.lgamma(self.concentration) + \
            (1.0 - self.concentration) * F.digamma(self.concentration)


class Chi2(Gamma):
    """Gamma(df/2, 1/2), as PyTorch builds it (so it prints as `Chi2()`: its parameters are the gamma's)."""

    arg_constraints = {"df": constraints.positive}
    program_attributes = Gamma.program_attributes | {"df"}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def _validates(self, name: str) -> bool:
        return True

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class StudentT(Distribution):
    """A normal draw over the root of a chi-squared draw per degree of freedom: reparameterised through both,
    the chi-squared one by the gamma's implicit gradient when `df` requires grad."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    batch_parameters = ("df", "loc", "scale")
    support = constraints.real
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"df", "loc", "scale"}

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self._keep_parameters(df, loc, scale, validate_args=validate_args)
        self._chi2 = Chi2(self.df)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        super()._expand_parameters(shape)
        self._chi2 = self._chi2.expand(shape)

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone()  # PyTorch writes the nans by index: IndexPutBackward0 over CloneBackward0
        m[self.df <= 1] = float("nan")
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        m = self.df.clone()
        finite = self.df > 2
        m[finite] = F.pow(self.scale[finite], 2) * self.df[finite] / (self.df[finite] - 2)
        m[(self.df <= 2) & (self.df > 1)] = float("inf")
        m[self.df <= 1] = float("nan")
        return m

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = C.zeros(*shape, dtype=self.df.dtype).normal_()
        z = self._chi2.rsample(sample_shape)
        y = x * F.rsqrt(z / self.df)
        return self.loc + self.scale * y

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        y = (value - self.loc) / self.scale
        z = F.log(self.scale) + 0.5 * F.log(self.df) + 0.5 * math.log(math.pi) + F.lgamma(0.5 * self.df) - \
            F.lgamma(0.5 * (self.df + 1.0))
        return -0.5 * (self.df + 1.0) * F.log1p(y ** 2.0 / self.df) - z

    def entropy(self) -> Tensor:
        lbeta = F.lgamma(0.5 * self.df) + math.lgamma(0.5) - F.lgamma(0.5 * (self.df + 1))
        return F.log(self.scale) + 0.5 * (self.df + 1) * (F.digamma(0.5 * (self.df + 1)) - F.digamma(0.5 * self.df)) \
            + 0.5 * F.log(self.df) + lbeta


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.IndependentConstraint(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"concentration"}

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        if not isinstance(concentration, Tensor) or concentration.ndim < 1:
            raise ValueDomainError("`concentration` parameter must be at least one-dimensional.",
                                   hint="one concentration per category: torch.tensor([1.0, 2.0, 3.0])")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.concentration = F.expand(self.concentration, *shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        alpha = F.expand(self.concentration, *shape)
        return apply(O.DIRICHLET, alpha, samplers.dirichlet(C.generator_arg(None), np.array(alpha._data)))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        c = self.concentration
        return F.sum(F.xlogy(c - 1.0, value), -1) + F.lgamma(F.sum(c, -1)) - F.sum(F.lgamma(c), -1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / F.sum(self.concentration, -1, True)

    @property
    def variance(self) -> Tensor:
        con0 = F.sum(self.concentration, -1, True)
        return self.concentration * (con0 - self.concentration) / (F.pow(con0, 2) * (con0 + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        a0 = F.sum(c, -1)
        return F.sum(F.lgamma(c), -1) - F.lgamma(a0) - (k - a0) * F.digamma(a0) - \
            F.sum((c - 1.0) * F.digamma(c), -1)


class Beta(ExponentialFamily):
    """A Dirichlet of two categories, as PyTorch builds it (so it prints as `Beta()`: its parameters live inside)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"concentration1", "concentration0"}

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(F.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return False

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self._dirichlet = self._dirichlet.expand(shape)

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (F.pow(total, 2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return self._dirichlet.log_prob(F.stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    batch_parameters = ("rate",)
    support = constraints.nonnegative_integer
    program_attributes = Distribution.program_attributes | {"rate"}

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(rate, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return F.floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(F.expand(self.rate, *shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        rate, value = broadcast_all(self.rate, value)
        return F.xlogy(value, rate) - rate - F.lgamma(value + 1)


def poisson(input: Any, generator: Any = None) -> Tensor:
    """`torch.poisson(rates)`: PyTorch's counts for a seeded generator (no gradient flows through a count)."""
    rates = F._tensor_arg(input, "poisson")
    if np.any(rates._data < 0) or not np.all(np.isfinite(rates._data)):
        raise ValueDomainError("invalid Poisson rate, expected rate to be non-negative",
                               hint="a Poisson rate is a nonnegative, finite number")
    return _wrap(samplers.poisson(C.generator_arg(generator, "poisson"), np.array(rates._data)))


class FisherSnedecor(Distribution):
    """The ratio of two gamma draws, Gamma(df1/2, df1) over Gamma(df2/2, df2): Snedecor's F."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    batch_parameters = ("df1", "df2")
    support = constraints.positive
    pytorch_lacks = frozenset({"entropy", "cdf", "icdf"})
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"df1", "df2"}

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        # built first, as PyTorch builds them: a df that is not positive is the gamma's error
        self._gammas = (Gamma(self.df1 * 0.5, self.df1, validate_args=validate_args),
                        Gamma(self.df2 * 0.5, self.df2, validate_args=validate_args))
        Distribution.__init__(self, self.df1.shape, validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        super()._expand_parameters(shape)
        self._gammas = tuple(gamma.expand(shape) for gamma in self._gammas)

    @property
    def mean(self) -> Tensor:
        df2 = masked(F.clone(self.df2), self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return masked(mode, self.df1 <= 2, math.nan)

    @property
    def variance(self) -> Tensor:
        df2 = masked(F.clone(self.df2), self.df2 <= 4, math.nan)
        return 2 * F.pow(df2, 2) * (self.df1 + df2 - 2) / (self.df1 * F.pow(df2 - 2, 2) * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        gamma1, gamma2 = self._gammas
        x1 = gamma1.rsample(sample_shape).view(*shape)
        x2 = gamma2.rsample(sample_shape).view(*shape)
        tiny = float(np.finfo(x2.dtype).tiny)
        return F.clamp(x1 / F.clamp(x2, min=tiny), min=tiny)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = F.lgamma(ct1 + ct2) - F.lgamma(ct1) - F.lgamma(ct2)
        t2 = ct1 * F.log(ct3) + (ct1 - 1) * F.log(value)
        t3 = (ct1 + ct2) * F.log1p(ct3 * value)
        return t1 + t2 - t3


class NegativeBinomial(Counted):
    """Successes before `total_count` failures: a Poisson count whose rate is a gamma draw, as PyTorch draws it."""

    arg_constraints = {"total_count": constraints.GreaterThanEq(0), "probs": constraints.HalfOpenInterval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    pytorch_lacks = frozenset({"entropy", "cdf", "icdf"})

    @property
    def mean(self) -> Tensor:
        return self.total_count * F.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return F.clamp(F.floor((self.total_count - 1) * F.exp(self.logits)), min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / F.sigmoid(-self.logits)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            # validation off: total_count may be zero
            rate = Gamma(self.total_count, F.exp(-self.logits), validate_args=False).sample(sample_shape)
            return poisson(rate)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        log_unnormalized_prob = self.total_count * NF.logsigmoid(-self.logits) + value * NF.logsigmoid(self.logits)
        log_normalization = (-F.lgamma(self.total_count + value) + F.lgamma(1.0 + value)
                             + F.lgamma(self.total_count))
        # a count of zero at zero failures has probability one, where lgamma(0) is infinite
        log_normalization = F.masked_fill(log_normalization, self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization


CLASSES = {"Gamma": Gamma, "Chi2": Chi2, "StudentT": StudentT, "Beta": Beta, "Dirichlet": Dirichlet,
           "Poisson": Poisson, "FisherSnedecor": FisherSnedecor, "NegativeBinomial": NegativeBinomial}
