"""The recorded graph as the checker reads it: nodes in creation order, leaves by name, samples.

Both witnesses (SymPy and finite differences) start here. Only `Node.op`, `inputs` and `params`
are read, which survive backward (it frees `Node.saved` alone), so a check may run before or
after the backward call it verifies.
"""
from __future__ import annotations

import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.program.graph import graph_nodes, label, leaf_names
from gradcli.engine.tensor import Node, Tensor, _wrap

Progress = Callable[[int, int], None]
"""Called with (done, total) as a check goes, so a caller can draw a bar; the checker never prints."""


@dataclass(frozen=True)
class Cut:
    """A tensor whose gradient a hook changed: below it, autograd's chain rule starts from `gradient`.

    Both witnesses hold the tensor at `held` (its value) for everything computed from it, and add
    Σ gradient·tensor to what they differentiate: exactly the gradient autograd propagates. A hook
    on the node itself (`grad_fn.register_hook`) that replaced what it passed to its inputs sets
    `inputs` instead (one gradient per input, None where it passed none): Σ gradientᵢ·inputᵢ.
    """

    held: np.ndarray
    gradient: np.ndarray | None
    line: int | None
    inputs: tuple[np.ndarray | None, ...] = ()

    def pairs(self, own: Any, inputs: list[Any]) -> list[tuple[Any, np.ndarray]]:
        """(value, gradient) of each term added, from the tensor's own value and its node's input values."""
        if self.gradient is not None:
            return [(own, self.gradient)]
        return [(x, g) for x, g in zip(inputs, self.inputs) if g is not None]


CUT = "cut"
"""A replay's key (with the node) for a hooked tensor's own value, while its consumers see it held."""


@dataclass(frozen=True)
class Trace:
    """What one output was computed from, and the hooked tensors (`cuts`) where a hook changed its gradient."""

    output: Tensor
    nodes: tuple[Node, ...]
    leaves: dict[str, Tensor]
    cuts: dict[Node, Cut] = field(default_factory=dict)

    def resolve(self, x: Any, values: dict[Any, Any]) -> Any:
        """An input slot's value: from `values` (keyed by Node, and by id for leaves), else its data."""
        if type(x) is Node:
            return values[x]
        if type(x) is Tensor:
            return values.get(id(x), x._data)
        return x

    @property
    def root(self) -> Node | Tensor:
        """The output's node, or the output itself when it is a leaf."""
        return self.output.grad_fn if self.output.grad_fn is not None else self.output


def _valid(name: str) -> bool:
    """An identifier, or a dotted path of identifiers and indices (a module's parameter: `fc1.weight`, `0.bias`)."""
    parts = name.split(".")
    return all(part.isidentifier() and not keyword.iskeyword(part) or len(parts) > 1 and part.isdigit()
               for part in parts)


def trace(output: Tensor, leaves: dict[str, Tensor]) -> Trace:
    """The graph behind `output`, with `leaves` by their names and every other leaf it reaches.

    Leaves that require grad but were not named get `leaf0`, `leaf1`, ... in the order met.
    """
    for name, t in leaves.items():
        if not _valid(name):
            raise ValueError(f"leaf name {name!r} is not an identifier")
        if not isinstance(t, Tensor) or t.grad_fn is not None or not t.requires_grad:
            raise ValueError(f"{name!r} is not a leaf tensor that requires grad")
    nodes, reached = graph_nodes(output)
    return Trace(output, tuple(nodes), {**leaves, **leaf_names(reached, leaves)})


def rooted_at(output: Tensor, inputs: list[Tensor]) -> tuple[Tensor, list[Tensor]] | None:
    """`output`'s graph with each non-leaf of `inputs` made a leaf: what `autograd.grad(output, h)` by an
    intermediate h differentiates (a saliency map's input, a hidden activation).

    The nodes that read h are copied to read a fresh leaf holding h's value instead (the recorded
    graph stays as it was), so both witnesses replay the function of h alone. None when `output` is
    one of the inputs, or an input is not on its graph.
    """
    stand: dict[Node, Tensor] = {}
    leaves = []
    for x in inputs:
        if x.grad_fn is None:
            leaves.append(x)
            continue
        leaf = _wrap(x._data)
        leaf.requires_grad = True
        stand[x.grad_fn] = leaf
        leaves.append(leaf)
    root = output.grad_fn
    if root is None or root in stand:
        return None
    nodes, _ = graph_nodes(output)
    if not set(stand) <= set(nodes):
        return None
    copies: dict[Node, Node] = {}
    for node in nodes:
        inputs_now = tuple(stand.get(x, copies.get(x, x)) if type(x) is Node else x for x in node.inputs)
        if any(a is not b for a, b in zip(inputs_now, node.inputs)):
            copy = object.__new__(Node)
            for slot in Node.__slots__:
                if slot != "__weakref__" and hasattr(node, slot):
                    setattr(copy, slot, getattr(node, slot))
            copy.inputs = inputs_now
            copies[node] = copy
    out = _wrap(output._data)
    out._node, out.requires_grad = copies.get(root, root), True
    return out, leaves


