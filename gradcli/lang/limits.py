"""The budget a program runs under (loop iterations, calls, wall-clock seconds) and the bounds of what
it can grow that the engine does not see (call depth, lists, strings, format widths).

The interpreter calls `step` once per loop pass and per item a comprehension or a generator visits
(kept or filtered out), and `tick` once per statement it runs, so a runaway `while` loop, a huge
comprehension and a long straight run of ops all meet a limit, and so does deep recursion (`call`);
`tick` reads the clock only every `TICKS` calls, one decrement on the hot path (written out in the
interpreter's blocks). The clock is the command's one deadline (`engine/budget.py`): printing and
drawing count in it; proving a backward call with SymPy does not (its sub-budgets bound it).
A limit raises `LimitError` located at the loop that was running, which the message names with
the option that raises the limit. No `except` catches a limit and nothing resets the budget, so a
program can neither catch a limit nor outrun it.

Calls of the program's own functions have a count of their own (`call`), so that a few helper
functions in a training loop do not eat its loop iterations. Both counts are deterministic guards
set high enough (tens of millions) that published training loops run; the clock is what stops a
runaway program. Lists, strings and widths are checked where they grow, before
they are built.
"""
from __future__ import annotations

import ast
import contextlib
import os
import time
from typing import Iterator

from gradcli.engine.budget import COMMAND, PROGRAMS, Checking, reserve, seconds
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
MAX_KEY_PARTS = 100_000
"""Parts of a dict key or set item, nested tuples counted as hashing visits them (`containers.hashable`)."""
MAX_MRO = 200
"""Classes in a class's method resolution order: each new subclass copies its bases' (`classes.make_class`)."""
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
        self.ticks = TICKS

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self._exceeded(f"the program ran more than {self.max_steps:,} loop iterations",
                                 "--max-steps N")
        if time.monotonic() > COMMAND.deadline and COMMAND.pauses <= 0:  # `_clock`, written out: once per pass
            raise self.over_time()

    def call(self) -> None:
        """One call of a program's function."""
        self.calls += 1
        if self.calls > MAX_CALLS:
            raise LimitError(f"the program made more than {MAX_CALLS:,} calls of its own functions",
                             hint="an exponential recursion (f(n - 1) + f(n - 1)) grows this fast; remember "
                                  "results in a list instead")
        self._clock()

    def tick(self) -> None:
        """A statement run: the clock is read once every TICKS + 1.

        The interpreter's blocks, which run most statements, count `ticks` down themselves while it
        is positive (a call per statement costs more than the count) and call this when it is not."""
        self.ticks -= 1
        if self.ticks < 0:
            self.ticks = TICKS
            self._clock()

    def _clock(self) -> None:
        """The command's one deadline (`engine/budget.py`), not while a check's own sub-budgets bound the time."""
        if time.monotonic() > COMMAND.deadline and COMMAND.pauses <= 0:
            raise self.over_time()

    def over_time(self) -> LimitError:
        return self._exceeded(f"the program ran for more than {seconds(COMMAND.timeout)}", "--timeout SECONDS")

    def left(self) -> float:
        """Seconds before the deadline (`time.sleep` refuses a sleep past it), or a limit if it has passed."""
        seconds = COMMAND.deadline - time.monotonic()
        if seconds < 0 and COMMAND.pauses <= 0:
            raise self.over_time()
        return seconds

    @contextlib.contextmanager
    def inside(self, loop: ast.AST) -> Iterator[None]:
        """While a loop's body runs, a limit names that loop (the innermost one)."""
        outer, self.loop = self.loop, loop
        try:
            yield
        finally:
            self.loop = outer

    @staticmethod
    def checking() -> Checking:
        """A check's stretch (a hook proving a backward call): its sub-budgets bound it, not the command's clock."""
        return Checking(1)

    @staticmethod
    def counted() -> Checking:
        """The program's own work inside a checking stretch (the backward a hook runs) counts again."""
        return Checking(-1)

    def _exceeded(self, message: str, option: str) -> LimitError:
        if self.loop is None:
            return LimitError(message, hint=f"raise the limit with {option}")
        line, column, length = node_span(self.loop, self.source)
        kind = _LOOP_WORDS.get(type(self.loop), "loop")
        return LimitError(f"{message}, in the {kind} at line {line}",
                          hint=f"check the loop's condition, or raise the limit with {option}").at(
            line, column, length, self.source)


ACTIVE: list[Budget] = PROGRAMS
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
        item = next(self.inner)
        count_step()  # once it is there: an exhausted iterator's last call is no item
        return item

    def __repr__(self) -> str:
        return "<iterator>"


class Sifted(Lazy):
    """An iterator that reads its source through a `Lazy` and may drop items (`filter`, `islice`,
    `dropwhile`): each item read is a step there, kept or not, so it counts none of its own and skipping
    10**17 items meets the step limit instead of running in C where no clock is read."""

    __slots__ = ()

    def __next__(self) -> object:
        return next(self.inner)


def check_list(length: int) -> None:
    if length > MAX_LIST:
        raise LimitError(f"a list would have {length:,} items, over the limit of {MAX_LIST:,}",
                         hint="keep lists small; use a tensor (torch.zeros(n)) for many numbers")


def over_visits(what: str) -> LimitError:
    """A walk (`==`, `in`, `asdict`) that spent its budget of items (`visits.shared`)."""
    return LimitError(f"{what} would have to visit more than {MAX_LIST:,} items",
                      hint="a structure built by doubling (a = [a, a]) holds far more items than it shows; use "
                           "smaller values")


def check_string(length: int) -> None:
    if length > MAX_STRING:
        raise LimitError(f"a string would have {length:,} characters, over the limit of {MAX_STRING:,}",
                         hint="print less, or print in pieces")


def check_width(number: int, what: str) -> None:
    if number > MAX_FORMAT_WIDTH:
        raise LimitError(f"format {what} {number:,} is over the limit of {MAX_FORMAT_WIDTH:,}",
                         hint="use a smaller width or precision, such as {x:10.4f}")


MAX_SCRIPT_BYTES = 4 * 2 ** 20
"""A script of more than 4 MiB is not a program a person wrote; reading it whole is refused before it starts."""


def check_file_size(path: object, most: int, what: str) -> None:
    """Refuse a file past `most` bytes before reading it (a 2 GB file given to `run` is never read whole); a
    data file is also held to the memory left (`reserve`)."""
    try:
        size = os.stat(path).st_size  # type: ignore[arg-type]
    except OSError:
        return  # the reader says what is wrong with a path that cannot be read
    if size > most:
        raise LimitError(f"{what} of {size:,} bytes is over the limit of {most:,} bytes ({path})",
                         hint="give gradcli a smaller file")
    reserve(size, f"reading {path}")
