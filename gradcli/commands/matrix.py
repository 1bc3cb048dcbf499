"""`gradcli jacobian` and `gradcli hessian`: every first or every second derivative of a program's output.

Layouts are PyTorch's (`torch.autograd.functional`): a Jacobian block is output shape + input
shape, a Hessian block input A's shape + input B's shape. Tables flatten a block to a matrix whose
rows and columns are labelled by element (`y[0]`, `x[1,2]`), so a 3-D block still reads as
"row: which output element, column: which input element".
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional

import typer

from gradcli.commands.common import (check_mode, checked, collect_inputs, console, emit_json_with_check,
                                     exit_if_failed, guarded, print_check, require_known_inputs, split_names)

PROGRAM = typer.Argument(..., help="The program, e.g. 'y = softmax(x, dim=-1)'.")
INPUTS = typer.Argument(None, help="Inputs as NAME=SPEC, e.g. x=[0.2, -1.0, 0.7], w=@w.npy.")
INPUT_OPTION = typer.Option(None, "--input", "-i", help="An input NAME=SPEC (repeatable).")
OF = typer.Option(None, "--of", help="Differentiate this variable instead of the last value.")
WRT = typer.Option(None, "--wrt", help="Differentiate with respect to these inputs only, e.g. --wrt x,w.")
SEED = typer.Option(0, "--seed", help="Seed for rand/randn.")
DTYPE = typer.Option("float64", "--dtype", help="float64 or float32.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
CHECK = typer.Option(None, "--check", help="Verify every entry: symbolic (SymPy, the default), numeric (finite "
                                            "differences) or all.")
FULL = typer.Option(False, "--full", help="Do not summarise large matrices.")
DEBUG = typer.Option(False, "--debug", help="Show Python tracebacks.")
MAX_ELEMENTS = typer.Option(50_000_000, "--max-elements", help="Largest tensor allowed (elements), "
                                                              "Jacobian and Hessian blocks included.")
MAX_STEPS = typer.Option(1_000_000, "--max-steps", help="Most loop iterations allowed in total.")


def jacobian_command(program: str = PROGRAM, inputs: Optional[list[str]] = INPUTS,
                     input_option: Optional[list[str]] = INPUT_OPTION, of: Optional[str] = OF,
                     wrt: Optional[str] = WRT, seed: int = SEED, dtype: str = DTYPE, as_json: bool = JSON,
                     check: Optional[str] = CHECK, full: bool = FULL, debug: bool = DEBUG,
                     max_elements: int = MAX_ELEMENTS, max_steps: int = MAX_STEPS) -> None:
    """The Jacobian of PROGRAM's output with respect to each input (output shape + input shape)."""
    with guarded(as_json, debug):
        from gradcli.check import jacobian_check
        from gradcli.engine.autograd import jacobian_of
        from gradcli.jsonable import block_json
        from gradcli.views.render import block_view
        with _forward(program, inputs, input_option, of, wrt, seed, dtype, check, max_elements,
                      max_steps) as (prog, leaves):
            blocks = dict(zip(leaves, jacobian_of(prog.output, list(leaves.values()), list(leaves),
                                                  prog.output_name)))
        report = checked(lambda progress: jacobian_check(prog.output, leaves, blocks, check, seed=seed,
                                                            progress=progress, of=prog.output_name)) if check else None
        _show(prog, seed, report, as_json, "jacobian", lambda: {name: block_json(b) for name, b in blocks.items()},
              lambda: [block_view(f"∂{prog.output_name}/∂{name}", prog.output_name, prog.output.shape, name,
                                  leaves[name].shape, block, full) for name, block in blocks.items()])


def hessian_command(program: str = PROGRAM, inputs: Optional[list[str]] = INPUTS,
                    input_option: Optional[list[str]] = INPUT_OPTION, of: Optional[str] = OF,
                    wrt: Optional[str] = WRT, seed: int = SEED, dtype: str = DTYPE, as_json: bool = JSON,
                    check: Optional[str] = CHECK, full: bool = FULL, debug: bool = DEBUG,
                    max_elements: int = MAX_ELEMENTS, max_steps: int = MAX_STEPS) -> None:
    """The Hessian of PROGRAM's scalar output: one block per pair of inputs (shape of A + shape of B)."""
    with guarded(as_json, debug):
        from gradcli.check import hessian_check
        from gradcli.engine.autograd import hessian_of
        from gradcli.jsonable import block_json
        from gradcli.views.render import block_view
        with _forward(program, inputs, input_option, of, wrt, seed, dtype, check, max_elements,
                      max_steps) as (prog, leaves):
            rows = hessian_of(prog.output, list(leaves.values()), list(leaves), prog.output_name)
            blocks = {a: dict(zip(leaves, row)) for a, row in zip(leaves, rows)}
        report = checked(lambda progress: hessian_check(prog.output, leaves, blocks, check, seed=seed,
                                                           progress=progress, of=prog.output_name)) if check else None
        _show(prog, seed, report, as_json, "hessian",
              lambda: {a: {b: block_json(h) for b, h in row.items()} for a, row in blocks.items()},
              lambda: [block_view(f"∂²{prog.output_name}/∂{a}∂{b}", a, leaves[a].shape, b, leaves[b].shape,
                                  block, full) for a, row in blocks.items() for b, block in row.items()])


@contextlib.contextmanager
def _forward(program: str, inputs: list[str] | None, input_option: list[str] | None, of: str | None,
             wrt: str | None, seed: int, dtype: str, check: str | None, max_elements: int,
             max_steps: int) -> Iterator[tuple[Any, dict]]:
    """Run the program forward and pick the inputs to differentiate by, under the run's settings.

    A context because the derivatives must be taken under the same settings (dtype, element cap,
    floating-point error state) as the forward pass.
    """
    from gradcli.errors import ArgumentError
    from gradcli.program.evaluation import Settings, engine_settings, run_program
    names = collect_inputs(inputs, input_option)
    wanted = split_names(wrt)
    check_mode(check)
    require_known_inputs(wanted, names)
    settings = Settings(seed, dtype, max_elements, max_steps)
    with engine_settings(settings):
        prog = run_program(program, names, of, settings=settings)
        if not prog.leaves:
            raise ArgumentError("there are no inputs to differentiate by",
                                hint="pass each input as NAME=SPEC, e.g. x=[1.0, 2.0]")
        prog.require_grad()
        yield prog, {n: t for n, t in prog.leaves.items() if not wanted or n in wanted}


def _show(prog: Any, seed: int, report: Any, as_json: bool, key: str, blocks_json: Callable[[], dict],
          block_views: Callable[[], list]) -> None:
    """The output and its blocks, as one JSON object or as tables, then the check; exit 1 if it failed."""
    if as_json:
        from gradcli.jsonable import output_json
        emit_json_with_check({"output": output_json(prog.output_name, prog.output), key: blocks_json(),
                              "seed": seed}, report)
    else:
        from rich.console import Group

        from gradcli.views.render import array_view
        console().print(Group(array_view(prog.output_name, prog.output), *block_views()))
        print_check(report)
    exit_if_failed(report)
