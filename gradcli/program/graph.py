"""The recorded graph read after the fact: the nodes and leaves behind an output, and their names.

`run --check`, `--dot`, `--explain` and the checker all start from an output and need the same
two things: what it was computed from, and what the program called those tensors (the engine
never knows). The walk reads only `Node.inputs`, which survives backward, and keeps its own
stack: a `while` loop can chain nodes far deeper than Python's recursion limit.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gradcli.engine.tensor import Node, Tensor


def graph_nodes(output: Tensor) -> tuple[list[Node], list[Tensor]]:
    """The nodes `output` depends on, in creation order, and the leaves requiring grad it reaches, as met.

    Creation order (`Node.seq`) is an order in which every node comes after its inputs, so a
    caller can replay the graph front to back. A leaf output has no nodes and is its own leaf.
    """
    root = output.grad_fn
    if root is None:
        return [], [output] if output.requires_grad else []
    nodes: list[Node] = [root]
    leaves: list[Tensor] = []
    seen: set[int] = {id(root)}
    stack: list[Node] = [root]
    while stack:
        for x in stack.pop().inputs:
            if id(x) in seen:
                continue
            if type(x) is Node:
                seen.add(id(x))
                nodes.append(x)
                stack.append(x)
            elif type(x) is Tensor and x.requires_grad:
                seen.add(id(x))
                leaves.append(x)
    nodes.sort(key=lambda n: n.seq)
    return nodes, leaves


def leaf_names(leaves: Sequence[Tensor], names: Mapping[str, Any]) -> dict[str, Tensor]:
    """`leaves` by the first name `names` binds each to, a module's parameters by their `named_parameters()`
    names; `leaf0`, `leaf1`, ... for the others.

    A leaf made inside an expression (`x * ones(2, requires_grad=True)`) has no name of its own,
    but a check reports it by one; the made-up names skip every name in `names`, so they never
    hide a program's variable. Named leaves come first, in the order of `names`.
    """
    wanted = {id(leaf) for leaf in leaves}
    named: dict[str, Tensor] = {}
    seen: set[int] = set()
    for name, value in names.items():
        if isinstance(value, Tensor) and id(value) in wanted and id(value) not in seen:
            named[name] = value
            seen.add(id(value))
    for qualified in (False, True):  # a module's parameters by named_parameters(): `fc1.weight`, else `model.fc1.weight`
        for owner, value in names.items():
            for name, p in module_parameters(value):
                name = f"{owner}.{name}" if qualified else name
                if id(p) in wanted and id(p) not in seen and name not in named and name not in names:
                    named[name] = p
                    seen.add(id(p))
    counter = 0
    for leaf in leaves:
        if id(leaf) in seen:
            continue
        while f"leaf{counter}" in names or f"leaf{counter}" in named:
            counter += 1
        named[f"leaf{counter}"] = leaf
        seen.add(id(leaf))
    return named


def module_parameters(value: Any) -> list[tuple[str, Tensor]]:
    """An `nn.Module`'s `named_parameters()`, by gradcli's own method (a program's override never runs here)."""
    for base in type(value).__mro__:
        if base.__name__ == "Module" and base.__module__.startswith("gradcli."):
            return list(base.named_parameters(value))
    return []


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


def label(name: str, index: tuple[int, ...]) -> str:
    """How gradcli names one element everywhere it shows one: `x[0,1]`, or `x` for a 0-d tensor."""
    return f"{name}[{','.join(map(str, index))}]" if index else name
