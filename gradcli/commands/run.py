"""`gradcli run PATH...`: tutorial-style scripts, each print shown as it happens, then a summary table.

`--json` writes JSON lines: one object per file as it finishes (`{"file": ..., "status": ...}`),
then one `{"summary": ...}` object, so a long batch can be consumed while it runs.
"""
from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from gradcli.commands.common import (EXIT_FAILED, EXIT_OK, EXIT_USER, check_mode, console, emit_json, guarded,
                                     memory_size,
                                     print_error)
from gradcli.commands import options
from gradcli.commands.options import DEFAULT_MAX_MEMORY_TEXT, Atol, Debug, Rtol
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT

if TYPE_CHECKING:

    from gradcli.program.scripts import BackwardCheck, Event, FileResult, Figure, ProgressFactory

Seed = options.seed("each file starts from (torch.manual_seed in a script takes over)")
Dtype = options.dtype("float32", "PyTorch's default, so a script prints what PyTorch prints")
Json = options.as_json("JSON lines instead of tables: one object per file as it finishes, then a summary object")
Check = options.check("every gradient the scripts compute (each graph structure by the witness asked for at its "
                      "first call, later calls by finite differences)")
Explain = options.explain("each backward call")
MaxElements = options.max_elements("in each file")
MaxSteps = options.max_steps("in each file")
Timeout = options.timeout("a file", "its program, prints and --check together; the other files still run")
MaxMemory = options.max_memory("each file")
PROGRESS_AFTER = 1.0
"""Seconds a run takes before its progress line shows on a terminal (a quick run shows none)."""


def run_command(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH...", help="Scripts (.py, .grad) and notebooks (.ipynb), or directories of them (every such "
                                "file directly inside runs; the summary names the other files it skipped).")],
    check: Check = None, seed: Seed = 0, dtype: Dtype = "float32", as_json: Json = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Show only the summary (and why a file failed).")] = False,
    fail_fast: Annotated[bool, typer.Option("--fail-fast", "-x", help="Stop after the first file that fails.")] = False,
    explain: Explain = False, rtol: Rtol = None, atol: Atol = None,
    plots: Annotated[Optional[Path], typer.Option(
        "--plots", metavar="DIR", file_okay=False,
        help="Write the figures scripts draw with matplotlib.pyplot (plt.show(), savefig) to DIR as image files "
             "(savefig's file name, else SCRIPT-figureN.png); needs matplotlib. They are drawn in the terminal "
             "either way.")] = None,
    max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, max_steps: MaxSteps = DEFAULT_MAX_STEPS,
    timeout: Timeout = DEFAULT_TIMEOUT, max_memory: MaxMemory = DEFAULT_MAX_MEMORY_TEXT,
    label: Annotated[Optional[str], typer.Option(
        "--label", hidden=True, help="What to call the one PATH in the output: the %%gradcli magic runs its cell from a "
                                     "temporary file and names it as IPython does, Cell In[3].")] = None,
    debug: Debug = False,
) -> None:
    """Run scripts and notebooks (PyTorch tutorial code), showing their prints; exit 1 if an assert or check fails."""
    with guarded(as_json, debug):
        from gradcli.errors import ArgumentError
        from gradcli.program.evaluation import Settings
        from gradcli.program.scripts import run_file, script_files, skipped_files
        check_mode(check, rtol, atol)
        if check is not None:
            from gradcli.check import checker
        files = script_files(paths)
        if label is not None and len(files) != 1:
            raise ArgumentError(f"--label names one file, and there are {len(files)}", hint="run one file with --label")
        if plots is not None:
            _plots_folder(plots)
        settings = Settings(seed, dtype, max_elements, max_steps, timeout, memory_size(max_memory))
        view: _JsonLines | _Terminal = _JsonLines(plots) if as_json else _Terminal(check is not None, quiet, debug,
                                                                                    plots, len(files))
        results: list[FileResult] = []
        try:
            for number, path in enumerate(files, 1):
                name = label or str(path)
                view.start(name)
                files_checker = checker(check, rtol=rtol, atol=atol, seed=seed) if check is not None else None
                with view.running(name, number):
                    result = run_file(path, files_checker, settings, explain=explain, on_event=view.on_event,
                                      progress=view.progress, label=label)
                results.append(result)
                view.finish(result)
                if fail_fast and result.status != "ok":
                    break
        finally:
            view.close()
        view.summary(results, _summary(results, len(files), dtype, skipped_files(paths)))
        code = exit_code(results)
        if code != EXIT_OK:
            raise typer.Exit(code)


