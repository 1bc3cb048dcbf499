"""`Tensor.register_hook(fn)`: a function backward calls with a tensor's gradient, as PyTorch does.

A hook on a leaf sees the leaf's summed gradient before it reaches `.grad`; a hook on a computed
tensor sees the gradient flowing into its node, before the node's VJPs run. A hook that returns a
tensor replaces the gradient from there on (its shape must stay). Hooks are kept by the node (or
leaf) they watch, weakly, so they vanish with the graph.
"""
from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
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
    return _store(HOOKS, t._node if t._node is not None else t, hook)


def _store(table: dict, owner: Any, hook: Callable[..., Any]) -> RemovableHandle:
    """Keep `hook` for `owner` in `table`, weakly: the entry goes when the owner does."""
    key = id(owner)
    entry = table.get(key)
    if entry is None or entry[0]() is not owner:
        entry = table[key] = (weakref.ref(owner, lambda _, key=key: _forget(table, key)), [])
    entry[1].append(hook)
    return RemovableHandle(entry[1], hook)


def _forget(table: dict, key: int) -> None:
    for kept in (table, CHANGED, PASSED):
        kept.pop(key, None)


def run_hooks(owner: Any, g: Any, prehooks_of: Any = None) -> Any:
    """The gradient after `owner`'s hooks (an array, or a Tensor under create_graph), then after the node
    prehooks of `prehooks_of` (the node itself, or a leaf's AccumulateGrad), recorded as one change."""
    entry = HOOKS.get(id(owner))
    if entry is not None and entry[0]() is not owner:
        entry = None
    prehooks = hooks_of(PREHOOKS, prehooks_of) if prehooks_of is not None else []
    if entry is None and not prehooks:
        return g
    arrived, changer = g, None
    for hook in list(entry[1]) if entry is not None else ():
        given = g if type(g) is Tensor else _wrap(np.array(g))
        result = hook(given)
        if result is None and type(g) is not Tensor and given.shape == g.shape and \
                not np.array_equal(given._data, g, equal_nan=True):
            result = given  # changed in place (`grad *= 2`): PyTorch passes that tensor on, as if returned
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
    for hook in prehooks:
        given = (_as_tensor(g),)
        new = replaced(hook, hook(given), given, "gradients")
        if new is not None:
            g = new[0] if type(g) is Tensor else new[0]._data
            changer = changer or hook
    record_change(owner, arrived, g, changer)
    return g


CHANGES = [0]
"""How many gradients hooks have replaced so far: a check that models no hooks (a Jacobian's, built from
one backward per output element) asks whether any did during its call, rather than fail a correct one."""

PASSES: list[list[tuple[dict, dict]]] = []
"""While a gradient function runs under `--check` (`passes()`): each backward pass's own (CHANGED, PASSED)
entries, in order. CHANGED and PASSED keep only the last pass through a node; a Jacobian's rows are
one pass each, and each row is verified with what the hooks returned in its own pass."""


def note_change(table: dict, key: int, entry: tuple) -> None:
    """Keep a hook's change in `table` (CHANGED or PASSED), and in the pass being logged, if any."""
    table[key] = entry
    CHANGES[0] += 1
    if PASSES and PASSES[-1]:
        PASSES[-1][-1][0 if table is CHANGED else 1][key] = entry


def begin_pass() -> None:
    """A backward pass starts: its hook changes are logged apart (only while `passes()` is active)."""
    PASSES[-1].append(({}, {}))


@contextlib.contextmanager
def passes() -> Iterator[list[tuple[dict, dict]]]:
    """Log each backward pass's hook changes for the length of the block (see `PASSES`)."""
    log: list[tuple[dict, dict]] = []
    PASSES.append(log)
    try:
        yield log
    finally:
        PASSES.remove(log)


@contextlib.contextmanager
def as_in_pass(logged: tuple[dict, dict]) -> Iterator[None]:
    """CHANGED and PASSED as one logged pass left them, for the length of the block: what a check of that
    pass's gradient reads."""
    kept = dict(CHANGED), dict(PASSED)
    for table, entries in zip((CHANGED, PASSED), logged):
        table.clear()
        table.update({key: entry for key, entry in entries.items() if entry[0]() is not None})
    try:
        yield
    finally:
        for table, entries in zip((CHANGED, PASSED), kept):
            table.clear()
            table.update({key: entry for key, entry in entries.items() if entry[0]() is not None})


def record_change(owner: Any, arrived: Any, returned: Any, hook: Callable[..., Any] | None) -> None:
    """Note what a hook did to the gradient reaching `owner` in this backward: `--check` verifies `arrived`
    (autograd's own) and starts the chain rule below `owner` from `returned`. `hook` None: nothing changed.

    `owner` is the Node whose output's gradient a hook replaced (a tensor hook, a node prehook, or a
    hook on an identity node a module wraps its inputs in), or a leaf Tensor for its summed
    gradient. The hook is named by the line it was written at (`hook.node.lineno`, a program's function).
    """
    if hook is None:
        CHANGED.pop(id(owner), None)
        return
    key = id(owner)
    entry = HOOKS.get(key) or PREHOOKS.get(key)
    ref = entry[0] if entry is not None and entry[0]() is owner else \
        weakref.ref(owner, lambda _, key=key: CHANGED.pop(key, None))
    note_change(CHANGED, key, (ref, _plain(arrived), _plain(returned), hook))


