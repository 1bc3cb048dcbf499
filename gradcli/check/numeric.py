"""The finite-difference witness: re-run the recorded forward on nudged leaves, like gradcheck.

Each op's NumPy `forward` from the table is replayed in float64 (no autograd, no VJP), so a
program too big for SymPy can still be checked. A point where the function has a kink or a jump
is told apart from a wrong gradient by its difference quotients, which there do not converge.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.engine import ops as O
from gradcli.check.graph import CUT, Cut, Progress, Trace, as_float64, downstream, elements, widened
from gradcli.check.kinks import KINKS
from gradcli.check.report import FAIL, InputCheck, compare, scaled_atol
from gradcli.check.rounding import own_rounding
from gradcli.engine.tensor import Node, Tensor

EPS = 1e-6


@dataclass(frozen=True)
class Site:
    """An op evaluated on a kink: its node, the mask of kinked elements, and its inputs there."""

    node: Node
    mask: np.ndarray
    inputs: tuple[np.ndarray, ...]

    @property
    def reason(self) -> str:
        """Why a derivative through this site is reported undefined."""
        return self.node.op.approximate or f"{self.node.name} is at a kink: {self.node.op.rule}"

    def moved(self, tr: Trace, values: dict[Any, Any]) -> np.ndarray:
        """Which kinked elements (in mask order) other `values` of the leaves move off the kink."""
        args = [tr.resolve(x, values) for x in self.node.inputs]
        moved = np.zeros(int(np.count_nonzero(self.mask)), dtype=bool)
        for now, then in zip(_kinked_inputs(self.node, self.mask, args), self.inputs):
            moved |= now != then
        return moved


@dataclass(frozen=True)
class Tie:
    """A comparison at its boundary (`engine.ties`): `x > 0` where x, a node's value (or a leaf), is exactly 0.

    The mask it made is a constant of the graph, so no replay sees the jump or kink it stands for: an
    element whose nudge moves the compared values at `mask` is undefined, never judged."""

    node: Node | Tensor
    mask: np.ndarray
    value: np.ndarray
    why: str

    @property
    def reason(self) -> str:
        return self.why.format(self.node.name if type(self.node) is Node else "an input") + \
            ", so the jump or kink there is not seen by autograd, as by PyTorch's"

    def moved(self, tr: Trace, values: dict[Any, Any]) -> np.ndarray:
        now = np.broadcast_to(np.asarray(tr.resolve(self.node, values), dtype=np.float64), self.mask.shape)
        return now[self.mask] != self.value


def _ties(tr: Trace, values: dict[Any, Any]) -> list[Tie]:
    from gradcli.engine.ties import TIES, ties_of
    if not TIES:
        return []
    ties = []
    for owner in [*tr.nodes, *tr.leaves.values()]:
        if id(owner) in TIES:
            for mask, why in ties_of(owner, owner._data if type(owner) is Tensor else None):
                ties.append(Tie(owner, mask, np.broadcast_to(np.asarray(tr.resolve(owner, values), dtype=np.float64),
                                                             mask.shape)[mask], why))
    return ties


def forward(tr: Trace, leaf_values: dict[int, np.ndarray], base: dict[Any, Any] | None = None,
            redo: set[Node] | list[Node] | None = None, native: bool = False) -> dict[Any, Any]:
    """Every node's value from these leaf values, computed in float64 (casts to a float type are skipped).

    With `base` (another point's values) and `redo` (the nodes the changed leaves reach, see
    `graph.downstream`; a list is taken to be in graph order), the other nodes keep their `base`
    values: a nudge of the last layer's weights does not replay the first layer. `native`: in the
    program's own dtypes instead, as autograd computed them (where float32 ties that float64 tells
    apart).
    """
    values: dict[Any, Any] = dict(leaf_values) if base is None else {**base, **leaf_values}
    cuts = tr.cuts
    nodes = tr.nodes if redo is None else redo if isinstance(redo, list) else [n for n in tr.nodes if n in redo]
    with np.errstate(all="ignore"):
        for node in nodes:
            args = [_slot(x, values, native) for x in node.inputs]
            if node.op is O.CAST and np.dtype(node.params["dtype"]).kind == "f" and not native:
                values[node] = args[0]
            else:
                values[node] = np.asarray(node.op.forward(*args, **node.params))
            if cuts and node in cuts:
                values[(CUT, node)], values[node] = values[node], cuts[node].held
    return values


def _slot(x: Any, values: dict[Any, Any], native: bool) -> Any:
    """An input slot's value in a replay (`Trace.resolve`, then `widened` unless `native`), inlined: an LSTM's
    replays evaluate 40,000 slots a call."""
    kind = type(x)
    if kind is Node:
        value = values[x]
    elif kind is Tensor:
        value = values.get(id(x), x._data)
    else:
        value = x
    if native:
        return value
    if type(value) is np.ndarray:
        return value if value.dtype.kind != "f" or value.dtype.itemsize == 8 else value.astype(np.float64)
    return widened(value)


def hooked(tr: Trace, line: Callable[[Any], int | None]) -> Trace:
    """`tr` with a `Cut` at each node whose gradient a hook changed in the last backward through it.

    `line(hook)` is where the hook was written. Without hooks (the common case) `tr` itself.
    """
    from gradcli.engine.hooks import CHANGED, PASSED, changed_by_hook, passed_by_hook
    if not CHANGED and not PASSED:
        return tr
    found = {node: (passed_by_hook(node), changed_by_hook(node)) for node in tr.nodes}
    found = {node: change for node, change in found.items() if change != (None, None)}
    if not found:
        return tr
    values = forward(tr, leaf_values(tr))
    cuts = {}
    for node, (passed, change) in found.items():
        held = np.asarray(values[node], dtype=np.float64)
        if passed is not None:  # what the node passed its inputs replaces all that flows below it
            cuts[node] = Cut(held, None, line(passed[1]), tuple(None if g is None else np.asarray(g, dtype=np.float64)
                                                                for g in passed[0]))
        else:
            cuts[node] = Cut(held, np.asarray(change[1], dtype=np.float64), line(change[2]))
    return dataclasses.replace(tr, cuts=cuts)


def _hooked_terms(tr: Trace, values: dict[Any, Any]) -> float:
    """Σ gradient·tensor over the hooked tensors: what autograd propagates below each hook."""
    total = 0.0
    for node, cut in tr.cuts.items():
        inputs = [widened(tr.resolve(x, values)) for x in node.inputs] if cut.inputs else []
        pairs = cut.pairs(values[(CUT, node)], inputs)
        total += sum(float(np.sum(g * np.asarray(v, dtype=np.float64))) for v, g in pairs)
    return total


def leaf_values(tr: Trace) -> dict[int, np.ndarray]:
    return {id(t): np.array(t._data, dtype=np.float64) for t in tr.leaves.values()}


def _kinked_inputs(node: Node, mask: np.ndarray, args: list[Any]) -> tuple[np.ndarray, ...]:
    return tuple(np.broadcast_to(np.asarray(a), mask.shape)[mask] for a in args
                 if np.asarray(a).dtype.kind in "fiub" and broadcasts(np.shape(a), mask.shape))


def broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of `shape` broadcasts to `target` (a kink mask covers the broadcast inputs)."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def kink_sites(tr: Trace, values: dict[Any, Any], narrow_ties: bool = True) -> list[Site]:
    """The ops whose inputs sit on a kink at the traced point (`values`, in float64), from their `kink` slot,
    and the comparisons at their boundary (`Tie`).

    With `narrow_ties`, a narrower float type is looked at too, in the values autograd itself
    computed: two window elements can tie in float32 (and max-pool picks the first) where float64
    tells them apart.
    """
    narrow = narrow_ties and any(n.op.kink is not None and _narrow(n.dtype) for n in tr.nodes)
    native = _native(tr) if narrow else {}
    sites = []
    for node in tr.nodes:
        if node.op.kink is None:
            continue
        args = [tr.resolve(x, values) for x in node.inputs]
        mask = np.asarray(node.op.kink(KINKS, *args, **node.params), dtype=bool)
        if native:
            mask = mask | np.asarray(node.op.kink(KINKS, *[tr.resolve(x, native) for x in node.inputs],
                                                  **node.params), dtype=bool)
        if mask.any():
            sites.append(Site(node, mask, _kinked_inputs(node, mask, args)))
    return sites + _ties(tr, values)


def _native(tr: Trace) -> dict[Any, Any]:
    """Every node's value in the program's own dtypes, as autograd computed it."""
    return forward(tr, {id(t): t._data for t in tr.leaves.values()}, native=True)


def _own_rounding(tr: Trace, values: dict[Any, Any], weights: np.ndarray) -> Callable[[], dict[int, np.ndarray] | None]:
    """float32's own rounding (`rounding.own_rounding`), measured at the first call only: a call whose plain
    allowance suffices never pays for the two replays."""
    measured: list[dict[int, np.ndarray] | None] = []

    def get() -> dict[int, np.ndarray] | None:
        if not measured:
            measured.append(own_rounding(tr, values, _native(tr), weights))
        return measured[0]
    return get


def _narrow(dtype: Any) -> bool:
    """A float type less precise than float64, whose own rounding and ties float64 does not share."""
    return np.dtype(dtype).kind == "f" and np.dtype(dtype).itemsize < 8


def _loss(tr: Trace, values: dict[Any, Any], weights: np.ndarray) -> float:
    return float(np.sum(weights * tr.resolve(tr.root, values))) + (_hooked_terms(tr, values) if tr.cuts else 0.0)


def _moved(tr: Trace, values: dict[Any, Any], sites: list[Site]) -> Site | None:
    """The kink site (a tie first) whose kinked inputs these values move: the nudged leaf reaches it."""
    moved = [site for site in sites if site.moved(tr, values).any()]
    return next((site for site in moved if isinstance(site, Tie)), moved[0] if moved else None)  # a tie decides


def _constants(tr: Trace) -> dict[int, Any]:
    """The graph's constant tensors (by id) in float64, widened once for all of a point's replays: a float32 batch
    of 64x1000 was widened again by each of a training step's ten replays."""
    leaves = {id(t) for t in tr.leaves.values()}
    return {id(x): widened(x._data) for node in tr.nodes for x in node.inputs
            if type(x) is Tensor and id(x) not in leaves}


