"""Where an op's real value does not exist: the cause a learner needs when a nan or inf is born there.

"acosh is nan below 1" teaches; "0/0 or similar" does not. Each declaration in the op table may say
(`Op.domain`) tests of its first input and what to say; the first that holds names the cause.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gradcli.engine.ops import TABLE

_Test = Callable[[np.ndarray], np.ndarray]

_DOMAINS: dict[str, tuple[tuple[_Test, str], ...]] = {op.name: op.domain for op in TABLE if op.domain}
"""Each declared function's `domain` (the op table holds it beside the function's calculus)."""


def domain_cause(op: str, first_input: np.ndarray) -> str | None:
    """Why `op` has no finite value at some element of `first_input`, when its domain is the reason."""
    x = np.asarray(first_input, dtype=np.float64)
    for test, cause in _DOMAINS.get(op, ()):
        with np.errstate(invalid="ignore"):
            if np.any(test(x)):
                return cause
    return None
