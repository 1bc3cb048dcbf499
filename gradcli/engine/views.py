"""Views: which tensor a tensor views, and PyTorch's write-through when one is updated in place.

An op whose output shares memory with its input makes a view, as in PyTorch: basic indexing
(`x[0]`, `x[1:]`, `x[:, 0]`, narrow, split...), view/reshape/flatten/squeeze/unsqueeze, t/T/
transpose/permute, expand, and chains of them. Each view is remembered with its base (the
tensor at the start of the chain, never itself a view) and the chain of view ops.

An in-place update of a view writes into the memory it shares with its base, so the base and
every alias see the values. On the graph the base then takes PyTorch's CopySlices as history:
base * (1 - covered) + placed, where `placed` is the view's new value carried back to the base's
shape by the chain's own VJPs (recorded, so the checker replays primitives it knows) and
`covered` is 1 where the view lies. The base's gradient is so zero where it was overwritten, and
the update's inputs get theirs through the view. Every live view of the base then reads its
history anew from the base, as PyTorch regenerates a view's grad_fn.
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.tensor import GradMode, Node, Tensor, _root, _wrap, apply
from gradcli.errors import BackwardError

# id(view) -> [weak reference to the view, its base, the chain of (op, params, node name) from the base, or None for
# a view PyTorch makes and gradcli copies, and what refuses an in-place update of it (a message) or None]
VIEWS: dict[int, list] = {}

_MULTIPLE = ("Output {k} of {name} is a view and is being modified inplace. This view is the output of a function "
             "that returns multiple views. Such functions do not allow the output views to be modified inplace. You "
             "should replace the inplace operation by an out-of-place one.")
_EXPANDED_PIECE = ("an in-place update of a piece of an expand()ed tensor is not supported by gradcli: PyTorch writes "
                   "it into the memory all the repeats share, which gradcli's expand does not keep writeable")
_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
            "Please clone() the tensor before performing the operation.")


def _remember(view: Tensor, base: Tensor, chain: tuple | None, refusal: str | None) -> None:
    key = id(view)
    VIEWS[key] = [weakref.ref(view, lambda _, key=key: VIEWS.pop(key, None)), base, chain, refusal]


def _entry(t: Tensor) -> list | None:
    entry = VIEWS.get(id(t))
    return entry if entry is not None and entry[0]() is t else None


def record(t: Tensor, x: Tensor, op: O.Op, params: dict, name: str | None) -> None:
    """`t = op(x)` came out sharing x's memory: remember it as a view of x's base."""
    if _root(t._data) is not _root(x._data):
        return
    entry = _entry(x)
    if entry is None:
        _remember(t, x, ((op, params, name),), None)
    else:  # a view of a view: of the same base, refused as the view it views is
        _remember(t, entry[1], None if entry[2] is None else entry[2] + ((op, params, name),), entry[3])


def copied(t: Tensor, x: Tensor, what: str) -> None:
    """A view in PyTorch that gradcli computes as a copy (diagonal): refuse to update it in place,
    since PyTorch would write the values through to `x` and gradcli cannot."""
    _remember(t, x, None, f"gradcli cannot update the view that {what}() returns in place: PyTorch writes it "
                          f"through to the tensor it views, but gradcli's {what}() is a copy")


def multiple(pieces: tuple[Tensor, ...], name: str) -> tuple[Tensor, ...]:
    """split/chunk/unbind: views PyTorch refuses to update in place while gradients are recorded."""
    for k, piece in enumerate(pieces):
        entry = _entry(piece)
        if entry is not None:
            entry[3] = _MULTIPLE.format(k=k, name=name)
    return pieces


def base(t: Tensor) -> Tensor:
    """The tensor `t` views (itself when it is no view)."""
    entry = _entry(t)
    return t if entry is None else entry[1]


def base_of(t: Tensor) -> tuple[Tensor, tuple] | None:
    """(base, chain) when `t` is a view that an update must write through, else None; refuses what cannot be."""
    entry = _entry(t)
    if entry is None:
        return None
    base, chain, refusal = entry[1], entry[2], entry[3]
    if chain is None:
        raise BackwardError(refusal, hint="clone() it first to update a separate tensor, or write the elements "
                                          "through indexing (x[i, i] = v)")
    if _root(t._data) is not _root(base._data):  # the base took other memory (x.data = ...): no longer a view
        return None
    if refusal is not None and GradMode.enabled and base.requires_grad:
        raise BackwardError(refusal, hint="write y = piece + ... instead, or clone() the piece first")
    data = t._data
    if any(stride == 0 and size > 1 for stride, size in zip(data.strides, data.shape)):
        raise BackwardError(_OVERLAP, hint="expand() repeats elements without copying them; clone() the expanded "
                                           "tensor before updating it")
    if not data.flags.writeable:  # one repeat of a repeating expand (e[0]): its memory is every repeat's
        raise BackwardError(_EXPANDED_PIECE, hint="update the tensor before expanding it (a.add_(v), then e = a.expand(...)), "
                                                  "or clone() the expanded tensor to update a separate copy")
    return base, chain


def write_back(out: Tensor, base: Tensor, chain: tuple) -> None:
    """Give `base` the history of an in-place update whose new view value is `out` (already in memory)."""
    from gradcli.engine import functions as F
    inputs = [base._data]
    for op, params, _ in chain[:-1]:
        inputs.append(op.forward(inputs[-1], **params))
    placed = out if out.dtype == base.dtype else F.to_dtype(out, base.dtype)
    covered: Any = np.ones(out.shape, dtype=base.dtype)
    for (op, params, _), x in zip(reversed(chain), reversed(inputs)):
        placed = _carried(op, F, placed, x, params)
        covered = _carried(op, O.NUMPY, covered, x, params)
    new = apply(O.ADD, F.mul(base, _wrap(np.asarray(1 - covered, dtype=base.dtype))), placed, name="CopySlices")
    rebase(base, new._node)
    refresh(base)


def _carried(op: O.Op, ns: Any, g: Any, x: np.ndarray, params: dict) -> Any:
    """The view op's VJP, summed back to its input's shape as backward does (expand adds leading 1s)."""
    g = op.vjps[0](ns, g, None, x, **params)
    return g if g.shape == x.shape else O.unbroadcast(ns, g, x.shape)


def rebase(t: Tensor, node: Node) -> None:
    """`t` takes `node` as its history; a retain_grad() of the history it had moves along, as in PyTorch
    (the old node still feeds the new one, and must not fill `t.grad` with its gradient)."""
    old = t._node
    if old is not None and old.retained is not None and old.retained() is t:
        node.retained, old.retained = old.retained, None
    t._node, t.requires_grad = node, True


def refresh(base: Tensor) -> None:
    """Every live view of `base` reads its history from the base's current one, its own node named as
    PyTorch names a regenerated view's (AsStridedBackward0)."""
    for ref, b, chain, _ in list(VIEWS.values()):
        view = ref()
        if b is base and view is not None and chain is not None and _root(view._data) is _root(base._data):
            v = base
            for k, (op, params, name) in enumerate(chain, 1):
                v = apply(op, v, name="AsStridedBackward0" if k == len(chain) else name, **params)
            rebase(view, v._node)