def exit_code(results: list[FileResult]) -> int:
    """2 if any file had a user error (it did not really run), else 1 if any assert or check failed."""
    statuses = {r.status for r in results}
    if "error" in statuses:
        return EXIT_USER
    return EXIT_FAILED if "failed" in statuses else EXIT_OK


def _plots_folder(folder: Path) -> None:
    """matplotlib installed, and a folder to write into (made if missing): both known before anything runs."""
    import importlib.util

    from gradcli.errors import ArgumentError
    if importlib.util.find_spec("matplotlib") is None:
        raise ArgumentError("--plots needs matplotlib, which is not installed",
                            hint='pip install "gradcli[plot]" (without --plots, figures are drawn in the terminal)')
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(f"--plots {folder}: cannot make the folder: {exc.strerror}",
                            hint="give a folder you can write to") from None


def _write_figures(result: FileResult, folder: Path | None) -> list[str]:
    """Each figure a file showed or saved, written once per change: `savefig` then `show()` of the same
    picture is one file. The paths written, in order."""
    from gradcli.program.scripts import Figure
    if folder is None:
        return []
    from gradcli.views.figures import file_name, matplotlib_figure
    written: list[str] = []
    taken: set[str] = set()
    seen: set[tuple[int, int]] = set()
    for event in result.events:
        if not isinstance(event, Figure) or (event.name is None and _key(event) in seen):
            continue
        seen.add(_key(event))
        path = folder / file_name(event.figure, event.name, result.path, taken)
        matplotlib_figure(event.figure).savefig(path)
        written.append(str(path))
    return written


def _key(event: Any) -> tuple[int, int]:
    return event.figure.number, event.figure.version


class _JsonLines:
    """One JSON object per finished file, then the summary; nothing streams mid-file."""

    on_event = None
    progress = None

    def __init__(self, plots: Path | None) -> None:
        self.plots = plots

    def start(self, path: str) -> None:
        pass

    def running(self, name: str, number: int) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def close(self) -> None:
        pass

    def finish(self, result: FileResult) -> None:
        written = _write_figures(result, self.plots)
        emit_json({**result.to_json(), **({"plots": written} if self.plots is not None else {})})

    def summary(self, results: list[FileResult], summary: dict) -> None:
        emit_json({"summary": summary})


