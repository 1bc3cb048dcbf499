"""How a check report looks: a verdict table, the derivatives themselves, and a progress bar.

Rendering only; the verdicts come from `gradcli.check`. The bar appears on stderr only when a
check has already taken about a second, so quick checks print nothing extra.
"""
from __future__ import annotations

import contextlib
import time
from typing import Any, Callable, Iterator

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from gradcli.jsonable import number

_STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "undefined": "bold yellow"}
WITNESS = {"symbolic": "SymPy", "numeric": "finite diff", "directional": "directions", "jacobian": "SymPy",
           "hessian": "SymPy"}
"""A witness's name in tables: "directions" are `numeric.directional_check`'s random directions."""


def _err(v: float) -> str:
    return "0" if v == 0 else f"{v:.2e}"


def check_view(report: Any) -> RenderableType:
    """The check table after the gradients, then each input's derivative and any undefined points."""
    title = f"check ({report.witness}): {report.headline}"
    if not report.inputs:  # a call no witness covers: the title says so, and there is nothing to tabulate
        return Text(title)
    failing = report.status == "fail"
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in ("input", "status", "witness", "abs err", "rel err", "checked") + (("worst",) if failing else ()):
        table.add_column(column, justify="right" if "err" in column else "left", no_wrap=column != "worst")
    lines: list[RenderableType] = []
    sampled = [entry.coverage for entry in report.inputs.values() if entry.sampled]
    for name, entry in report.inputs.items():
        for row_name, item in ((name, entry), (f"{name} (numeric)", entry.numeric),
                               (f"{name} (direction)", entry.through)):
            if item is None:
                continue
            worst = item.worst
            worst_text = "" if worst is None else f"{worst.label}: got {number(worst.got)}, " \
                                                  f"expected {number(worst.expected)}"
            cells = [row_name, Text(item.status, style=_STATUS_STYLE.get(item.status, "")),
                     WITNESS.get(item.method, item.method), _err(item.max_abs_err), _err(item.max_rel_err),
                     f"{item.checked} direction{'s' if item.checked != 1 else ''}" if item.method == "directional" else
                     f"{item.checked:,}/{item.total:,}"]
            table.add_row(*cells, *((worst_text if item.status == "fail" else "",) if failing else ()))
        for formula in entry.formulas or ((entry.derivative,) if entry.derivative else ()):
            lines.append(Text(f"  {formula}"))
        for element in entry.undefined:
            whose = "the program's backward gives" if ".forward is at a kink" in element.reason else \
                "gradcli (like PyTorch) uses"  # a kink inside a Function's forward: its own backward's convention
            lines.append(Text(f"  {element.label}: {element.reason}; {whose} {number(element.got)}", style="yellow"))
        if entry.undefined_count > len(entry.undefined):
            lines.append(Text(f"  … and {entry.undefined_count - len(entry.undefined)} more undefined points",
                              style="yellow"))
        if entry.note:
            lines.append(Text(f"  note ({name}): {entry.note}", style="dim"))
    if sampled:
        lines.append(Text("  sampled: " + "; ".join(sampled), style="dim"))
    if report.mode == "jacobian":
        lines.append(Text("  layout: rows are output elements, columns input elements (PyTorch's); SymPy's "
                          "derive_by_array gives the transpose", style="dim"))
    return Group(table, *lines)


@contextlib.contextmanager
def busy(console: Console, what: str, after: float = 1.0) -> Iterator[None]:
    """A spinner labelled `what` for work whose length nobody knows (a program running), shown once
    it has run for `after` seconds and cleared when it ends; on a terminal only, as `progress_reporter`.

    A timer thread starts it, so the work itself is never interrupted to ask; rich redraws it
    from its own thread until the work ends."""
    import threading

    from rich.status import Status
    if not console.is_terminal or console.no_color:
        yield
        return
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
    for `after` seconds, and clears it when the work is done.

    Only on a terminal: in a pipe or a file the bar would leave an empty line in the output; and not
    under NO_COLOR, whose output holds no escape at all (a bar redraws itself with them)."""
    from rich.progress import Progress
    start = time.perf_counter()
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if not console.is_terminal or console.no_color or time.perf_counter() - start < after:
                return
            bar = Progress(console=console, transient=True)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(what, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()
