"""Bernoulli, Categorical and OneHotCategorical: parameterised by `probs` or `logits`, one derived from the other.

As in PyTorch, the parameter not given is computed the first time it is read and kept (a lazy
property), and a distribution prints only the parameters it holds so far: `Bernoulli(logits: ...)`
becomes `Bernoulli(probs: ..., logits: ...)` once `probs` has been read. Draws call `bernoulli` and
`multinomial`, which consume PyTorch's generator as PyTorch does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.nn.functional as NF
import gradcli.distributions.constraints as constraints
import gradcli.distributions.samplers as samplers
from gradcli.distributions.distribution import Distribution, ExponentialFamily, broadcast_all, sample_shape_of
from gradcli.engine.modes import enable_grad, no_grad
from gradcli.engine.tensor import Tensor, broadcast_shape
from gradcli.errors import NotAllowedError, ValueDomainError


def clamp_probs(probs: Tensor) -> Tensor:
    eps = float(np.finfo(probs.dtype).eps)
    return F.clamp(probs, min=eps, max=1 - eps)


class _ProbsOrLogits(Distribution):
    """The lazy pair: `_given` holds the parameter passed in and each one derived since."""

    def _set_parameters(self, probs: Any, logits: Any) -> None:
        if (probs is None) == (logits is None):
            raise ValueDomainError("Either `probs` or `logits` must be specified, but not both.",
                                   hint="pass one of them: Bernoulli(probs=0.3) or Bernoulli(logits=-0.85)")
        self._given: dict[str, Tensor] = {}

    def _holds_parameter(self, name: str) -> bool:
        return name in self._given

    @property
    def probs(self) -> Tensor:
        if "probs" not in self._given:
            with enable_grad():  # PyTorch's lazy_property: kept with its graph even when first read under no_grad
                self._given["probs"] = self._probs_from(self._given["logits"])
        return self._given["probs"]

    @property
    def logits(self) -> Tensor:
        if "logits" not in self._given:
            with enable_grad():
                self._given["logits"] = self._logits_from(self._given["probs"])
        return self._given["logits"]

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        events = tuple(self._param.shape[len(self._batch_shape):])
        self._given = {name: F.expand(value, *shape, *events) for name, value in self._given.items()}
        self._param = F.expand(self._param, *shape, *events)

    def _probs_from(self, logits: Tensor) -> Tensor:
        raise NotImplementedError

    def _logits_from(self, probs: Tensor) -> Tensor:
        raise NotImplementedError


class _Binary(_ProbsOrLogits):
    """A family of one success probability per element (Bernoulli, Geometric, the relaxed Bernoulli):
    the probability or its log-odds, each of the batch's shape (a number gives a batch of none)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    program_attributes = Distribution.program_attributes | {"probs", "logits", "param_shape"}

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._set_parameters(probs, logits)
        given = probs if probs is not None else logits
        (self._param,) = broadcast_all(given)
        self._given["probs" if probs is not None else "logits"] = self._param
        scalar = not isinstance(given, Tensor)
        Distribution.__init__(self, () if scalar else self._param.shape, validate_args=validate_args)

    def _probs_from(self, logits: Tensor) -> Tensor:
        return F.sigmoid(logits)

    def _logits_from(self, probs: Tensor) -> Tensor:
        clamped = clamp_probs(probs)
        return F.log(clamped) - F.log1p(-clamped)


