"""Where an op's real value does not exist: the cause a learner needs when a nan or inf is born there.

"acosh is nan below 1" teaches; "0/0 or similar" does not. Each entry is an op (by its table
name) with a test of its first input and what to say; the first that holds names the cause.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

_Test = Callable[[np.ndarray], np.ndarray]

_DOMAINS: dict[str, tuple[tuple[_Test, str], ...]] = {
    "acosh": ((lambda x: x < 1, "acosh is nan below 1"),),
    "log": ((lambda x: x < 0, "log is nan below 0"), (lambda x: x == 0, "log is -inf at 0")),
    "log2": ((lambda x: x < 0, "log2 is nan below 0"), (lambda x: x == 0, "log2 is -inf at 0")),
    "log10": ((lambda x: x < 0, "log10 is nan below 0"), (lambda x: x == 0, "log10 is -inf at 0")),
    "log1p": ((lambda x: x < -1, "log1p is nan below -1"), (lambda x: x == -1, "log1p is -inf at -1")),
    "sqrt": ((lambda x: x < 0, "sqrt is nan below 0"),),
    "rsqrt": ((lambda x: x < 0, "rsqrt is nan below 0"), (lambda x: x == 0, "rsqrt is inf at 0")),
    "asin": ((lambda x: np.abs(x) > 1, "asin is nan outside [-1, 1]"),),
    "acos": ((lambda x: np.abs(x) > 1, "acos is nan outside [-1, 1]"),),
    "atanh": ((lambda x: np.abs(x) > 1, "atanh is nan outside [-1, 1]"),
              (lambda x: np.abs(x) == 1, "atanh is infinite at ±1")),
}


def domain_cause(op: str, first_input: np.ndarray) -> str | None:
    """Why `op` has no finite value at some element of `first_input`, when its domain is the reason."""
    x = np.asarray(first_input, dtype=np.float64)
    for test, cause in _DOMAINS.get(op, ()):
        with np.errstate(invalid="ignore"):
            if np.any(test(x)):
                return cause
    return None
