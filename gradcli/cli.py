"""The `gradcli` command: a typer app that only parses options and hands over to a command module.

`--check` takes an optional mode (`--check`, `--check numeric`); click has no optional option
values, so `main` rewrites the bare flag before typer sees it, and a word after it that is no
input, file or mode (`--check bogus`) as the mode it was meant to be, so the error names it.
"""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer
import typer.core

from gradcli.commands.common import CHECK_MODES, silence_stdout
from gradcli.commands.eval import eval_command
from gradcli.commands.matrix import hessian_command, jacobian_command
from gradcli.commands.ops import ops_command
from gradcli.commands.plot import plot_command
from gradcli.commands.run import run_command
from gradcli.engine import budget



class _Command(typer.core.TyperCommand):
    """A command whose usage line writes a required argument as its help does (`PROGRAM`, not
    typer's `{PROGRAM}`): braces read as a set, or as something to type."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:
        return [piece.removeprefix("{").removesuffix("}") for piece in super().collect_usage_pieces(ctx)]


app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                  help="gradcli: a gradient calculator. Tensor programs in, autograd gradients out, "
                       "each one provable by SymPy (--check).",
                  epilog="gradcli COMMAND --help describes each option; README.md and docs/ show examples.",
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        from gradcli import __version__
        typer.echo(f"gradcli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Optional[bool] = typer.Option(None, "--version", "-V", callback=_version, is_eager=True,
                                                 help="Show the version and exit.")) -> None:
    """gradcli: tensor programs in, autograd gradients out."""


app.command("eval", cls=_Command, short_help="Gradients of a program's output, as tables.")(eval_command)
app.command("jacobian", cls=_Command, short_help="Every first derivative, in PyTorch's layout.")(jacobian_command)
app.command("hessian", cls=_Command, short_help="Every second derivative of a scalar output.")(hessian_command)
app.command("ops", cls=_Command, short_help="What a program can call, with derivative rules.")(ops_command)
app.command("run", cls=_Command, short_help="Run scripts and notebooks (.py, .grad, .ipynb), as tutorials write them.")(run_command)
app.command("plot", cls=_Command, short_help="Draw an output and its derivative over a range.")(plot_command)


def normalise_argv(argv: list[str]) -> list[str]:
    """`--check` alone means `--check=symbolic`; `--check MODE` becomes `--check=MODE`, and so does a
    word after it that can only have been meant as a mode (no file, no NAME=SPEC input of it)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--check":
            if i + 1 < len(argv) and _meant_as_mode(argv[i + 1], argv):
                out.append(f"--check={argv[i + 1]}")
                i += 2
                continue
            out.append("--check=symbolic")
        else:
            out.append(arg)
        i += 1
    return out


def _meant_as_mode(word: str, argv: list[str]) -> bool:
    return word in CHECK_MODES or (word.isidentifier() and not os.path.exists(word)
                                   and not any(a.startswith(f"{word}=") for a in argv))


WATCHED = {"eval", "jacobian", "hessian", "run", "plot"}
"""The commands that run a program: `main` watches them from outside (commands/watchdog.py)."""


def main() -> None:
    """The `gradcli` script. Output still buffered at the end is flushed here, where a closed pipe
    can still end the run quietly rather than in Python's shutdown warning."""
    budget.LAUNCHED.append(budget.launched_at())
    if sys.argv[1:2] and sys.argv[1] in WATCHED and "--debug" not in sys.argv:
        from gradcli.commands.watchdog import watched
        code = watched()
        if code is not None:
            raise SystemExit(code)
    try:
        app(args=normalise_argv(sys.argv[1:]), prog_name="gradcli")
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise SystemExit(silence_stdout()) from None
