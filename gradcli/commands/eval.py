"""`gradcli eval PROGRAM [NAME=SPEC ...]`: one program, one backward, gradient tables."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from gradcli.commands.common import (check_mode, checked, collect_inputs, console, emit_json_with_check,
                                     exit_if_failed, guarded, print_check, require_known_inputs, split_names)

if TYPE_CHECKING:
    from gradcli.check.report import CheckReport
    from gradcli.program.evaluation import Result


def eval_command(
    program: str = typer.Argument(..., help="The program, e.g. 'y = x + 2; out = (y*y*3).mean()'."),
    inputs: Optional[list[str]] = typer.Argument(None, help="Inputs as NAME=SPEC, e.g. x=ones(2,2), w=@w.npy."),
    input_option: Optional[list[str]] = typer.Option(None, "--input", "-i", help="An input NAME=SPEC (repeatable)."),
    of: Optional[str] = typer.Option(None, "--of", help="Differentiate this variable instead of the last value."),
    grad: Optional[str] = typer.Option(None, "--grad", "-g", help="Gradient for a non-scalar output: ones, "
                                                                  "[0.1, 1.0, 0.0001], ..."),
    wrt: Optional[str] = typer.Option(None, "--wrt", help="Report only these inputs, e.g. --wrt x,w."),
    seed: int = typer.Option(0, "--seed", help="Seed for rand/randn."),
    dtype: str = typer.Option("float64", "--dtype", help="float64 or float32."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    graph: bool = typer.Option(False, "--graph", help="Show the autograd graph as a tree."),
    dot: Optional[str] = typer.Option(None, "--dot", help="Write the graph as Graphviz DOT (.dot, .svg, .png)."),
    explain: bool = typer.Option(False, "--explain", help="Show the backward pass step by step."),
    full: bool = typer.Option(False, "--full", help="Do not summarise large tensors."),
    check: Optional[str] = typer.Option(None, "--check", help="Verify the gradients: symbolic (SymPy, the "
                                                              "default), numeric (finite differences) or all."),
    rtol: Optional[float] = typer.Option(None, "--rtol", help="Relative tolerance of --check."),
    atol: Optional[float] = typer.Option(None, "--atol", help="Absolute tolerance of --check."),
    exact: bool = typer.Option(False, "--exact", help="Evaluate SymPy's derivatives exactly, not in float64."),
    max_elements: int = typer.Option(50_000_000, "--max-elements", help="Largest tensor allowed (elements)."),
    max_steps: int = typer.Option(1_000_000, "--max-steps", help="Most loop iterations allowed in total."),
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks."),
) -> None:
    """Run PROGRAM on the inputs, backpropagate from its output and show every gradient."""
    with guarded(as_json, debug):
        from gradcli.program.evaluation import evaluate
        from gradcli.jsonable import result_json
        from gradcli.views.render import graph_tree, result_view
        names = collect_inputs(inputs, input_option)
        wanted = split_names(wrt)
        check_mode(check)
        require_known_inputs(wanted, names)
        recorder = None
        if explain:
            from gradcli.program.recorder import Recorder
            recorder = Recorder()
        result = evaluate(program, names, grad=grad, of=of, seed=seed, dtype=dtype, max_elements=max_elements,
                          max_steps=max_steps, trace=recorder)
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
                                                    progress=progress))
