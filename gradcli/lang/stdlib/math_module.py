"""`math`: every public function and constant of Python's math, on numbers (and one-element tensors).

Functions whose integer results can grow without bound (`factorial`, `comb`, `perm`, `prod`,
`lcm`) are checked against the integer limit before they compute, so `math.factorial(10**8)` is a
limit error within microseconds rather than minutes of a C loop no step counts.
"""
from __future__ import annotations

import builtins as py
import math
from typing import Any, Callable

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, LimitError, ValueDomainError
from gradcli.lang.builtins import Namespace
from gradcli.lang.operators import MAX_INT_BITS
from gradcli.lang.python_builtins import consume

_NUMBERS = (int, float, np.integer, np.floating)
_ITERABLE_ARGUMENTS = {"fsum", "prod", "dist", "sumprod"}


def _too_big(what: str) -> LimitError:
    return LimitError(f"{what} would be an integer past {MAX_INT_BITS} bits",
                      hint="compute with floats instead: math.lgamma(n + 1) is log(n!)")


def _log2_factorial(n: int) -> float:
    return math.lgamma(n + 1) / math.log(2) if n > 1 else 0.0


def _bounded(name: str, args: list) -> None:
    """Refuse an integer result past the limit before Python computes it."""
    if name == "factorial" and args and isinstance(args[0], int) and _log2_factorial(args[0]) > MAX_INT_BITS:
        raise _too_big(f"math.factorial({args[0]:,})")
    if name in ("comb", "perm") and len(args) >= 1 and py.all(isinstance(a, int) for a in args):
        n = args[0]
        k = args[1] if len(args) > 1 else n
        if 0 <= k <= n and _log2_factorial(n) - _log2_factorial(n - k) > MAX_INT_BITS:
            raise _too_big(f"math.{name}({n:,}, {k:,})")
    if name == "lcm" and py.sum(abs(a).bit_length() for a in args if isinstance(a, int)) > MAX_INT_BITS:
        raise _too_big("math.lcm(...)")


def _number(value: Any, name: str) -> Any:
    if isinstance(value, Tensor):
        return float(value)
    if isinstance(value, bool) or isinstance(value, _NUMBERS):
        return value
    raise ArgumentError(f"math.{name}() takes numbers", hint=f"for a tensor use torch's: torch.{name}(x)")


def _wrap(name: str) -> Callable[..., Any]:
    fn = getattr(math, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        if name in _ITERABLE_ARGUMENTS:
            values = [[_number(v, name) for v in consume(a)] for a in args]
        else:
            values = [_number(a, name) for a in args]
        if name == "prod":
            return _product(values[0], kwargs.get("start", 1))
        _bounded(name, values)
        try:
            return fn(*values, **kwargs)
        except ValueError as exc:
            raise ValueDomainError(f"math domain error: math.{name} of {', '.join(map(repr, values))}"
                                   if "domain" in str(exc) else f"math.{name}: {exc}",
                                   hint="check the values that reach this line") from None
        except OverflowError:
            raise ValueDomainError(f"math range error: math.{name} of {', '.join(map(repr, values))}",
                                   hint="the result is too large for a float") from None
        except TypeError as exc:
            raise ArgumentError(f"math.{name}(): {exc}") from None
    call.__name__ = name
    call.__doc__ = fn.__doc__
    return call


def _product(values: list, start: Any) -> Any:
    total = start
    for value in values:
        total = total * value
        if isinstance(total, int) and total.bit_length() > MAX_INT_BITS:
            raise _too_big("math.prod(...)")
    return total


FUNCTION_NAMES = tuple(sorted(name for name in dir(math) if not name.startswith("_") and callable(getattr(math, name))))
MATH = Namespace("math", {**{name: _wrap(name) for name in FUNCTION_NAMES},
                          "pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan})
