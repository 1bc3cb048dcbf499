"""`functools`: partial, reduce (each item a step), wraps, lru_cache and cache (entries capped)."""
from __future__ import annotations

import functools
from typing import Any, Callable

from gradcli.errors import ArgumentError
from gradcli.lang.namespace import Namespace
from gradcli.lang.containers import hashable
from gradcli.lang.limits import check_list
from gradcli.lang.iteration import consume

_MISSING = object()


def reduce(function: Any, iterable: Any, initial: Any = _MISSING) -> Any:
    values = consume(iterable)
    if initial is _MISSING:
        try:
            initial = next(values)
        except StopIteration:
            from gradcli.lang.exceptions import raise_python
            raise_python("TypeError", "reduce() of empty iterable with no initial value")
    total = initial
    for value in values:
        total = function(total, value)
    return total


def partial(function: Any, *args: Any, **kwargs: Any) -> Callable[..., Any]:
    if not callable(function):
        raise ArgumentError("the first argument of partial() must be callable")
    bound = functools.partial(function, *args, **kwargs)

    def call(*more: Any, **more_kwargs: Any) -> Any:
        return bound(*more, **more_kwargs)
    call.__name__ = getattr(function, "__name__", "partial")
    call.__wrapped__ = bound  # type: ignore[attr-defined]  # arguments that do not fit are named by what is left
    return call


def wraps(wrapped: Any, *_: Any, **__: Any) -> Callable[[Any], Any]:
    """Gives the wrapper the wrapped function's name (the only metadata a program can read)."""
    def decorate(wrapper: Any) -> Any:
        name = getattr(wrapped, "__name__", None)
        if isinstance(name, str) and hasattr(wrapper, "__dict__"):
            wrapper.__name__ = name
        return wrapper
    return decorate


class _Cached:
    """A function remembering its results by arguments (the arguments must be hashable, as in Python)."""

    def __init__(self, function: Any, maxsize: int | None) -> None:
        self.function = function
        self.maxsize = maxsize
        self.results: dict = {}
        self.__name__ = getattr(function, "__name__", "cached")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = hashable((args, tuple(sorted(kwargs.items()))))
        if key in self.results:
            return self.results[key]
        value = self.function(*args, **kwargs)
        if self.maxsize is None or self.maxsize > 0:
            if self.maxsize is not None and len(self.results) >= self.maxsize:
                self.results.pop(next(iter(self.results)))
            check_list(len(self.results) + 1)
            self.results[key] = value
        return value


def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    if callable(maxsize) and not isinstance(maxsize, (int, bool)):
        return _Cached(maxsize, 128)
    return lambda function: _Cached(function, maxsize)


def cache(function: Any) -> _Cached:
    return _Cached(function, None)


FUNCTOOLS = Namespace("functools", {"reduce": reduce, "partial": partial, "wraps": wraps, "lru_cache": lru_cache,
                                    "cache": cache})
