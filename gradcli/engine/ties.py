"""Comparisons at their boundary: `x > 0` where x is exactly 0, on a tensor that requires grad.

A mask is data: `torch.where(x > 0, x + 1, x)` and `(x > 0).float() * x` record the mask as a
constant, so autograd (PyTorch's too) differentiates as if x never crossed 0. Where an element
sits exactly on the boundary, the function has a jump or a kink there that the graph cannot show,
and `--check` must not call its derivative verified. The comparison notes such elements here, by
the node (or leaf) compared, weakly; the checker reads them (`ties_of`).
"""
from __future__ import annotations

import weakref
from typing import Any

import numpy as np

TIES: dict[int, tuple[weakref.ref, list[tuple[np.ndarray, np.ndarray]]]] = {}
"""id(node or leaf) -> (weak reference to it, [(the mask, in the comparison's result shape, of its elements
compared at equality; their values then)]). A leaf's tie holds only while the leaf keeps those values: an
optimizer step that moves a zero-initialized bias off 0 ends it."""


def note_comparison(owner: Any, left: np.ndarray, right: Any) -> None:
    """Keep where `left` equals `right` (the boundary of any order comparison of them) for `owner`."""
    with np.errstate(invalid="ignore"):
        mask = np.asarray(left == right, dtype=bool)
    if not mask.any():
        return
    key = id(owner)
    entry = TIES.get(key)
    if entry is None or entry[0]() is not owner:
        entry = TIES[key] = (weakref.ref(owner, lambda _, key=key: TIES.pop(key, None)), [])
    if len(entry[1]) >= 8:  # a loop comparing the same tensor again: the oldest are the likeliest stale
        del entry[1][0]
    entry[1].append((mask, np.array(np.broadcast_to(left, mask.shape)[mask])))


def ties_of(owner: Any, now: np.ndarray | None = None) -> list[np.ndarray]:
    """The masks of `owner`'s ties that still hold at its values `now` (None: a node's, which never change)."""
    entry = TIES.get(id(owner))
    if entry is None or entry[0]() is not owner:
        return []
    return [mask for mask, then in entry[1]
            if now is None or np.array_equal(np.broadcast_to(now, mask.shape)[mask], then)]
