"""The budget a program runs under (loop iterations, calls, wall-clock seconds) and the bounds of what
it can grow that the engine does not see (call depth, lists, strings, format widths).

The interpreter calls `step` once per loop pass and `tick` once per statement it runs and per
item a comprehension visits, so a runaway `while` loop and a long straight run of ops (a long
program, a huge comprehension) both meet the clock, and so does deep recursion (`call`); `tick`
reads the clock only every `TICKS` calls, one decrement on the hot path (written out in the
interpreter's blocks).
A limit raises `LimitError` located at the loop that was running, which the message names with
the option that raises the limit. The language has no `try`, and nothing resets the budget, so a
program can neither catch a limit nor outrun it. Time the caller spends in its own hooks (showing
a print, proving a backward call with SymPy) is not the program's and is not counted.

Calls of the program's own functions have a count of their own (`call`), so that a few helper
functions in a training loop do not eat its loop iterations. Both counts are deterministic guards
set high enough (tens of millions) that published training loops run; the clock is what stops a
runaway program. Lists, strings and widths are checked where they grow, before
they are built.
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
DEFAULT_MAX_STEPS = 50_000_000
"""High enough for every published training loop: time and memory protect the user, this is a guard."""
DEFAULT_TIMEOUT = 30.0
TICKS = 1024
MAX_CALLS = 50_000_000
MAX_CALL_DEPTH = 200
MAX_LIST = 1_000_000
MAX_STRING = 1_000_000
MAX_FORMAT_WIDTH = 1_000
MAX_INT_BITS = 4096
"""Python ints past this are a limit error (operators.exact; math, random.getrandbits)."""

_LOOP_WORDS = {ast.While: "while loop", ast.For: "for loop"}


class Budget:
    """How many loop passes and seconds one program run may still take."""

    def __init__(self, source: str, max_steps: int = DEFAULT_MAX_STEPS, timeout: float | None = None) -> None:
        self.source = source
        self.max_steps = max_steps
        self.timeout = timeout
        self.steps = 0
        self.calls = 0
        self.loop: ast.AST | None = None
        self.deadline = math.inf
        self.ticks = TICKS

    def start(self) -> None:
        """The clock starts when the program does."""
        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self._exceeded(f"the program ran more than {self.max_steps:,} loop iterations",
                                 "--max-steps N")
        if time.monotonic() > self.deadline:  # `_clock`, written out: this runs once per loop pass
            raise self._too_long()

    def call(self) -> None:
        """One call of a program's function."""
        self.calls += 1
        if self.calls > MAX_CALLS:
            raise LimitError(f"the program made more than {MAX_CALLS:,} calls of its own functions",
                             hint="an exponential recursion (f(n - 1) + f(n - 1)) grows this fast; remember "
                                  "results in a list instead")
        self._clock()

    def tick(self) -> None:
        """A statement run or a comprehension item visited: the clock is read once every TICKS + 1.

        The interpreter's blocks, which run most statements, count `ticks` down themselves while it
        is positive (a call per statement costs more than the count) and call this when it is not."""
        self.ticks -= 1
        if self.ticks < 0:
            self.ticks = TICKS
            self._clock()

    def _clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise self._too_long()

    def _too_long(self) -> LimitError:
        return self._exceeded(f"the program ran for more than {self.timeout:g} seconds", "--timeout SECONDS")

    @contextlib.contextmanager
    def inside(self, loop: ast.AST) -> Iterator[None]:
        """While a loop's body runs, a limit names that loop (the innermost one)."""
        outer, self.loop = self.loop, loop
        try:
            yield
        finally:
            self.loop = outer

    def paused(self) -> "_Stretch":
        """The caller's own time (its hooks): the deadline moves on by as long as this took."""
        return _Stretch(self, 1.0)

    def counted(self) -> "_Stretch":
        """The program's own work inside a paused stretch (the backward a hook runs) counts again."""
        return _Stretch(self, -1.0)

    def _exceeded(self, message: str, option: str) -> LimitError:
        if self.loop is None:
            return LimitError(message, hint=f"raise the limit with {option}")
        line, column, length = node_span(self.loop, self.source)
        kind = _LOOP_WORDS.get(type(self.loop), "loop")
        return LimitError(f"{message}, in the {kind} at line {line}",
                          hint=f"check the loop's condition, or raise the limit with {option}").at(
            line, column, length, self.source)


class _Stretch:
    """A stretch of time that moves the deadline (`Budget.paused`, `Budget.counted`); a class, not a
    generator, since one is made around every backward call of a training loop."""

    __slots__ = ("budget", "sign", "began")

    def __init__(self, budget: Budget, sign: float) -> None:
        self.budget, self.sign = budget, sign

    def __enter__(self) -> None:
        self.began = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.budget.deadline += self.sign * (time.monotonic() - self.began)


ACTIVE: list[Budget] = []
"""The budget of the program running now (innermost last): builtins and facades that produce or
consume items one by one count them here, where no interpreter loop sees them."""


def count_step() -> None:
    """One item produced or consumed by a builtin or a facade: a step of the running program's budget."""
    if ACTIVE:
        ACTIVE[-1].step()


class Lazy:
    """An iterator a builtin or facade hands the program (`map`, `iter`, `itertools.count()`): each
    item it produces is a step, so an endless one meets the step limit wherever it is consumed."""

    __slots__ = ("inner",)

    def __init__(self, inner: Iterator) -> None:
        self.inner = inner

    def __iter__(self) -> "Lazy":
        return self

    def __next__(self) -> object:
        count_step()
        return next(self.inner)

    def __repr__(self) -> str:
        return "<iterator>"


def check_list(length: int) -> None:
    if length > MAX_LIST:
        raise LimitError(f"a list would have {length:,} items, over the limit of {MAX_LIST:,}",
                         hint="keep lists small; use a tensor (torch.zeros(n)) for many numbers")


def check_string(length: int) -> None:
    if length > MAX_STRING:
        raise LimitError(f"a string would have {length:,} characters, over the limit of {MAX_STRING:,}",
                         hint="print less, or print in pieces")


def check_width(number: int, what: str) -> None:
    if number > MAX_FORMAT_WIDTH:
        raise LimitError(f"format {what} {number:,} is over the limit of {MAX_FORMAT_WIDTH:,}",
                         hint="use a smaller width or precision, such as {x:10.4f}")
