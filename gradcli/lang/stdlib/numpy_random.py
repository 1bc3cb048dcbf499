"""`np.random`: NumPy's own generators, so a seed gives NumPy's exact numbers. The legacy functions draw
from one private `RandomState` per run, `default_rng(seed)` makes NumPy's `Generator`; which
functions and methods a program reaches is a list (`numpy_facade.allowlist`), each called through
the facade's dispatcher with the count of numbers it draws checked before anything is drawn.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.lang.namespace import Namespace
from gradcli.lang.numpy_facade import allowlist, dispatch, sizes
from gradcli.lang.stdlib.runtime import RESETS


def _drawing(where: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def draw(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, Tensor) for a in args):
            raise ArgumentError(f"{where} takes numbers, lists and arrays, not tensors",
                                hint="use torch's: torch.randperm, torch.randn")
        return dispatch.run(where, method, args, kwargs, lambda a, k: sizes.drawn(method, a, k))
    draw.__name__ = method.__name__
    return draw


class _Drawer:
    """A NumPy generator object of the program's own: its listed methods by name, each drawing through the
    facade's dispatcher. `Generator` and `RandomState` differ in the NumPy class and the list."""

    methods: frozenset[str] = frozenset()
    program_attributes: frozenset[str] = frozenset()
    bits = ""

    def __init__(self, rng: Any) -> None:
        self._rng = rng

    def __getattr__(self, name: str) -> Any:
        if name not in type(self).methods:
            raise AttributeError(name)
        return _drawing(f"{type(self).__name__}.{name}", getattr(self._rng, name))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self).bits})"


class Generator(_Drawer):
    """`np.random.default_rng(seed)`: NumPy's PCG64 generator."""

    methods = program_attributes = allowlist.GENERATOR_METHODS
    bits = "PCG64"

    def __init__(self, seed: Any = None) -> None:
        super().__init__(np.random.default_rng(seed))


class RandomState(_Drawer):
    """`np.random.RandomState(seed)`: NumPy's legacy Mersenne Twister, its own stream (the same numbers NumPy's
    gives for the seed), apart from the module-level functions' shared one."""

    methods = program_attributes = allowlist.RANDOM_LEGACY
    bits = "MT19937"

    def __init__(self, seed: Any = None) -> None:
        super().__init__(np.random.RandomState(seed))


_STATE = np.random.RandomState()


def _reset() -> None:
    _STATE.seed(None)


RESETS.append(_reset)


def _seeded(kind: type[_Drawer], where: str) -> Callable[..., _Drawer]:
    def make(seed: Any = None) -> _Drawer:
        try:
            return kind(dispatch.inward(seed, where))
        except (ValueError, TypeError) as exc:
            raise ArgumentError(f"{where}: {exc}") from None
    make.__name__ = where.rsplit(".", 1)[-1]
    return make


NUMPY_RANDOM = Namespace("numpy.random", {
    **{name: _drawing(f"np.random.{name}", getattr(_STATE, name)) for name in sorted(allowlist.RANDOM_LEGACY)},
    "default_rng": _seeded(Generator, "np.random.default_rng"),
    "RandomState": _seeded(RandomState, "np.random.RandomState")})
