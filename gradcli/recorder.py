"""What backward did, recorded step by step as it ran, for `--explain` and `--dot` to show.

`Recorder` is the engine's `trace` callback. It summarises each gradient the moment it sees it,
because the engine may later add into the very same array in place (accumulation into `.grad`),
and it keeps the nodes so that inputs can be named afterwards: the engine never knows the names a
program used. Nothing here renders: `gradcli.explain` turns the steps into a table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli import ops as O
from gradcli.render import number
from gradcli.tensor import Node

SMALL = 6
"""Up to this many elements a summary lists them all."""


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

    def to_json(self) -> list[dict]:
        """The steps in run order: node, the gradient it received, what it passed to each input."""
        return [{"node": step.node.name, "gradient_in": step.incoming,
                 "passes": [p.gradient for p in step.passes], "rule": step.node.op.rule}
                for step in self.steps]


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
