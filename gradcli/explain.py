"""`--explain`: the backward pass told step by step, in the order the engine runs it.

`Recorder` is the engine's `trace` callback. It summarises each gradient the moment it sees it,
because the engine may later add into the very same array in place (accumulation into `.grad`),
and it keeps the nodes so that inputs can be named afterwards: the engine never knows the names a
program used. `explain_view` turns the records into a table; nothing here prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gradcli import ops as O
from gradcli.render import number, shape_text
from gradcli.tensor import Node, Tensor

SMALL = 6


@dataclass(frozen=True)
class Passed:
    """What one node sent back to one of its inputs (`gradient` is None for a constant)."""

    target: Any
    gradient: str | None
    summed_axes: tuple[int, ...]


@dataclass(frozen=True)
class Step:
    """One node's turn in backward: the gradient it received and what it passed on."""

    node: Node
    incoming: str
    passes: tuple[Passed, ...]


class Recorder:
    """Collects one `Step` per node; pass it as `trace=` to `evaluate` or `run_backward`."""

    def __init__(self) -> None:
        self.steps: list[Step] = []

    def __call__(self, node: Node, incoming: Any, passed: tuple) -> None:
        shapes = [np.shape(x) for x in node.inputs]
        passes = tuple(
            Passed(x, None, ()) if g is None else Passed(x, summarize(g), _summed_axes(node, shapes, i))
            for i, (x, g) in enumerate(zip(node.inputs, passed)))
        self.steps.append(Step(node, summarize(incoming), passes))


def summarize(value: Any) -> str:
    """A gradient or value in a few characters: `1`, `all 0.25`, `[0.1, 1, 0.0001]`, or its range."""
    arr = np.asarray(value)
    flat = arr.reshape(-1)
    if flat.size == 1:
        return number(flat[0])
    if flat.size == 0:
        return "empty"
    if bool((flat == flat[0]).all()):
        return f"all {number(flat[0])}"
    if flat.size <= SMALL:
        return _nested(arr)
    if arr.dtype.kind == "b":
        return f"{int(flat.sum())} of {flat.size} true"
    return f"min {number(np.min(arr))} · mean {number(np.mean(arr))} · max {number(np.max(arr))}"


def _nested(arr: np.ndarray) -> str:
    if arr.ndim == 0:
        return number(arr[()])
    return "[" + ", ".join(_nested(a) for a in arr) + "]"


def _summed_axes(node: Node, shapes: list[tuple[int, ...]], i: int) -> tuple[int, ...]:
    """The axes `unbroadcast` summed away for input `i` (`ops.broadcast_axes` of the VJP's shape)."""
    gshape = _vjp_shape(node, shapes, i)
    if gshape is None or gshape == shapes[i]:
        return ()
    return O.broadcast_axes(gshape, shapes[i])


def _vjp_shape(node: Node, shapes: list[tuple[int, ...]], i: int) -> tuple[int, ...] | None:
    """The shape of input `i`'s gradient before `unbroadcast`, where broadcasting can have happened.

    Elementwise ops and expand hand back a gradient shaped like their output; matmul one with the
    output's batch axes and the input's own matrix axes. Every other op returns the input's shape.
    """
    if node.op is O.MATMUL:
        core = sum(len(s) >= 2 for s in shapes)
        own = shapes[i][len(shapes[i]) - min(len(shapes[i]), 2):]
        return node.shape[:len(node.shape) - core] + own
    if node.op is O.EXPAND:
        return node.shape
    try:
        joint = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    return node.shape if joint == node.shape else None


class ProgramNames:
    """What a program called its tensors, by identity: a leaf by its tensor, a result by its node.

    Earlier mappings win, so inputs keep their names when a variable is rebound to them.
    """

    def __init__(self, *spaces: Mapping[str, Any]) -> None:
        self.tensor: dict[int, str] = {}
        self.node: dict[int, str] = {}
        for space in spaces:
            for name, value in space.items():
                if isinstance(value, Tensor):
                    self.tensor.setdefault(id(value), name)
                    if value.grad_fn is not None:
                        self.node.setdefault(id(value.grad_fn), name)


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
    return Group(table, note)
