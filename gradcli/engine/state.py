"""The switches and registries every op consults, kept apart from Tensor so that reading them needs no
tensor: gradient and inference modes, the inference tensors, the limits and anomaly hooks, the
observers of each op, and a saved tensor's packed form. `engine/tensor.py` re-exports them."""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

import numpy as np


_sequence = itertools.count()


READS: list[bool] = []


"""While a program's Function forward is recorded for `--check` (`engine.function`): whether it read a
tensor's values out of the graph (`.item()`, `.tolist()`, `.numpy()`), which a replay would take for
constants. Empty otherwise, so reading a value costs one test; non-empty exactly while a forward is
recorded, which runs with gradients on where PyTorch runs it with them off: there `.numpy()` is allowed,
and `detach()`, `.data` and gradient-mode switches are identities for the math (PyTorch's forward
detaches nothing that its gradients would have gone through)."""


class GradMode:
    """Whether ops record a graph; switched off while gradcli computes things it won't differentiate."""

    enabled = True


WARNINGS: list[Callable[[str], None]] = []
"""Where PyTorch's warnings go: the running program's printer (lang fills it), innermost last. Empty outside
a program, where a warning has nobody to read it."""

_WARNED: set[str] = set()


def warn_once(text: str) -> None:
    """A warning PyTorch gives once (TORCH_WARN_ONCE): once per program run, as once per process in torch."""
    if WARNINGS and text not in _WARNED:
        _WARNED.add(text)
        WARNINGS[-1](text)


def reset_warnings() -> None:
    """A new run has warned nothing yet."""
    _WARNED.clear()


VMAP_LEVELS: list = []
"""The running vmap levels that batch by rules (engine/batched.py), innermost last: empty outside them, so
`apply` pays one emptiness test."""


class InferenceMode:
    """Whether tensors made now are inference tensors (`torch.inference_mode()`, switched by modes.py).

    Inference tensors are kept by id in `INFERENCE` (weakly: a slot on every Tensor would cost the
    hot path an assignment), so the checks below cost one emptiness test until a program uses
    inference mode.
    """

    enabled = False


class WeakIds(dict):
    """Tensors kept by identity (`==` on tensors is elementwise) and weakly (they must not outlive the
    program's use). A dict underneath, so that `if ids:` on a hot path is one C test, where a
    WeakValueDictionary's emptiness runs a Python `__len__`."""

    def add(self, t: "Tensor") -> None:
        key = id(t)
        self[key] = weakref.ref(t, lambda _, key=key: self.pop(key, None))

    def has(self, t: "Tensor") -> bool:
        ref = self.get(id(t))
        return ref is not None and ref() is t

    def discard(self, t: "Tensor") -> None:
        self.pop(id(t), None)


INFERENCE = WeakIds()


class Reshaped(dict):
    """Tensors whose `.data` took a new shape (`w.data = w.t()`), by identity and weakly, each with the node
    sequence number of that moment: a graph recorded before it holds the old shape, and backward through
    it into the tensor is refused (`backward._route`). A dict underneath, so `if RESHAPED:` costs one C test."""

    def mark(self, t: "Tensor") -> None:
        key = id(t)
        self[key] = (weakref.ref(t, lambda _, key=key: self.pop(key, None)), next(_sequence))

    def since(self, t: "Tensor") -> int:
        entry = self.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else -1


RESHAPED = Reshaped()


INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                   "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                   "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def is_inference(t: "Tensor") -> bool:
    return INFERENCE.has(t)


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class Limits:
    """Bounds that keep a typo from exhausting memory; set per run by `evaluation.engine_settings`."""

    max_elements = 50_000_000


class Anomaly:
    """Records the first op whose output was not finite although its inputs were (for eval's warning)."""

    watching = False
    first: "Node | None" = None


class Observe:
    """What some programs ask of every op after it ran: eval's anomaly watch, forward-mode tangents
    (engine/forward_ad.py), saved-tensor hooks (engine/hooks.py). `on` is the one flag the ops read,
    so a program that uses none of them pays one test per op, as it did for the anomaly watch alone.

    An observer is `fn(t, op, inputs, arrays, params)`, called after `t` is made (and recorded).
    """

    on = False
    each: list = []

    @classmethod
    def refresh(cls) -> None:
        cls.on = Anomaly.watching or bool(cls.each)

    @classmethod
    def add(cls, fn: Callable[..., None]) -> None:
        cls.each = [*cls.each, fn]
        cls.refresh()

    @classmethod
    def discard(cls, fn: Callable[..., None]) -> None:
        cls.each = [f for f in cls.each if f is not fn]
        cls.refresh()


class SavedTensor:
    """PyTorch's `grad_fn._saved_self`, `_saved_result`, ... (engine/saved.py says which node has which).

    Named attributes rather than a `__getattr__` on Node: a class with `__getattr__` makes every
    attribute read of every node slow (Python cannot specialise it), and backward reads many.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, node: "Node | None", owner: type | None = None) -> Any:
        if node is None:
            return self
        from gradcli.engine.saved import saved_attribute
        return saved_attribute(node, self.name)
