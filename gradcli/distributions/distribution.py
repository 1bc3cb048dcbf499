"""The base every distribution shares: shapes, argument and value validation, sampling under no_grad, repr.

PyTorch's `Distribution` keeps a batch shape (independent distributions side by side) and an event
shape (the dimensions one draw spans); a draw of `sample_shape` has shape sample + batch + event.
Validation is on by default, as in PyTorch, and its messages are PyTorch's word for word, since
programs print them. Every formula is written with the engine's tensor functions, so the graph,
its node names and `--check` follow from the ops each formula uses.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, broadcast_shape
from gradcli.engine.tensor_str import Size
from gradcli.errors import ArgumentError, GradcliError, NotAllowedError, ValueDomainError


class Validation:
    """`Distribution.set_default_validate_args`: whether a distribution checks its arguments unless told."""

    default = True


def set_default_validate_args(value: bool) -> None:
    if value not in (True, False):
        raise ValueDomainError("", hint="pass True or False")
    Validation.default = bool(value)


def broadcast_all(*values: Any) -> list[Tensor]:
    """PyTorch's `broadcast_all`: numbers become tensors of the first tensor's dtype (else the default dtype),
    and tensors of other shapes are expanded to the common shape (one that already has it is kept as is)."""
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    tensors = []
    for v in values:
        if isinstance(v, Tensor):
            tensors.append(v)
        elif isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            tensors.append(C.tensor(float(v), dtype=dtype))
        else:
            raise ValueDomainError("Input arguments must all be instances of Number, torch.Tensor or objects "
                                   "implementing __torch_function__.",
                                   hint="pass numbers or tensors: torch.tensor([0.0, 1.0]) rather than a list")
    shape: tuple[int, ...] = ()
    for t in tensors:
        shape = broadcast_shape("broadcast_all", shape, t.shape)
    return [t if t.shape == shape else F.expand(t, *shape) for t in tensors]


def sample_shape_of(sample_shape: Any) -> tuple[int, ...]:
    """A `sample_shape` as PyTorch takes it: a torch.Size, tuple or list of ints (an int is its TypeError)."""
    if isinstance(sample_shape, (int, np.integer)) and not isinstance(sample_shape, bool):
        raise ArgumentError(f"'{type(sample_shape).__name__}' object is not iterable",
                            hint=f"a sample shape is a tuple: sample(({int(sample_shape)},))")
    if not isinstance(sample_shape, (tuple, list)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0 for s in sample_shape):
        raise ArgumentError(f"sample_shape must be a tuple of sizes, not {sample_shape!r}",
                            hint="e.g. sample((3,)) or sample(torch.Size([3]))")
    return tuple(int(s) for s in sample_shape)


def sum_rightmost(value: Tensor, dims: int) -> Tensor:
    """Sum out the `dims` rightmost dimensions (PyTorch's `_sum_rightmost`)."""
    return value if dims == 0 else F.sum(value.reshape(*value.shape[:-dims], -1), -1)


def masked(t: Tensor, mask: Any, value: float) -> Tensor:
    """PyTorch's `t[mask] = value` on a freshly computed `t` (so the node is IndexPutBackward0, as PyTorch's;
    the gradient is zero where the value was written)."""
    t[mask if tuple(mask.shape) == tuple(t.shape) else F.expand(mask, *t.shape)] = value
    return t


class Distribution:
    """PyTorch's `torch.distributions.Distribution`, with the members a program may use."""

    arg_constraints: dict[str, Any] = {}
    has_rsample = False
    has_enumerate_support = False
    program_attributes = frozenset({
        "sample", "rsample", "sample_n", "log_prob", "entropy", "perplexity", "cdf", "icdf", "mean", "mode",
        "stddev", "variance", "batch_shape", "event_shape", "support", "arg_constraints", "has_rsample",
        "has_enumerate_support", "enumerate_support", "expand"})
    set_default_validate_args = staticmethod(set_default_validate_args)

    def __init__(self, batch_shape: tuple[int, ...] = (), event_shape: tuple[int, ...] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        self._validate_args = Validation.default if validate_args is None else bool(validate_args)
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if self._validates(param):
                    value = getattr(self, param)
                    if not np.all(constraint.holds(value._data)):
                        raise ValueDomainError(
                            f"Expected parameter {param} (Tensor of shape {tuple(value.shape)}) of distribution "
                            f"{self!r} to satisfy the constraint {constraint!r}, but found invalid values:\n"
                            f"{constraints.shown(value)}", hint=_PARAMETER_HINTS.get(type(constraint).__name__))

    def _holds_parameter(self, name: str) -> bool:
        """Whether the parameter was given or has been computed (PyTorch's lazy probs/logits are not shown before)."""
        return name in self.__dict__

    def _validates(self, name: str) -> bool:
        """Whether validation checks the parameter: the ones held, and a family's derived ones (Chi2's df)."""
        return self._holds_parameter(name)

    # -- shapes ------------------------------------------------------------------------
    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = ()) -> tuple[int, ...]:
        return sample_shape_of(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    # -- drawing -----------------------------------------------------------------------
    def sample(self, sample_shape: Any = ()) -> Tensor:
        """A draw with no graph behind it (for a reparameterised family, `rsample` under no_grad, as in PyTorch)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """PyTorch's NotImplementedError, which a program may catch (to fall back on sample and REINFORCE)."""
        raise ValueDomainError(f"{type(self).__name__} has no rsample: its draws are not a differentiable function "
                               "of its parameters", hint="draw with sample() and differentiate log_prob(sample), "
                                                         "as REINFORCE does")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    # -- densities ---------------------------------------------------------------------
    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueDomainError("The value argument to log_prob must be a Tensor",
                                   hint="wrap the number: torch.tensor(0.5)")
        event = len(value.shape) - len(self._event_shape)
        if tuple(value.shape[max(event, 0):]) != tuple(self._event_shape) or event < 0:
            raise ValueDomainError(f"The right-most size of value must match event_shape: {Size(value.shape)} vs "
                                   f"{self._event_shape}.", hint="one value has the event's shape")
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueDomainError(f"Value is not broadcastable with batch_shape+event_shape: {Size(value.shape)} "
                                       f"vs {Size(expected)}.", hint="values line up with the batch from the right")
        support = self.support
        if not np.all(support.holds(value._data)):
            raise ValueDomainError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within the "
                                   f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n"
                                   f"{constraints.shown(value)}",
                                   hint="log_prob is defined on the support; pass validate_args=False to get "
                                        "PyTorch's unchecked value instead")

    def checked(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return value

    def log_prob(self, value: Any) -> Tensor:
        raise self._missing("log_prob")

    def entropy(self) -> Tensor:
        raise self._missing("entropy")

    def cdf(self, value: Any) -> Tensor:
        raise self._missing("cdf")

    def icdf(self, value: Any) -> Tensor:
        raise self._missing("icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise self._missing("enumerate_support")

    def perplexity(self) -> Tensor:
        return F.exp(self.entropy())

    batch_parameters: tuple[str, ...] = ()
    """The parameters of batch shape that `expand` expands (a family with more structure expands its own)."""

    def _keep_parameters(self, *values: Any, validate_args: bool | None) -> None:
        """For a family whose batch shape is its parameters' broadcast shape: `batch_parameters` names them
        in the constructor's order, so broadcasting and keeping them is the same code for every such family."""
        tensors = broadcast_all(*values)
        for name, tensor in zip(self.batch_parameters, tensors):
            setattr(self, name, tensor)
        Distribution.__init__(self, tensors[0].shape, validate_args=validate_args)

    def expand(self, batch_shape: Any) -> "Distribution":
        """The same distribution repeated over a larger batch: parameters expanded (views, ExpandBackward0),
        validation as this one's, nothing recomputed, as PyTorch's `expand`."""
        shape = sample_shape_of(batch_shape)
        new = copy.copy(self)
        new._expand_parameters(shape)
        new._batch_shape = Size(shape)
        return new

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        if not self.batch_parameters:
            raise self._missing("expand")
        for name in self.batch_parameters:
            setattr(self, name, F.expand(getattr(self, name), *shape))

    pytorch_lacks: frozenset[str] = frozenset()
    """What PyTorch's class itself does not define (VonMises's entropy): asking is PyTorch's NotImplementedError,
    which a program may catch, rather than a gap of gradcli's."""

    def _missing(self, what: str) -> GradcliError:
        if what in self.pytorch_lacks:
            return ValueDomainError(f"PyTorch defines no {type(self).__name__}.{what}",
                                    hint="PyTorch raises NotImplementedError here too: estimate it from samples")
        return NotAllowedError(f"{type(self).__name__}.{what} is not available in gradcli",
                               hint="docs/distributions.md lists what each distribution offers")

    # -- moments -----------------------------------------------------------------------
    @property
    def mean(self) -> Tensor:
        raise self._missing("mean")

    @property
    def mode(self) -> Tensor:
        raise self._missing("mode")

    @property
    def variance(self) -> Tensor:
        raise self._missing("variance")

    @property
    def stddev(self) -> Tensor:
        return F.sqrt(self.variance)

    def nan_filled(self) -> Tensor:
        """A moment that does not exist (a Categorical's mean): nan in the batch's shape, as PyTorch gives."""
        like = self.__dict__.get("_param")
        dtype = like.dtype if isinstance(like, Tensor) else None
        return C.full(self._extended_shape(), float("nan"), dtype=dtype)

    def __repr__(self) -> str:
        shown = [name for name in self.arg_constraints if self._holds_parameter(name)]
        args = ", ".join(f"{name}: {_parameter_text(getattr(self, name))}" for name in shown)
        return f"{type(self).__name__}({args})"


class ExponentialFamily(Distribution):
    """The families PyTorch derives from `ExponentialFamily`: kl_divergence's lookup names them as one kind."""


def _parameter_text(value: Tensor) -> str:
    return constraints.shown(value) if value._data.size == 1 else repr(Size(value.shape))


_PARAMETER_HINTS = {
    "GreaterThan": "a scale, rate or concentration is positive",
    "GreaterThanEq": "this parameter is nonnegative",
    "Interval": "a probability lies in [0, 1]",
    "LessThan": "low must be below high",
    "Simplex": "probabilities are nonnegative and sum to 1 along the last dimension",
    "PositiveDefinite": "a covariance matrix is symmetric positive definite (e.g. A @ A.T + eps * I)",
    "LowerCholesky": "scale_tril is lower triangular with a positive diagonal (torch.linalg.cholesky(cov))",
}