class Point:
    """The leaves' values (float64, by id) and every node's value there: what each nudge starts from.

    A nudge replays only the nodes its leaves reach (`graph.downstream`, kept by leaf).
    """

    def __init__(self, tr: Trace) -> None:
        self.tr = tr
        self.leaves = leaf_values(tr)
        self.values = forward(tr, {**_constants(tr), **self.leaves})
        self._reach: dict[frozenset[int], list[Node]] = {}
        self._masks: dict[Node, int] | None = None
        self._bits: dict[int, int] = {}

    def moved(self, leaves: dict[int, np.ndarray]) -> dict[Any, Any]:
        """Every node's value with these leaves (by id) at new values."""
        keys = frozenset(leaves)
        if keys not in self._reach:
            self._reach[keys] = self._downstream(keys)
        return forward(self.tr, leaves, self.values, self._reach[keys])

    def _downstream(self, keys: frozenset[int]) -> list[Node]:
        """`graph.downstream`, from one pass over the graph for all its leaves (a bit per leaf): a transformer's
        26 parameters each walked its 700 nodes again, every call."""
        if self._masks is None:
            bits = {id(t): 1 << k for k, t in enumerate(self.tr.leaves.values())}
            self._bits = bits
            self._masks = masks = {}
            for node in self.tr.nodes:
                mask = 0
                for x in node.inputs:
                    mask |= masks.get(x, 0) if type(x) is Node else bits.get(id(x), 0) if type(x) is Tensor else 0
                masks[node] = mask
        if not keys <= self._bits.keys():
            reached = downstream(self.tr, set(keys))
            return [node for node in self.tr.nodes if node in reached]
        want = 0
        for key in keys:
            want |= self._bits[key]
        return [node for node, mask in self._masks.items() if mask & want]

    def nudged(self, steps: list[tuple[int, int, float]]) -> dict[Any, Any]:
        """Every node's value with leaf elements moved (`(leaf id, flat index, step)` each)."""
        moved: dict[int, np.ndarray] = {}
        for key, k, step in steps:
            moved.setdefault(key, self.leaves[key].copy()).flat[k] += step
        return self.moved(moved)


