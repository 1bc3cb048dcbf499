"""How a script run looks: printed values, failures and the summary table. Rendering only."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gradcli.jsonable import number
from gradcli.source import operand
from gradcli.views.check_view import WITNESS
from gradcli.views.fitted import Fitted
from gradcli.views.render import CODE_BREAKS, PATH_BREAKS, Breakable, error_view

if TYPE_CHECKING:
    from gradcli.check.policy import SiteSummary
    from gradcli.program.scripts import BackwardCheck, Explanation, FileResult


def backward_text(event: BackwardCheck | Explanation) -> str:
    """How a backward call is named in output: `out.backward()`, or the gradient function's call."""
    if getattr(event, "what", ""):
        return event.what
    return f"{operand(event.output_name)}.backward()" if event.output_name else "backward()"


class FileHeading:
    """The rule a file's output starts under, titled with its name: a name too long for the rule's line
    stands whole above a plain rule (rich would end it with `…`)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.rule import Rule
        if cell_len(self.name) + 4 <= options.max_width:
            yield Rule(escape(self.name), align="left", style="dim")
            return
        yield Breakable(self.name, PATH_BREAKS, "dim")
        yield Rule(style="dim")


def failure_view(result: FileResult) -> RenderableType:
    """Why a file did not pass: the error or assert (file, line, caret, values), and each failed check's worst element.

    Shared with the pytest plugin, so a failure reads the same in both.
    """
    parts: list[RenderableType] = []
    failure = result.error or result.assertion
    if failure is not None:
        parts.append(error_view(failure, result.name, result.label))
    for check in result.checks:
        if check.passed:
            continue
        later = "" if check.call == 1 else f" (call {check.call:,})"
        parts.append(Text.assemble(("check failed", "bold red"),
                                   f": {backward_text(check)} at {_place(result, check)}{later}"))
        for name, entry in check.report.inputs.items():
            if entry.status != "fail":
                continue
            worst = entry.worst
            where = f" worst {worst.label}: expected {number(worst.expected)}, got {number(worst.got)}" if worst else ""
            parts.append(Text(f"   {name}:{where} (max abs err {number(entry.max_abs_err)}, {entry.coverage})"))
            parts.extend(Text(f"   {formula}") for formula in entry.formulas or (entry.derivative,) if formula)
    parts.extend(Text(f"   {site.failed:,} of {site.calls:,} calls of {site.what} at {result.place(site.line)} failed")
                 for site in result.sites if site.failed and site.calls > 1)
    return Group(*parts)


def _place(result: FileResult, check: BackwardCheck) -> str:
    """`prog.py:4`, `nb.ipynb, cell 3, line 2`, or a Jupyter cell's `Cell In[3], line 4`."""
    if result.label is not None:
        return f"{result.label}, line {check.line}"
    return f"{result.path}, {check.site}" if check.site.startswith("cell") else f"{result.path}:{check.line}"


def summary_table(results: list[FileResult], summary: dict, checking: bool) -> RenderableType:
    """The end-of-run table: one row per file, and the totals (from `summary`) as its caption."""
    styles = {"ok": "green", "failed": "bold red", "error": "bold red"}
    table = Table(title=f"gradcli run · dtype {summary['dtype']}", title_justify="left", header_style="bold",
                  caption_justify="left")
    table.add_column("file", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("backward\ncalls", justify="right")
    table.add_column("checks\npassed", justify="right")
    table.add_column("time", justify="right", no_wrap=True)
    for r in results:
        undefined = f" ({r.checks_undefined} undefined)" if r.checks_undefined else ""
        checks = f"{r.checks_passed}/{r.checks_passed + r.checks_failed + r.checks_undefined}{undefined}" \
            if checking else "-"
        table.add_row(Breakable(r.name, PATH_BREAKS), f"[{styles[r.status]}]{r.status}[/]", str(r.backward_calls), checks,
                      f"{r.seconds:.2f}s")
    s, planned = summary, summary["planned"]
    files = f"{s['files']} file" + ("" if s["files"] == 1 else "s")
    skipped = f", {planned - len(results)} not run (--fail-fast)" if planned > len(results) else ""
    table.caption = f"{files}: {s['ok']} ok, {s['failed']} failed, {s['error']} error{skipped} · {s['seconds']:.2f}s"
    if s["skipped"]:
        names = ", ".join(escape(Path(p).name) for p in s["skipped"])
        table.caption += f"\nskipped (not .py, .grad or .ipynb): {names}"
    return Fitted(table)


def sites_view(result: FileResult) -> RenderableType:
    """One row per gradient site of a checked script: its calls, the witnesses that judged them, the worst error.

    The worst error is shown as the share of its tolerance it used (above 100%: it failed), with
    the call and element it happened at; the policy that chose the witnesses is the caption.
    """
    table = Table(title="checks by site", title_justify="left", header_style="bold", caption_justify="left",
                  caption=escape(result.policy), caption_style="dim")
    for column in ("line", "call", "calls", "failed", "witnesses", "worst (of tolerance)"):
        table.add_column(column, justify="right" if column in ("line", "calls", "failed") else "left")
    for site in result.sites:
        table.add_row(result.places.get(site.line, str(site.line)), Breakable(site.what, CODE_BREAKS),
                      f"{site.calls:,}",
                      Text(f"{site.failed:,} (first: call {site.first_failure:,})" if site.failed else "0",
                           style="bold red" if site.failed else ""),
                      _witnesses(site), _worst(site))
    parts: list[RenderableType] = [Fitted(table)]
    parts.extend(Text(f"warning: {warning}", style="yellow") for warning in result.warnings)
    return Group(*parts)


def _witnesses(site: SiteSummary) -> str:
    return ", ".join(f"{WITNESS.get(method, method)} {count:,}" for method, count in sorted(site.witnesses.items()))


def _worst(site: SiteSummary) -> str:
    """Within its tolerance, the share it used (`87.3%`); past it, how many tolerances over and the relative
    error, which a float64 tolerance of 1e-7·|expected| would otherwise turn into `999167356.1%`."""
    worst = site.worst
    if worst is None or worst.element is None:
        return "-"
    where = f"at call {worst.call:,}, {worst.element.label}"
    if not worst.margin > 1:
        return f"{worst.margin:.1%} {where}"
    expected, got = worst.element.expected, worst.element.got
    rel = abs(got - expected) / abs(expected) if expected else float("inf")
    return f"{_times(worst.margin)} tolerance (rel err {_share(rel)}) {where}"


def _times(ratio: float) -> str:
    """A ratio past 1 as a reader takes it in: `2.5×`, `350×`, `1.2e+07×`."""
    if not np.isfinite(ratio):
        return "∞×" if ratio == np.inf else "nan×"
    return f"{ratio:.2g}×" if ratio < 10 else f"{ratio:,.0f}×" if ratio < 1e5 else f"{ratio:.1e}×"


def _share(rel: float) -> str:
    """A relative error: a percentage below 10 times the value, then a ratio."""
    return f"{rel:.1%}" if rel < 10 else _times(rel)
