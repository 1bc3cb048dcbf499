"""What the facades share with the running program: resets of their state, and how they print."""
from __future__ import annotations

from typing import Callable

RESETS: list[Callable[[], None]] = []
"""Run when a program starts: each stateful facade (a seeded generator) starts afresh."""

PRINTERS: list[Callable[[str], None]] = []
"""How a facade shows text (pprint, warnings): the running program's print, innermost last."""


def show(text: str) -> None:
    if PRINTERS:
        PRINTERS[-1](text)
