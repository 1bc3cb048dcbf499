"""In-place updates as PyTorch has them: `w -= lr * w.grad`, `x.add_(1)`, `x[0] = 2`, version counters.

An in-place op computes its result out of place and then writes it into the tensor's own memory,
so every alias (`x.data`, `x.detach()`, a view and the tensor it views) sees the values:
- outside the graph (no_grad, or nothing requires grad) that is all, and a leaf stays a leaf;
- on the graph the tensor also takes the recorded node as its history (its `grad_fn` becomes
  e.g. AddBackward0, or CopySlices for `x[i] = v`), as PyTorch rebases it; an update of a view
  gives its base CopySlices instead (views.py);
- a leaf that requires grad refuses both while gradients are recorded (PyTorch's leaf error), and
  an inference tensor refuses both outside inference mode.

Version counters: every modification is marked with a number from the node sequence, per memory
(a view counts with its base, as PyTorch's share a counter). A node created before a mark that
saved the modified memory would compute its gradient from values that are gone, so backward
raises PyTorch's "modified by an inplace operation" error. Writes through `x.data` are not marked,
as in PyTorch (that is what `.data` is for).
"""
from __future__ import annotations

import re
import weakref
from typing import Any, Callable

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine import views as V
from gradcli.engine.tensor import (INFERENCE, RELEASED, GradMode, InferenceMode, Node, Observe, Tensor, _root, _sequence,
                                   VMAP_LEVELS, _wrap, apply, is_inference)
from gradcli.errors import BackwardError, DtypeError, ShapeError

LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."
INFERENCE_IN_PLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                      "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                      "more details.")
_LEAF_HINT = ("update parameters inside 'with torch.no_grad():' (w -= lr * w.grad), or through .data "
              "(w.data -= lr * w.grad); to reset a gradient write w.grad.zero_()")

# id(root array) -> [weak reference to it, the version when a tensor took it, the marks of the modifications since,
# the node name of the last in-place update recorded on it (None before one)]
MARKS: dict[int, list] = {}


def check_leaf(t: Tensor, view: bool = False) -> None:
    """PyTorch's refusals of an in-place update: of a leaf that requires grad while gradients are
    recorded, and of an inference tensor outside inference mode."""
    if GradMode.enabled and t.requires_grad and t._node is None:
        raise BackwardError(VIEW_OF_LEAF if view else LEAF, hint=_LEAF_HINT)
    check_inference(t)


def check_inference(t: Tensor) -> None:
    if INFERENCE and not InferenceMode.enabled and is_inference(t):
        raise BackwardError(INFERENCE_IN_PLACE, hint="update a clone instead (y = x.clone(); y.add_(1)), or do the "
                                                     "update inside 'with torch.inference_mode():'")


def update(t: Tensor, compute: Callable[[], Tensor], view: bool = False, replaces: bool = False) -> Tensor:
    """Make `compute()` (the out-of-place result) the value, and on the graph the history, of `t`.

    The values are written into `t`'s own memory, so its aliases and, for a view, its base see them
    (views.py gives the base its CopySlices history). While gradients are recorded, `compute` reads
    a private copy of the old values, so the nodes it records keep them.
    """
    if not replaces:  # a fill replaces every value: repeated per example, it leaves what one fill leaves
        _not_batched()
    check_leaf(t, view)
    viewed = V.base_of(t)
    if viewed is not None:
        check_leaf(viewed[0], view=True)
    mark = next(_sequence)  # before compute(): a node made now may read the old array, one made before may not
    memory = t._data
    if GradMode.enabled:
        t._data = memory.copy()
    try:
        out = compute()
    finally:
        t._data = memory
    if out.shape != t.shape:
        raise ShapeError(f"output with shape {list(t.shape)} doesn't match the broadcast shape {list(out.shape)}",
                         hint="an in-place update keeps the tensor's shape; write y = y + ... for a new shape")
    if Observe.on:
        from gradcli.engine.forward_ad import carry
        carry(out, t)
    data = out._data
    if data.dtype != memory.dtype:
        if np.result_type(data.dtype, memory.dtype) != memory.dtype:
            raise DtypeError(f"result type {type_word(data.dtype)} can't be cast to the desired output type "
                             f"{type_word(memory.dtype)}", hint="make the tensor float first, e.g. x = x.float()")
        data = data.astype(memory.dtype)
    node = out._node
    if node is None:
        _write(t, data, mark)
        return t
    if not memory.flags.writeable:  # memory nothing else shares: the tensor takes the new array
        _remember(memory, mark)
        _share_marks(memory, data)
        t._data = data
        V.rebase(t, node)
        return t
    np.copyto(memory, data)
    _count(t, memory, mark)
    if node.saved_out is data:  # the saved result is the tensor itself: a later update must be noticed
        node.saved_out = memory
    if viewed is None:
        V.rebase(t, node)
        V.refresh(t)
    else:
        V.write_back(out, *viewed)
    _entry(memory)[3] = (viewed[0] if viewed else t)._node.name
    return t


