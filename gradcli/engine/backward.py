"""The backward pass: PyTorch's engine in a page.

Iterative on purpose: a `while` loop can build a 100,000-node chain, far past Python's
recursion limit. Nodes run in decreasing creation order (as PyTorch's engine does), each once all
its consumers have passed their gradient; pending gradients are dropped as soon as they are used.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from gradcli.engine import budget, narrow
from gradcli.engine import ops as O
from gradcli.engine.anomaly import AnomalyMode, watched
from gradcli.errors import BackwardError, ShapeError
from gradcli.engine.hooks import (HOOKS, PACKED, PASSES, POST_ACCUMULATE, POSTHOOKS, PREHOOKS, begin_pass, run_hooks,
                                  run_post_accumulate, run_posthooks, unpack_saved)
from gradcli.engine.inplace import MARKS, check_saved
from gradcli.engine.module_hooks import GROUPS, group_of
from gradcli.engine.state import RESHAPED
from gradcli.engine.tensor import (_NO_PARAMS, RELEASED, AccumulateGrad, GradMode, Node, Tensor, _wrap, apply,
                                   broadcast_shape)

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they "
         "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
         "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second "
         "time or if you need to access saved tensors after calling backward.")

Trace = Callable[[Node, Any, tuple, tuple], None]
"""`trace(node, incoming, passed, summed)`: per input, the gradient sent and the axes unbroadcast summed."""


def initial_gradient(output: Tensor, gradient: Any, index: int = 0) -> Any:
    """The gradient backward starts from, validated the way PyTorch does: an array, or the given
    Tensor when it requires grad (so that create_graph can differentiate through it)."""
    if gradient is None:
        if output._data.size != 1:
            shape = tuple(output.shape)
            ones = "ones(" + ", ".join(map(str, shape)) + ")"
            raise BackwardError(
                "grad can be implicitly created only for scalar outputs",
                hint=f"the output has shape {shape}: pass a gradient of that shape, e.g. "
                     f"y.backward(torch.{ones}), or reduce it to one number first, e.g. y.sum().backward()")
        return np.ones(output.shape, dtype=output.dtype)
    if type(gradient) is np.ndarray and gradient.shape == output.shape and gradient.dtype == output.dtype:
        return gradient
    from gradcli.engine.functions import as_tensor
    g = as_tensor(gradient)
    if g.shape != output.shape:
        raise BackwardError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {str(g.shape)} and output[{index}] "
            f"has a shape of {str(output.shape)}.",
            hint=f"the gradient must have exactly the output's shape {str(output.shape)}")
    if type(g) is not Tensor:  # batched cotangents (every row of a Jacobian at once): kept as a tensor
        return g if g.dtype == output.dtype else g.to(output.dtype)
    if g.dtype != output.dtype:
        return g._data.astype(output.dtype)
    return g._data if not g.requires_grad else g


def run_backward(outputs: Sequence[Tensor], gradients: Sequence[Any], retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Sequence[Tensor] | None = None,
                 trace: Trace | None = None) -> list | None:
    """Propagate gradients from `outputs` to the leaves.

    With `inputs`, gradients for exactly those tensors are returned instead of accumulated into
    `.grad` (the functional `grad`). `trace`, when given, sees each node's incoming gradient and
    what it passed to each input and which axes broadcasting summed away (for `--explain`); it never
    changes the result.
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
        if create_graph:
            g0 = g0 if isinstance(g0, Tensor) else _wrap(g0)
        elif type(g0) is Tensor:
            g0 = g0._data
        roots.append((out, g0))

    if AnomalyMode.enabled and AnomalyMode.check_nan:
        trace = watched(trace)
    wanted = _wanted(inputs) if inputs is not None else None
    found: list[Any] = [None] * len(inputs) if inputs is not None else []

    budget.refuse_backward([out._node for out, _ in roots if out._node is not None])
    previous = GradMode.enabled
    GradMode.enabled = create_graph
    ns = _tensor_namespace() if create_graph else O.NUMPY
    try:
        _propagate(roots, ns, retain_graph, create_graph, wanted, found, trace)
    finally:
        GradMode.enabled = previous
    return found if inputs is not None else None


def _wanted(inputs: Sequence[Tensor]) -> dict[int, int]:
    """Where each requested tensor's gradient goes: by node for an intermediate, by tensor for a leaf."""
    return {id(t._node) if t._node is not None else id(t): k for k, t in enumerate(inputs)}


