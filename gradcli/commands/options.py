"""The options several commands share: each flag, metavar and type written once, in the words of
the command that shows it.

An option whose meaning is the same everywhere (`--of`, `--wrt`, `--full`) is one annotation.
One whose default or scope differs by command (`--seed`, `--dtype`, `--json`, `--check`, the
limits) is a function of the command's own wording, so `gradcli eval --help` never describes
what `run` does. Used as annotations (`seed: Seed = 0`, with `Seed = options.seed("...")` in the
command's module); typer takes defaults from the signature only, so the defaults that are limits
come from `gradcli.lang.limits`, which enforces them.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import typer

from gradcli.engine.budget import TICK
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT

DEFAULT_MAX_MEMORY_TEXT = "1.5G"
"""`--max-memory`'s default as a user writes it (engine.budget.DEFAULT_MAX_MEMORY in bytes)."""

Program = Annotated[str, typer.Argument(metavar="PROGRAM", help="The program, quoted as one argument, e.g. "
                                                                "'y = x + 2; out = (y*y*3).mean()'; - reads it from "
                                                                "stdin, @FILE from a file.")]
Inputs = Annotated[Optional[list[str]], typer.Argument(
    metavar="[NAME=SPEC]...", help="Inputs as NAME=SPEC, e.g. x=ones(2,2), x=[1.0, 2.0], w=@w.npy.")]
InputOption = Annotated[Optional[list[str]], typer.Option(
    "--input", "-i", metavar="NAME=SPEC", help="An input, as the arguments give them (repeatable).")]
Of = Annotated[Optional[str], typer.Option(
    "--of", metavar="NAME", help="Differentiate this variable of the program instead of its last value.")]
Wrt = Annotated[Optional[str], typer.Option("--wrt", metavar="NAMES", help="Only these inputs, e.g. --wrt x,w.")]
Full = Annotated[bool, typer.Option("--full", help="Show every element of large tensors (no … summary).")]
Debug = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks of errors.")]
Rtol = Annotated[Optional[float], typer.Option(
    "--rtol", metavar="X", help="Relative tolerance of --check, e.g. 1e-6; with --atol it replaces the tolerance "
                                "model by |got - expected| <= atol + rtol·|expected|.")]
Atol = Annotated[Optional[float], typer.Option(
    "--atol", metavar="X", help="Absolute tolerance of --check, e.g. 1e-9 (see --rtol).")]
Exact = Annotated[bool, typer.Option("--exact", help="Evaluate SymPy's derivatives exactly for --check, not in "
                                                    "float64.")]


def seed(scope: str) -> Any:
    return Annotated[int, typer.Option("--seed", metavar="N", help=f"Seed of PyTorch's generator for rand, randn, "
                                                                   f"... {scope}.")]


def dtype(default: str, why: str) -> Any:
    other = "float32" if default == "float64" else "float64"
    return Annotated[Literal["float64", "float32"], typer.Option(
        "--dtype", help=f"The default float dtype: {default} ({why}) or {other}.")]


def as_json(what: str) -> Any:
    return Annotated[bool, typer.Option("--json", help=f"Print {what}.")]


def check(what: str) -> Any:
    return Annotated[Optional[str], typer.Option(
        "--check", metavar="[MODE]", help=f"Prove {what}: symbolic (SymPy's derivative; bare --check), numeric "
                                          f"(central finite differences) or all (both).")]


def explain(what: str) -> Any:
    return Annotated[bool, typer.Option("--explain", help=f"Show {what} step by step: each node, the gradient it "
                                                          f"receives, its rule and what it passes on.")]


def max_elements(scope: str) -> Any:
    return Annotated[int, typer.Option(
        "--max-elements", metavar="N", show_default=False,
        help=f"Largest tensor allowed, in 8-byte elements (a float32 tensor may have twice as many), checked before "
             f"allocating ({scope}).{_default(DEFAULT_MAX_ELEMENTS)}")]


def max_steps(scope: str) -> Any:
    return Annotated[int, typer.Option(
        "--max-steps", metavar="N", show_default=False,
        help=f"Most loop iterations allowed, all loops together, and as many calls of the program's own functions "
             f"({scope}). A guard: --timeout is what stops a runaway program.{_default(DEFAULT_MAX_STEPS)}")]


def max_memory(scope: str) -> Any:
    return Annotated[str, typer.Option(
        "--max-memory", metavar="SIZE", show_default=False,
        help=f"Most memory {scope} may take beyond what gradcli holds when it starts: tensors, arrays, containers, "
             f"strings and saved copies together, checked before large allocations and every {TICK:g} s "
             f"(SIZE in bytes or with K, M, G: 800M, 4G).  [default: {DEFAULT_MAX_MEMORY_TEXT}]")]


def timeout(subject: str, note: str) -> Any:
    return Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", show_default=False,
        help=f"Stop {subject} after this many seconds of wall clock ({note}).{_default(DEFAULT_TIMEOUT)}")]


def _default(value: float) -> str:
    """A limit's default as typer shows every other default, with digits grouped: typer's own
    `show_default` would print 50000000 (or, given text, wrap it in parentheses)."""
    return f"  [default: {value:,g}]" if isinstance(value, float) else f"  [default: {value:,}]"
