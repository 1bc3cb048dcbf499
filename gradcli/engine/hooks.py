"""`Tensor.register_hook(fn)`: a function backward calls with a tensor's gradient, as PyTorch does.

A hook on a leaf sees the leaf's summed gradient before it reaches `.grad`; a hook on a computed
tensor sees the gradient flowing into its node, before the node's VJPs run. A hook that returns a
tensor replaces the gradient from there on (its shape must stay). Hooks are kept by the node (or
leaf) they watch, weakly, so they vanish with the graph.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import BackwardError, ShapeError

# id(node or leaf) -> (weak reference to it, its hooks in registration order)
HOOKS: dict[int, tuple[weakref.ref, list[Callable[[Tensor], Any]]]] = {}
# id(node or leaf) -> (weak reference to it, the gradient that arrived, the one its hooks returned, the
# first hook that changed it), from the last backward through it: what `--check` verifies a changed
# gradient by (the chain rule below a hook starts from what the hook returned)
CHANGED: dict[int, tuple[weakref.ref, np.ndarray, np.ndarray, Callable[[Tensor], Any]]] = {}


class RemovableHandle:
    """What register_hook returns; `handle.remove()` takes the hook away again."""

    def __init__(self, hooks: list, hook: Callable[[Tensor], Any]) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __repr__(self) -> str:
        return "<torch.utils.hooks.RemovableHandle object>"


def register_hook(t: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    if not t.requires_grad:
        raise BackwardError("cannot register a hook on a tensor that doesn't require gradient",
                            hint="register it on a tensor created with requires_grad=True or computed from one")
    if not callable(hook):
        raise BackwardError("register_hook() takes a function of the gradient",
                            hint="e.g. x.register_hook(lambda g: g * 2)")
    owner = t._node if t._node is not None else t
    key = id(owner)
    entry = HOOKS.get(key)
    if entry is None or entry[0]() is not owner:
        entry = HOOKS[key] = (weakref.ref(owner, lambda _, key=key: (HOOKS.pop(key, None), CHANGED.pop(key, None))),
                              [])
    entry[1].append(hook)
    return RemovableHandle(entry[1], hook)


def run_hooks(owner: Any, g: Any) -> Any:
    """The gradient after `owner`'s hooks (an array, or a Tensor under create_graph)."""
    entry = HOOKS.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return g
    arrived, changer = g, None
    for hook in list(entry[1]):
        given = g if type(g) is Tensor else _wrap(np.array(g))
        result = hook(given)
        if result is None:
            continue
        if not isinstance(result, Tensor):
            raise BackwardError(f"hook '{getattr(hook, '__name__', 'hook')}' returned a {type(result).__name__}, "
                                "not a tensor or None", hint="return the (changed) gradient, or nothing")
        if result.shape != given.shape:
            raise ShapeError(f"hook '{getattr(hook, '__name__', 'hook')}' has changed the size of value",
                             hint=f"return a gradient of shape {tuple(given.shape)}")
        g = result if type(g) is Tensor else result._data
        changer = changer or hook
    if changer is None:
        CHANGED.pop(id(owner), None)
    else:
        CHANGED[id(owner)] = (entry[0], _plain(arrived), _plain(g), changer)
    return g


def _plain(g: Any) -> np.ndarray:
    return np.array(g._data if type(g) is Tensor else g)


def changed_by_hook(owner: Any) -> tuple[np.ndarray, np.ndarray, Callable[[Tensor], Any]] | None:
    """(gradient arrived, gradient returned, the hook) when `owner`'s hooks changed its last gradient."""
    entry = CHANGED.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return None
    return entry[1], entry[2], entry[3]
