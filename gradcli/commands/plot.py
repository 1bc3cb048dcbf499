"""`gradcli plot PROGRAM --range a:b [NAME=SPEC ...]`: the output and its derivative over a range, drawn.

One `--range` draws curves in the terminal (plotext); two draw a heat map with gradient arrows.
`--out` writes the same picture with matplotlib (the optional extra `gradcli[plot]`), `--json`
prints the samples.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from gradcli.commands.common import (check_mode, collect_inputs, console, emit_json, exit_if_failed, guarded,
                                     print_check)

if TYPE_CHECKING:
    from gradcli.check.sweep import Sweep

FILE_TYPES = (".png", ".svg", ".pdf")
PLOT_HEIGHT = (12, 24)
"""Fewest and most rows of the terminal plot; in between, a third of the console's width."""


def plot_command(
    program: str = typer.Argument(..., help="The program, e.g. 'out = sin(x) * x'."),
    inputs: Optional[list[str]] = typer.Argument(None, help="The other inputs as NAME=SPEC, held fixed, e.g. w=2.0."),
    input_option: Optional[list[str]] = typer.Option(None, "--input", "-i", help="An input NAME=SPEC (repeatable)."),
    ranges: list[str] = typer.Option(..., "--range", "-r", help="The range to sweep: a:b, or NAME=a:b to name the "
                                                                "input; twice for two inputs (a heat map)."),
    points: int = typer.Option(400, "--points", "-n", help="How many samples (two inputs: a square grid of about "
                                                           "this many)."),
    order: int = typer.Option(1, "--order", help="1: the derivative; 2: the second derivative as well."),
    of: Optional[str] = typer.Option(None, "--of", help="Plot this variable instead of the last value."),
    check: Optional[str] = typer.Option(None, "--check", help="Put SymPy's formula of the derivative in the legend "
                                                              "(checked at one point)."),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="Also write the picture to FILE.png, .svg or .pdf "
                                                                "(needs: pip install \"gradcli[plot]\")."),
    seed: int = typer.Option(0, "--seed", help="Seed for rand/randn."),
    as_json: bool = typer.Option(False, "--json", help="Print the samples as one JSON object instead of a plot."),
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks."),
) -> None:
    """Sweep one input of PROGRAM over a range and draw the output with its derivative."""
    with guarded(as_json, debug):
        from gradcli.program.evaluation import Settings
        from gradcli.check.sweep import parse_range, sweep
        names = collect_inputs(inputs, input_option)
        _symbolic_only(check)
        if out is not None:
            _writable(out)
        axes = [parse_range(text) for text in ranges]
        result = sweep(program, names, axes, points, order, of, Settings(seed=seed), check=check is not None)
        if as_json:
            emit_json(result.to_json())
        else:
            _show(result)
        if out is not None:
            from rich.text import Text

            from gradcli.views.plot import figure
            figure(result).savefig(out)
            console(stderr=True).print(Text(f"wrote {out}"))
        exit_if_failed(result.check)


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