def elements(name: str, shape: tuple[int, ...], flat: np.ndarray) -> list[tuple[str, tuple[int, ...]]]:
    """(label, index) of each element at the flat indices `flat`."""
    out = []
    for k in flat:
        index = tuple(int(i) for i in np.unravel_index(k, shape))
        out.append((label(name, index), index))
    return out


def select(size: int, budget: int, sample: int, seed: int) -> np.ndarray:
    """Flat indices to check: all of them within the budget, else a seeded sorted sample."""
    if size <= budget:
        return np.arange(size)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(size, size=min(sample, size), replace=False))


def as_float64(value: Any, shape: tuple[int, ...], missing: float) -> np.ndarray:
    """A gradient (array, Tensor or number) as float64 of `shape`, the one dtype both witnesses compare in.

    None fills the shape with `missing`: a backward call that reached no leaf added zeros, and a
    backward started without a gradient started from ones.
    """
    if value is None:
        return np.full(shape, missing)
    if isinstance(value, Tensor):
        value = value._data
    return np.broadcast_to(np.asarray(value, dtype=np.float64), shape)


PRODUCTS = ("matmul", "addmm")
DENSE = (*PRODUCTS, "convolution")
"""Ops through which one input element reaches many output terms."""


def terms_estimate(tr: Trace) -> int:
    """Terms a replay would build, from the graph's shapes alone: a matrix product's output elements
    times its inner dimension, a convolution's times its kernel's size over the input channels of a
    group (its weight's elements per output channel), one per element for any other op. Decided before any witness starts,
    so a matmul-heavy net goes straight to the witnesses that can answer; also what one forward
    replay costs, for finite differences."""
    total = 0
    for node in tr.nodes:
        size = int(np.prod(node.shape, dtype=np.int64))
        if node.op.name in PRODUCTS:
            first = node.inputs[1] if node.op.name == "addmm" else node.inputs[0]
            size *= int(first.shape[-1]) if len(first.shape) else 1
        elif node.op.name == "convolution":
            size *= int(np.prod(node.inputs[1].shape[1:], dtype=np.int64))
        total += size
    return total


ALONG = ("softmax", "log_softmax", "layer_norm", "logsumexp")
"""Ops whose every output element is made of the whole slice it normalizes (exp(xᵢ)/Σⱼexp(xⱼ))."""


def tree_estimate(tr: Trace) -> float:
    """The largest output element's expression counted as a tree: each element holds, for each input, its
    fan-in times that input's own tree (a product's inner dimension, a reduction's reduced elements, a
    softmax's or a layer norm's slice). A replay shares subexpressions, so `terms_estimate` counts it
    right, but some of SymPy's walks (its ordering of Max's arguments, powers, assumptions) count trees:
    a one-layer transformer encoder of 990 terms nests attention, two layer norms and a ReLU into trees
    of tens of millions of nodes, and SymPy spent minutes on it where the terms alone looked small."""
    width: dict[Node, float] = {}
    for node in tr.nodes:
        out = max(int(np.prod(node.shape, dtype=np.int64)), 1)
        total = 1.0
        for k, x in enumerate(node.inputs):
            if type(x) not in (Node, Tensor):
                continue
            size = int(np.prod(x.shape, dtype=np.int64))
            if node.op.name in PRODUCTS:
                first = node.inputs[1] if node.op.name == "addmm" else node.inputs[0]
                fan = int(first.shape[-1]) if len(first.shape) and not (node.op.name == "addmm" and k == 0) else 1
            elif node.op.name == "convolution":
                fan = int(np.prod(node.inputs[1].shape[1:], dtype=np.int64)) if k < 2 else 1
            elif node.op.name in ALONG and k == 0:
                fan = int(np.prod(node.shape[-1:], dtype=np.int64)) * 2
            else:
                fan = max(size // out, 1)
            total += fan * width.get(x, 1.0) if type(x) is Node else fan
        width[node] = total
    return max(width.values(), default=1.0)


def downstream(tr: Trace, keys: set[int]) -> set[Node]:
    """The nodes whose values depend on the leaves with these ids: all a replay with them moved recomputes."""
    reached: set[Node] = set()
    for node in tr.nodes:
        if any(x in reached if type(x) is Node else type(x) is Tensor and id(x) in keys for x in node.inputs):
            reached.add(node)
    return reached


def widened(x: Any) -> Any:
    """A value as a float64 replay computes with it: a float array or scalar in float64, anything else as it is."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype != np.float64:
        return x.astype(np.float64)
    if isinstance(x, np.floating):
        return float(x)
    return x
