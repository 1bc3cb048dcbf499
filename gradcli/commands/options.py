"""The options several commands share, each written once: one flag, one help text, everywhere.

Used as annotations (`seed: Seed = 0`). typer takes defaults from the signature only, so the
defaults that are limits come from `gradcli.lang.limits`, which enforces them.
"""
from __future__ import annotations

from typing import Annotated, Optional

import typer

Program = Annotated[str, typer.Argument(metavar="PROGRAM", help="The program, e.g. 'y = x + 2; out = (y*y*3).mean()'.")]
Inputs = Annotated[Optional[list[str]], typer.Argument(metavar="[NAME=SPEC]...", help="Inputs as NAME=SPEC, e.g. x=ones(2,2), w=@w.npy.")]
InputOption = Annotated[Optional[list[str]], typer.Option("--input", "-i", help="An input NAME=SPEC (repeatable).")]
Of = Annotated[Optional[str], typer.Option("--of", help="Differentiate this variable instead of the last value.")]
Wrt = Annotated[Optional[str], typer.Option("--wrt", help="Only these inputs, e.g. --wrt x,w.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed for rand/randn (each script file starts from it).")]
Dtype = Annotated[str, typer.Option("--dtype", help="Default float dtype: float64 or float32 (eval, jacobian and hessian default to float64, a calculator's precision; run to float32, PyTorch's default).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON (run: one line per file, then a summary line).")]
Full = Annotated[bool, typer.Option("--full", help="Do not summarise large tensors.")]
Explain = Annotated[bool, typer.Option("--explain", help="Show the backward pass step by step.")]
Check = Annotated[Optional[str], typer.Option(
    "--check", help="Verify the derivatives: symbolic (SymPy, the default), numeric (finite differences) or all.")]
Rtol = Annotated[Optional[float], typer.Option("--rtol", help="Relative tolerance of --check.")]
Atol = Annotated[Optional[float], typer.Option("--atol", help="Absolute tolerance of --check.")]
MaxElements = Annotated[int, typer.Option(
    "--max-elements", help="Largest tensor allowed (elements), Jacobian and Hessian blocks included.")]
MaxSteps = Annotated[int, typer.Option(
    "--max-steps", help="Most loop iterations a program may run in total (run: per file).")]
Timeout = Annotated[float, typer.Option(
    "--timeout", metavar="SECONDS",
    help="Stop a program (run: each file) that runs longer than this many seconds, wall clock.")]
Debug = Annotated[bool, typer.Option("--debug", help="Show Python tracebacks.")]
