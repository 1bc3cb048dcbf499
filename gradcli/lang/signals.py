"""How a compiled block tells the statement around it that it ended early: `break`, `continue`, `return`.

A block's closure returns None when it ran to its end, or one of these; the interpreter's loops and
function bodies and a generator's resumable statements (`lang.resumable`) read them alike.
"""
from __future__ import annotations

from typing import Any


class Returned:
    """What a `return` statement's closure gives back to the function running it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


BREAK = object()
CONTINUE = object()
"""The signals a block's closure returns for `break` and `continue` (a `Returned` for `return`)."""