def _not_batched() -> None:
    """Inside a vmap that batches by rules a write would happen before vmap knows whether the function runs
    batched: it runs once per example instead, so a write happens exactly as often as the program says."""
    if VMAP_LEVELS:
        from gradcli.engine.batched import NoRule
        raise NoRule("an in-place write")


def assign(t: Tensor, data: np.ndarray) -> None:
    """Write values computed outside autograd (an optimizer's step, an initialiser) into `t`: its
    aliases see them, and a node that saved the old values refuses backward, as in PyTorch."""
    _not_batched()
    check_inference(t)
    _write(t, data, next(_sequence))


def count_write(t: Tensor) -> None:
    """An in-place change made outside `update` (squeeze_, unsqueeze_): a node that saved `t` refuses backward."""
    _not_batched()
    _count(t, t._data, next(_sequence))


def _write(t: Tensor, data: np.ndarray, mark: int) -> None:
    if t._data.flags.writeable:
        np.copyto(t._data, data)
    else:
        t._data = np.array(data)
    _count(t, t._data, mark)


def _count(t: Tensor, array: np.ndarray, mark: int) -> None:
    """Bump the version of `array`, written through `t`: not through `x.data` or a view of it, which
    PyTorch gives a version counter of its own."""
    alias = V.base(t)
    if not getattr(alias, "_untracked", False):
        _remember(array, mark)


def _entry(array: np.ndarray, base: int = 0) -> list:
    """The version record of the memory `array` is part of: views share their base's, as in PyTorch."""
    array = _root(array)
    entry = MARKS.get(id(array))
    if entry is None or entry[0]() is not array:
        key = id(array)
        entry = MARKS[key] = [weakref.ref(array, lambda _, key=key: MARKS.pop(key, None)), base, [], None]
    return entry


def _remember(array: np.ndarray, mark: int) -> None:
    _entry(array)[2].append(mark)


def _share_marks(old: np.ndarray, new: np.ndarray) -> None:
    """The tensor's new array continues its version count (but not the old array's marks: it stays as it was)."""
    entry = _entry(old)
    _entry(new, entry[1] + len(entry[2]))


def check_saved(node: Node) -> None:
    """Backward's guard: refuse a node whose saved values were modified in place after it saved them."""
    if not MARKS or node.saved is RELEASED or node.saved is None:
        return
    for i, a in enumerate(node.saved):
        if type(a) is np.ndarray:
            _check(node, a, node.inputs[i])
    if node.saved_out is not None:
        _check(node, node.saved_out, node)


def _check(node: Node, array: np.ndarray, owner: Any) -> None:
    root = _root(array)
    entry = MARKS.get(id(root))
    if entry is None or entry[0]() is not root:
        return
    _, base, marks, rebased = entry
    expected = base + sum(1 for m in marks if m < node.seq)
    if expected == base + len(marks):
        return
    # PyTorch names a saved input by the history its tensor has now, a saved result by the node itself
    name = rebased if rebased is not None and owner is not node else owner.name if type(owner) is Node else None
    made_by = "" if name is None else f", which is output 0 of {_node_word(name)},"
    shape = "[" + ", ".join(map(str, array.shape)) + "]"
    raise BackwardError(
        f"one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{type_word(array.dtype)}Tensor {shape}]{made_by} is at version {base + len(marks)}; expected version "
        f"{expected} instead.",
        hint="compute a new tensor instead (y = y + 1 rather than y += 1 or y.add_(1)), or update it only after "
             "the backward that needs it")


def _node_word(name: str) -> str:
    """How PyTorch's message names a node: AddBackward0 as Add, CopySlices with its C++ namespace."""
    stripped = re.sub(r"Backward[0-9]*$", "", name)
    return stripped if stripped != name else f"torch::autograd::{name}"