def kinked_in_float64(tr: Trace, name: str, flat: np.ndarray) -> set[int]:
    """The elements of input `name` (flat indices among `flat`) whose nudge moves an elementwise op that sits on a
    kink in a float64 replay too: a kink of the function itself, not a tie only float32's rounding made (where
    the float64 function is smooth and autograd follows float32's pick). Elementwise ops only (relu, clamp, abs,
    pow): their replay is the function on both sides of the kink, where max-pool's replays the pick it recorded
    (its indices are a parameter), so one-sided quotients through it cannot tell a tie from a smooth point."""
    point = Point(tr)
    sites = [site for site in kink_sites(tr, point.values, narrow_ties=False)
             if not isinstance(site, Tie) and site.node.op.elementwise]
    key = id(tr.leaves[name])
    return {int(k) for k in flat if any(_moved(tr, point.nudged([(key, int(k), step)]), sites) is not None
                                        for step in (EPS, -EPS))}


def _nudged_output(tr: Trace, point: Point, steps: list[tuple[int, int, float]],
                   sites: list[Site]) -> tuple[np.ndarray, Site | None]:
    """The output with leaf elements moved, and the first kink site the move reaches."""
    moved = point.nudged(steps)
    return np.asarray(tr.resolve(tr.root, moved), dtype=np.float64), _moved(tr, moved, sites)