# -- hooks on graph nodes (torch.autograd.graph.Node) and after a leaf's accumulation ------------------------
# id(node or leaf) -> (weak reference to it, its hooks in registration order), one table per kind
PREHOOKS: dict[int, tuple[weakref.ref, list[Callable[..., Any]]]] = {}
POSTHOOKS: dict[int, tuple[weakref.ref, list[Callable[..., Any]]]] = {}
POST_ACCUMULATE: dict[int, tuple[weakref.ref, list[Callable[..., Any]]]] = {}


def _add(table: dict, owner: Any, hook: Callable[..., Any], what: str) -> RemovableHandle:
    if not callable(hook):
        raise BackwardError(f"{what}() takes a function", hint=f"e.g. {what}(lambda *grads: None)")
    return _store(table, owner, hook)


def register_prehook(node: Any, hook: Callable[..., Any]) -> RemovableHandle:
    """`grad_fn.register_prehook(fn)`: fn(grad_outputs) before the node runs; a tuple it returns replaces them."""
    return _add(PREHOOKS, node, hook, "register_prehook")


def register_node_hook(node: Any, hook: Callable[..., Any]) -> RemovableHandle:
    """`grad_fn.register_hook(fn)`: fn(grad_inputs, grad_outputs) after the node ran; a tuple it returns
    replaces grad_inputs."""
    return _add(POSTHOOKS, node, hook, "register_hook")


