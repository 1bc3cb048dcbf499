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

The interpreter's own budget (steps, calls) lives in `lang/limits.py`; its clock between statements reads
this one deadline, so every phase of a command (each program a plot sweeps, printing, drawing) stops at
the same moment. The programs running now are `PROGRAMS`, so that a deadline met inside one names its loop.
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
RETRIP = 1.0
"""Seconds the timer waits after raising a limit before raising it again: a signal handler's exception raised
inside a finalizer or a weakref callback is ignored by Python, and the command must not run on unbounded."""
LARGE = 1 << 20
"""Allocations below a mebibyte are not worth reading the resident set for; the timer sees them add up."""

START_UP = 10.0
"""The most of a command's time its start-up may take from it."""
LAUNCHED: list[float] = []
"""When the `gradcli` process began, set by the script (`cli.main`) before it forks its watched child: the first
budget a command opens counts that start-up too, so `--timeout 5` bounds the command a user times, imports
included. A command run in-process (the pytest plugin, the Jupyter magic, tests) counts from its own start."""


def launched_at() -> float:
    """This process's start on the monotonic clock, from Linux's /proc (its 22nd field: ticks since boot); where
    that cannot be read, now. At most `START_UP` seconds back: a misread clock must not spend a user's budget."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        since = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()
    return time.monotonic() - min(max(since, 0.0), START_UP)


class _Command:
    """What `limited` set: the command's deadline and memory cap, and its resident set when it began."""

    open = False
    """Whether a command's budget is open (`limited`): a program run outside one opens its own (`program_clock`)."""
    timeout: float | None = None
    deadline = math.inf
    max_memory: int | None = None
    baseline = 0
    tripped = -math.inf
    """When the timer last raised a limit: it stays quiet for `RETRIP` seconds while the error ends the command."""
    recorded = 0.0
    """Seconds of VJP work recorded on the graph's nodes since the command began (`record_cost`)."""
    pauses = 0
    """Checking stretches open now (`pause`): their time is not the command's, and the timer does not read the clock."""


COMMAND = _Command()

PROGRAMS: list[Any] = []
"""The programs running now (lang's `Budget`, innermost last): each has `over_time()`, the limit located at
the loop it was running."""

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
    COMMAND.open, COMMAND.timeout, COMMAND.max_memory, COMMAND.tripped = True, timeout, max_memory, -math.inf
    COMMAND.recorded = 0.0
    began = LAUNCHED.pop() if LAUNCHED else time.monotonic()
    COMMAND.deadline = began + timeout if timeout is not None else math.inf
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


@contextlib.contextmanager
def program_clock(timeout: float | None) -> Iterator[None]:
    """A program's deadline is its command's; a program run on its own (a library call of `evaluate`) is a
    command of its own, its timeout the whole budget (without a memory cap: that is the command line's)."""
    if COMMAND.open or timeout is None:
        yield
        return
    with limited(timeout, None):
        yield


def _arm() -> Any:
    """The timer, on the main thread only (where Python runs signal handlers); what it replaces: the handler,
    the interval timer that was set (a host's own alarm: pytest-timeout's, a kernel's) and when it was taken."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return None
    handler = signal.signal(signal.SIGALRM, _on_timer)
    delay, interval = signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    return handler, delay, interval, time.monotonic()


def _disarm(previous: Any) -> None:
    """The host's handler and alarm back, the alarm less the time the command took (at once if it is due)."""
    if previous is not None:
        handler, delay, interval, taken = previous
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if delay > 0:
            signal.setitimer(signal.ITIMER_REAL, max(delay - (time.monotonic() - taken), 1e-6), interval)


def _on_timer(signum: int, frame: Any) -> None:
    if time.monotonic() < COMMAND.tripped + RETRIP:
        return
    if COMMAND.pauses <= 0 and time.monotonic() > COMMAND.deadline + TICK / 2:  # a program's own clock first
        raise _trip(over_time())
    if COMMAND.max_memory is not None and used() > COMMAND.max_memory:
        raise _trip(over_memory(0, "the program with its values"))


def pause(sign: int, moved: float = 0.0) -> None:
    """A checking stretch opens (`sign` 1; -1 for the program's own backward inside it), or one closes (the
    opposite sign) and the deadline moves by `moved` seconds (`Checking`)."""
    COMMAND.pauses += sign
    COMMAND.deadline += moved
    _tell_watchdog()


class Checking:
    """Proving a backward call with SymPy is bounded by the check's own sub-budgets, not by the command's
    clock: the deadline moves on by as long as the stretch took (`Checking(1)`), except for the program's own
    work inside it (`Checking(-1)`, the backward a hook runs), which counts again. A class, not a generator,
    since one is made around every backward call of a training loop."""

    __slots__ = ("sign", "began")

    def __init__(self, sign: int) -> None:
        self.sign = sign

    def __enter__(self) -> None:
        self.began = time.monotonic()
        pause(self.sign)

    def __exit__(self, *exc: object) -> None:
        pause(-self.sign, self.sign * (time.monotonic() - self.began))


def _trip(error: LimitError) -> LimitError:
    """The first limit the timer finds ends the command; the timer stays quiet while it does."""
    COMMAND.tripped = time.monotonic()
    return error


def remaining() -> float:
    """Seconds left before the command's deadline."""
    return COMMAND.deadline - time.monotonic()


def spend(seconds: float, what: str) -> None:
    """Refuse work estimated at `seconds` that cannot finish in the time left (and any work past the deadline)."""
    left = remaining()
    if left < 0:
        raise over_time()
    if seconds > left:
        raise LimitError(f"{what} would take about {_duration(seconds)} here, more than the {_duration(left)} left "
                         "of the time limit", hint="use smaller tensors, or raise the limit with --timeout SECONDS")


def record_cost(node: Any, seconds: float) -> None:
    """A recorded node's VJPs are estimated at `seconds`: backward sums what it would run (`refuse_backward`)."""
    node.cost = seconds
    COMMAND.recorded += seconds


def refuse_backward(roots: list, what: str = "backward", times: int = 1) -> None:
    """Refuse `times` backward passes from the nodes `roots` whose VJPs cannot finish in the time left, before
    they start: the costs recorded at forward of every node a pass would run, summed (a node is counted once,
    however many paths reach it). The graph is walked only when all the work recorded in the command would not
    fit."""
    if COMMAND.recorded * times <= remaining():
        return
    total, seen, stack = 0.0, set(), list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        total += getattr(node, "cost", 0.0)
        stack.extend(x for x in node.inputs if type(x) is type(node))
    spend(total * times, what)


def reserve(nbytes: int, what: str) -> None:
    """Refuse an allocation of `nbytes` that would take the command past its memory cap."""
    if nbytes >= LARGE and COMMAND.max_memory is not None and used() + nbytes > COMMAND.max_memory:
        raise over_memory(nbytes, what)


def used() -> int:
    """Bytes the command holds beyond what it held when it began."""
    return resident() - COMMAND.baseline


def seconds(amount: float) -> str:
    """A time limit as a message says it: `1 second`, `2.5 seconds`."""
    return f"{amount:g} second" + ("" if amount == 1 else "s")


def over_time() -> LimitError:
    """The deadline has passed: said at the running program's loop, or of the whole command."""
    if PROGRAMS:
        return PROGRAMS[-1].over_time()
    return LimitError(f"the run took more than {seconds(COMMAND.timeout)} (the program, printing, drawing and "
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