def vector_jacobian_rows(output: Tensor, inputs: Sequence[Tensor], gradients: Iterator[np.ndarray]
                         ) -> Iterator[list]:
    """One backward over a retained graph per gradient, with the per-call set-up done once.

    This is `run_backward(..., retain_graph=True, inputs=inputs)` for Jacobians, whose rows are
    many small backward passes where that set-up would otherwise dominate.
    """
    wanted = _wanted(inputs)
    previous = GradMode.enabled
    GradMode.enabled = False
    try:
        for g in gradients:
            found: list[Any] = [None] * len(inputs)
            _propagate([(output, g)], O.NUMPY, True, False, wanted, found, None)
            yield found
    finally:
        GradMode.enabled = previous


def _tensor_namespace() -> Any:
    from gradcli.engine import functions
    return functions


def _accumulate(leaf: Tensor, g: Any, owned: bool, create_graph: bool) -> None:
    """Add into `.grad` as PyTorch does: in place when it can, a fresh graph node under create_graph.

    A first gradient is adopted without a copy only when it is `owned`: made by a VJP for this
    input alone. A gradient passed through unchanged (by add, expand, ...) may also be another
    input's, or the caller's; adopting it would let two `.grad`s share memory.
    """
    if RESHAPED:
        _same_shape(leaf)
    if type(g) is Tensor:
        if leaf.grad is not None:
            leaf.grad = leaf.grad + g
        elif g.requires_grad:
            leaf.grad = apply(O.CLONE, g, name="CopyBackwards")
        else:
            leaf.grad = _wrap(np.array(g._data, subok=True))
        return
    if not narrow.same(g.dtype, leaf._data.dtype) or narrow.unrounded(g, leaf._data.dtype):
        g = narrow.astype(g, leaf._data.dtype)
        owned = True
    grad = leaf.grad
    if grad is None:
        if not owned or type(g) is not np.ndarray or g.base is not None or not g.flags.writeable:
            g = np.array(g, subok=True)
        leaf.grad = _wrap(g)
    elif grad.requires_grad or not grad._data.flags.writeable:
        leaf.grad = _wrap(grad._data + g)
    else:
        grad._data += g


def _same_shape(leaf: Tensor) -> None:
    """A leaf whose `.grad` is of the shape its `.data` had before `x.data = ...` gave it another: PyTorch's
    error, never a gradient broadcast into place."""
    shape = tuple(leaf._data.shape)
    old = tuple(leaf.grad.shape) if leaf.grad is not None else shape
    if old != shape:
        try:
            broadcast_shape("accumulating the gradient", old, shape)
            message = f"output with shape {list(old)} doesn't match the broadcast shape {list(shape)}"
        except ShapeError as clash:
            message = clash.message
        raise BackwardError(message, hint="set x.grad = None after giving x.data a new shape")


def _propagate(roots: list, ns: Any, retain_graph: bool, create_graph: bool, wanted: dict | None,
               found: list, trace: Trace | None) -> None:
    """Run the nodes that have a gradient in decreasing creation order, as PyTorch's engine does.

    A node is always created after its inputs, so by the time a node has the largest sequence
    number among those waiting, every consumer that could add to its gradient has run: no
    dependency count is needed. The waiting nodes are a heap, but `_route` hands back the node to
    run next, without touching the heap, when it is the latest: every step of a chain. A leaf's
    contributions are summed first and reach `.grad` once, at the end, as PyTorch's AccumulateGrad
    receives them. Without hooks no program code runs here, so whether anything is watched can be
    decided once.
    """
    if PASSES:
        begin_pass()
    pending: dict[Node, Any] = {}
    leaves: dict[int, list] = {}
    for out, g in roots:
        if out._node is None:
            _collect(leaves, out, g, False)
        else:
            pending[out._node] = pending[out._node] + g if out._node in pending else g
    heap = [(-node.seq, node) for node in pending]
    heapq.heapify(heap)
    watched = bool(MARKS or HOOKS or PREHOOKS or POSTHOOKS or PACKED or GROUPS) or wanted is not None
    node = g = None
    while node is not None or heap:
        if node is None:
            node = heapq.heappop(heap)[1]
            g = pending.pop(node)
        if wanted is not None and node.saved is None and id(node) in wanted:
            found[wanted[id(node)]] = g  # autograd.grad stops at its input: a freed graph past it is not run
            node = None
            continue
        if watched or node.saved is None or node.retained is not None:
            g = _arrive(node, g, create_graph, wanted, found)
        done = node
        if watched and GROUPS and id(node) in GROUPS:
            node, g = _route_grouped(node, g, ns, create_graph, trace, pending, heap, leaves)
        elif watched and POSTHOOKS and id(node) in POSTHOOKS:
            node, g = _route_hooked(node, g, ns, create_graph, trace, pending, heap, leaves)
        else:
            node, g = _route(node, g, ns, create_graph, trace, pending, heap, leaves)
        if not retain_graph and done.saved is not RELEASED:
            done.saved = done.saved_out = None
    _deliver(leaves, wanted, found, create_graph)


