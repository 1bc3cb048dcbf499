"""`torch.distributions.constraints`: where a parameter or a value may lie, printed as PyTorch prints it.

A constraint answers on NumPy arrays (`holds`), since validation reads values and records nothing.
Its text is PyTorch's, because PyTorch's own validation errors name it: "to satisfy the constraint
GreaterThan(lower_bound=0.0)". A bound that is a tensor prints as PyTorch formats one in an f-string.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.engine.tensor_str import tensor_repr


def shown(value: Any) -> str:
    """`f"{value}"` of PyTorch: a one-number tensor of no dimensions as its Python number, any other as its repr."""
    if isinstance(value, Tensor):
        return repr(value._data.item()) if value.ndim == 0 else tensor_repr(value)
    return repr(value)


def _array(value: Any) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


class Constraint:
    """One region; `event_dim` counts the rightmost dimensions one check covers (1 for a simplex)."""

    is_discrete = False
    event_dim = 0
    program_attributes = frozenset({"check", "is_discrete", "event_dim"})

    def holds(self, value: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def check(self, value: Any) -> Tensor:
        """PyTorch's `constraint.check(value)`: a bool tensor, one entry per event."""
        return Tensor(np.asarray(self.holds(_array(value))))

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class Real(Constraint):
    def holds(self, value: np.ndarray) -> np.ndarray:
        return value == value  # noqa: PLR0124 (nan is the one value unequal to itself)


class Boolean(Constraint):
    is_discrete = True

    def holds(self, value: np.ndarray) -> np.ndarray:
        return (value == 0) | (value == 1)


class _Bounded(Constraint):
    """A bound on one side; `bound` may be a number or a tensor (Uniform's low and high)."""

    side = "lower_bound"
    integer = False

    def __init__(self, bound: Any) -> None:
        self.bound = bound

    def compare(self, value: np.ndarray, bound: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def holds(self, value: np.ndarray) -> np.ndarray:
        inside = self.compare(value, _array(self.bound))
        return inside & (value % 1 == 0) if self.integer else inside

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.side}={shown(self.bound)})"


class GreaterThan(_Bounded):
    def compare(self, value: np.ndarray, bound: np.ndarray) -> np.ndarray:
        return bound < value


class GreaterThanEq(_Bounded):
    def compare(self, value: np.ndarray, bound: np.ndarray) -> np.ndarray:
        return bound <= value


class LessThan(_Bounded):
    side = "upper_bound"

    def compare(self, value: np.ndarray, bound: np.ndarray) -> np.ndarray:
        return value < bound


class IntegerGreaterThan(GreaterThanEq):
    is_discrete = True
    integer = True


class Interval(Constraint):
    integer = False

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def holds(self, value: np.ndarray) -> np.ndarray:
        inside = (_array(self.lower_bound) <= value) & (value <= _array(self.upper_bound))
        return inside & (value % 1 == 0) if self.integer else inside

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lower_bound={shown(self.lower_bound)}, upper_bound={shown(self.upper_bound)})"


class HalfOpenInterval(Interval):
    def holds(self, value: np.ndarray) -> np.ndarray:
        return (_array(self.lower_bound) <= value) & (value < _array(self.upper_bound))


class IntegerInterval(Interval):
    is_discrete = True
    integer = True


class Simplex(Constraint):
    event_dim = 1

    def holds(self, value: np.ndarray) -> np.ndarray:
        return np.all(value >= 0, axis=-1) & (np.abs(value.sum(-1) - 1) < 1e-6)


class OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def holds(self, value: np.ndarray) -> np.ndarray:
        return np.all((value == 0) | (value == 1), axis=-1) & (value.sum(-1) == 1)


class Multinomial(Constraint):
    """Nonnegative counts whose sum is at most `upper_bound` (PyTorch prints it bare: `Multinomial()`)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: int) -> None:
        self.upper_bound = upper_bound

    def holds(self, value: np.ndarray) -> np.ndarray:
        return np.all(value >= 0, axis=-1) & (value.sum(-1) <= self.upper_bound)


class PositiveDefinite(Constraint):
    """Symmetric with a Cholesky factor, as PyTorch tests it (`cholesky_ex(value).info == 0` after a symmetry test)."""

    event_dim = 2

    def holds(self, value: np.ndarray) -> np.ndarray:
        symmetric = np.all(np.isclose(value, np.swapaxes(value, -1, -2), atol=1e-6), axis=(-2, -1))
        flat = value.reshape(-1, *value.shape[-2:])
        factorable = []
        for matrix in flat:
            try:
                np.linalg.cholesky(matrix)
                factorable.append(True)
            except np.linalg.LinAlgError:
                factorable.append(False)
        return symmetric & np.array(factorable).reshape(value.shape[:-2])


class LowerCholesky(Constraint):
    event_dim = 2

    def holds(self, value: np.ndarray) -> np.ndarray:
        lower = np.all(np.triu(value, 1) == 0, axis=(-2, -1))
        return lower & np.all(np.diagonal(value, axis1=-2, axis2=-1) > 0, axis=-1)


class CorrCholesky(LowerCholesky):
    """The Cholesky factor of a correlation matrix: lower triangular, positive diagonal, rows of unit length
    (within ten epsilons per column, PyTorch's tolerance)."""

    def holds(self, value: np.ndarray) -> np.ndarray:
        tol = np.finfo(value.dtype).eps * value.shape[-1] * 10
        unit_rows = np.all(np.abs(np.linalg.norm(value, axis=-1) - 1.0) <= tol, axis=-1)
        return super().holds(value) & unit_rows


class IndependentConstraint(Constraint):
    """A base constraint over `reinterpreted_batch_ndims` more dimensions: all of them must hold."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete

    def holds(self, value: np.ndarray) -> np.ndarray:
        result = self.base_constraint.holds(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = np.all(result, axis=-1)
        return result

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


real = Real()
boolean = Boolean()
positive = GreaterThan(0.0)
nonnegative = GreaterThanEq(0.0)
nonnegative_integer = IntegerGreaterThan(0)
positive_integer = IntegerGreaterThan(1)
unit_interval = Interval(0.0, 1.0)
simplex = Simplex()
one_hot = OneHot()
positive_definite = PositiveDefinite()
lower_cholesky = LowerCholesky()
real_vector = IndependentConstraint(real, 1)

NAMES: dict[str, Any] = {
    "real": real, "boolean": boolean, "positive": positive, "nonnegative": nonnegative,
    "nonnegative_integer": nonnegative_integer, "positive_integer": positive_integer,
    "unit_interval": unit_interval, "simplex": simplex, "one_hot": one_hot, "positive_definite": positive_definite,
    "lower_cholesky": lower_cholesky, "real_vector": real_vector, "corr_cholesky": CorrCholesky(),
    "greater_than": GreaterThan, "greater_than_eq": GreaterThanEq, "less_than": LessThan, "interval": Interval,
    "half_open_interval": HalfOpenInterval, "integer_interval": IntegerInterval, "multinomial": Multinomial,
    "independent": IndependentConstraint,
}
