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
from gradcli.distributions.distribution import Distribution, broadcast_all, sample_shape_of
from gradcli.engine.modes import no_grad
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
            self._given["probs"] = self._probs_from(self._given["logits"])
        return self._given["probs"]

    @property
    def logits(self) -> Tensor:
        if "logits" not in self._given:
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


class Bernoulli(_ProbsOrLogits):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    program_attributes = Distribution.program_attributes | {"probs", "logits", "param_shape"}

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._set_parameters(probs, logits)
        given = probs if probs is not None else logits
        (self._param,) = broadcast_all(given)
        self._given["probs" if probs is not None else "logits"] = self._param
        scalar = not isinstance(given, Tensor)
        super().__init__(() if scalar else self._param.shape, validate_args=validate_args)

    def _probs_from(self, logits: Tensor) -> Tensor:
        return F.sigmoid(logits)

    def _logits_from(self, probs: Tensor) -> Tensor:
        clamped = clamp_probs(probs)
        return F.log(clamped) - F.log1p(-clamped)

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

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        logits, value = broadcast_all(self.logits, value)
        unreachable = (value._data == 0) & (logits._data == -np.inf)
        logits = F.where(unreachable, 0.0, logits) if unreachable.any() else logits
        log_factorial_n = F.lgamma(F.sum(value, -1) + 1)
        log_factorial_xs = F.sum(F.lgamma(value + 1), -1)
        return log_factorial_n - log_factorial_xs + F.sum(logits * value, -1)


CLASSES = {"Bernoulli": Bernoulli, "Categorical": Categorical, "OneHotCategorical": OneHotCategorical,
           "Multinomial": Multinomial}
