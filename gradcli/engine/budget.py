"""The one budget of a command, time and memory, read where the work is done.

A command (`eval`, `jacobian`, `plot`, one file of `run`) opens `limited(timeout, max_memory)`; inside
it three things keep it within bounds, from the cheapest to the bluntest:

- an op that can run for minutes on tensors within the element cap (einsum, matmul, matrix_power,
  sort, a convolution, a factorization) first estimates its seconds (`spend`), and one that cannot
  finish in the time left is refused with the estimate in the message; a large allocation first
  asks whether the memory it needs is left (`reserve`);
- a timer (`SIGALRM`, every `TICK` seconds, on the main thread) reads the clock and the process's
  resident memory wherever the time goes: printing, rendering, SymPy, a facade's loop;
- `gradcli` itself runs the command in a child process and ends it from outside when it outlives
  the deadline in code that never returns to Python (`commands/watchdog.py`).

Memory is the growth of the resident set since the command began: tensors, arrays, containers,
strings and saved copies together, whoever holds them.

The interpreter's own budget (steps, calls, its clock between statements) lives in `lang/limits.py`;
its running budgets are `PROGRAMS`, so that an estimate here also answers to a program's deadline.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from typing import Any, Iterator

from gradcli.errors import LimitError

DEFAULT_MAX_MEMORY = 1536 * 2 ** 20
"""1.5 GiB: a laptop keeps working, and a command at the cap stays under 2 GiB with what Python itself holds."""
TICK = 0.1
"""Seconds between two readings of the clock and of memory by the timer."""
FLOPS = 2e10
"""Multiply-adds a second that BLAS might reach here: a matmul estimated past the time left cannot finish."""
STEPS = 2e8
"""Simple steps a second (a comparison of a sort, a term of an unoptimized einsum), a few times what this machine
measures: optimistic on purpose, so an estimate refuses only work that surely cannot finish."""
LARGE = 1 << 20
"""Allocations below a mebibyte are not worth reading the resident set for; the timer sees them add up."""

PROGRAMS: list[Any] = []
"""The programs running now (lang's `Budget`, innermost last); each has a `deadline` on the monotonic clock."""


class _Command:
    """What `limited` set: the command's deadline and memory cap, and its resident set when it began."""

    timeout: float | None = None
    deadline = math.inf
    max_memory: int | None = None
    baseline = 0
    tripped = False
    pauses = 0
    """Checking stretches open now (`pause`): their time is not the command's, and the timer does not read the clock."""


COMMAND = _Command()

WATCHDOG: list[int] = []
"""The pipe to the process that watches this one from outside (`commands/watchdog.py`), when there is one."""


def _tell_watchdog() -> None:
    """The deadline (none while a check runs) and the resident-memory ceiling the watchdog enforces, one line."""
    if WATCHDOG:
        deadline = COMMAND.deadline if COMMAND.pauses <= 0 else math.inf
        ceiling = COMMAND.baseline + COMMAND.max_memory if COMMAND.max_memory is not None else math.inf
        try:
            os.write(WATCHDOG[0], f"{deadline!r} {ceiling!r} {COMMAND.timeout!r}\n".encode())
        except OSError:
            WATCHDOG.clear()


@contextlib.contextmanager
def limited(timeout: float | None, max_memory: int | None = DEFAULT_MAX_MEMORY) -> Iterator[None]:
    """The command's budget: `timeout` seconds of wall clock and `max_memory` bytes more than it holds now."""
    saved = dict(vars(COMMAND))
    COMMAND.timeout, COMMAND.max_memory, COMMAND.tripped = timeout, max_memory, False
    COMMAND.deadline = time.monotonic() + timeout if timeout is not None else math.inf
    COMMAND.baseline = resident()
    timer = _arm()
    _tell_watchdog()
    try:
        yield
    finally:
        _disarm(timer)
        vars(COMMAND).clear()
        vars(COMMAND).update(saved)
        _tell_watchdog()


def _arm() -> Any:
    """The timer, on the main thread only (where Python runs signal handlers); the handler it replaces."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return None
    previous = signal.signal(signal.SIGALRM, _on_timer)
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    return previous


def _disarm(previous: Any) -> None:
    if previous is not None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _on_timer(signum: int, frame: Any) -> None:
    if COMMAND.tripped:
        return
    if COMMAND.pauses <= 0 and time.monotonic() > COMMAND.deadline:
        raise _trip(over_time())
    if COMMAND.max_memory is not None and used() > COMMAND.max_memory:
        raise _trip(over_memory(0, "the program with its values"))


def pause(sign: int, moved: float = 0.0) -> None:
    """A checking stretch opens (`sign` 1; -1 for the program's own backward inside it), or one closes (the
    opposite sign) and the deadline moves by `moved` seconds.

    Proving a backward call with SymPy is bounded by the check's own sub-budgets, not by the command's clock: the
    deadline moves on by as long as the stretch took, as the program's does (lang's `Budget.paused`)."""
    COMMAND.pauses += sign
    COMMAND.deadline += moved
    _tell_watchdog()


def _trip(error: LimitError) -> LimitError:
    """The first limit the timer finds ends the command; the timer stays quiet while the error is shown."""
    COMMAND.tripped = True
    return error


def remaining() -> float:
    """Seconds left before the command's or the running program's deadline, whichever comes first."""
    deadline = min(COMMAND.deadline, PROGRAMS[-1].deadline) if PROGRAMS else COMMAND.deadline
    return deadline - time.monotonic()


def spend(seconds: float, what: str) -> None:
    """Refuse work estimated at `seconds` that cannot finish in the time left (and any work past the deadline)."""
    left = remaining()
    if left < 0:
        raise over_time()
    if seconds > left:
        raise LimitError(f"{what} would take about {_duration(seconds)} here, more than the {_duration(left)} left "
                         "of the time limit", hint="use smaller tensors, or raise the limit with --timeout SECONDS")


def reserve(nbytes: int, what: str) -> None:
    """Refuse an allocation of `nbytes` that would take the command past its memory cap."""
    if nbytes >= LARGE and COMMAND.max_memory is not None and used() + nbytes > COMMAND.max_memory:
        raise over_memory(nbytes, what)


def used() -> int:
    """Bytes the command holds beyond what it held when it began."""
    return resident() - COMMAND.baseline


def over_time() -> LimitError:
    if COMMAND.timeout is None or PROGRAMS and PROGRAMS[-1].deadline < COMMAND.deadline:
        return PROGRAMS[-1].over_time()
    return LimitError(f"the run took more than {COMMAND.timeout:g} seconds (the program, printing, drawing and "
                      "checking together)", hint="raise the limit with --timeout SECONDS")


def over_memory(nbytes: int, what: str) -> LimitError:
    cap = COMMAND.max_memory or 0
    if nbytes:
        message = f"{what} needs {_size(nbytes)} more, but only {_size(max(cap - used(), 0))} of the memory limit " \
                  f"({_size(cap)}) is left"
    else:
        message = f"{what} holds {_size(used())}, over the memory limit of {_size(cap)}"
    return LimitError(message, hint="use smaller tensors, keep fewer of them (del x), or raise the limit with "
                                    "--max-memory SIZE (e.g. 4G)")


PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident() -> int:
    """This process's resident memory in bytes (Linux's /proc; elsewhere 0, leaving the cap to the timer's peers)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _duration(seconds: float) -> str:
    if seconds >= 86400 * 365:
        return f"{seconds / (86400 * 365):.2g} years"
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} hours"
    return f"{seconds:.3g} s"


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes} bytes"
