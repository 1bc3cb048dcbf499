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


class Generator:
    """`np.random.default_rng(seed)`: NumPy's PCG64 generator, its listed methods by name."""

    program_attributes = allowlist.GENERATOR_METHODS

    def __init__(self, seed: Any = None) -> None:
        self._rng = np.random.default_rng(seed)

    def __getattr__(self, name: str) -> Any:
        if name not in allowlist.GENERATOR_METHODS:
            raise AttributeError(name)
        return _drawing(f"Generator.{name}", getattr(self._rng, name))

    def __repr__(self) -> str:
        return "Generator(PCG64)"


_STATE = np.random.RandomState()


def _reset() -> None:
    _STATE.seed(None)


RESETS.append(_reset)


def _default_rng(seed: Any = None) -> Generator:
    try:
        return Generator(dispatch.inward(seed, "np.random.default_rng"))
    except (ValueError, TypeError) as exc:
        raise ArgumentError(f"np.random.default_rng: {exc}") from None


NUMPY_RANDOM = Namespace("numpy.random", {
    **{name: _drawing(f"np.random.{name}", getattr(_STATE, name)) for name in sorted(allowlist.RANDOM_LEGACY)},
    "default_rng": _default_rng})
