"""`biject_to` and `transform_to`: from a constraint to a transform whose codomain it is.

Optimisers work on unconstrained reals; a positive scale or a probability vector is reached by pushing a
free parameter through the transform these registries give (`biject_to(constraints.positive)` is
ExpTransform). The table is PyTorch's, entry for entry, for the constraints gradcli defines: `biject_to`
gives bijections (StickBreakingTransform onto the simplex), `transform_to` may give a cheaper map that is
not one (SoftmaxTransform). A program may register its own factory for a constraint class.
"""
from __future__ import annotations

from typing import Any, Callable

import gradcli.distributions.constraints as constraints
import gradcli.distributions.transforms as T
from gradcli.errors import NotAllowedError, ValueDomainError


class ConstraintRegistry:
    """Factories by constraint class, as PyTorch looks them up (by the constraint's type, never its value)."""

    program_attributes = frozenset({"register"})

    def __init__(self, factories: dict[type, Callable[[Any], T.Transform]]) -> None:
        self._defaults = dict(factories)
        self._registry = dict(factories)

    def reset(self) -> None:
        self._registry = dict(self._defaults)

    def register(self, constraint: Any, factory: Any = None) -> Any:
        """`registry.register(C, factory)`, or `@registry.register(C)` over a factory."""
        if factory is None:
            return lambda made: self.register(constraint, made)
        kind = constraint if isinstance(constraint, type) else type(constraint)
        if not issubclass(kind, constraints.Constraint):
            raise NotAllowedError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                                  f"{constraint!r}", hint="register(constraints.positive, factory)")
        self._registry[kind] = factory
        return factory

    def __call__(self, constraint: Any) -> T.Transform:
        """PyTorch's NotImplementedError (its classes are named with a leading underscore) for a constraint
        with no factory."""
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise ValueDomainError(f"Cannot transform _{type(constraint).__name__} constraints",
                                  hint="biject_to covers real, positive, greater_than, less_than, interval, simplex "
                                       "and independent ones; register a factory for others")
        return factory(constraint)


def _identity(constraint: Any) -> T.Transform:
    return T.ComposeTransform([])


def _greater_than(constraint: Any) -> T.Transform:
    """positive and nonnegative too: they are greater_than(0) and greater_than_eq(0), looked up by their class."""
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.bound, 1)])


def _less_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.bound, -1)])


def _interval(constraint: Any) -> T.Transform:
    """The unit interval (bounds the numbers 0 and 1) is a plain sigmoid; any other a sigmoid stretched onto it."""
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, (int, float)) and low == 0 and isinstance(high, (int, float)) and high == 1:
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(low, high - low)])


def _with(registry: Callable[[], ConstraintRegistry]) -> Callable[[Any], T.Transform]:
    """`independent`: the base constraint's transform, over the constraint's extra dimensions."""
    return lambda c: T.IndependentTransform(registry()(c.base_constraint), c.reinterpreted_batch_ndims)


_SHARED: dict[type, Callable[[Any], T.Transform]] = {
    constraints.Real: _identity, constraints.GreaterThan: _greater_than, constraints.GreaterThanEq: _greater_than,
    constraints.LessThan: _less_than, constraints.Interval: _interval, constraints.HalfOpenInterval: _interval,
    constraints.CorrCholesky: lambda c: T.CorrCholeskyTransform()}

biject_to = ConstraintRegistry({**_SHARED, constraints.Simplex: lambda c: T.StickBreakingTransform(),
                                constraints.IndependentConstraint: _with(lambda: biject_to)})
transform_to = ConstraintRegistry({**_SHARED, constraints.Simplex: lambda c: T.SoftmaxTransform(),
                                   constraints.IndependentConstraint: _with(lambda: transform_to)})
