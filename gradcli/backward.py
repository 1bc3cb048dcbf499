"""The backward pass: PyTorch's engine in a page.

Iterative on purpose: a `while` loop can build a 100,000-node chain, far past Python's
recursion limit. Nodes run in decreasing creation order (as PyTorch's engine does), each once all
its consumers have passed their gradient; pending gradients are dropped as soon as they are used.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Sequence

import numpy as np

from gradcli import ops as O
from gradcli.errors import BackwardError
from gradcli.tensor import RELEASED, GradMode, Node, Tensor, _wrap

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
         "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
         "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second "
         "time or if you need to access saved tensors after calling backward.")

Trace = Callable[[Node, Any, tuple], None]


def initial_gradient(output: Tensor, gradient: Any, index: int = 0) -> Any:
    """The gradient backward starts from, validated the way PyTorch does."""
    if gradient is None:
        if output._data.size != 1:
            shape = tuple(output.shape)
            ones = "ones(" + ", ".join(map(str, shape)) + ")"
            raise BackwardError(
                "grad can be implicitly created only for scalar outputs",
                hint=f"the output has shape {shape}: pass a gradient of that shape, e.g. "
                     f"y.backward(torch.{ones}) (gradcli eval: --grad \"{ones}\"), or reduce it to one "
                     f"number first, e.g. y.sum().backward()")
        return np.ones(output.shape, dtype=output.dtype)
    from gradcli.functions import as_tensor
    g = as_tensor(gradient)
    if g.shape != output.shape:
        raise BackwardError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {str(g.shape)} and output[{index}] "
            f"has a shape of {str(output.shape)}.",
            hint=f"the gradient must have exactly the output's shape {str(output.shape)}")
    if g.dtype != output.dtype:
        return g._data.astype(output.dtype)
    return g._data if not g.requires_grad else g


def run_backward(outputs: Sequence[Tensor], gradients: Sequence[Any], retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Sequence[Tensor] | None = None,
                 trace: Trace | None = None) -> list | None:
    """Propagate gradients from `outputs` to the leaves.

    With `inputs`, gradients for exactly those tensors are returned instead of accumulated into
    `.grad` (the functional `grad`). `trace`, when given, sees each node's incoming gradient and
    what it passed to each input (for `--explain`); it never changes the result.
    """
    if retain_graph is None:
        retain_graph = create_graph
    roots: list[tuple[Tensor, Any]] = []
    for i, (out, g) in enumerate(zip(outputs, gradients)):
        if not isinstance(out, Tensor) or not out.requires_grad:
            raise BackwardError(
                f"element {i} of tensors does not require grad and does not have a grad_fn",
                hint="create the input with requires_grad=True (e.g. torch.ones(2, 2, requires_grad=True)) "
                     "and compute the output from it")
        g0 = initial_gradient(out, g, i)
        if create_graph and not isinstance(g0, Tensor):
            g0 = _wrap(g0)
        roots.append((out, g0))

    wanted: dict[int, int] | None = None
    found: list[Any] = []
    if inputs is not None:
        wanted = {}
        for k, t in enumerate(inputs):
            wanted[id(t._node) if t._node is not None else id(t)] = k
        found = [None] * len(inputs)

    previous = GradMode.enabled
    GradMode.enabled = create_graph
    ns = _tensor_namespace() if create_graph else O.NUMPY
    try:
        _propagate(roots, ns, retain_graph, create_graph, wanted, found, trace)
    finally:
        GradMode.enabled = previous
    return found if inputs is not None else None


def _tensor_namespace() -> Any:
    from gradcli import functions
    return functions


def _accumulate(leaf: Tensor, g: Any, create_graph: bool) -> None:
    """Add into `.grad` as PyTorch does: in place when it can, a fresh graph node under create_graph."""
    if type(g) is Tensor:
        leaf.grad = g if leaf.grad is None else leaf.grad + g
        return
    if g.dtype != leaf._data.dtype:
        g = g.astype(leaf._data.dtype)
    if leaf.grad is None:
        if g.base is not None or not g.flags.writeable or g.shape != leaf._data.shape:
            g = np.array(np.broadcast_to(g, leaf._data.shape))
        leaf.grad = _wrap(g)
    elif leaf.grad.requires_grad or not leaf.grad._data.flags.writeable:
        leaf.grad = _wrap(leaf.grad._data + g)
    else:
        leaf.grad._data += g


def _propagate(roots: list, ns: Any, retain_graph: bool, create_graph: bool, wanted: dict | None,
               found: list, trace: Trace | None) -> None:
    pending: dict[Node, Any] = {}
    dependencies: dict[Node, int] = {}
    heap: list[tuple[int, int, Node]] = []
    stack: list[Node] = []
    for out, g in roots:
        node = out._node
        if node is None:
            _deliver(out, g, wanted, found, create_graph)
            continue
        pending[node] = g if node not in pending else pending[node] + g
        if node not in dependencies:
            dependencies[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        for x in node.inputs:
            if type(x) is Node:
                if x in dependencies:
                    dependencies[x] += 1
                else:
                    dependencies[x] = 1
                    stack.append(x)
    for node in pending:
        if dependencies[node] == 0:
            heapq.heappush(heap, (-node.seq, id(node), node))

    while heap:
        node = heapq.heappop(heap)[2]
        g = pending.pop(node)
        op = node.op
        saved = node.saved
        if saved is None:
            raise BackwardError(FREED, hint="pass retain_graph=True to the first backward call, or rebuild the "
                                            "graph (recompute the output) before calling backward again")
        if node.retained is not None:
            kept = node.retained()
            if kept is not None:
                _accumulate(kept, g, create_graph)
        if wanted is not None and id(node) in wanted:
            k = wanted[id(node)]
            found[k] = g if found[k] is None else found[k] + g
        if saved is RELEASED:
            args = node.inputs
            out = None
        elif create_graph:
            args = saved[:-1]
            out = saved[-1]
        else:
            args = [x._data if type(x) is Tensor else x for x in saved[:-1]]
            out = saved[-1]._data if saved[-1] is not None else None
        vjps = op.vjps
        passed = [] if trace is not None else None
        for i, x in enumerate(node.inputs):
            tx = type(x)
            if tx is Node:
                pass
            elif tx is Tensor and x.requires_grad:
                pass
            else:
                if passed is not None:
                    passed.append(None)
                continue
            gi = vjps[i](ns, g, out, *args, **node.params)
            gi = O.unbroadcast(ns, gi, x.shape)
            if passed is not None:
                passed.append(gi)
            if tx is Node:
                if x in pending:
                    pending[x] = pending[x] + gi
                else:
                    pending[x] = gi
                dependencies[x] -= 1
                if dependencies[x] == 0:
                    heapq.heappush(heap, (-x.seq, id(x), x))
            else:
                _deliver(x, gi, wanted, found, create_graph)
        if trace is not None:
            trace(node, g, tuple(passed))
        if not retain_graph and saved is not RELEASED:
            node.saved = None


def _deliver(leaf: Tensor, g: Any, wanted: dict | None, found: list, create_graph: bool) -> None:
    if wanted is None:
        _accumulate(leaf, g, create_graph)
    elif id(leaf) in wanted:
        k = wanted[id(leaf)]
        found[k] = g if found[k] is None else found[k] + g
