"""`gradcli jacobian` and `gradcli hessian`: every first or every second derivative of a program's output.

Layouts are PyTorch's (`torch.autograd.functional`): a Jacobian block is output shape + input
shape, a Hessian block input A's shape + input B's shape. Tables flatten a block to a matrix whose
rows and columns are labelled by element (`y[0]`, `x[1,2]`), so a 3-D block still reads as
"row: which output element, column: which input element".
"""
from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator

from gradcli.commands.common import (budgeted, check_mode, checked, console, emit_json_with_check,
                                     exit_if_failed, guarded, print_check, program_inputs, require_known_inputs, running,
                                     split_names)
from gradcli.commands import options
from gradcli.commands.options import (DEFAULT_MAX_MEMORY_TEXT, Atol, Debug, Exact, Full, InputOption, Inputs, Of,
                                      Program, Rtol, Wrt)
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT
from gradcli.source import operand

if TYPE_CHECKING:
    from gradcli.program.evaluation import Settings

Seed = options.seed("in the inputs and the program")
Dtype = options.dtype("float64", "a calculator's precision")
JacobianJson = options.as_json("one JSON object instead of tables: the output and one block per input")
HessianJson = options.as_json("one JSON object instead of tables: the output and one block per pair of inputs, "
                              "hessian[A][B]")
Check = options.check("every element of each block (large blocks on a seeded sample)")
MaxElements = options.max_elements("in the program, and each block: an n-element output by an m-element input "
                                   "makes n·m")
MaxSteps = options.max_steps("in the program")
Timeout = options.timeout("the command", "the program, the derivatives, printing and --check together")
MaxMemory = options.max_memory("the command")


def jacobian_command(program: Program, inputs: Inputs = None, input_option: InputOption = None, of: Of = None,
                     wrt: Wrt = None, seed: Seed = 0, dtype: Dtype = "float64", as_json: JacobianJson = False,
                     check: Check = None, rtol: Rtol = None, atol: Atol = None, exact: Exact = False,
                     full: Full = False,
                     max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, max_steps: MaxSteps = DEFAULT_MAX_STEPS,
                     timeout: Timeout = DEFAULT_TIMEOUT, max_memory: MaxMemory = DEFAULT_MAX_MEMORY_TEXT,
                     debug: Debug = False) -> None:
    """The Jacobian of PROGRAM's output with respect to each input (output shape + input shape)."""
    with guarded(as_json, debug), budgeted(timeout, max_memory):
        from gradcli.check import jacobian_check
        from gradcli.program.evaluation import Settings
        from gradcli.engine.autograd import jacobian_of
        from gradcli.jsonable import block_json
        from gradcli.views.render import block_view
        with running(as_json), _forward(program, inputs, input_option, of, wrt, (check, rtol, atol, exact),
                                        Settings(seed, dtype, max_elements, max_steps, timeout)) as (prog, leaves):
            blocks = dict(zip(leaves, jacobian_of(prog.output, list(leaves.values()), list(leaves),
                                                  prog.output_name)))
        report = checked(lambda progress: jacobian_check(prog.output, leaves, blocks, check, rtol=rtol, atol=atol,
                                                         exact=exact, seed=seed, progress=progress,
                                                         of=prog.output_name)) if check else None
        _show(prog, seed, report, as_json, "jacobian", lambda: {name: block_json(b) for name, b in blocks.items()},
              lambda: [block_view(f"∂{operand(prog.output_name)}/∂{name}", operand(prog.output_name), prog.output.shape, name,
                                  leaves[name].shape, block, full) for name, block in blocks.items()])


def hessian_command(program: Program, inputs: Inputs = None, input_option: InputOption = None, of: Of = None,
                    wrt: Wrt = None, seed: Seed = 0, dtype: Dtype = "float64", as_json: HessianJson = False,
                    check: Check = None, rtol: Rtol = None, atol: Atol = None, exact: Exact = False,
                    full: Full = False,
                    max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, max_steps: MaxSteps = DEFAULT_MAX_STEPS,
                    timeout: Timeout = DEFAULT_TIMEOUT, max_memory: MaxMemory = DEFAULT_MAX_MEMORY_TEXT,
                    debug: Debug = False) -> None:
    """The Hessian of PROGRAM's scalar output: one block per pair of inputs (shape of A + shape of B)."""
    with guarded(as_json, debug), budgeted(timeout, max_memory):
        from gradcli.check import hessian_check
        from gradcli.program.evaluation import Settings
        from gradcli.engine.autograd import hessian_of
        from gradcli.jsonable import block_json
        from gradcli.views.render import block_view
        with running(as_json), _forward(program, inputs, input_option, of, wrt, (check, rtol, atol, exact),
                                        Settings(seed, dtype, max_elements, max_steps, timeout)) as (prog, leaves):
            rows = hessian_of(prog.output, list(leaves.values()), list(leaves), prog.output_name)
            blocks = {a: dict(zip(leaves, row)) for a, row in zip(leaves, rows)}
        report = checked(lambda progress: hessian_check(prog.output, leaves, blocks, check, rtol=rtol, atol=atol,
                                                        exact=exact, seed=seed, progress=progress,
                                                        of=prog.output_name)) if check else None
        _show(prog, seed, report, as_json, "hessian",
              lambda: {a: {b: block_json(h) for b, h in row.items()} for a, row in blocks.items()},
              lambda: [block_view(f"∂²{operand(prog.output_name)}/∂{a}∂{b}", a, leaves[a].shape, b, leaves[b].shape,
                                  block, full) for a, row in blocks.items() for b, block in row.items()])


@contextlib.contextmanager
def _forward(program: str, inputs: list[str] | None, input_option: list[str] | None, of: str | None,
             wrt: str | None, checking: tuple[str | None, float | None, float | None, bool],
             settings: Settings) -> Iterator[tuple[Any, dict]]:
    """Run the program forward and pick the inputs to differentiate by, under the run's settings.

    `checking` is --check's mode, tolerances and --exact, refused before anything runs when they mean nothing.
    A context because the derivatives must be taken under the same settings (dtype, element cap,
    floating-point error state) as the forward pass.
    """
    from gradcli.errors import ArgumentError
    from gradcli.program.evaluation import engine_settings, run_program
    program, names = program_inputs(program, inputs, input_option)
    wanted = split_names(wrt)
    check_mode(*checking)
    require_known_inputs(wanted, names)
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
