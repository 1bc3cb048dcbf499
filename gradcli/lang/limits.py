"""The budget a program runs under: loop iterations and wall-clock seconds, neither of them catchable.

The interpreter calls `step` once per loop pass and `tick` once per expression it evaluates, so
a runaway `while` loop and a long straight run of ops (deep recursion, a huge comprehension) both
meet the clock; `tick` reads the clock only every `TICKS` calls, one decrement on the hot path.
A limit raises `LimitError` located at the loop that was running, which the message names with
the option that raises the limit. The language has no `try`, and nothing resets the budget, so a
program can neither catch a limit nor outrun it. Time the caller spends in its own hooks (showing
a print, proving a backward call with SymPy) is not the program's and is not counted.
"""
from __future__ import annotations

import ast
import contextlib
import math
import time
from typing import Iterator

from gradcli.errors import LimitError
from gradcli.source import node_span

DEFAULT_MAX_ELEMENTS = 50_000_000  # per tensor; the engine enforces it (`Limits`)
DEFAULT_MAX_STEPS = 10_000
DEFAULT_TIMEOUT = 30.0
TICKS = 1024

_LOOP_WORDS = {ast.While: "while loop", ast.For: "for loop"}


class Budget:
    """How many loop passes and seconds one program run may still take."""

    def __init__(self, source: str, max_steps: int = DEFAULT_MAX_STEPS, timeout: float | None = None) -> None:
        self.source = source
        self.max_steps = max_steps
        self.timeout = timeout
        self.steps = 0
        self.loop: ast.AST | None = None
        self.deadline = math.inf
        self._ticks = TICKS

    def start(self) -> None:
        """The clock starts when the program does."""
        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self._exceeded(f"the program ran more than {self.max_steps:,} loop iterations",
                                 "--max-steps N")
        self._clock()

    def tick(self) -> None:
        self._ticks -= 1
        if self._ticks < 0:
            self._ticks = TICKS
            self._clock()

    def _clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise self._exceeded(f"the program ran for more than {self.timeout:g} seconds", "--timeout SECONDS")

    @contextlib.contextmanager
    def inside(self, loop: ast.AST) -> Iterator[None]:
        """While a loop's body runs, a limit names that loop (the innermost one)."""
        outer, self.loop = self.loop, loop
        try:
            yield
        finally:
            self.loop = outer

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The caller's own time (its hooks): the deadline moves on by as long as this took."""
        began = time.monotonic()
        try:
            yield
        finally:
            self.deadline += time.monotonic() - began

    @contextlib.contextmanager
    def counted(self) -> Iterator[None]:
        """The program's own work inside a paused stretch (the backward a hook runs) counts again."""
        began = time.monotonic()
        try:
            yield
        finally:
            self.deadline -= time.monotonic() - began

    def _exceeded(self, message: str, option: str) -> LimitError:
        if self.loop is None:
            return LimitError(message, hint=f"raise the limit with {option}")
        line, column, length = node_span(self.loop, self.source)
        kind = _LOOP_WORDS.get(type(self.loop), "loop")
        return LimitError(f"{message}, in the {kind} at line {line}",
                          hint=f"check the loop's condition, or raise the limit with {option}").at(
            line, column, length, self.source)
