"""What the facades share with the running program: resets of their state, and how they print."""
from __future__ import annotations

from typing import Callable

RESETS: list[Callable[[], None]] = []
"""Run when a program starts: each stateful facade (a seeded generator) starts afresh."""

PRINTERS: list[Callable[[str], None]] = []
"""How a facade shows text (pprint, warnings): the running program's print, innermost last."""

FIGURES: list[Callable[[object], None]] = []
"""Who draws a figure a program shows (`plt.show()`, `savefig`): the runner of the file, innermost last."""

LINES: list[Callable[[], int]] = []
"""The running program's line at this moment (its innermost call's), innermost last: where a facade was called."""

GETTERS: list[Callable[..., object]] = []
"""The running program's `getattr` (the attribute allowlist `x.name` meets), innermost last."""


def get_attribute(owner: object, name: str) -> object:
    """`getattr(owner, name)` as the running program would write it (operator.attrgetter)."""
    return GETTERS[-1](owner, name)


def line() -> int | None:
    """The program line of the facade call being made, or None outside a program."""
    return LINES[-1]() if LINES else None


def show(text: str) -> None:
    if PRINTERS:
        PRINTERS[-1](text)
