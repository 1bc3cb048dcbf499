"""Transient progress on a terminal: a spinner for work of unknown length, a bar for a check or a sweep,
and the line under `gradcli run`'s output that says which file is running.

All of it shows only once the work has taken about a second, only on a terminal that redraws
(never in a pipe, a file or under NO_COLOR, whose output holds no escape at all),
and it leaves nothing behind when it ends. Rendering only: the work reports, these draw.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Iterator

from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


_FIXED = 34
"""Columns the progress line's spinner, bar and clock take, with the spaces between them."""


def _tail(name: str, room: int) -> str:
    """A path cut to its last `room` characters (`…/runs/a.py`): on a transient line the file's own name
    is what tells a reader where the run is, and the line must stay one line."""
    room = max(room, 12)
    return name if len(name) <= room else "…" + name[len(name) - room + 1:]


def redraws(console: Console) -> bool:
    """A terminal on which a transient display can be drawn and erased (rich itself draws nothing on a dumb one)."""
    return console.is_terminal and not console.no_color


@contextlib.contextmanager
def busy(console: Console, what: str, after: float = 1.0) -> Iterator[None]:
    """A spinner labelled `what` for work whose length nobody knows (a program running), shown once
    it has run for `after` seconds and cleared when it ends.

    A timer thread starts it, so the work itself is never interrupted to ask; rich redraws it
    from its own thread until the work ends."""
    if not redraws(console):  # rich's live displays are imported only where they can be drawn
        yield
        return
    from rich.status import Status
    lock = threading.Lock()
    state: dict[str, Any] = {"open": True, "status": None}

    def start() -> None:
        with lock:
            if state["open"]:
                state["status"] = Status(what, console=console)
                state["status"].start()

    timer = threading.Timer(after, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["open"] = False
            if state["status"] is not None:
                state["status"].stop()


@contextlib.contextmanager
def progress_reporter(console: Console, after: float = 1.0, what: str = "checking") -> Iterator[Callable[[int, int], None]]:
    """A `progress(done, total)` callback that shows a bar, labelled `what`, once the work has run
    for `after` seconds, and clears it when the work is done."""
    start = time.perf_counter()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if not redraws(console) or time.perf_counter() - start < after:
                return
            from rich.progress import Progress
            bar = Progress(console=console, transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(what, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()


class RunProgress:
    """The line under `gradcli run`'s output while a file runs: a spinner, the file, how far through the
    files the run is, and the file's time; with a bar under it while a check of that file takes long.

    It is drawn on stdout when stdout is a terminal, so that the program's prints, written to the same
    console, are placed above it by rich and never cut through it; else on stderr when that is a terminal
    (stdout is then a pipe or a file, which it never touches). A print that leaves its line open
    (`print('.', end='')`) hides it until the line is ended: a display drawn after half a line would
    be erased together with that half. It shows only inside `running`, once the run has taken `after`
    seconds, started by a timer so the program is never interrupted to ask.
    """

    def __init__(self, out: Console, err: Console, files: int, after: float = 1.0,
                 clock: Callable[[], float] | None = None) -> None:
        self.host = out if out.is_terminal else err
        self.shares_output = self.host is out
        self.files = files
        self.after = after
        self.clock = clock or time.monotonic
        self.bar: Progress | None = None
        if redraws(self.host):
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                TimeElapsedColumn(), console=self.host, transient=True, get_time=self.clock,
                                redirect_stdout=False, redirect_stderr=False)
        self.file: TaskID | None = None
        self.lock = threading.RLock()
        self.due = after <= 0
        """The run has taken `after` seconds: the display may show."""
        self.inside = False
        self.open_line = False
        self.shown = False
        self.timer: threading.Timer | None = None
        if self.bar is not None and not self.due:
            self.timer = threading.Timer(after, self._now_due)
            self.timer.daemon = True
            self.timer.start()

    def _now_due(self) -> None:
        with self.lock:
            self.due = True
            self._settle()

    def _settle(self) -> None:
        """Show or hide the display as the state asks: shown only when due, inside a file, on a whole line."""
        if self.bar is None:
            return
        wanted = self.due and self.inside and not (self.open_line and self.shares_output)
        if wanted and not self.shown:
            self.bar.start()
        elif self.shown and not wanted:
            self.bar.stop()
        self.shown = wanted

    @contextlib.contextmanager
    def running(self, name: str, number: int) -> Iterator[None]:
        """The display may show while file `number` (from 1), called `name`, runs; it is gone after."""
        if self.bar is not None:
            count = f"file {number:,} of {self.files:,} · " if self.files > 1 else ""
            text = escape(count + _tail(name, self.host.width - _FIXED - len(count)))
            if self.file is None:
                self.file = self.bar.add_task(text, total=None)
            else:
                self.bar.reset(self.file, description=text, total=None)
        with self.lock:
            self.inside = True
            self._settle()
        try:
            yield
        finally:
            with self.lock:
                self.inside = False
                self._settle()

    @contextlib.contextmanager
    def printing(self, leaves_line_open: bool) -> Iterator[None]:
        """Around a print of the program's: the display is hidden before text that leaves its line open is
        written, and may show again once a print ends the line (the timer waits meanwhile)."""
        with self.lock:
            if leaves_line_open:
                self.open_line = True
                self._settle()
            yield
            if not leaves_line_open:
                self.open_line = False
                self._settle()

    @contextlib.contextmanager
    def checking(self) -> Iterator[Callable[[int, int], None]]:
        """A `progress(done, total)` for one check: a bar under the file's line once the check has taken
        `after` seconds (a quick check adds nothing), removed when the check ends."""
        start = self.clock()
        task: list[TaskID] = []

        def update(done: int, total: int) -> None:
            if self.bar is None:
                return
            if not task:
                if self.clock() - start < self.after:
                    return
                task.append(self.bar.add_task("checking", total=total))
            self.bar.update(task[0], completed=done, total=total)

        try:
            yield update
        finally:
            if task and self.bar is not None:
                self.bar.remove_task(task[0])

    def close(self) -> None:
        """The run is over: nothing more is drawn."""
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            self.inside = False
            self._settle()

