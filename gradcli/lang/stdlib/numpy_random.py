"""`np.random`: NumPy's own generators (a private `RandomState` for the legacy functions, `default_rng`'s
`Generator`), so a seed gives NumPy's exact numbers. Sizes are checked against the element limit
before anything is drawn.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.errors import ArgumentError, LimitError
from gradcli.lang.builtins import Namespace
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS
from gradcli.lang.stdlib import RESETS


def _sized(size: Any) -> Any:
    if size is None:
        return None
    shape = (size,) if isinstance(size, int) else tuple(size)
    if not all(isinstance(n, (int, np.integer)) and n >= 0 for n in shape):
        raise ArgumentError(f"size must be a non-negative int or a tuple of them, not {size!r}")
    if math.prod(shape) > DEFAULT_MAX_ELEMENTS:
        raise LimitError(f"np.random would draw {math.prod(shape):,} numbers, over the limit of "
                         f"{DEFAULT_MAX_ELEMENTS:,}", hint="draw fewer numbers")
    return shape


def _guarded(fn: Any) -> Any:
    """NumPy's ValueError/TypeError for bad arguments is the user's argument error, with NumPy's text."""
    import functools

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ArgumentError(f"np.random.{fn.__name__}: {exc}") from None
    return call


def _data(value: Any) -> Any:
    from gradcli.engine.tensor import Tensor
    if isinstance(value, Tensor):
        raise ArgumentError("np.random takes numbers, lists and arrays, not tensors", hint="use torch's: torch.randperm")
    return value


class Generator:
    """`np.random.default_rng(seed)`: NumPy's PCG64 generator, its methods by name."""

    program_attributes = frozenset({"random", "integers", "normal", "uniform", "standard_normal", "choice",
                                    "shuffle", "permutation", "exponential", "binomial", "poisson"})

    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.default_rng(seed)

    def random(self, size: Any = None) -> Any:
        return self._rng.random(_sized(size))

    def integers(self, low: Any, high: Any = None, size: Any = None, endpoint: bool = False) -> Any:
        return self._rng.integers(low, high, _sized(size), endpoint=endpoint)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return self._rng.normal(loc, scale, _sized(size))

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        return self._rng.uniform(low, high, _sized(size))

    def standard_normal(self, size: Any = None) -> Any:
        return self._rng.standard_normal(_sized(size))

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        return self._rng.exponential(scale, _sized(size))

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        return self._rng.binomial(n, p, _sized(size))

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        return self._rng.poisson(lam, _sized(size))

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        return self._rng.choice(_data(a), _sized(size), replace=replace, p=p)

    def shuffle(self, x: Any) -> None:
        self._rng.shuffle(_data(x))

    def permutation(self, x: Any) -> Any:
        if isinstance(x, int):
            _sized(x)
        return self._rng.permutation(_data(x))

    def __repr__(self) -> str:
        return "Generator(PCG64)"


for _name in Generator.program_attributes:
    setattr(Generator, _name, _guarded(getattr(Generator, _name)))

_STATE = np.random.RandomState()


def _reset() -> None:
    _STATE.seed(None)


RESETS.append(_reset)


def seed(value: Any = None) -> None:
    _STATE.seed(value)


def rand(*shape: int) -> Any:
    return _STATE.rand(*(_sized(shape) or ()))


def randn(*shape: int) -> Any:
    return _STATE.randn(*(_sized(shape) or ()))


def random(size: Any = None) -> Any:
    return _STATE.random_sample(_sized(size))


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
    return _STATE.uniform(low, high, _sized(size))


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
    return _STATE.normal(loc, scale, _sized(size))


def randint(low: Any, high: Any = None, size: Any = None) -> Any:
    return _STATE.randint(low, high, _sized(size))


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
    return _STATE.choice(_data(a), _sized(size), replace=replace, p=p)


def shuffle(x: Any) -> None:
    _STATE.shuffle(_data(x))


def permutation(x: Any) -> Any:
    if isinstance(x, int):
        _sized(x)
    return _STATE.permutation(_data(x))


def default_rng(seed: Any = None) -> Generator:
    return Generator(seed)


NUMPY_RANDOM = Namespace("numpy.random", {fn.__name__: _guarded(fn) for fn in (
    seed, rand, randn, random, uniform, normal, randint, choice, shuffle, permutation, default_rng)} |
    {"random_sample": _guarded(random)})
