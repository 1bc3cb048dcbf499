"""What backward did, recorded step by step as it ran, for `--explain` and `--dot` to show.

`Recorder` is the engine's `trace` callback. It summarises each gradient the moment it sees it,
because the engine may later add into the very same array in place (accumulation into `.grad`),
and it keeps the nodes so that inputs can be named afterwards: the engine never knows the names a
program used. Nothing here renders: `gradcli.views.explain` turns the steps into a table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.jsonable import number
from gradcli.engine.tensor import Node

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

    def __call__(self, node: Node, incoming: Any, passed: tuple, summed: tuple) -> None:
        passes = tuple(Passed(x, None, ()) if g is None else Passed(x, summarize(g), axes)
                       for x, g, axes in zip(node.inputs, passed, summed))
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
