"""The finite-difference witness: re-run the recorded forward on nudged leaves, like gradcheck.

Each op's NumPy `forward` from the table is replayed in float64 (no autograd, no VJP), so a
program too big for SymPy can still be checked. A point where the function has a kink is told
apart from a wrong gradient by its one-sided slopes: they differ there, and nowhere else.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gradcli import ops as O
from gradcli.check.kinks import KINKS
from gradcli.check.report import InputCheck, compare
from gradcli.check.trace import Trace, label
from gradcli.tensor import Node, Tensor

EPS = 1e-6


@dataclass(frozen=True)
class Site:
    """An op evaluated on a kink: its node, the mask of kinked elements, and its inputs there."""

    node: Node
    mask: np.ndarray
    inputs: tuple[np.ndarray, ...]


def _float64(x: Any) -> Any:
    if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype != np.float64:
        return x.astype(np.float64)
    if isinstance(x, np.floating):
        return float(x)
    return x


def forward(tr: Trace, leaf_values: dict[int, np.ndarray]) -> dict[Any, Any]:
    """Every node's value from these leaf values, computed in float64 (casts to a float type are skipped)."""
    values: dict[Any, Any] = dict(leaf_values)
    for node in tr.nodes:
        args = [_float64(tr.resolve(x, values)) for x in node.inputs]
        if node.op is O.CAST and np.dtype(node.params["dtype"]).kind == "f":
            values[node] = args[0]
        else:
            values[node] = np.asarray(node.op.forward(*args, **node.params))
    return values


def leaf_values(tr: Trace) -> dict[int, np.ndarray]:
    return {id(t): np.array(t._data, dtype=np.float64) for t in tr.leaves.values()}


def _kinked_inputs(node: Node, mask: np.ndarray, args: list[Any]) -> tuple[np.ndarray, ...]:
    return tuple(np.broadcast_to(np.asarray(a), mask.shape)[mask] for a in args
                 if np.asarray(a).dtype.kind in "fiub" and _broadcasts(np.shape(a), mask.shape))


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def kink_sites(tr: Trace, values: dict[Any, Any]) -> list[Site]:
    """The ops whose inputs sit on a kink at this point, from their `kink` slot."""
    sites = []
    for node in tr.nodes:
        if node.op.kink is None:
            continue
        args = [tr.resolve(x, values) for x in node.inputs]
        mask = np.asarray(node.op.kink(KINKS, *args, **node.params), dtype=bool)
        if mask.any():
            sites.append(Site(node, mask, _kinked_inputs(node, mask, args)))
    return sites


def _loss(tr: Trace, values: dict[Any, Any], weights: np.ndarray) -> float:
    return float(np.sum(weights * tr.resolve(tr.root, values)))


def _moved(tr: Trace, values: dict[Any, Any], sites: list[Site]) -> Site | None:
    """The first kink site whose kinked inputs these values move: the nudged leaf reaches it."""
    for site in sites:
        args = [tr.resolve(x, values) for x in site.node.inputs]
        if any(not np.array_equal(a, b) for a, b in zip(_kinked_inputs(site.node, site.mask, args), site.inputs)):
            return site
    return None


def numeric_check(tr: Trace, weights: np.ndarray, computed: dict[str, np.ndarray | None],
                  selection: dict[str, np.ndarray], tolerances: dict[str, tuple[float, float]],
                  progress: Callable[[int, int], None] | None = None) -> dict[str, InputCheck]:
    """Central differences of L = Σ weights·output at each selected leaf element."""
    base = leaf_values(tr)
    weights = np.asarray(weights, dtype=np.float64)
    values = forward(tr, base)
    l0 = _loss(tr, values, weights)
    sites = kink_sites(tr, values)
    total = sum(len(v) for v in selection.values())
    done = 0
    results = {}
    for name, flat in selection.items():
        leaf = tr.leaves[name]
        key = id(leaf)
        expected = np.empty(len(flat))
        reasons: dict[int, str] = {}
        for pos, k in enumerate(flat):
            slopes = []
            reached = None
            for step in (EPS, -EPS):
                nudged = base[key].copy()
                nudged.flat[k] += step
                moved = forward(tr, {**base, key: nudged})
                slopes.append(_loss(tr, moved, weights))
                reached = reached or _moved(tr, moved, sites)
            lp, lm = slopes
            expected[pos] = (lp - lm) / (2 * EPS)
            right, left = (lp - l0) / EPS, (l0 - lm) / EPS
            rtol, atol = tolerances[name]
            if reached is not None and not abs(right - left) <= atol + 1e-2 * max(abs(right), abs(left)):
                reasons[pos] = (f"{reached.node.name} is on a kink here (one-sided slopes {left:.6g} and {right:.6g}); "
                                f"gradcli follows PyTorch: {reached.node.op.rule}")
            done += 1
            if progress is not None:
                progress(done, total)
        got = _computed(computed.get(name), leaf).reshape(-1)[flat]
        labels = [label(name, np.unravel_index(k, leaf.shape)) for k in flat]
        results[name] = compare(name, "numeric", labels, expected, got, reasons, leaf._data.size, tolerances[name])
    return results


def _computed(g: Any, leaf: Tensor) -> np.ndarray:
    """Autograd's gradient as float64 of the leaf's shape; no gradient at all means zeros."""
    if g is None:
        return np.zeros(leaf.shape)
    if isinstance(g, Tensor):
        g = g._data
    return np.broadcast_to(np.asarray(g, dtype=np.float64), leaf.shape)