def _terms(tr: Trace, values: dict[Any, Any], weights: np.ndarray) -> np.ndarray:
    """What L = Σ weights·output adds up as floating point sums it: a full sum's (or mean's) terms, else its own.

    The rounding of a sum is relative to its terms, so their derivatives' magnitudes (the sum
    over terms of |∂term/∂s|) measure what the gradient's rounding is relative to.
    """
    root = tr.root
    if type(root) is Node and root.op.name in ("sum", "mean") and np.size(values[root]) == 1:
        terms = np.asarray(tr.resolve(root.inputs[0], values), dtype=np.float64).reshape(-1)
        scale = 1.0 if root.op.name == "sum" else 1.0 / max(terms.size, 1)
        return terms * scale * float(weights.reshape(-1)[0])
    return (weights * np.asarray(tr.resolve(root, values), dtype=np.float64)).reshape(-1)


def _spread(up: np.ndarray, down: np.ndarray, step: float = EPS) -> float:
    """Σ |∂term/∂s| from the terms at s ± step; a term that is not finite (0/0 in the forward) has no size."""
    with np.errstate(invalid="ignore"):
        change = np.abs(up - down)
    return float(np.sum(change[np.isfinite(change)])) / (2 * step)


def term_magnitudes(tr: Trace, weights: np.ndarray, selection: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Σ over L's terms of |∂term/∂s| for each selected leaf element, by central differences of the terms.

    SymPy collects like terms (c₁·w + c₂·w becomes (c₁ + c₂)·w), so the magnitudes it measures can
    miss a cancellation floating point does not get to make; the terms of the top sum are measured
    here without it.
    """
    point = Point(tr)
    weights = np.asarray(weights, dtype=np.float64)
    out = {}
    for name, flat in selection.items():
        key = id(tr.leaves[name])
        sizes = []
        for k in flat:
            up, down = (_terms(tr, point.nudged([(key, k, step)]), weights) for step in (EPS, -EPS))
            sizes.append(_spread(up, down))
        out[name] = np.array(sizes)
    return out


def _nudged(tr: Trace, point: Point, key: int, k: int, step: float, weights: np.ndarray,
            sites: list[Site]) -> tuple[float, Site | None, np.ndarray]:
    """L with one leaf element moved by `step`, the first kink site the move reaches, and L's terms."""
    moved = point.nudged([(key, k, step)])
    return _loss(tr, moved, weights), _moved(tr, moved, sites), _terms(tr, moved, weights)


def _shorter(tr: Trace, point: Point, key: int, k: int, weights: np.ndarray, sites: list[Site], got: float,
             rtol: float, allowed: float) -> tuple[float, float] | None:
    """An element's central difference again with steps 10 and 100 times shorter, before it fails.

    A ReLU net near its fit has units whose kink lies within the step of one weight's nudge: the
    quotient then mixes two slopes and strays from the true one, by an amount that shrinks with the
    step. (quotient, its rounding resolution) at the first shorter step that moves no kink site and
    agrees with `got` within `allowed` plus that resolution (itself within the tolerance); None when none does (a wrong
    gradient stays as far from every step's quotient)."""
    for step in (EPS / 10, EPS / 100):
        (lp, site, _), (lm, site_m, _) = (_nudged(tr, point, key, k, h, weights, sites) for h in (step, -step))
        if site is not None or site_m is not None:
            return None
        slope = (lp - lm) / (2 * step)
        resolution = 8 * np.finfo(np.float64).eps * max(abs(lp), abs(lm)) / step
        if resolution > rtol * abs(slope):  # L's rounding over this step blurs the slope past the tolerance
            return None
        if np.isclose(got, slope, rtol, allowed + resolution):
            return slope, resolution
    return None


def _close(a: float, b: float, atol: float) -> bool:
    return abs(a - b) <= atol + 1e-2 * max(abs(a), abs(b))


def numeric_check(tr: Trace, weights: np.ndarray, computed: dict[str, np.ndarray | None],
                  selection: dict[str, np.ndarray], tolerances: dict[str, tuple[float, float]],
                  progress: Progress | None = None, rounding: dict[str, np.ndarray] | None = None,
                  gamma: float = 0.0) -> dict[str, InputCheck]:
    """Central differences of L = Σ weights·output at each selected leaf element.

    Each element's allowance for gradcli's own rounding (see `rounding`) is `gamma` times the
    magnitude of its terms: finite differences measure it at the top sum (Σ|∂term/∂s| from the
    same nudged replays), and `rounding[name]`, from a SymPy proof of the same graph structure,
    sees every sum inside; the larger is used. In a graph narrower than float64, an element that
    neither allows for is given twice float32's own rounding as well, measured as `directional_check`
    does (the same VJPs in float64 at the same point: a float32 net near its fit cancels inside sums
    SymPy could not take; a wrong VJP is as wrong in float64, so the witness still catches it).

    Where a nudge moves an op's input off a kink, the difference quotients are also taken one-sided
    and at twice the step: if they disagree (a corner) or grow as the step shrinks (a jump), the
    derivative does not exist there and the element is reported as undefined. So is an element
    whose path crosses a kink that the rest of the program smooths over (max(-|x|, x) at 0):
    autograd's subgradient convention there is PyTorch's, not the limit of the quotients. An element whose
    one-sided quotients disagree with no kink at the point itself (one lies within the step) is
    not judged either when it would fail: there finite differences measure the wrong thing.
    """
    point = Point(tr)
    weights = np.asarray(weights, dtype=np.float64)
    values = point.values
    l0 = _loss(tr, values, weights)
    sites = kink_sites(tr, values)
    narrow = gamma and any(_narrow(n.dtype) for n in tr.nodes)
    measured = _own_rounding(tr, values, weights)

    def own(key: int, k: int) -> float:
        """Twice float32's own rounding at element k (0 through a Function's VJP)."""
        rounding = measured()
        return 0.0 if rounding is None or key not in rounding else 2 * abs(float(rounding[key].reshape(-1)[k]))
    total = sum(len(v) for v in selection.values())
    done = 0
    results = {}
    for name, flat in selection.items():
        leaf = tr.leaves[name]
        key = id(leaf)
        got = as_float64(computed.get(name), leaf.shape, 0.0).reshape(-1)[flat]
        expected = np.empty(len(flat))
        reasons: dict[int, str] = {}
        rtol, atol = tolerances[name]
        judged = scaled_atol(atol, got)  # the claim's size stands for the gradient's here; `atol` tells smoothness
        allowance = np.array((rounding or {}).get(name, np.zeros(len(flat))), dtype=np.float64)
        for pos, k in enumerate(flat):
            (lp, site, up), (lm, site_m, down) = (_nudged(tr, point, key, k, step, weights, sites)
                                                  for step in (EPS, -EPS))
            allowance[pos] = max(allowance[pos], gamma * _spread(up, down))
            expected[pos] = (lp - lm) / (2 * EPS)
            if narrow and not np.isclose(got[pos], expected[pos], rtol, judged + allowance[pos]):
                allowance[pos] += own(key, k)
            site = site or site_m
            right, left = (lp - l0) / EPS, (l0 - lm) / EPS
            if isinstance(site, Tie) or site is not None and site.node.op.approximate:
                reasons[pos] = site.reason
            elif site is not None:
                right2 = (_nudged(tr, point, key, k, 2 * EPS, weights, sites)[0] - l0) / (2 * EPS)
                left2 = (l0 - _nudged(tr, point, key, k, -2 * EPS, weights, sites)[0]) / (2 * EPS)
                if not (_close(right, left, atol) and _close(right, right2, atol) and _close(left, left2, atol)):
                    reasons[pos] = (f"{site.node.name} is at a kink (one-sided slopes {left:.6g} and {right:.6g}): "
                                    f"{site.node.op.rule}")
                else:  # C¹ here: the central quotient strays from the slope by about half the sides' gap (h·f''/2)
                    allowance[pos] += abs(right - left) / 2
                    if not np.isclose(got[pos], expected[pos], rtol, judged + allowance[pos]):
                        reasons[pos] = (f"{site.node.name} is at a kink, where autograd follows PyTorch's convention "
                                        f"({site.node.op.rule}) although the whole function is smooth here")
            elif not _close(right, left, atol) and not np.isclose(got[pos], expected[pos], rtol, judged + allowance[pos]):
                reasons[pos] = (f"not smooth within the finite-difference step (one-sided slopes {left:.6g} and "
                                f"{right:.6g}): finite differences cannot judge this element")
            if pos not in reasons and not np.isclose(got[pos], expected[pos], rtol, judged + allowance[pos]):
                shorter = _shorter(tr, point, key, k, weights, sites, got[pos], rtol, judged + allowance[pos])
                if shorter is not None:  # a kink (or curvature) within the step moved the quotient
                    expected[pos], extra = shorter
                    allowance[pos] += extra
            if pos not in reasons and not np.isclose(got[pos], expected[pos], rtol, judged + allowance[pos]):
                resolution = 8 * np.finfo(np.float64).eps * max(abs(lp), abs(lm), abs(l0)) / EPS
                if abs(got[pos] - expected[pos]) <= resolution:
                    reasons[pos] = (f"finite differences cannot resolve this element: rounding of the output "
                                    f"(about {abs(l0):.3g}) over a step of {EPS:g} is {resolution:.3g}")
            done += 1
            if progress is not None:
                progress(done, total)
        results[name] = compare(name, "numeric", elements(name, leaf.shape, flat), expected, got, reasons,
                                leaf._data.size, tolerances[name], allowance)
    return results


SHORTER = (1, 10, 100)
"""A direction's steps: `_direction_step`'s, then 10 and 100 times shorter."""
DIRECTIONS = 1
"""Random directions per input for the directional witness, two replays each (gradcheck's fast mode takes one)."""
DRAWS = 4
"""Directions an input may draw to find `DIRECTIONS` that can judge, before it is checked element by element."""
RESOLUTION = 1e-4
"""How much of v·∇L the rounding of L over a directional step may be: the step is as short as that allows."""
KINK_SHARE = 0.25
"""How much of the tolerance a direction's asymmetry (|(L(h) - L(0)) - (L(0) - L(-h))| / 2h) may take before the
direction is retried shorter or redrawn. A kink crossed within the step moves the central quotient by as much as
it makes the sides differ, and float32's own rounding of v·∇L needs the rest of the tolerance: accepting
asymmetries up to the whole tolerance (float32's rounding included) failed a correct two-layer net near its fit
(`linear1.bias·v1` off by 0.18%, the float64 VJP agreeing with autograd's float32 within its rounding)."""
SHORTEST = 1e-8
"""The shortest directional step: below it the rounding inside L's sums (not seen in its top sum) takes over.
A two-layer net's relu units cross their kink within steps of 1e-6 along v often enough to move v·∇L by
0.1%; within 1e-8 its quotients agree with a float64 backward to eight digits."""


def _direction_step(scale: float, slope: float) -> float:
    """The step along v: short, so that curvature and kinks within it barely move the quotient, but long
    enough that L's rounding (float64's ε times the size of its terms) stays below `RESOLUTION`·|slope|.

    `slope` is autograd's v·∇L: a step sized by a wrong claim still measures the true slope."""
    if not np.isfinite(scale) or not np.isfinite(slope) or slope == 0:
        return EPS
    return float(min(EPS, max(SHORTEST, np.finfo(np.float64).eps * scale / (RESOLUTION * abs(slope)))))


def directional_check(tr: Trace, weights: np.ndarray, computed: dict[str, np.ndarray | None], names: list[str],
                      tolerances: dict[str, tuple[float, float]], gamma: float,
                      seed: int | list[int], steps: dict[str, int] | None = None) -> dict[str, InputCheck] | None:
    """v·∇L from autograd against the central difference of L = Σ weights·output along v, per input.

    gradcheck's fast mode, for a call whose graph structure an earlier call verified element by
    element: each input moves along `DIRECTIONS` standard normal directions drawn with `seed`, two
    replays each, instead of two per element. A wrong VJP moves v·∇L off the difference for almost
    every v, however few of its elements it gets wrong; what it cannot do is name the element (a
    caller that sees a failure checks element by element). The rounding allowance is γ times the
    magnitude of the top sum's terms along v, as `numeric_check` measures it per element, plus the
    resolution of the quotient (L's rounding over the step), plus, in a graph narrower than
    float64 where that is not enough, twice its own rounding along v as
    `rounding.own_rounding` measures it.

    A direction cannot judge where it moves an op on a kink, or where a kink (or curvature) within
    the step makes the one-sided slopes differ by more than `KINK_SHARE` of the tolerance (the central
    difference may then be off the slope by as much): it is tried again with
    steps 10 and 100 times shorter, then replaced by another draw. An input whose `DRAWS` do not give
    `DIRECTIONS` that can judge is left out of the result (a nudge of w2 may judge where every
    direction of w1 moves a kink); None when float32's rounding cannot be measured (a Function's VJP).

    `steps` (by input, kept by the caller across a loop's calls of one structure) remembers which of the
    three steps judged last time, and that one is tried first, the others after it: the same steps and the
    same test, in an order that spares a training loop's replays (its first layer's direction was judged
    at the shortest step in most calls, after two pairs of full replays that could not judge).
    """
    point = Point(tr)
    weights = np.asarray(weights, dtype=np.float64)
    l0 = _loss(tr, point.values, weights)
    scale = max(abs(l0), float(np.sum(np.abs(_terms(tr, point.values, weights)))))
    sites = kink_sites(tr, point.values, narrow_ties=False)  # a float32 tie that fails a direction: see above
    narrow = gamma and any(_narrow(n.dtype) for n in tr.nodes)
    measured = _own_rounding(tr, point.values, weights)

    def own(key: int, v: np.ndarray) -> float | None:
        """Twice float32's own rounding along v (None: a Function's VJP)."""
        rounding = measured()
        return None if rounding is None else 2 * abs(float(np.sum(rounding.get(key, 0.0) * v)))
    rng = np.random.default_rng(seed)
    results = {}
    for name in names:
        leaf = tr.leaves[name]
        key = id(leaf)
        start = point.leaves[key]
        gradient = as_float64(computed.get(name), leaf.shape, 0.0)
        rtol, atol = tolerances[name]
        expected, got, allowance = [], [], []
        directions: list[np.ndarray] = []
        first = 0 if steps is None else steps.get(name, 0)
        order = [first, *(k for k in range(len(SHORTER)) if k != first)]
        for _ in range(DRAWS):
            drawn = rng.standard_normal(leaf.shape)
            longest = _direction_step(scale, float(np.sum(gradient * drawn)))
            for level in order:  # curvature over the step shrinks with it
                h = longest / SHORTER[level]
                ends = [point.moved({key: start + step * drawn}) for step in (h, -h)]
                if any(_moved(tr, moved, sites) is not None for moved in ends):
                    break
                v = (ends[0][key] - ends[1][key]) / (2 * h)  # the step as float64 rounded it
                (lp, up), (lm, down) = ((_loss(tr, moved, weights), _terms(tr, moved, weights)) for moved in ends)
                slope = (lp - lm) / (2 * h)
                resolution = 8 * np.finfo(np.float64).eps * scale / h
                asymmetry = abs((lp - l0) - (l0 - lm)) / (2 * h)
                if asymmetry <= KINK_SHARE * (atol + rtol * abs(slope)) + resolution:
                    expected.append(slope)
                    got.append(float(np.sum(gradient * v)))
                    allowance.append(gamma * _spread(up, down, h) + resolution)
                    directions.append(v)
                    if steps is not None:
                        steps[name] = level
                    break
            if len(expected) == DIRECTIONS:
                break
        else:
            continue
        labels = [(f"{name}·v{d + 1}", ()) for d in range(DIRECTIONS)]
        found = compare(name, "directional", labels, np.array(expected), np.array(got), {}, leaf._data.size,
                        (rtol, atol), np.array(allowance))
        if found.status == FAIL and narrow:  # measured only when the plain allowance is not enough
            extras = [own(key, v) for v in directions]
            if None in extras:
                return None
            allowance = [a + e for a, e in zip(allowance, extras)]
            found = compare(name, "directional", labels, np.array(expected), np.array(got), {}, leaf._data.size,
                            (rtol, atol), np.array(allowance))
        results[name] = found
    return results


def _kink_reason(site: Site | Tie) -> str:
    if isinstance(site, Tie):
        return site.reason
    return f"{site.node.name} is at a kink, where finite differences cannot judge: {site.node.op.rule}"


def numeric_jacobian_check(tr: Trace, computed: dict[str, np.ndarray], rows: np.ndarray,
                           selection: dict[str, np.ndarray], tolerances: dict[str, tuple[float, float]], of: str,
                           progress: Progress | None = None, rounding: dict[str, np.ndarray] | None = None
                           ) -> dict[str, InputCheck]:
    """Each selected entry ∂outₖ/∂xⱼ by central differences: one pair of forward replays per input element.

    An entry whose nudge moves an op off a kink is reported as undefined rather than judged.
    """
    point = Point(tr)
    sites = kink_sites(tr, point.values)
    shape = tuple(tr.output.shape)
    total, done = sum(len(flat) for flat in selection.values()), 0
    results = {}
    for name, flat in selection.items():
        leaf = tr.leaves[name]
        block = np.asarray(computed[name], dtype=np.float64).reshape(-1, leaf._data.size)
        entries, expected, got, reasons = [], [], [], {}
        for (wrt, j_index), j in zip(elements(name, leaf.shape, flat), flat):
            (plus, site), (minus, site_m) = (_nudged_output(tr, point, [(id(leaf), j, step)], sites)
                                             for step in (EPS, -EPS))
            column = ((plus - minus) / (2 * EPS)).reshape(-1)
            for (of_k, k_index), k in zip(elements(of, shape, rows), rows):
                if site or site_m:
                    reasons[len(entries)] = _kink_reason(site or site_m)
                entries.append((f"∂{of_k}/∂{wrt}", k_index + j_index))
                expected.append(column[k])
                got.append(block[k, j])
            done += 1
            if progress is not None:
                progress(done, total)
        results[name] = compare(name, "numeric", entries, np.array(expected), np.array(got), reasons,
                                block.size, tolerances[name], (rounding or {}).get(name, 0.0))
    return results


HESSIAN_EPS = 1e-4
"""Second differences divide by the step squared: a larger step keeps float64 rounding below the tolerance."""


def numeric_hessian_check(tr: Trace, computed: dict[str, dict[str, np.ndarray]], selection: dict[str, np.ndarray],
                          tolerances: dict[str, tuple[float, float]], of: str, progress: Progress | None = None,
                          rounding: dict[str, np.ndarray] | None = None) -> dict[str, InputCheck]:
    """Each selected ∂²out/∂s∂t of a one-element output by second central differences of the forward."""
    point = Point(tr)
    sites = kink_sites(tr, point.values)
    h = HESSIAN_EPS
    names = list(selection)
    total, done = sum(len(selection[a]) for a in names) * len(names), 0

    def value(steps: list[tuple[int, int, float]]) -> tuple[float, Site | None]:
        out, site = _nudged_output(tr, point, steps, sites)
        return float(out.reshape(-1)[0]), site
    results = {}
    for a in names:
        for b in names:
            la, lb = tr.leaves[a], tr.leaves[b]
            block = np.asarray(computed[a][b], dtype=np.float64).reshape(la._data.size, lb._data.size)
            entries, expected, got, reasons = [], [], [], {}
            for (by_i, i_index), i in zip(elements(a, la.shape, selection[a]), selection[a]):
                for (by_j, j_index), j in zip(elements(b, lb.shape, selection[b]), selection[b]):
                    corners = [value([(id(la), i, si * h), (id(lb), j, sj * h)]) for si in (1, -1) for sj in (1, -1)]
                    (pp, s1), (pm, s2), (mp, s3), (mm, s4) = corners
                    if s1 or s2 or s3 or s4:
                        reasons[len(entries)] = _kink_reason(s1 or s2 or s3 or s4)
                    entries.append((f"∂²{of}/∂{by_i}∂{by_j}", i_index + j_index))
                    expected.append((pp - pm - mp + mm) / (4 * h * h))
                    got.append(block[i, j])
                done += 1
                if progress is not None:
                    progress(done, total)
            key = a if a == b else f"{a},{b}"
            results[key] = compare(key, "numeric", entries, np.array(expected), np.array(got), reasons, block.size,
                                   tolerances[a], (rounding or {}).get(key, 0.0))
    return results
