"""`gradcli plot PROGRAM --range a:b [NAME=SPEC ...]`: the output and its derivative over a range, drawn.

One `--range` draws curves in the terminal (plotext); two draw a heat map with gradient arrows.
`--out` writes the same picture with matplotlib (the optional extra `gradcli[plot]`) instead, and
`--show` as well; `--json` prints the samples.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, Iterator, Optional

import typer

from gradcli.commands import options
from gradcli.commands.common import (budgeted, check_mode, console, emit_json, exit_if_failed, guarded,
                                     print_check, program_inputs)
from gradcli.commands.options import DEFAULT_MAX_MEMORY_TEXT, Debug, InputOption
from gradcli.lang.limits import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from gradcli.check.sweep import Sweep

FILE_TYPES = (".png", ".svg", ".pdf")
PLOT_HEIGHT = (12, 24)
"""Fewest and most rows of the terminal plot; in between, a third of the console's width."""

Seed = options.seed("in the inputs held fixed and the program")
Json = options.as_json("the samples as one JSON object instead of a plot")
Dtype = options.dtype("float64", "a calculator's precision")
Timeout = options.timeout("the command", "the sweep, its derivatives, --check and drawing together")
MaxMemory = options.max_memory("the command")


def plot_command(
    program: Annotated[str, typer.Argument(metavar="PROGRAM", help="The program, quoted as one argument, e.g. "
                                                              "'out = sin(x) * x'; - reads it from stdin, @FILE from "
                                                              "a file.")],
    ranges: Annotated[list[str], typer.Option(
        "--range", "-r", metavar="[NAME=]A:B", help="The range to sweep, e.g. -2:2, or x=-1:1 to name the input; "
                                                    "twice for two inputs (a heat map).")],
    inputs: Annotated[Optional[list[str]], typer.Argument(
        metavar="[NAME=SPEC]...", help="The other inputs, held fixed, e.g. w=2.0.")] = None,
    input_option: InputOption = None,
    points: Annotated[int, typer.Option(
        "--points", "-n", metavar="N", help="How many samples, plus 0 when the range holds it (two inputs: a square "
                                            "grid of about this many).")] = 400,
    order: Annotated[int, typer.Option(
        "--order", metavar="1|2", help="1: the derivative; 2: the second derivative as well.")] = 1,
    of: Annotated[Optional[str], typer.Option(
        "--of", metavar="NAME", help="Plot this variable of the program instead of its last value.")] = None,
    check: Annotated[Optional[str], typer.Option(
        "--check", metavar="[symbolic]", help="Put SymPy's formula of the derivative in the legend, and check "
                                              "autograd against it at one point (exit 1 if they disagree).")] = None,
    out: Annotated[Optional[str], typer.Option(
        "--out", "-o", metavar="FILE", help="Write the picture to FILE.png, .svg or .pdf with matplotlib (pip install "
                                            "\"gradcli[plot]\") and say so in one line, instead of drawing it in the "
                                            "terminal.")] = None,
    show: Annotated[bool, typer.Option(
        "--show", help="With --out, draw the plot in the terminal as well.")] = False,
    seed: Seed = 0, dtype: Dtype = "float64", as_json: Json = False, timeout: Timeout = DEFAULT_TIMEOUT,
    max_memory: MaxMemory = DEFAULT_MAX_MEMORY_TEXT, debug: Debug = False,
) -> None:
    """Sweep one input of PROGRAM over a range and draw the output with its derivative."""
    with guarded(as_json, debug), budgeted(timeout, max_memory):
        from gradcli.program.evaluation import Settings
        from gradcli.check.sweep import parse_range, sweep
        program, names = program_inputs(program, inputs, input_option)
        _symbolic_only(check)
        if out is not None:
            _writable(out)
        axes = [parse_range(text) for text in ranges]
        with _progress(as_json) as progress:
            result = sweep(program, names, axes, points, order, of, Settings(seed=seed, dtype=dtype, timeout=timeout),
                           check=check is not None,
                           progress=progress)
        if as_json:
            emit_json(result.to_json())
        elif out is None or show:
            _show(result)
        if out is not None:
            _write(result, out, to_stderr=as_json or show)
        exit_if_failed(result.check)


@contextlib.contextmanager
def _progress(as_json: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A bar on a terminal's stderr for a sweep that runs the program point by point for over a second."""
    if as_json:
        yield None
        return
    from gradcli.views.progress import progress_reporter
    with progress_reporter(console(stderr=True), what="sampling") as progress:
        yield progress


def _write(result: Sweep, out: str, to_stderr: bool) -> None:
    """The picture to a file, and one line that says so: on stdout when it is the command's only
    output, on stderr beside JSON or a terminal plot. A failed check is still shown in full."""
    from rich.text import Text

    from gradcli.views.plot import figure
    figure(result).savefig(out)
    console(stderr=to_stderr).print(Text(f"wrote {out}"))
    if not to_stderr and result.check is not None and result.check.status == "fail":
        print_check(result.check)


def _show(result: Sweep) -> None:
    from rich.text import Text

    from gradcli.views.plot import gradient_table, heat_map, line_plot, undefined_view
    screen = console()
    if len(result.names) == 1:
        colour = screen.color_system is not None and not screen.no_color
        height = min(max(screen.width // 3, PLOT_HEIGHT[0]), PLOT_HEIGHT[1])
        screen.print(Text.from_ansi(line_plot(result, screen.width, height, colour)))
    else:
        screen.print(heat_map(result, screen.width))
        screen.print(gradient_table(result))
    if result.undefined:
        screen.print(undefined_view(result))
    if result.check is not None and result.check.status == "fail":
        print_check(result.check)


def _symbolic_only(check: str | None) -> None:
    """The legend's formula is SymPy's: finite differences have none to give."""
    from gradcli.errors import ArgumentError
    check_mode(check)
    if check not in (None, "symbolic"):
        raise ArgumentError(f"--check {check}: a plot's --check shows SymPy's formula", hint="use --check on its own")


def _writable(out: str) -> None:
    """A file type matplotlib writes, and matplotlib installed: both known before any sweep runs."""
    from gradcli.errors import ArgumentError
    suffix = Path(out).suffix.lower()
    if suffix not in FILE_TYPES:
        raise ArgumentError(f"--out {out}: gradcli writes plots as {', '.join(FILE_TYPES)}",
                            hint=f"end the file name with one of them, e.g. --out {Path(out).stem or 'plot'}.png")
    if importlib.util.find_spec("matplotlib") is None:
        raise ArgumentError("--out needs matplotlib, which is not installed", hint='pip install "gradcli[plot]"')
    if not os.path.isdir(Path(out).parent or "."):
        raise ArgumentError(f"--out {out}: the folder {str(Path(out).parent)!r} does not exist",
                            hint="create it first, or write the file elsewhere")