class _Terminal:
    """Prints one file's events as they come: prints, displays and checks on stdout, failures on stderr.

    A gradient site inside a loop is checked on every call, but a check table comes only for the
    calls the policy shows (a site's first, a new graph structure, the first failure); the site
    table after the file sums up every call.
    """

    def __init__(self, checking: bool, quiet: bool, debug: bool, plots: Path | None = None, files: int = 1) -> None:
        from gradcli.views.progress import RunProgress
        self.plots = plots
        self.drawn: set[tuple[int, int]] = set()
        """Figures drawn in this file, by number and version: `show()` after `savefig` draws nothing new."""
        self.out = console()
        self.err = console(stderr=True)
        self.quiet = quiet
        self.debug = debug
        self.on_event: Callable[[Event], None] | None = None if quiet else self._event
        self.bar = RunProgress(self.out, self.err, files, PROGRESS_AFTER)
        self.progress: ProgressFactory | None = self.bar.checking if checking else None
        self.open_line = False
        """A print with `end=''` left its line open: gradcli's own output starts on the next one."""

    def running(self, name: str, number: int) -> contextlib.AbstractContextManager[None]:
        return self.bar.running(name, number)

    def close(self) -> None:
        self.bar.close()

    def _close_line(self) -> None:
        if self.open_line:
            with self.bar.printing(leaves_line_open=False):
                self.out.print()
            self.open_line = False

    def start(self, path: str) -> None:
        from gradcli.views.script_view import FileHeading
        if not self.quiet:
            self.out.print(FileHeading(path))

    def _event(self, event: Event) -> None:
        from gradcli.program.scripts import BackwardCheck, Explanation, Figure, Output
        from gradcli.views.render import display_view
        from gradcli.views.script_view import backward_text
        if isinstance(event, Output) and event.kind == "print":
            from rich.text import Text

            from gradcli.source import printable
            self.open_line = not event.text.endswith("\n")
            with self.bar.printing(self.open_line):
                self.out.print(Text(printable(event.text)), end="", soft_wrap=True)
            return
        self._close_line()
        if isinstance(event, BackwardCheck):
            self._check(event)
            return
        if isinstance(event, Figure):
            self._figure(event)
            return
        if isinstance(event, Explanation):
            from rich.text import Text

            from gradcli.views.explain import explain_view
            self.out.print(Text(f"{backward_text(event)} at {event.site or f'line {event.line}'}", style="dim"))
            self.out.print(explain_view(event.recorder, event.leaves, event.variables))
            return
        self.out.print(display_view(*event.items[0]))

    def _figure(self, event: Figure) -> None:
        from rich.text import Text

        from gradcli.views.figures import figure_text
        if event.name is not None and self.plots is None:
            self.out.print(Text(f"savefig({event.name!r}): not written; gradcli run --plots DIR writes figures",
                                style="dim"))
        if _key(event) in self.drawn:
            return
        self.drawn.add(_key(event))
        colour = self.out.color_system is not None and not self.out.no_color
        self.out.print(Text.from_ansi(figure_text(event.figure, self.out.width, colour)))

    def _check(self, event: BackwardCheck) -> None:
        from rich.text import Text

        from gradcli.views.check_view import check_view
        from gradcli.views.script_view import backward_text
        later = "" if event.call == 1 else f" (call {event.call:,})"
        self.out.print(Text(f"{backward_text(event)} at {event.site or f'line {event.line}'}{later}", style="dim"))
        self.out.print(check_view(event.report))

    def finish(self, result: FileResult) -> None:
        from gradcli.views.script_view import failure_view, sites_view
        self._close_line()
        self.drawn.clear()
        for path in _write_figures(result, self.plots):
            from rich.text import Text
            self.out.print(Text(f"wrote {path}", style="dim"))
        failure = result.error or result.assertion
        if self.debug and failure is not None:
            traceback.print_exception(failure)
        if (result.sites or result.warnings) and not self.quiet:
            self.out.print(sites_view(result))
        if result.status != "ok":
            print_error(failure_view(result))

    def summary(self, results: list[FileResult], summary: dict) -> None:
        from gradcli.views.script_view import summary_table
        self.out.print(summary_table(results, summary, self.progress is not None))


def _summary(results: list[FileResult], planned: int, dtype: str, skipped: list[Path]) -> dict:
    counts = {status: sum(r.status == status for r in results) for status in ("ok", "failed", "error")}
    return {"files": len(results), "planned": planned, **counts, "dtype": dtype,
            "backward_calls": sum(r.backward_calls for r in results),
            "checks_passed": sum(r.checks_passed for r in results),
            "checks_failed": sum(r.checks_failed for r in results),
            "checks_undefined": sum(r.checks_undefined for r in results),
            "seconds": round(sum(r.seconds for r in results), 4), "exit_code": exit_code(results),
            "skipped": [str(p) for p in skipped]}
