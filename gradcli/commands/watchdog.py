"""The last line of the budget: the `gradcli` process watches the command from outside.

Inside the command, limits are met where the work is done (estimates, steps, the 0.1 s timer of
`engine/budget.py`), but a timer only runs between Python's bytecodes: code that never returns to
Python (one NumPy call, CPython hashing a structure built by doubling) outlives it. So `main()` forks:
the child runs the command as ever and tells the parent, through a pipe, its deadline and its memory
ceiling whenever they change; the parent waits, reads the child's resident memory, and ends it
`GRACE` seconds past the deadline, or as soon as it holds more than the ceiling and `SLACK`, with the
same clean error (exit 2) that the timer would have given. Nothing the program does can reach the
parent. Where fork is not available, the command runs unwatched, as it did.
"""
from __future__ import annotations

import json
import math
import os
import select
import signal
import sys
import time

from gradcli.engine import budget

GRACE = 1.0
"""Seconds past the deadline the command has to stop by itself before it is ended from outside."""
SLACK = 256 * 2 ** 20
"""Bytes past the memory ceiling before the command is ended from outside (the timer stops it first)."""
POLL = 0.1


def watched() -> int | None:
    """In the child: None, and the command runs. In the parent: the exit code to end with."""
    if not hasattr(os, "fork"):
        return None
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(reader)
        budget.WATCHDOG.append(writer)
        return None
    os.close(writer)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the child, which ends cleanly
    signal.signal(signal.SIGTERM, lambda signum, frame: os.kill(child, signal.SIGTERM))
    return _watch(child, reader)


def _watch(child: int, reader: int) -> int:
    deadline, ceiling, timeout, pending = math.inf, math.inf, None, b""
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            return _exit_code(status)
        ready, _, _ = select.select([reader], [], [], POLL)
        if ready:
            chunk = os.read(reader, 65536)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if lines:
                deadline, ceiling, timeout = _parse(lines[-1])
            if not chunk:  # the child closed the pipe: it is ending
                return _exit_code(os.waitpid(child, 0)[1])
        if time.monotonic() > deadline + GRACE:
            return _end(child, f"the run took more than {budget.seconds(timeout)}, in work that could not be interrupted "
                               "(one long operation)", "raise the limit with --timeout SECONDS")
        if _resident(child) > ceiling + SLACK:
            return _end(child, "the program with its values holds more than its memory limit",
                        "use smaller tensors, keep fewer of them (del x), or raise the limit with --max-memory SIZE")


def _parse(line: bytes) -> tuple[float, float, float | None]:
    deadline, ceiling, timeout = line.decode().split()
    return float(deadline), float(ceiling), None if timeout == "None" else float(timeout)


def _end(child: int, message: str, hint: str) -> int:
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    if "--json" in sys.argv:
        sys.stderr.write(json.dumps({"error": {"kind": "limit", "message": message, "hint": hint, "line": None,
                                               "column": None}}) + "\n")
    else:
        sys.stderr.write(f"error[limit]: {message}\nhint: {hint}\n")
    return 2


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            return 128 + sig
        sys.stderr.write(f"internal error in gradcli: the command stopped on signal {sig}\n"
                         "this is a bug; rerun with --debug for the traceback and please report it\n")
        return 3
    return os.WEXITSTATUS(status)


def _resident(child: int) -> int:
    try:
        with open(f"/proc/{child}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * budget.PAGE
    except (OSError, ValueError, IndexError):
        return 0
