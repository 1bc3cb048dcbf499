"""`random`: CPython's own Mersenne Twister (a private `random.Random`), so a seed gives CPython's numbers.

Only the listed methods are reachable; each checks what it would build (`getrandbits(10**10)`,
`choices(k=10**9)`) before building it.
"""
from __future__ import annotations

import random as _python_random
from typing import Any

from gradcli.errors import ArgumentError, LimitError
from gradcli.lang.builtins import Namespace
from gradcli.lang.limits import check_list
from gradcli.lang.operators import MAX_INT_BITS
from gradcli.lang.python_builtins import items
from gradcli.lang.stdlib import RESETS

_SEEDS = (int, float, str, type(None))


class Random:
    """`random.Random(seed)`: a generator of the program's own; the module's functions use one too."""

    program_attributes = frozenset({"seed", "random", "uniform", "randint", "randrange", "choice", "choices",
                                    "shuffle", "sample", "gauss", "normalvariate", "getrandbits", "expovariate",
                                    "triangular", "betavariate", "gammavariate", "lognormvariate", "vonmisesvariate",
                                    "paretovariate", "weibullvariate", "getstate", "setstate"})

    def __init__(self, seed: Any = None) -> None:
        self._generator = _python_random.Random()
        self.seed(seed)

    def seed(self, a: Any = None, version: int = 2) -> None:
        if not isinstance(a, _SEEDS) or isinstance(a, int) and a.bit_length() > MAX_INT_BITS:
            raise ArgumentError("random.seed() takes None, an int, a float or a string")
        self._generator.seed(a, version)

    def random(self) -> float:
        return self._generator.random()

    def uniform(self, a: float, b: float) -> float:
        return self._generator.uniform(a, b)

    def randint(self, a: int, b: int) -> int:
        return self._generator.randint(_int(a), _int(b))

    def randrange(self, *args: int) -> int:
        return self._generator.randrange(*(_int(v) for v in args))

    def choice(self, seq: Any) -> Any:
        values = seq if isinstance(seq, (list, tuple, str, range)) else items(seq)
        if not len(values):
            raise _index_error("Cannot choose from an empty sequence")
        return self._generator.choice(values)

    def choices(self, population: Any, weights: Any = None, *, cum_weights: Any = None, k: int = 1) -> list:
        check_list(_int(k))
        values = population if isinstance(population, (list, tuple, str, range)) else items(population)
        return self._generator.choices(values, None if weights is None else items(weights),
                                       cum_weights=None if cum_weights is None else items(cum_weights), k=k)

    def shuffle(self, values: list) -> None:
        if not isinstance(values, list):
            raise ArgumentError("random.shuffle() shuffles a list in place", hint="random.shuffle(xs)")
        self._generator.shuffle(values)

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list:
        check_list(_int(k))
        values = population if isinstance(population, (list, tuple, str, range)) else items(population)
        try:
            return self._generator.sample(values, k, counts=None if counts is None else items(counts))
        except ValueError as exc:
            from gradcli.lang.exceptions import raise_python
            raise_python("ValueError", str(exc))
        return []

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        return self._generator.gauss(mu, sigma)

    def normalvariate(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        return self._generator.normalvariate(mu, sigma)

    def getrandbits(self, k: int) -> int:
        if _int(k) > MAX_INT_BITS:
            raise LimitError(f"getrandbits({k:,}) would make an integer past {MAX_INT_BITS} bits",
                             hint="draw fewer bits, or floats with random.random()")
        return self._generator.getrandbits(k)

    def expovariate(self, lambd: float = 1.0) -> float:
        return self._generator.expovariate(lambd)

    def triangular(self, low: float = 0.0, high: float = 1.0, mode: Any = None) -> float:
        return self._generator.triangular(low, high, mode)

    def betavariate(self, alpha: float, beta: float) -> float:
        return self._generator.betavariate(alpha, beta)

    def gammavariate(self, alpha: float, beta: float) -> float:
        return self._generator.gammavariate(alpha, beta)

    def lognormvariate(self, mu: float, sigma: float) -> float:
        return self._generator.lognormvariate(mu, sigma)

    def vonmisesvariate(self, mu: float, kappa: float) -> float:
        return self._generator.vonmisesvariate(mu, kappa)

    def paretovariate(self, alpha: float) -> float:
        return self._generator.paretovariate(alpha)

    def weibullvariate(self, alpha: float, beta: float) -> float:
        return self._generator.weibullvariate(alpha, beta)

    def getstate(self) -> "_State":
        return _State(self._generator.getstate())

    def setstate(self, state: "_State") -> None:
        if not isinstance(state, _State):
            raise ArgumentError("setstate() takes what getstate() returned")
        self._generator.setstate(state.value)

    def __repr__(self) -> str:
        return "<random.Random object>"


class _State:
    """What getstate() returns: opaque to the program (its numbers are CPython's internal state)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<random state>"


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgumentError(f"an integer is required, not {type(value).__name__}")
    return value


def _index_error(text: str) -> Exception:
    from gradcli.lang.exceptions import EXCEPTIONS, RaisedError
    return RaisedError(EXCEPTIONS["IndexError"](text))


_SHARED = Random()


def _make(seed: Any = None) -> Random:
    return Random(seed)


_make.__name__ = "Random"
RESETS.append(lambda: _SHARED.seed(None))
RANDOM = Namespace("random", {**{name: getattr(_SHARED, name) for name in Random.program_attributes},
                              "Random": _make})