class Bernoulli(_Binary, ExponentialFamily):
    support = constraints.boolean
    has_enumerate_support = True

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        data = (self.probs._data >= 0.5).astype(self.probs.dtype)
        data[self.probs._data == 0.5] = np.nan
        return C.tensor(data)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return C.bernoulli(F.expand(self.probs, *shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        return -NF.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return NF.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = C.tensor([0.0, 1.0], dtype=self._param.dtype).reshape(2, *(1,) * len(self._batch_shape))
        return F.expand(values, 2, *self._batch_shape) if expand else values


class Geometric(_Binary):
    """The number of failures before the first success."""

    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        super().__init__(probs, logits, validate_args=validate_args)
        if self._validate_args and probs is not None and not np.all(self.probs._data > 0):
            raise ValueDomainError(
                f"Expected parameter probs (Tensor of shape {tuple(self.probs.shape)}) of distribution {self!r} to be "
                f"positive but found invalid values:\n{_invalid(self.probs, self.probs._data > 0)}",
                hint="a geometric distribution's success probability is above 0")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return C.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = float(np.finfo(self.probs.dtype).tiny)
        with no_grad():
            u = C.zeros(*shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return F.floor(F.log(u) / F.log1p(-self.probs))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        value, probs = broadcast_all(value, self.probs)
        probs = F.where((probs == 1) & (value == 0), 0.0, probs)
        return value * F.log1p(-probs) + F.log(self.probs)

    def entropy(self) -> Tensor:
        return NF.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs


def _invalid(value: Tensor, valid: np.ndarray) -> str:
    return constraints.shown(C.tensor(value._data[~valid]))


class Counted(_ProbsOrLogits):
    """A count and a probability of success (given as probs or logits), broadcast together: Binomial's trials,
    NegativeBinomial's failures."""

    program_attributes = Distribution.program_attributes | {"total_count", "probs", "logits", "param_shape"}

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._set_parameters(probs, logits)
        count, self._param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = F.to_dtype(count, self._param.dtype)
        self._given["probs" if probs is not None else "logits"] = self._param
        Distribution.__init__(self, self._param.shape, validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return name == "total_count" or name in self._given

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        super()._expand_parameters(shape)
        self.total_count = F.expand(self.total_count, *shape)

    def _probs_from(self, logits: Tensor) -> Tensor:
        return F.sigmoid(logits)

    def _logits_from(self, probs: Tensor) -> Tensor:
        clamped = clamp_probs(probs)
        return F.log(clamped) - F.log1p(-clamped)


class Binomial(Counted):
    """Successes in `total_count` trials (a count per element, which may differ across the batch)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        super().__init__(total_count, probs, logits, validate_args=validate_args)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.IntegerInterval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return F.clamp(F.floor((self.total_count + 1) * self.probs), max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(F.expand(self.total_count, *shape), F.expand(self.probs, *shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        log_factorial_n = F.lgamma(self.total_count + 1)
        log_factorial_k = F.lgamma(value + 1)
        log_factorial_nmk = F.lgamma(self.total_count - value + 1)
        logits = self.logits
        clamped_by_zero = (F.clamp(logits, min=0) + logits - F.clamp(logits, max=0)) / 2
        normalize_term = self.total_count * clamped_by_zero + self.total_count * F.log1p(F.exp(-F.abs(logits))) - \
            log_factorial_n
        return value * logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _homogeneous_count(self, what: str) -> int:
        counts = self.total_count._data
        if counts.size and counts.min() != counts.max():
            raise ValueDomainError(f"Inhomogeneous total count not supported by `{what}`.",
                                  hint="every element needs the same total_count")
        return int(counts.max()) if counts.size else 0

    def entropy(self) -> Tensor:
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -F.sum(F.exp(log_prob) * log_prob, 0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._homogeneous_count("enumerate_support")
        values = C.arange(1 + n, dtype=self._param.dtype).reshape(-1, *(1,) * len(self._batch_shape))
        return F.expand(values, -1, *self._batch_shape) if expand else values


def binomial(count: Any, prob: Any, generator: Any = None) -> Tensor:
    """`torch.binomial(count, prob)`: PyTorch's counts for a seeded generator (no gradient flows through a count)."""
    counts, probs = F._tensor_arg(count, "binomial"), F._tensor_arg(prob, "binomial")
    if counts.shape != probs.shape:
        raise ValueDomainError(f"binomial: count of shape {tuple(counts.shape)} and prob of shape "
                               f"{tuple(probs.shape)} differ", hint="expand both to one shape")
    draws = samplers.binomial(C.generator_arg(generator, "binomial"), np.array(counts._data), np.array(probs._data))
    return C.tensor(draws, dtype=probs.dtype)


class Categorical(_ProbsOrLogits):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    program_attributes = Distribution.program_attributes | {"probs", "logits", "param_shape"}

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._set_parameters(probs, logits)
        name = "probs" if probs is not None else "logits"
        given = F._tensor_arg(probs if probs is not None else logits, type(self).__name__)
        if given.ndim < 1:
            raise ValueDomainError(f"`{name}` parameter must be at least one-dimensional.",
                                   hint="one entry per category: torch.tensor([0.2, 0.8])")
        self._param = given / F.sum(given, -1, keepdim=True) if probs is not None else \
            given - F.logsumexp(given, dim=-1, keepdim=True)
        self._given[name] = self._param
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def _probs_from(self, logits: Tensor) -> Tensor:
        return F.softmax(logits, dim=-1)

    def _logits_from(self, probs: Tensor) -> Tensor:
        return F.log(clamp_probs(probs))

    @property
    def support(self) -> constraints.Constraint:
        return constraints.IntegerInterval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        return self.nan_filled()

    @property
    def mode(self) -> Tensor:
        return F.argmax(self.probs, -1)

    @property
    def variance(self) -> Tensor:
        return self.nan_filled()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = sample_shape_of(sample_shape)
        count = int(np.prod(shape, dtype=np.int64))
        with no_grad():
            rows = F.reshape(self.probs, -1, self._num_events)
            drawn = F.t(C.multinomial(rows, count, True))
            return F.reshape(drawn, *self._extended_shape(shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        value = F.unsqueeze(F.to_dtype(F._tensor_arg(value, "log_prob"), np.int64), -1)
        shape = broadcast_shape("log_prob", value.shape, self.logits.shape)
        index = F.expand(value, *shape)[..., :1]
        log_pmf = self.logits if self.logits.shape == shape else F.expand(self.logits, *shape)
        return F.squeeze(F.gather(log_pmf, -1, index), -1)

    def entropy(self) -> Tensor:
        min_real = float(np.finfo(self.logits.dtype).min)
        logits = F.clamp(self.logits, min=min_real)
        return -F.sum(logits * self.probs, -1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = C.arange(self._num_events).reshape(-1, *(1,) * len(self._batch_shape))
        return F.expand(values, -1, *self._batch_shape) if expand else values


class _OverCategorical(Distribution):
    """A family built on a Categorical it keeps inside: its parameters are that Categorical's, so they
    are neither validated nor printed again here (it prints bare) and `expand` expands the Categorical."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def _hold_categorical(self, probs: Any, logits: Any, validate_args: bool | None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        Distribution.__init__(self, self._categorical.batch_shape, self._categorical.param_shape[-1:],
                              validate_args=validate_args)

    def _holds_parameter(self, name: str) -> bool:
        return False

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self._categorical = self._categorical.expand(shape)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape


class OneHotCategorical(_OverCategorical):
    """A Categorical whose draws are one-hot vectors."""

    support = constraints.one_hot
    has_enumerate_support = True
    program_attributes = Distribution.program_attributes | {"probs", "logits", "param_shape"}

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._hold_categorical(probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return F.to_dtype(NF.one_hot(F.argmax(self.probs, -1), self._categorical._num_events), self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        indices = self._categorical.sample(sample_shape)
        return F.to_dtype(NF.one_hot(indices, self._categorical._num_events), self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return self._categorical.log_prob(F.argmax(value, -1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self._categorical._num_events
        values = C.eye(n, dtype=self.probs.dtype).reshape(n, *(1,) * len(self._batch_shape), n)
        return F.expand(values, n, *self._batch_shape, n) if expand else values


class Multinomial(_OverCategorical):
    """Counts of `total_count` categorical draws."""

    program_attributes = Distribution.program_attributes | {"probs", "logits", "param_shape", "total_count"}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, (int, np.integer)) or isinstance(total_count, bool):
            raise NotAllowedError("inhomogeneous total_count is not supported",
                                  hint="total_count is one integer for the whole batch")
        self.total_count = int(total_count)
        self._hold_categorical(probs, logits, validate_args)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.Multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """PyTorch's way: total_count categorical draws first, then counted per category with a scatter-add."""
        shape = sample_shape_of(sample_shape)
        draws = self._categorical.sample((self.total_count,) + shape)
        draws = F.permute(draws, tuple(range(1, draws.ndim)) + (0,))
        counts = np.zeros(self._extended_shape(shape), dtype=np.int64)
        rows, picks = counts.reshape(-1, counts.shape[-1]), draws._data.reshape(-1, draws.shape[-1])
        for row, pick in zip(rows, picks):
            np.add.at(row, pick, 1)
        return C.tensor(counts, dtype=self.probs.dtype)

    def entropy(self) -> Tensor:
        """PyTorch's: n·H(categorical) - log n! plus E[log xᵢ!] summed over the categories, each count xᵢ a
        Binomial(n, pᵢ) over its support."""
        n = C.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - F.lgamma(n + 1)
        binomial = Binomial(self.total_count, probs=self.probs)
        support = binomial.enumerate_support(expand=False)[1:]
        binomial_probs = F.exp(binomial.log_prob(support))
        term2 = F.sum(binomial_probs * F.lgamma(support + 1), (0, -1))
        return term1 + term2

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        unreachable = (value._data == 0) & (logits._data == -np.inf)
        logits = F.where(unreachable, 0.0, logits) if unreachable.any() else logits
        log_factorial_n = F.lgamma(F.sum(value, -1) + 1)
        log_factorial_xs = F.sum(F.lgamma(value + 1), -1)
        return log_factorial_n - log_factorial_xs + F.sum(logits * value, -1)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A one-hot draw whose gradient is the probabilities' (Bengio et al.'s straight-through estimator): the
    value is the draw, the graph is `probs - probs.detach()` added to it."""

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


CLASSES = {"Bernoulli": Bernoulli, "Geometric": Geometric, "Binomial": Binomial, "Categorical": Categorical,
           "OneHotCategorical": OneHotCategorical, "Multinomial": Multinomial,
           "OneHotCategoricalStraightThrough": OneHotCategoricalStraightThrough}
