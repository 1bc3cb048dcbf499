"""`Module.register_full_backward_hook` and `register_full_backward_pre_hook`, built as PyTorch builds them.

A call of a hooked module puts an identity node named `BackwardHookFunctionBackward` on each tensor
input that requires grad (what `forward` sees) and on each tensor output that does (what the caller
gets). Backward reaches the output nodes first: their gradients are `grad_output`, which the pre-hooks
may replace; then the input nodes, whose gradients are `grad_input` (the module's tensor inputs, not its
parameters), which the full hooks see with `grad_output` and may replace before they flow on. The
nodes of one side form a group: backward holds each one's gradient until the group's last has arrived
(they all have by then: every consumer of theirs is newer), so a hook sees the side's gradients at
once, after the tensor hooks on those tensors and before the hooks of the tensors below, as in PyTorch.

A gradient a hook replaced is recorded in `hooks.CHANGED` as a tensor hook's is, so `--check` verifies
the chain rule below it from what the hook returned.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.hooks import CHANGED, RemovableHandle, _plain, note_change
from gradcli.engine.tensor import GradMode, Node, Tensor, _wrap, apply
from gradcli.errors import BackwardError, ShapeError

NODE = "BackwardHookFunctionBackward"

# id(node) -> (weak reference to the node, its group)
GROUPS: dict[int, tuple[weakref.ref, "_Group"]] = {}


def register(hooks: list, hook: Callable[..., Any], prepend: bool, what: str) -> RemovableHandle:
    if not callable(hook):
        raise BackwardError(f"{what}() takes a function", hint=f"e.g. model.{what}(lambda module, *grads: None)")
    hooks.insert(0, hook) if prepend else hooks.append(hook)
    return RemovableHandle(hooks, hook)


class BackwardHook:
    """One call's link between its outputs' gradients and its inputs' (PyTorch's `BackwardHook`)."""

    def __init__(self, module: Any, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = list(hooks)
        self.pre_hooks = list(pre_hooks)
        self.grad_outputs: tuple | None = None
        self.inputs: _Group | None = None
        self.n_inputs = 0
        self.changer: Callable[..., Any] | None = None
        """The first hook of the side last run that returned gradients: where `--check` says they changed."""

    def setup_inputs(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        args, self.inputs = _hooked(args, self, True)
        return args

    def setup_outputs(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        wrapped, _ = _hooked((result,) if single else result, self, False)
        return wrapped[0] if single else wrapped

    def outputs_arrived(self, given: tuple) -> tuple:
        """grad_output, after the pre-hooks; with no input requiring grad the full hooks run here."""
        self.changer = None
        for hook in self.pre_hooks:
            result = hook(self.module, given)
            if result is None:
                continue
            _count(result, len(given), "Backward pre hook returned an invalid number of grad_output")
            given, self.changer = tuple(result), self.changer or hook
        self.grad_outputs = given
        if self.inputs is None:
            nothing = (None,) * self.n_inputs
            for hook in self.hooks:
                result = hook(self.module, nothing, given)
                if result is not None and not (isinstance(result, tuple) and all(r is None for r in result)):
                    raise BackwardError("Backward hook for Modules where no input requires gradient should always "
                                        "return None or None for all gradients.",
                                        hint="no input of this call requires grad, so there is no grad_input to "
                                             "replace: return None")
            self.grad_outputs = None
        return given

    def inputs_arrived(self, given: tuple) -> tuple:
        """grad_input, after the full hooks (which run only when the gradient came through the outputs)."""
        self.changer = None
        if self.grad_outputs is None:
            return given
        for hook in self.hooks:
            result = hook(self.module, given, self.grad_outputs)
            if result is None:
                continue
            _count(result, len(given), "Backward hook returned an invalid number of grad_input")
            given, self.changer = tuple(result), self.changer or hook
        self.grad_outputs = None
        return given


def _count(result: Any, expected: int, what: str) -> None:
    if not isinstance(result, (tuple, list)):
        raise BackwardError(f"object of type '{type(result).__name__}' has no len()",
                            hint="a backward hook returns a tuple of gradients (one per entry it was given) or None")
    if len(result) != expected:
        raise BackwardError(f"{what}, got {len(result)}, but expected {expected}",
                            hint=f"return a tuple of {expected}, None where a gradient should stop")


def _hooked(values: tuple, state: BackwardHook, inputs: bool) -> tuple[tuple, "_Group | None"]:
    """`values` with an identity node on each tensor that requires grad, grouped; as they were when none does
    or gradients are off (then the hooks never fire for this side)."""
    if not GradMode.enabled or not any(isinstance(v, Tensor) and v.requires_grad for v in values):
        return values, None
    group = _Group(state, inputs, len(values))
    out = list(values)
    for k, v in enumerate(values):
        if isinstance(v, Tensor):
            if v.requires_grad:
                out[k] = apply(O.CLONE, v, name=NODE)
                group.add(k, out[k]._node)
            elif inputs:
                group.zeros[k] = v  # PyTorch's grad_input holds zeros for a tensor input that needs no grad
    return tuple(out), group


class _Group:
    """The identity nodes of one side of one call, and what their gradients become once all have arrived.

    On the inputs' side a node no gradient reached gets zeros, as PyTorch's hook function materializes
    them (so such an input's `.grad` becomes zeros, not None); on the outputs' side it gets None."""

    def __init__(self, state: BackwardHook, inputs: bool, size: int) -> None:
        self.state = state
        self.inputs = inputs
        self.size = size
        self.nodes: dict[int, weakref.ref] = {}
        self.below: dict[int, tuple[Any, tuple, Any]] = {}
        """Per node: its input (node or leaf), shape and dtype, for when the node itself has gone unused."""
        self.zeros: dict[int, Tensor] = {}
        self.grads: dict[int, Any] = {}

    def add(self, k: int, node: Node) -> None:
        self.nodes[k] = weakref.ref(node)
        self.below[k] = (node.inputs[0], node.shape, node.dtype)
        key = id(node)
        GROUPS[key] = (weakref.ref(node, lambda _, key=key: (GROUPS.pop(key, None), CHANGED.pop(key, None))), self)

    def waiting(self, pending: dict) -> bool:
        """Whether another node of the group holds a gradient backward has not reached yet."""
        return any(n in pending for n in (ref() for ref in self.nodes.values()) if n is not None)

    def hold(self, node: Node, g: Any) -> None:
        for k, ref in self.nodes.items():
            if ref() is node:
                self.grads[k] = g

    def release(self, create_graph: bool) -> list[tuple[Node | None, Any, Any]]:
        """(node, gradient to send on after the hooks, the node's input) for each node of the group; the node is
        None when it went unused in the forward (and is gone): its input then gets the gradient directly."""
        held, self.grads = self.grads, {}
        given: list[Tensor | None] = [None] * self.size
        for k, (_, shape, dtype) in self.below.items():
            g = held.get(k)
            if g is None and self.inputs:
                g = np.zeros(shape, dtype)
            given[k] = None if g is None else g if type(g) is Tensor else _wrap(np.array(g))
        for k, t in self.zeros.items():
            given[k] = _wrap(np.zeros(t.shape, t.dtype))
        before = tuple(given)
        after = self.state.inputs_arrived(before) if self.inputs else self.state.outputs_arrived(before)
        out = []
        for k, (below, shape, dtype) in self.below.items():
            node, new = self.nodes[k](), after[k]
            if new is not before[k]:
                new = _checked(new, shape, dtype)
                if node is not None:
                    _changed(node, before[k], new, self.state.changer)
            if new is not None:
                out.append((node, new if create_graph else new._data, below))
        return out


def group_of(node: Node) -> _Group | None:
    entry = GROUPS.get(id(node))
    return entry[1] if entry is not None and entry[0]() is node else None


def _checked(new: Any, shape: tuple, dtype: Any) -> Tensor | None:
    if new is None:
        return None
    if not isinstance(new, Tensor):
        raise BackwardError(f"a backward hook returned a {type(new).__name__} where a gradient belongs",
                            hint="return tensors (or None) in the tuple")
    if tuple(new.shape) != tuple(shape):
        raise ShapeError("hook 'hook' has changed the size of value", hint=f"return a gradient of shape {tuple(shape)}")
    return new if new.dtype == dtype else _wrap(new._data.astype(dtype))


def _changed(node: Node, old: Tensor | None, new: Tensor | None, hook: Callable[..., Any] | None) -> None:
    """Record a replaced gradient where `--check` looks for one, as a tensor hook's (see `hooks.CHANGED`)."""
    entry = GROUPS.get(id(node))
    if entry is None or hook is None:
        return
    zeros = np.zeros(node.shape, node.dtype)
    note_change(CHANGED, id(node), (entry[0], zeros if old is None else _plain(old), zeros if new is None else
                                    _plain(new), hook))
