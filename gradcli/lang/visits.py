"""One budget for the outermost recursive walk of a kind running now (`==` of containers, repr, asdict).

CPython's own dispatch reaches a walk's inner levels through methods gradcli writes (a dataclass's
`__eq__` and `__repr__` on its fields, a facade container's repr), each of which would otherwise start
a budget of its own: a structure built by doubling (`a = P(a, a)` sixty times, sixty objects in memory)
would then run for 2**60 items, stopped by the clock alone. Walks nested inside a running walk of the
same kind spend its budget instead, so the whole walk meets a limit after a bounded number of items.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

_RUNNING: dict[str, list[int]] = {}


@contextlib.contextmanager
def shared(kind: str, most: int) -> Iterator[list[int]]:
    """The budget of the `kind` walk running now, or a fresh one of `most` for a walk that starts here."""
    running = _RUNNING.get(kind)
    if running is not None:
        yield running
        return
    budget = _RUNNING[kind] = [most]
    try:
        yield budget
    finally:
        del _RUNNING[kind]


def running(kind: str) -> list[int] | None:
    """The budget of the `kind` walk running now, if one is (a container's repr inside a dataclass's)."""
    return _RUNNING.get(kind)
