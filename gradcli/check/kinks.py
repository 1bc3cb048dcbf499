"""Where an op's derivative does not exist at the traced point, decided from numeric values alone.

The op table's `kink` slots call these with the NumPy values the op's inputs had. Each returns a
boolean mask, in the shape the op's inputs broadcast to, of the elements that sit on a kink
(relu or abs at 0, a tie in max, a clamp bound, ...). There PyTorch picks a convention and
gradcli follows it, so the checker reports "undefined" instead of comparing. Kept free of SymPy
so `--check numeric` finds the same points without importing it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class Kinks:
    """The namespace `K` that `Op.kink` receives."""

    @staticmethod
    def zero_kink(x: Any) -> np.ndarray:
        return np.asarray(x) == 0

    @staticmethod
    def everywhere(x: Any) -> np.ndarray:
        """An op whose derivative is an approximation (`Op.approximate`): no point of it can be judged."""
        return np.ones(np.shape(x), dtype=bool)

    @staticmethod
    def tie_kink(a: Any, b: Any) -> np.ndarray:
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return a == b

    @staticmethod
    def pow_kink(a: Any, b: Any) -> np.ndarray:
        """A base of 0 with an exponent below 1 (other than 0): b·a**(b-1) has no finite value."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return (a == 0) & (b < 1) & (b != 0)

    @staticmethod
    def clamp_kink(x: Any, min: float | None, max: float | None) -> np.ndarray:
        x = np.asarray(x)
        mask = np.zeros(x.shape, dtype=bool)
        if min is not None:
            mask |= x == min
        if max is not None:
            mask |= x == max
        return mask

    @staticmethod
    def jump_kink(x: Any, offset: float) -> np.ndarray:
        """Where a step function (floor, round, ...) jumps: x - offset is a whole number."""
        shifted = np.asarray(x) - offset
        return shifted == np.floor(shifted)

    @staticmethod
    def origin_kink(a: Any, b: Any) -> np.ndarray:
        """atan2 and hypot at a = b = 0."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return (a == 0) & (b == 0)

    @staticmethod
    def zero_first_kink(a: Any, b: Any) -> np.ndarray:
        """xlogy at x = 0 with y ≤ 0, where PyTorch's ∂/∂x is 0 rather than log y."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        return (a == 0) & (b <= 0)

    @staticmethod
    def divides_kink(a: Any, b: Any) -> np.ndarray:
        """fmod and remainder jump where a/b is a whole number."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b) == 0

    @staticmethod
    def extremum_kink(x: Any, dim: tuple[int, ...] | None, reduce: Callable[..., Any]) -> np.ndarray:
        """Elements tied for the extremum of their slice."""
        x = np.asarray(x)
        hit = x == reduce(x, axis=dim, keepdims=True)
        return hit & (np.sum(hit, axis=dim, keepdims=True) > 1)

    @staticmethod
    def asymmetric_kink(x: Any) -> np.ndarray:
        """Cholesky reads only the lower triangle of a matrix that is not symmetric, while PyTorch's
        gradient is that of the symmetric matrix: off the symmetric matrices the two differ."""
        x = np.asarray(x)
        return np.broadcast_to((x != np.swapaxes(x, -1, -2)).any(axis=(-2, -1), keepdims=True), x.shape)

    @staticmethod
    def median_kink(x: Any, at: int) -> np.ndarray:
        """Elements tied with the median (another element has its value): the gradient is shared."""
        x = np.asarray(x)
        hit = x == x.reshape(-1)[at]
        return hit & (np.sum(hit) > 1)

    @staticmethod
    def norm_kink(x: Any, p: float, dim: tuple[int, ...] | None) -> np.ndarray:
        """Every element of a zero slice; zeros for p ≤ 1; ties in |x| for the max norm."""
        x = np.asarray(x)
        mask = np.broadcast_to(np.all(x == 0, axis=dim, keepdims=True), x.shape).copy()
        if p <= 1:
            mask |= x == 0
        if p == float("inf"):
            mask |= Kinks.extremum_kink(np.abs(x), dim, np.max)
        if p == -float("inf"):
            mask |= Kinks.extremum_kink(np.abs(x), dim, np.min)
        return mask


KINKS = Kinks()
