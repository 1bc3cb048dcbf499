"""`--explain`: the backward pass told step by step, in the order the engine runs it.

The steps come from a `gradcli.program.recorder.Recorder` passed to backward as its `trace`;
`explain_view` turns them into a table, naming each input the way the program did. Nothing here
prints.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gradcli.program.graph import ProgramNames
from gradcli.program.recorder import SMALL, Recorder, Step, summarize
from gradcli.jsonable import number
from gradcli.views.render import shape_text
from gradcli.engine.tensor import Node, Tensor
from gradcli.views.fitted import Fitted


class _Names:
    """Labels for what a step touches: step numbers for nodes, program names where known."""

    def __init__(self, steps: list[Step], leaves: Mapping[str, Any], variables: Mapping[str, Any] | None) -> None:
        self.step_of = {id(step.node): k for k, step in enumerate(steps, 1)}
        self.known = ProgramNames(leaves, variables or {})

    def node(self, node: Node) -> str:
        name = self.known.node.get(id(node))
        return f"{node.name} ({name})" if name else node.name

    def target(self, x: Any) -> str:
        if type(x) is Node:
            k = self.step_of.get(id(x))
            return f"#{k} {self.node(x)}" if k else self.node(x)
        if isinstance(x, Tensor):
            name = self.known.tensor.get(id(x))
            if x.requires_grad:
                return name or f"leaf {shape_text(x.shape)}"
            if name:
                return f"{name} (constant)"
            return f"constant {summarize(x)}" if x.numel() <= SMALL else f"constant {shape_text(x.shape)}"
        return f"constant {number(x)}"


def _contributions(steps: list[Step]) -> dict[int, int]:
    """How many gradients each node received: more than one means backward added them up."""
    count: dict[int, int] = {}
    for step in steps:
        for p in step.passes:
            if p.gradient is not None and type(p.target) is Node:
                count[id(p.target)] = count.get(id(p.target), 0) + 1
    return count


def _axes_text(axes: tuple[int, ...]) -> str:
    word = "axis" if len(axes) == 1 else "axes"
    return f"  (broadcast: Σ over {word} {', '.join(map(str, axes))})"


def explain_view(recorder: Recorder, leaves: Mapping[str, Any],
                 variables: Mapping[str, Any] | None = None) -> RenderableType:
    """The recorded backward pass as a table in the order it ran.

    `leaves` names the inputs; `variables` (a program's environment), when given, also names the
    intermediate results (`y`, `z`) so the table reads like the program.
    """
    steps = recorder.steps
    if not steps:
        return Text("backward ran no steps: the output is an input itself, so its gradient is the one backward "
                    "started from")
    names = _Names(steps, leaves, variables)
    received = _contributions(steps)
    table = Table(title="backward, in the order it runs", title_justify="left", header_style="bold",
                  show_lines=True)
    table.add_column("#", justify="right", style="dim")
    table.add_column("node")
    table.add_column("shape")
    table.add_column("gradient in", justify="right")
    table.add_column("local rule")
    table.add_column("passes to each input")
    for k, step in enumerate(steps, 1):
        incoming = Text(step.incoming)
        if received.get(id(step.node), 0) > 1:
            incoming.append(f"\n(sum of {received[id(step.node)]})", style="dim")
        passes = Text()
        for j, p in enumerate(step.passes):
            if j:
                passes.append("\n")
            passes.append(names.target(p.target))
            if p.gradient is None:
                passes.append(": no gradient", style="dim")
            else:
                passes.append(" ← ")
                passes.append(p.gradient, style="bold")
                if p.summed_axes:
                    passes.append(_axes_text(p.summed_axes), style="yellow")
        table.add_row(str(k), Text(names.node(step.node), style="cyan"), shape_text(step.node.shape), incoming,
                      Text("\n".join(re.split(r", (?=∂)", step.node.op.rule))), passes)
    note = Text("Each node applies its local rule to the gradient it receives (the chain rule) and passes the "
                "result to its inputs; a node runs once every use of it has passed its share, and shares add up.",
                style="dim")
    return Group(Fitted(table), note)
