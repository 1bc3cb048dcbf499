"""`gradcli eval PROGRAM [NAME=SPEC ...]`: one program, one backward, gradient tables."""
from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gradcli.commands.common import (budgeted, check_mode, checked, console, emit_json_with_check,
                                     exit_if_failed, guarded, print_check, program_inputs, require_known_inputs,
                                     running, split_names)
from gradcli.commands import options
from gradcli.commands.options import (DEFAULT_MAX_MEMORY_TEXT, Atol, Debug, Exact, Full, InputOption, Inputs, Of,
                                      Program, Rtol, Wrt)
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from gradcli.check.report import CheckReport
    from gradcli.program.evaluation import Result

Seed = options.seed("in the inputs and the program; printed under the output")
Dtype = options.dtype("float64", "a calculator's precision")
Json = options.as_json("one JSON object instead of tables: the output, the gradients and the seed (and the "
                       "check, the backward steps, when asked for)")
Check = options.check("every gradient")
Explain = options.explain("the backward pass")
MaxElements = options.max_elements("in the program and its inputs")
MaxSteps = options.max_steps("in the program")
Timeout = options.timeout("the command", "the program, printing, --graph, --explain and --check together")
MaxMemory = options.max_memory("the command")


def eval_command(
    program: Program, inputs: Inputs = None, input_option: InputOption = None, of: Of = None,
    grad: Annotated[Optional[str], typer.Option(
        "--grad", "-g", metavar="SPEC", help="The gradient backward starts from, as y.backward(gradient), e.g. "
                                             "[0.1, 1.0, 0.0001], or ones (of the output's shape, so a non-scalar "
                                             "output's gradients are those of its sum).  [default: ones]")] = None,
    wrt: Wrt = None, seed: Seed = 0, dtype: Dtype = "float64", as_json: Json = False,
    graph: Annotated[bool, typer.Option("--graph", help="Show the autograd graph as a tree, with PyTorch's node "
                                                        "names.")] = False,
    dot: Annotated[Optional[str], typer.Option(
        "--dot", metavar="FILE", help="Write the graph, with each tensor's value and gradient, to FILE: Graphviz DOT "
                                      "text, or FILE.svg, .png, .pdf rendered by Graphviz's dot when installed.")] = None,
    explain: Explain = False, full: Full = False, check: Check = None, rtol: Rtol = None, atol: Atol = None,
    exact: Exact = False,
    max_elements: MaxElements = DEFAULT_MAX_ELEMENTS, max_steps: MaxSteps = DEFAULT_MAX_STEPS,
    timeout: Timeout = DEFAULT_TIMEOUT, max_memory: MaxMemory = DEFAULT_MAX_MEMORY_TEXT, debug: Debug = False,
) -> None:
    """Run PROGRAM on the inputs, backpropagate from its output and show every gradient."""
    with guarded(as_json, debug), budgeted(timeout, max_memory):
        from gradcli.errors import ArgumentError
        from gradcli.program.evaluation import evaluate
        from gradcli.jsonable import result_json
        from gradcli.views.render import graph_tree, result_view
        program, names = program_inputs(program, inputs, input_option)
        wanted = split_names(wrt)
        check_mode(check, rtol, atol, exact)
        recorder = None
        if explain:
            from gradcli.program.recorder import Recorder
            recorder = Recorder()
        with running(as_json):
            result = evaluate(program, names, grad=grad, of=of, seed=seed, dtype=dtype, max_elements=max_elements,
                              max_steps=max_steps, timeout=timeout, trace=recorder)
        require_known_inputs(wanted, result.leaves)  # the inputs, and the leaves the program made
        if check is not None and result.gradient is None:
            lines = ", ".join(map(str, result.own_backward))
            raise ArgumentError(f"--check: the program's own backward (line {lines}) is not one call on its output, "
                                "so eval cannot say which derivative .grad holds",
                                hint="gradcli run --check checks each backward call of a script on its own")
        report = _run_check(result, check, rtol, atol, exact, seed, wanted) if check is not None else None
        if as_json:
            payload = result_json(result, wanted)
            if recorder is not None:
                payload["explain"] = recorder.to_json()
            emit_json_with_check(payload, report)
        else:
            out = console()
            out.print(result_view(result, wanted, full))
            if graph:
                out.print(graph_tree(result.output, result.leaves, result.output_name))
            if recorder is not None:
                from gradcli.views.explain import explain_view
                out.print(explain_view(recorder, result.leaves, result.env))
            print_check(report)
        if dot is not None:
            from gradcli.views.graphviz import export_dot
            from rich.text import Text
            console(stderr=True).print(Text(export_dot(result, dot)))
        exit_if_failed(report)


def _run_check(result: Result, mode: str, rtol: float | None, atol: float | None, exact: bool, seed: int,
               wanted: list[str] | None) -> CheckReport:
    """Check the gradients `eval` reports (only `--wrt`'s, when given) against their own backward."""
    from gradcli.check import check_gradients
    leaves = {n: t for n, t in result.leaves.items() if not wanted or n in wanted}
    computed = {n: result.grads[n] for n in leaves}
    return checked(lambda progress: check_gradients(result.output, leaves, result.gradient, computed, mode=mode,
                                                    rtol=rtol, atol=atol, exact=exact, seed=seed,
                                                    progress=progress, of=result.output_name))
