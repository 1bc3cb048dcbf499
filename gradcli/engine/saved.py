"""PyTorch's documented saved tensors on a node (`y.grad_fn._saved_self`, `_saved_result`, ...).

Only the names listed here exist, and only on the nodes PyTorch gives them to: a tutorial that
inspects what a node keeps for backward sees the same values, None where the node keeps nothing
(as PyTorch does for an input that needs no gradient), and PyTorch's error once backward freed them.
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator

import numpy as np

from gradcli.engine.tensor import RELEASED, Node, Observe, Tensor, _on_graph, _wrap
from gradcli.errors import BackwardError, NameLookupError

RESULT = -1
ALPHA = "alpha"
"""add's and sub's `alpha`: a parameter of the node that has one (`torch.add(a, b, alpha=2)`), else 1."""
_SELF_OTHER = {"_saved_self": 0, "_saved_other": 1}
_DIM = {"_saved_dim": "dim", "_saved_keepdim": "keepdim"}
"""Parameters a node keeps, by name (a string: read from the node's parameters, not a tensor)."""
_SELF = {"_saved_self": 0}
_RESULT = {"_saved_result": RESULT}
BY_NODE: dict[str, dict[str, int]] = {
    "MulBackward0": _SELF_OTHER, "DivBackward0": _SELF_OTHER,
    "ExpBackward0": _RESULT, "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "ReluBackward0": _RESULT,
    "SqrtBackward0": _RESULT, "LogBackward0": _SELF, "SinBackward0": _SELF, "CosBackward0": _SELF,
    "PowBackward0": {"_saved_self": 0, "_saved_exponent": 1},
    "PowBackward1": {"_saved_self": 0, "_saved_exponent": 1, "_saved_result": RESULT},
    "MmBackward0": {"_saved_self": 0, "_saved_mat2": 1}, "DotBackward0": {"_saved_self": 0, "_saved_tensor": 1},
    "AddBackward0": {"_saved_alpha": ALPHA}, "SubBackward0": {"_saved_alpha": ALPHA},
    "SumBackward1": _DIM, "MeanBackward1": _DIM,
}
NAMES = frozenset(name for slots in BY_NODE.values() for name in slots)


OUTPUTS: dict[int, tuple[weakref.ref, weakref.ref]] = {}
"""id(node) -> (the node, the tensor it made), both weakly: kept only while `identities` is on."""


def _remember(t: Tensor, op: Any, inputs: tuple, arrays: tuple, params: dict) -> None:
    node = t._node
    if node is not None:
        key = id(node)
        OUTPUTS[key] = (weakref.ref(node, lambda _, key=key: OUTPUTS.pop(key, None)), weakref.ref(t))


@contextlib.contextmanager
def identities(on: bool) -> Iterator[None]:
    """While on, each op's output is remembered by its node, so that a saved input that is itself an op's
    output comes back as that very tensor (`y.grad_fn._saved_self is m`, as PyTorch's does). Only a
    program that reads a `_saved_*` attribute turns it on; no other op pays for it."""
    if not on:
        yield
        return
    Observe.add(_remember)
    try:
        yield
    finally:
        Observe.discard(_remember)
        OUTPUTS.clear()


def _output_of(node: Node, value: np.ndarray) -> Tensor | None:
    """The live tensor `node` made, when it still holds `value` (the array the consumer saved)."""
    entry = OUTPUTS.get(id(node))
    t = entry[1]() if entry is not None and entry[0]() is node else None
    return t if t is not None and t._node is node and t._data is value else None


def _unpacked(node: Node, where: Any) -> Tensor | None:
    """A value saved under `saved_tensors_hooks` reads back through its unpack hook, as PyTorch's does."""
    from gradcli.engine.hooks import PACKED
    entry = PACKED.get(id(node))
    if entry is None or entry[0]() is not node:
        return None
    return next((entry[1](packed) for at, packed in entry[2] if at == where), None)


def saved_attribute(node: Node, name: str) -> Any:
    from gradcli.engine.backward import FREED
    slots = BY_NODE.get(node.name, {})
    if name not in slots:
        raise NameLookupError(f"'{node.name}' object has no attribute '{name}'",
                              hint=f"{node.name} keeps " + (", ".join(sorted(slots)) if slots else "no saved tensors"))
    if node.saved is None:
        raise BackwardError(FREED, hint="pass retain_graph=True to backward to keep the saved values")
    where = slots[name]
    hooked = _unpacked(node, where)
    if hooked is not None:
        return hooked
    if where == ALPHA:
        return node.params.get(ALPHA, 1)
    if isinstance(where, str):
        value = node.params[where]
        return tuple(value) if isinstance(value, (tuple, list)) else value
    if where == RESULT:
        return None if node.saved_out is None else _on_graph(node.saved_out, node)
    x = node.inputs[where]
    value = x if node.saved is RELEASED else node.saved[where]
    if type(x) is not Node and type(x) is not Tensor:
        return x if name == "_saved_exponent" else _wrap(np.asarray(x))
    if type(value) is not np.ndarray:
        return None  # the node keeps nothing for this input (its gradient is not needed)
    if type(x) is Node:
        found = _output_of(x, value)
        return found if found is not None else _on_graph(value, x)
    if value is x._data:  # the input itself, unchanged: PyTorch hands back the very tensor (`_saved_self is x`)
        return x
    copy = _wrap(value)
    copy.requires_grad = x.requires_grad
    return copy