_TYPE_WORDS = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def type_word(dtype: np.dtype) -> str:
    """How PyTorch's messages name a dtype: Float, Long."""
    return _TYPE_WORDS.get(str(dtype), str(dtype))


def setitem(t: Tensor, key: Any, value: Any) -> None:
    """`t[key] = value`: written in place off the graph; on the graph PyTorch's node for it (`_assignment_node`).

    On the graph the result is `t * (1 - mask) + index_put(value)`, made of primitives that the
    checker can replay, so the gradient of `t` is zero where it was overwritten and the value's
    gradient is gathered from the slot.
    """
    from gradcli.engine import functions as F
    check_leaf(t, view=True)
    k = F.index_key(key)
    slot = F.index(_wrap(t._data), key)  # validates the key with PyTorch's messages
    v = value if isinstance(value, Tensor) else F.as_tensor(value, t.dtype)
    target = np.array(t._data)
    try:
        target[k] = v._data
    except ValueError as exc:
        raise ShapeError(f"shape mismatch: {exc}",
                         hint=f"the value must broadcast to the slot's shape {tuple(slot.shape)}") from None

    def assigned() -> Tensor:
        if not (GradMode.enabled and (t.requires_grad or v.requires_grad)):
            return _wrap(target)
        mask = np.ones(t.shape, dtype=t.dtype)
        mask[k] = 0
        placed = F.index_put(F.expand(v, slot.shape) if v.shape != slot.shape else v, t.shape, k)
        out = apply(O.ADD, F.mul(t, _wrap(mask)), placed, name=_assignment_node(key))
        out._data = target
        return out
    update(t, assigned, view=True)


def index_put_(t: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """`t.index_put_(indices, values, accumulate)`: `t[indices] = values`, or with `accumulate=True` each value
    added at its index, a repeated index adding each time (IndexPutBackward0: t's gradient passes unchanged,
    the values' is gathered at the indices)."""
    from gradcli.engine import functions as F
    if not isinstance(indices, (tuple, list)):
        raise DtypeError("index_put_(): argument 'indices' must be tuple of Tensors",
                         hint="give one index tensor per indexed dimension: x.index_put_((rows,), values)")
    key = tuple(indices)
    if not accumulate:
        setitem(t, key, values)
        return t
    check_leaf(t)
    k = F.index_key(key)
    slot = F.index(_wrap(t._data), key)  # validates the key with PyTorch's messages
    v = values if isinstance(values, Tensor) else F.as_tensor(values, t.dtype)
    try:
        spread = np.broadcast_to(v._data, slot.shape)
    except ValueError:
        raise ShapeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to indexing "
                         f"result of shape {list(slot.shape)}", hint="one value per indexed element, or one for all") \
            from None
    target = np.array(t._data)
    np.add.at(target, k, spread.astype(t.dtype))

    def accumulated() -> Tensor:
        if not (GradMode.enabled and (t.requires_grad or v.requires_grad)):
            return _wrap(target)
        placed = F.index_put(F.expand(v, slot.shape) if v.shape != slot.shape else v, t.shape, k)
        out = apply(O.ADD, t, placed, name="IndexPutBackward0")
        out._data = target
        return out
    return update(t, accumulated)