def _arrive(node: Node, g: Any, create_graph: bool, wanted: dict | None, found: list) -> Any:
    """What meets a gradient at a node before its VJPs run: PyTorch's checks (a graph already freed,
    a saved value modified in place), the node's hooks, `retain_grad()`, and `autograd.grad`'s pick."""
    if node.saved is None:
        raise BackwardError(FREED, hint="pass retain_graph=True to the first backward call, or rebuild the "
                                        "graph (recompute the output) before calling backward again")
    if MARKS:
        check_saved(node)
    if HOOKS or PREHOOKS:
        g = run_hooks(node, g, node)
    if PACKED:
        unpack_saved(node)
    if node.retained is not None:
        kept = node.retained()
        if kept is not None:
            _accumulate(kept, g, False, create_graph)
    if wanted is not None and id(node) in wanted:
        found[wanted[id(node)]] = g
    return g


def _route(node: Node, g: Any, ns: Any, create_graph: bool, trace: Trace | None, pending: dict, heap: list,
           leaves: dict) -> tuple[Node | None, Any]:
    """Send each input the node needs its gradient, summed back to its shape where broadcasting
    widened it: a leaf collects it, a parent node waits for it in `pending`.

    Returns the parent to run next, and its gradient, when it is the latest node waiting (it then
    skips the heap); else (None, None).
    """
    inputs = node.inputs
    saved = node.saved
    if saved is RELEASED:
        args, out = inputs, None
    elif create_graph:  # the saved values as Tensors on the graph, so that the VJPs' own ops are recorded
        args, out = node.unpack()
    else:
        args, out = saved, node.saved_out
    passed: list | None = None
    if trace is not None:
        passed, summed = [None] * len(inputs), [()] * len(inputs)
    vjps, params, n = node.op.vjps, node.params, len(args)
    narrowed = narrow.SEEN and not create_graph
    if narrowed:  # PyTorch's bfloat16 backward kernels: float32 inside, one rounding per input's gradient
        g, out, args = narrow.plain(g), narrow.plain(out), tuple([narrow.plain(a) for a in args])
    nxt = nxt_g = None
    for i in node.needs:
        x = inputs[i]
        # each VJP called the cheapest way its parameters allow
        if params is not _NO_PARAMS or n > 2:
            gi = vjps[i](ns, g, out, *args, **params)
            if gi is None:  # a program's Function gave no gradient for this input (its backward returned None)
                continue
        elif n == 1:
            gi = vjps[i](ns, g, out, args[0])
        else:
            gi = vjps[i](ns, g, out, args[0], args[1])
        if narrowed and narrow.is_bfloat16(x.dtype):
            gi = narrow.as_bfloat16(gi)
        elif gi.dtype != x.dtype and x.dtype.kind == "f":  # PyTorch's engine casts to the input's dtype
            # a VJP of 0-d inputs may give NumPy's scalar (np.maximum of two 0-d arrays), never a tensor
            gi = np.asarray(gi).astype(x.dtype) if isinstance(gi, (np.ndarray, np.generic)) else \
                ns.to_dtype(gi, x.dtype)
        shape = x.shape
        if RESHAPED and type(x) is Tensor and RESHAPED.since(x) > node.seq:
            raise BackwardError(f"a tensor now of shape {list(shape)} had another shape when this graph was recorded: "
                                "its .data was given a new shape since", hint="recompute the output after replacing "
                                ".data, then call backward")
        if gi.shape != shape:
            if passed is not None:
                summed[i] = O.broadcast_axes(gi.shape, shape)
            gi = O.unbroadcast(ns, gi, shape)
        if passed is not None:
            passed[i] = gi
        if type(x) is Tensor:
            _collect(leaves, x, gi, gi is not g)
        elif x is nxt:
            nxt_g = nxt_g + gi
        elif x in pending:
            pending[x] = pending[x] + gi
        elif nxt is None:
            nxt, nxt_g = x, gi
        else:
            pending[x] = gi
            heapq.heappush(heap, (-x.seq, x))
    if trace is not None:
        trace(node, g, tuple(passed), tuple(summed))
    if nxt is None or not heap or nxt.seq > -heap[0][0]:
        return nxt, nxt_g
    pending[nxt] = nxt_g
    heapq.heappush(heap, (-nxt.seq, nxt))
    return None, None


