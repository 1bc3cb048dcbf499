"""MixtureSameFamily: k components of one family, chosen by a Categorical (a Gaussian mixture, mostly).

The rightmost batch dimension of the component distribution indexes the components. The density is
the log-sum-exp of each component's log-density plus its log-weight, so gradients reach both the
weights and the components; a draw picks a component per draw and gathers its draw (not
reparameterisable, as in PyTorch, whose draws consume the generator in the same order: the choice
first, then every component's draw).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.discrete import Categorical
from gradcli.distributions.distribution import Distribution, sample_shape_of
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor
from gradcli.errors import ValueDomainError


class MixtureSameFamilyConstraint(constraints.Constraint):
    """A value is in the mixture's support when it is in the components' (checked against each, all must hold)."""

    def __init__(self, base_constraint: constraints.Constraint) -> None:
        self.base_constraint = base_constraint
        self.event_dim = base_constraint.event_dim
        self.is_discrete = base_constraint.is_discrete

    def holds(self, value: np.ndarray) -> np.ndarray:
        result = np.asarray(self.base_constraint.holds(np.expand_dims(value, -1 - self.event_dim)))
        keep = value.ndim - self.event_dim
        if result.ndim <= keep:
            return result
        return np.all(result.reshape(*result.shape[:keep], -1), axis=-1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    arg_constraints: dict[str, Any] = {}
    has_rsample = False
    program_attributes = Distribution.program_attributes | {"mixture_distribution", "component_distribution"}

    def __init__(self, mixture_distribution: Any, component_distribution: Any,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueDomainError(" The Mixture distribution needs to be an  instance of "
                                   "torch.distributions.Categorical", hint="MixtureSameFamily(Categorical(w), ...)")
        if not isinstance(component_distribution, Distribution):
            raise ValueDomainError("The Component distribution needs to be an instance of "
                                   "torch.distributions.Distribution",
                                   hint="e.g. Independent(Normal(locs, scales), 1) with k components on the batch")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueDomainError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                       f"`component_distribution.batch_shape`({cdbs})",
                                       hint="the mixture's batch lines up with the components' batch from the right")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1] if len(component_distribution.batch_shape) else None
        if kc is None or km != kc:
            raise ValueDomainError(f"`mixture_distribution component` ({km}) does not equal "
                                   f"`component_distribution.batch_shape[-1]` ({kc})",
                                   hint="the component distribution's last batch dimension counts the components")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._num_component = km
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(tuple(cdbs), tuple(component_distribution.event_shape), validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self._component_distribution = self._component_distribution.expand(shape + (self._num_component,))
        self._mixture_distribution = self._mixture_distribution.expand(shape)

    @property
    def support(self) -> constraints.Constraint:
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return F.sum(probs * self.component_distribution.mean, -1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = F.sum(probs * self.component_distribution.variance, -1 - self._event_ndims)
        var_cond_mean = F.sum(probs * F.pow(self.component_distribution.mean - self._pad(self.mean), 2.0),
                              -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, value: Any) -> Tensor:
        cdf_x = self.component_distribution.cdf(self._pad(value))
        return F.sum(cdf_x * self.mixture_distribution.probs, -1)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        log_prob_x = self.component_distribution.log_prob(self._pad(value))
        log_mix_prob = F.log_softmax(self.mixture_distribution.logits, dim=-1)
        return F.logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = sample_shape_of(sample_shape)
        with no_grad():
            gather_dim = len(shape) + len(self.batch_shape)
            events = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(shape)
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(shape)
            index = mix_sample.reshape(*mix_shape, *([1] * (len(events) + 1)))
            index = index.repeat(*([1] * len(mix_shape)), 1, *events)
            return F.squeeze(F.gather(comp_samples, gather_dim, index), gather_dim)

    def _pad(self, value: Tensor) -> Tensor:
        return value.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        pad_ndims = 0 if len(self.mixture_distribution.batch_shape) == 1 else \
            len(self.batch_shape) - len(self.mixture_distribution.batch_shape)
        shape = tuple(x.shape)
        return x.reshape(*shape[:-1], *([1] * pad_ndims), *shape[-1:], *([1] * self._event_ndims))

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self.mixture_distribution!r},\n  {self.component_distribution!r})"


CLASSES = {"MixtureSameFamily": MixtureSameFamily}