def put_(t: Tensor, index: Any, source: Any, accumulate: bool = False) -> Tensor:
    """`t.put_(index, source)`: t read as one row, `source`'s elements written (or with `accumulate=True` added)
    at the flat positions `index` (negative ones count from the end), as PyTorch's PutBackward0: t's gradient
    passes where nothing was written (everywhere with accumulate), the source's is the gradient taken at the
    indices. Of a repeated index without accumulate, the last write stays (PyTorch's CPU order)."""
    from gradcli.engine import functions as F
    if not isinstance(index, Tensor) or index.dtype != np.int64:
        got = type(index).__name__ if not isinstance(index, Tensor) else type_word(index.dtype)
        raise DtypeError(f"put_(): Expected a long tensor for index, but got {got}",
                         hint="index holds flat positions: torch.tensor([0, 3])")
    src = source if isinstance(source, Tensor) else F.as_tensor(source, t.dtype)
    if src.numel() != index.numel():
        raise ShapeError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {src.numel()}, index.numel() = {index.numel()}",
                         hint="one source element per index")
    n = t.numel()
    flat = index._data.reshape(-1)
    wrong = flat[(flat >= n) | (flat < -n)]
    if wrong.size:
        raise ShapeError(f"out of range: tried to access index {int(wrong[0])} on a tensor of {n} elements.",
                         hint=f"flat positions run from {-n} to {n - 1}")
    k = (np.where(flat < 0, flat + n, flat),)
    values = src._data.reshape(-1).astype(t.dtype)
    target = np.array(t._data).reshape(-1)
    if accumulate:
        np.add.at(target, k, values)
    else:
        target[k] = values
    target = target.reshape(t.shape)
    check_leaf(t)

    def written() -> Tensor:
        if not (GradMode.enabled and (t.requires_grad or src.requires_grad)):
            return _wrap(target)
        kept = t
        if not accumulate:
            mask = np.ones(n, dtype=t.dtype)
            mask[k] = 0
            kept = F.mul(t, _wrap(mask.reshape(t.shape)))
        placed = F.reshape(F.index_put(F.reshape(src, -1), (n,), k), t.shape)
        out = apply(O.ADD, kept, placed, name="PutBackward0")
        out._data = target
        return out
    return update(t, written)


def _assignment_node(key: Any) -> str:
    """PyTorch first applies a key's basic parts (ints, slices, None) as a view, then `index_put_` its tensor
    and list parts into that view: when the basic parts leave the whole tensor (only `:` and `...` beside an
    index tensor, list or mask) the write is the tensor's own IndexPutBackward0, otherwise the view's write
    gives the tensor CopySlices."""
    advanced = False
    for part in key if isinstance(key, tuple) else (key,):
        if part is Ellipsis or (isinstance(part, slice) and part == slice(None)):
            continue
        if isinstance(part, Tensor) and part.ndim == 0 and part.dtype.kind in "iu":
            return "CopySlices"  # a 0-d integer tensor indexes as a number
        if isinstance(part, (Tensor, list, np.ndarray)):
            advanced = True
            continue
        return "CopySlices"
    return "IndexPutBackward0" if advanced else "CopySlices"


def overwrite(t: Tensor, values: Callable[[], np.ndarray], node: str) -> Tensor:
    """Replace every value of `t` by `values()` (fills, random draws): on the graph PyTorch's `node`,
    whose gradient to the old values is zero. `values` runs after the leaf check, so a refused fill
    consumes no random numbers."""
    def replaced() -> Tensor:
        data = values()
        if not (GradMode.enabled and t.requires_grad):
            return _wrap(data)
        out = apply(O.MUL, t, 0.0, name=node)
        out._data = data
        return out
    return update(t, replaced, replaces=True)


def zero_(t: Tensor) -> Tensor:
    return overwrite(t, lambda: np.zeros(t.shape, dtype=t.dtype), "ZeroBackward0")


def fill_(t: Tensor, value: Any) -> Tensor:
    """A 0-d tensor value that requires grad receives the sum of the gradient (PyTorch's FillBackward3)."""
    if not isinstance(value, Tensor):
        from gradcli.engine.functions import number_arg
        number = number_arg(value, "fill_", "value")
        return overwrite(t, lambda: np.full(t.shape, number, dtype=t.dtype), "FillBackward2")
    if value.ndim:
        raise ShapeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.",
                         hint="fill with a number, or a 0-d tensor such as v[0]")
    if not (GradMode.enabled and value.requires_grad):
        return overwrite(t, lambda: np.full(t.shape, value.item(), dtype=t.dtype), "FillBackward3")
    everywhere = _wrap(np.ones(t.shape, dtype=bool))
    return update(t, lambda: apply(O.WHERE, everywhere, value, t, name="FillBackward3"))


def copy_(t: Tensor, src: Any) -> Tensor:
    from gradcli.engine import functions as F
    source = src if isinstance(src, Tensor) else F.as_tensor(src, t.dtype)

    def copied() -> Tensor:
        expanded = source if source.shape == t.shape else F.expand(source, t.shape)
        if GradMode.enabled and expanded.requires_grad:
            return apply(O.CLONE, expanded, name="CopyBackwards")
        return _wrap(np.array(expanded._data, dtype=t.dtype))
    return update(t, copied)


def add_(t: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return update(t, lambda: t + (other if alpha == 1 else other * alpha))


def sub_(t: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return update(t, lambda: t - (other if alpha == 1 else other * alpha))
