"""The meaning of a program's `autograd.Function`: its forward's own primitives, replayed in SymPy.

Under `--check` the engine records what a Function's forward did (`engine.function.RECORD_FORWARD`),
over stand-ins of its inputs. Here those recorded nodes are rebuilt with their ops' SymPy meanings,
the stand-ins replaced by the expressions reaching the Function's node, so the derivative SymPy
takes is the forward's, and the program's `backward` is what gets compared with it, never reused.
A forward that read values out of its tensors (`.numpy()`, `.item()`, `.tolist()`, `torch.tensor(t)`:
`tensor.READS`) has no meaning here: the check falls back to finite differences of the forward. An
output made by no recorded primitive is an input returned as it is, or a constant (its derivative 0).
Inside a recorded forward `detach()`, `.data` and `no_grad` are identities (`ops.SEEN_THROUGH`), as
they are for the math of a forward PyTorch runs with gradients off. A kink inside the forward (its
clamp at 0, a tie in its maximum) is found at the values the forward ran on and reported to the
replay (`Meaning.inner_kink`), so the program's own convention there is undefined, not a failure.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.check.kinks import KINKS
from gradcli.engine.tensor import Node, Tensor, forward_nodes


def replay_forward(meaning: Any, state: Any, args: tuple) -> Any:
    """The Function's output (its differentiable outputs packed flat, when several) as SymPy expressions."""
    from gradcli.check.meaning import TooLarge  # SymPy is imported only when a symbolic check runs
    name = state.cls.__name__
    if state.recorded is None:
        raise TooLarge(f"the forward of {name} was not recorded")
    stand_ins, outputs = state.recorded
    if state.read_out:
        raise TooLarge(f"the forward of {name} reads values out of the graph (.item(), .tolist(), .numpy() or "
                       "torch.tensor(t)), which SymPy would take for constants")
    given = {id(s): a for s, a in zip(stand_ins, args) if isinstance(s, Tensor)}
    values: dict[int, Any] = {}

    def resolve(x: Any) -> Any:
        if type(x) is Node:
            return values[id(x)]
        if type(x) is Tensor and id(x) in given:
            return given[id(x)]
        return meaning.constant(x._data if type(x) is Tensor else x)

    numbers: dict[int, Any] = {}

    def number(x: Any) -> Any:
        """A value as the forward computed it (its stand-ins hold the call's inputs): where kinks are found."""
        if type(x) is Node:
            return numbers[id(x)]
        return x._data if type(x) is Tensor else x

    for node in forward_nodes([node for _, node in outputs if node is not None]):
        args_here = [resolve(x) for x in node.inputs]
        values[id(node)] = meaning.as_array(node.op.sym(meaning, *args_here, **node.params))
        if meaning.inner_kink is None:
            continue
        given_numbers = [number(x) for x in node.inputs]
        with np.errstate(all="ignore"):
            numbers[id(node)] = np.asarray(node.op.forward(*given_numbers, **node.params))
        if node.op.kink is not None:
            mask = np.asarray(node.op.kink(KINKS, *given_numbers, **node.params), dtype=bool)
            if mask.any():
                meaning.inner_kink(name, node, args_here, mask, values[id(node)])
    parts = [resolve(o if node is None else node) for o, node in outputs]
    return parts[0] if len(parts) == 1 else np.concatenate([p.ravel() for p in parts])

