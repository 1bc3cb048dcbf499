"""PyTorch's documented saved tensors on a node (`y.grad_fn._saved_self`, `_saved_result`, ...).

Only the names listed here exist, and only on the nodes PyTorch gives them to: a tutorial that
inspects what a node keeps for backward sees the same values, None where the node keeps nothing
(as PyTorch does for an input that needs no gradient), and PyTorch's error once backward freed them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import RELEASED, Node, Tensor, _on_graph, _wrap
from gradcli.errors import BackwardError, NameLookupError

RESULT = -1
_SELF_OTHER = {"_saved_self": 0, "_saved_other": 1}
_SELF = {"_saved_self": 0}
_RESULT = {"_saved_result": RESULT}
BY_NODE: dict[str, dict[str, int]] = {
    "MulBackward0": _SELF_OTHER, "DivBackward0": _SELF_OTHER,
    "ExpBackward0": _RESULT, "TanhBackward0": _RESULT, "SigmoidBackward0": _RESULT, "ReluBackward0": _RESULT,
    "SqrtBackward0": _RESULT, "LogBackward0": _SELF, "SinBackward0": _SELF, "CosBackward0": _SELF,
    "PowBackward0": {"_saved_self": 0, "_saved_exponent": 1},
    "PowBackward1": {"_saved_self": 0, "_saved_exponent": 1, "_saved_result": RESULT},
    "MmBackward0": {"_saved_self": 0, "_saved_mat2": 1}, "DotBackward0": {"_saved_self": 0, "_saved_tensor": 1},
}
NAMES = frozenset(name for slots in BY_NODE.values() for name in slots)


def saved_attribute(node: Node, name: str) -> Any:
    from gradcli.engine.backward import FREED
    slots = BY_NODE.get(node.name, {})
    if name not in slots:
        raise NameLookupError(f"'{node.name}' object has no attribute '{name}'",
                              hint=f"{node.name} keeps " + (", ".join(sorted(slots)) if slots else "no saved tensors"))
    if node.saved is None:
        raise BackwardError(FREED, hint="pass retain_graph=True to backward to keep the saved values")
    where = slots[name]
    if where == RESULT:
        return None if node.saved_out is None else _on_graph(node.saved_out, node)
    x = node.inputs[where]
    value = x if node.saved is RELEASED else node.saved[where]
    if type(x) is not Node and type(x) is not Tensor:
        return x if name == "_saved_exponent" else _wrap(np.asarray(x))
    if type(value) is not np.ndarray:
        return None  # the node keeps nothing for this input (its gradient is not needed)
    if type(x) is Node:
        return _on_graph(value, x)
    if value is x._data:  # the input itself, unchanged: PyTorch hands back the very tensor (`_saved_self is x`)
        return x
    copy = _wrap(value)
    copy.requires_grad = x.requires_grad
    return copy