def register_post_accumulate_grad_hook(t: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """`x.register_post_accumulate_grad_hook(fn)`: fn(x) once backward has added into a leaf's `.grad`."""
    if t._node is not None:
        raise BackwardError("post accumulate grad hooks cannot be registered on non-leaf tensors",
                            hint="register it on a leaf (a tensor created with requires_grad=True)")
    if not t.requires_grad:
        raise BackwardError("cannot register a hook on a tensor that doesn't require gradient",
                            hint="create the tensor with requires_grad=True")
    return _add(POST_ACCUMULATE, t, hook, "register_post_accumulate_grad_hook")


def hooks_of(table: dict, owner: Any) -> list[Callable[..., Any]]:
    entry = table.get(id(owner))
    return list(entry[1]) if entry is not None and entry[0]() is owner else []


def _as_tensor(g: Any) -> Tensor | None:
    return None if g is None else g if type(g) is Tensor else _wrap(np.array(g))


def replaced(hook: Callable[..., Any], result: Any, given: tuple, what: str) -> tuple | None:
    """A node hook's returned tuple of gradients, checked against the ones it was given (None: unchanged)."""
    if result is None:
        return None
    name = getattr(hook, "__name__", "hook")
    if not isinstance(result, (tuple, list)) or len(result) != len(given):
        raise BackwardError(f"hook '{name}' that returns a value must return a tuple of {len(given)} {what}, got "
                            f"{type(result).__name__}", hint="return the gradients as a tuple, or nothing")
    for new, old in zip(result, given):
        if new is None and old is None:
            continue
        if not isinstance(new, Tensor) or old is None or new.shape != old.shape:
            raise ShapeError(f"hook '{name}' returned {type(new).__name__ if not isinstance(new, Tensor) else tuple(new.shape)}"
                             f" where the gradient has shape {None if old is None else tuple(old.shape)}",
                             hint="return gradients of the shapes the hook was given")
    return tuple(result)


PASSED: dict[int, tuple[weakref.ref, tuple[np.ndarray | None, ...], Callable[..., Any]]] = {}
"""id(node) -> (weak reference to it, what it passed each input, the first hook that replaced that), from
the last backward through a node whose `register_hook` hooks replaced its grad_inputs: `--check` starts
the chain rule below it from what the hook returned."""


def run_posthooks(owner: Any, grad_inputs: list, g: Any) -> list:
    """`grad_inputs` (one per input, None where no gradient flows) after `owner`'s node hooks."""
    changer = None
    for hook in hooks_of(POSTHOOKS, owner):
        given = tuple(_as_tensor(x) for x in grad_inputs)
        new = replaced(hook, hook(given, (_as_tensor(g),)), given, "gradients")
        if new is not None:
            grad_inputs = [None if n is None else n if type(o) is Tensor else n._data
                           for n, o in zip(new, grad_inputs)]
            changer = changer or hook
    key = id(owner)
    if changer is None:
        PASSED.pop(key, None)
    elif grad_inputs:
        note_change(PASSED, key, (POSTHOOKS[key][0], tuple(None if x is None else _plain(x) for x in grad_inputs),
                                  changer))
    return grad_inputs


def passed_by_hook(owner: Any) -> tuple[tuple[np.ndarray | None, ...], Callable[..., Any]] | None:
    """(what `owner` passed each input, the hook) when its node hooks replaced that in the last backward."""
    entry = PASSED.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return None
    return entry[1], entry[2]


ACCUMULATED: dict[int, tuple[weakref.ref, np.ndarray | None, np.ndarray, Callable[..., Any]]] = {}
"""id(leaf) -> (weak reference to it, its `.grad` as accumulated, its value then, its first post-accumulate
hook), from the last backward that ran such hooks: a hook may step an optimizer and clear `.grad`, and
`--check` verifies what was accumulated, at the values backward differentiated at."""


def run_post_accumulate(leaf: Tensor) -> None:
    hooks = hooks_of(POST_ACCUMULATE, leaf)
    if hooks:
        key = id(leaf)
        ACCUMULATED[key] = (weakref.ref(leaf, lambda _, key=key: ACCUMULATED.pop(key, None)),
                            None if leaf.grad is None else np.array(leaf.grad._data), np.array(leaf._data), hooks[0])
    for hook in hooks:
        hook(leaf)


def accumulated(leaf: Tensor) -> tuple[np.ndarray | None, np.ndarray, Callable[..., Any]] | None:
    """(`.grad` as accumulated, the value then, the first hook) when post-accumulate hooks last ran for `leaf`."""
    entry = ACCUMULATED.get(id(leaf))
    if entry is None or entry[0]() is not leaf:
        return None
    return entry[1], entry[2], entry[3]


# -- torch.autograd.graph.saved_tensors_hooks ----------------------------------------------------------------
# id(node) -> (weak reference to it, unpack hook, [(position or RESULT, what pack returned)])
PACKED: dict[int, tuple[weakref.ref, Callable[[Any], Any], list[tuple[int, Any]]]] = {}
RESULT = -1


class saved_tensors_hooks:
    """`with torch.autograd.graph.saved_tensors_hooks(pack, unpack):` pack sees each tensor a node keeps for
    backward as it is saved; unpack gets back what pack returned when backward needs the value, and its
    tensor (of the saved value's shape) is what the VJP reads."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise BackwardError("saved_tensors_hooks(pack_hook, unpack_hook) takes two functions",
                                hint="e.g. saved_tensors_hooks(lambda x: x, lambda x: x)")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self.observer = self._packed  # one bound method, so that exit removes the very one enter added

    def __enter__(self) -> "saved_tensors_hooks":
        from gradcli.engine.tensor import Observe
        Observe.add(self.observer)
        return self

    def __exit__(self, *exc: Any) -> None:
        from gradcli.engine.tensor import Observe
        Observe.discard(self.observer)

    def _packed(self, t: Tensor, op: Any, inputs: tuple, arrays: tuple, params: dict) -> None:
        from gradcli.engine.tensor import RELEASED, _on_graph
        node = t._node
        if node is None or node.saved is RELEASED or node.saved is None:
            return
        kept = []
        for i in reversed(range(len(node.saved))):
            value = node.saved[i]
            if type(value) is np.ndarray and value is arrays[i]:
                x = inputs[i]
                source = x if type(x) is Tensor and x._data is value else \
                    _on_graph(value, x._node) if type(x) is Tensor and x._node is not None else _wrap(value)
                kept.append((i, self.pack_hook(source)))
        if node.saved_out is not None:
            kept.append((RESULT, self.pack_hook(t)))
        if kept:
            key = id(node)
            PACKED[key] = (weakref.ref(node, lambda _, key=key: PACKED.pop(key, None)), self.unpack_hook, kept)


class save_on_cpu(saved_tensors_hooks):
    """`torch.autograd.graph.save_on_cpu()`: gradcli's tensors are on the CPU already, so it keeps them as they are."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory

    def __enter__(self) -> "save_on_cpu":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


def unpack_saved(node: Any) -> None:
    """Before a packed node's VJPs run: its saved values as the unpack hook gives them back."""
    entry = PACKED.get(id(node))
    if entry is None or entry[0]() is not node:
        return
    _, unpack, kept = entry
    saved = list(node.saved)
    for where, packed in kept:
        old = node.saved_out if where == RESULT else saved[where]
        value = unpack(packed)
        if not isinstance(value, Tensor):
            raise BackwardError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                                f"{type(value).__name__}", hint="return the tensor pack_hook was given (or its copy)")
        if value.shape != old.shape:
            raise ShapeError(f"unpack_hook returned a tensor of shape {tuple(value.shape)} for a saved tensor of "
                             f"shape {tuple(old.shape)}", hint="return a tensor of the saved tensor's shape")
        array = value._data.astype(old.dtype, copy=False)
        if where == RESULT:
            node.saved_out = array
        else:
            saved[where] = array
    node.saved = tuple(saved)


def _plain(g: Any) -> np.ndarray:
    return np.array(g._data if type(g) is Tensor else g)


def changed_by_hook(owner: Any) -> tuple[np.ndarray, np.ndarray, Callable[[Tensor], Any]] | None:
    """(gradient arrived, gradient returned, the hook) when `owner`'s hooks changed its last gradient."""
    entry = CHANGED.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return None
    return entry[1], entry[2], entry[3]
