"""Gradients a program differentiates again: each `create_graph` result by what it means, not how it was made.

A backward (or `autograd.grad`) with `create_graph=True` records its VJPs as a graph, and a later
backward differentiates that graph. Replaying those VJPs would judge the second derivative
against the first backward's own arithmetic: a custom `backward` that is right once but wrong when
differentiated again (it returns `g * d` with `d` saved, so d's dependence on x is lost) would
agree with itself. So the checker learns, at each checked `create_graph` call, which node holds
∂(Σ w·y)/∂x (`register`), and SymPy's replay gives that node the derivative of y's replayed
forward instead (`replay.replay`). Finite differences replay the recorded graph as it is: there the
gradient is taken as autograd computed it, and the report says so (`note`).

NumPy only: the registry is read by the SymPy replay and written by the loop policy.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from gradcli.check.report import place
from gradcli.engine.tensor import Node, Tensor


@dataclass(frozen=True)
class Derived:
    """A node whose value is ∂(Σ weights·output)/∂leaf, made by a create_graph call at `line`."""

    output: Tensor
    leaf: Tensor
    weights: np.ndarray
    line: int | None
    what: str


_DERIVED: "weakref.WeakKeyDictionary[Node, Derived]" = weakref.WeakKeyDictionary()


def register(gradient: Tensor | None, output: Tensor, leaf: Tensor, weights: np.ndarray, line: int | None,
             what: str) -> None:
    """Note that `gradient` (a create_graph result on the graph) is ∂(Σ weights·output)/∂leaf."""
    if isinstance(gradient, Tensor) and gradient.grad_fn is not None and leaf.grad_fn is None:
        _DERIVED[gradient.grad_fn] = Derived(output, leaf, np.asarray(weights, dtype=np.float64), line, what)


def derived(node: Node) -> Derived | None:
    return _DERIVED.get(node)


def note(nodes: tuple[Node, ...] | list[Node], symbolic: bool) -> str:
    """What a report says about the create_graph results in a graph (empty when there are none)."""
    if not _DERIVED:  # the common case: no create_graph result anywhere (a lookup per node per input was 4% of a loop)
        return ""
    found = [d for d in map(derived, nodes) if d is not None]
    if not found:
        return ""
    sites = ", ".join(dict.fromkeys(d.what + ("" if d.line is None else f" at {place(d.line)}") for d in found))
    if symbolic:
        return f"the gradient made with create_graph ({sites}) is SymPy's derivative of its output's forward"
    return (f"the gradient made with create_graph ({sites}) is taken as autograd computed it; its own "
            "check is at that call")
