"""Comparisons at their boundary: `x > 0` where x is exactly 0, on a tensor that requires grad.

A mask is data: `torch.where(x > 0, x + 1, x)` and `(x > 0).float() * x` record the mask as a
constant, so autograd (PyTorch's too) differentiates as if x never crossed 0. Where an element
sits exactly on the boundary, the function has a jump or a kink there that the graph cannot show,
and `--check` must not call its derivative verified. The comparison notes such elements here, by
the node (or leaf) compared, weakly; so do sort, topk and kthvalue for tied elements, whose pick
is as arbitrary; the checker reads them (`ties_of`).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

TIES: dict[int, tuple[weakref.ref, list[tuple[np.ndarray, np.ndarray, str]]]] = {}
"""id(node or leaf) -> (weak reference to it, [(the mask, in the comparison's result shape, of its elements
compared at equality; their values then; why, from COMPARED or ORDERED)]). A leaf's tie holds only while the leaf keeps those values: an
optimizer step that moves a zero-initialized bias off 0 ends it."""


COMPARED = "a comparison of {} sits on its boundary (as x > 0 at x = 0): the mask it made is a constant of the graph"
ORDERED = "{} has tied elements to order: which of them the pick takes is a constant of the graph"


def note_comparison(owner: Any, left: np.ndarray, right: Any) -> None:
    """Keep where `left` equals `right` (the boundary of any order comparison of them) for `owner`."""
    with np.errstate(invalid="ignore"):
        note(owner, left, np.asarray(left == right, dtype=bool), COMPARED)


def note_order(owner: Any, values: np.ndarray, dim: int, what: str) -> None:
    """Keep the elements of `values` that another element along `dim` equals: the order picked among them
    is arbitrary (PyTorch's own pick differs by kernel), and the gradient follows the pick."""
    if values.ndim == 0 or values.dtype.kind != "f":
        return
    order = np.argsort(values, axis=dim, kind="stable")
    ordered = np.moveaxis(np.take_along_axis(values, order, axis=dim), dim, -1)
    same = ordered[..., 1:] == ordered[..., :-1]
    if not same.any():
        return
    dup = np.zeros(ordered.shape, dtype=bool)
    dup[..., 1:] |= same
    dup[..., :-1] |= same
    tied = np.zeros(values.shape, dtype=bool)
    np.put_along_axis(tied, order, np.moveaxis(dup, -1, dim), axis=dim)
    note(owner, values, tied, ORDERED.format("{}") + f" ({what})")


def note(owner: Any, left: np.ndarray, mask: np.ndarray, why: str) -> None:
    """Keep `mask` (elements at a boundary, in the shape `left` broadcasts to) for `owner`, with `why`."""
    if not mask.any():
        return
    key = id(owner)
    entry = TIES.get(key)
    if entry is None or entry[0]() is not owner:
        entry = TIES[key] = (weakref.ref(owner, lambda _, key=key: TIES.pop(key, None)), [])
    if len(entry[1]) >= 8:  # a loop comparing the same tensor again: the oldest are the likeliest stale
        del entry[1][0]
    entry[1].append((mask, np.array(np.broadcast_to(left, mask.shape)[mask]), why))


def ties_of(owner: Any, now: np.ndarray | None = None) -> list[tuple[np.ndarray, str]]:
    """(mask, why) of `owner`'s ties that still hold at its values `now` (None: a node's, which never change);
    `why` has a {} for what to call the owner."""
    entry = TIES.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return []
    return [(mask, why) for mask, then, why in entry[1]
            if now is None or np.array_equal(np.broadcast_to(now, mask.shape)[mask], then)]