def _route_hooked(node: Node, g: Any, ns: Any, create_graph: bool, trace: Trace | None, pending: dict, heap: list,
                  leaves: dict) -> tuple[None, None]:
    """`_route` for a node with `register_hook` hooks: its gradients are caught, shown to the hooks
    (which may replace them), then sent on as `_route` would have sent them."""
    caught_pending: dict = {}
    caught_leaves: dict = {}
    nxt, nxt_g = _route(node, g, ns, create_graph, trace, caught_pending, [], caught_leaves)
    if nxt is not None:
        caught_pending[nxt] = nxt_g
    by_input = {**{id(x): gi for x, gi in caught_pending.items()},
                **{key: entry[1] for key, entry in caught_leaves.items()}}
    listed = node.listed_inputs()
    grad_inputs = [by_input.pop(id(x), None) for x in listed]  # an input listed twice: its sum, shown once
    grad_inputs = run_posthooks(node, grad_inputs, g)
    for x, gi in zip(listed, grad_inputs):
        if gi is not None:
            _send(x, gi, pending, heap, leaves)
    return None, None


def _route_grouped(node: Node, g: Any, ns: Any, create_graph: bool, trace: Trace | None, pending: dict, heap: list,
                   leaves: dict) -> tuple[Node | None, Any]:
    """`_route` for a node of a module's backward hook: held until the last node of its group arrives, then
    the group's gradients, after the module's hooks, are sent on together (see `module_hooks`)."""
    group = group_of(node)
    if group is None:
        return _route(node, g, ns, create_graph, trace, pending, heap, leaves)
    group.hold(node, g)
    if group.waiting(pending):
        return None, None
    for member, gi, below in group.release(create_graph):
        if member is None:
            _send(below, gi, pending, heap, leaves)
            continue
        route = _route_hooked if POSTHOOKS and id(member) in POSTHOOKS else _route
        nxt, nxt_g = route(member, gi, ns, create_graph, trace, pending, heap, leaves)
        if nxt is not None:
            _send(nxt, nxt_g, pending, heap, leaves)
    return None, None


def _send(x: Any, gi: Any, pending: dict, heap: list, leaves: dict) -> None:
    """One gradient to an input: a leaf collects it, a node waits for it (on the heap)."""
    if type(x) is Tensor:
        _collect(leaves, x, gi, True)
    elif x in pending:
        pending[x] = pending[x] + gi
    else:
        pending[x] = gi
        heapq.heappush(heap, (-x.seq, x))


def _deliver(leaves: dict[int, list], wanted: dict | None, found: list, create_graph: bool) -> None:
    """The leaves' summed gradients, after their hooks, into `.grad` (or into `found` for `autograd.grad`)."""
    graph_hooks = bool(PREHOOKS or POSTHOOKS or POST_ACCUMULATE)
    for leaf, g, owned in leaves.values():
        accumulator = AccumulateGrad._live.get(id(leaf)) if graph_hooks else None
        if HOOKS or accumulator is not None:
            hooked = run_hooks(leaf, g, accumulator)
            g, owned = hooked, owned or hooked is not g
        if wanted is None:
            if leaf.requires_grad:
                _accumulate(leaf, g, owned, create_graph)
                if graph_hooks:
                    run_post_accumulate(leaf)
                    if accumulator is not None:
                        run_posthooks(accumulator, [], g)
        elif id(leaf) in wanted:
            found[wanted[id(leaf)]] = g


def _collect(leaves: dict[int, list], leaf: Tensor, g: Any, owned: bool) -> None:
    """Sum a leaf's contributions, in place into a sum it owns (no new array per term for a big leaf)."""
    entry = leaves.get(id(leaf))
    if entry is None:
        leaves[id(leaf)] = [leaf, g, owned]
        return
    total = entry[1]
    if entry[2] and type(total) is np.ndarray and total.base is None and total.flags.writeable and \
            np.result_type(total, g) == total.dtype:
        total += g
    else:
        entry[1] = total + g
        entry[2] = True
