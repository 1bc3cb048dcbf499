"""The SymPy witness: ∂L/∂s for L = Σ gradient·output, from the replayed forward meaning.

Rather than differentiating one giant sum, each checked symbol is differentiated only in the
output elements that contain it (∂L/∂s = Σₖ gₖ ∂outₖ/∂s), and within those only in the terms
that contain it. Values come from the float64 evaluator, or stay exact until the comparison
with `exact=True`.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from gradcli.check.domains import domain_cause
from gradcli.check.calculus import AbsoluteEvaluator, Calculus, ExactEvaluator, FloatEvaluator
from gradcli.check.formula import Kept, describe, display_positions, line, printable
from gradcli.check.graph import DENSE, Progress, Trace, as_float64, elements, terms_estimate, tree_estimate
from gradcli.check.meaning import Meaning, TooLarge
from gradcli.check.numeric import forward, kink_sites, leaf_values
from gradcli.check.replay import Replay, replay
from gradcli.engine.ties import TIES
from gradcli.check.report import InputCheck, compare


@dataclass
class Witness:
    """A replayed program with what every derivative needs: caches, the point, an evaluator."""

    rp: Replay
    calc: Calculus
    meaning: Meaning
    evaluate: Any
    exact: bool
    size: AbsoluteEvaluator

    def total(self, parts: list[Any]) -> Any:
        return sp.Add(*parts) if self.exact else sum(parts)

    def derivative(self, e: Any, s: sp.Symbol, memo: dict) -> sp.Expr:
        """∂e/∂s as an expression (for display, and for differentiating again)."""
        return sp.Add(*self.calc.pieces(e, s, memo))

    def value(self, e: Any, s: sp.Symbol, memo: dict) -> Any:
        """∂e/∂s at the point: in float64 without forming it, or exactly from the formed derivative."""
        if self.exact:
            return self.total([self.evaluate(p) for p in self.calc.pieces(e, s, memo)])
        return self.calc.slope(e, s, self.evaluate, memo)

    def magnitude(self, e: Any, s: sp.Symbol, memo: dict) -> float:
        """∂e/∂s summed over the magnitudes of its terms: what its rounding is relative to (see `rounding`)."""
        return self.calc.slope(e, s, self.size, memo, absolute=True)

    def to_float(self, v: Any) -> float:
        return ExactEvaluator.to_float(v) if self.exact else float(v)


def witness(tr: Trace, exact: bool, keep: dict[str, np.ndarray], seconds: float) -> Witness:
    """Replay `tr` in SymPy at the leaves' current values, with symbols for the elements in `keep`.

    Raises `TooLarge` when the replay and the derivatives would pass `seconds` or the term budget.
    """
    meaning = Meaning(exact, seconds=seconds)
    estimate = terms_estimate(tr)
    if estimate > meaning.budget:
        raise TooLarge(f"too large for SymPy (about {estimate:,} terms, by the graph's matrix products; "
                       f"the limit is {meaning.budget:,})")
    work = estimate * sum(len(flat) for flat in keep.values())
    if work > WORK_BUDGET and any(node.op.name in DENSE for node in tr.nodes):
        raise TooLarge(f"too large for SymPy (about {estimate:,} terms for each of "
                       f"{work // max(estimate, 1):,} derivatives; the limit is {WORK_BUDGET:,} in all)")
    tree = tree_estimate(tr)
    if tree > TREE_BUDGET:
        raise TooLarge(f"too large for SymPy (an element nests about {tree:.1e} terms as a tree, through its "
                       f"products, norms and softmaxes; the limit is {TREE_BUDGET:.0e})")
    sites = kink_sites(tr, forward(tr, leaf_values(tr))) if any(n.op.kink for n in tr.nodes) or TIES else []
    rp = replay(tr, meaning, sites, keep)
    point = {s: meaning.fixed(tr.leaves[name]._data[idx]) for s, (name, idx) in rp.where.items()}
    floats = FloatEvaluator({s: float(tr.leaves[name]._data[idx]) for s, (name, idx) in rp.where.items()})
    evaluate = ExactEvaluator(point) if exact else floats
    return Witness(rp, Calculus(), meaning, evaluate, exact, AbsoluteEvaluator(floats))


TREE_BUDGET = 1e8
"""The largest element's tree (`graph.tree_estimate`) a proof may take on: the samples' largest that SymPy
proves (a GRU, a layer norm after a transposed convolution) are about 5e6 and take under a second; a
one-layer transformer encoder of 990 terms is 5e8, where SymPy spent minutes before its clock was read."""
WORK_BUDGET = 2_000_000
"""Terms times derivatives a proof may take on where a dense op spreads each input over many terms (each
derivative then walks most of the replay): a conv net's few hundred parameters over its ~30,000 terms (a
minute of SymPy) go to finite differences up front, while the samples' largest proof (a 350-element
matmul, ~370,000) stays symbolic. Elementwise graphs are not limited: an element's derivative reads its
own terms alone."""


def _ticker(meaning: Meaning, total: int, progress: Progress | None) -> Callable[[], None]:
    """What to call after each of a check's `total` steps: `spend(0)` stops it once time is up, and a bar moves.

    One step (an element's derivative) can take long; looking at the clock between steps is what
    lets a slow program fall back to finite differences in time.
    """
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        meaning.spend(0)
        if progress is not None:
            progress(done, total)
    return tick


def _first_singular(tr: Trace) -> str | None:
    """Why the forward is not finite, at the first node whose value is not although its inputs are.

    That is where a nan or inf is born; its op's domain names the cause when it is the reason.
    """
    values = forward(tr, leaf_values(tr))
    for node in tr.nodes:
        inputs = [np.asarray(tr.resolve(x, values), dtype=np.float64) for x in node.inputs
                  if np.asarray(tr.resolve(x, values)).dtype.kind in "fiub"]
        if all(np.isfinite(v).all() for v in inputs) and not np.isfinite(np.asarray(values[node], dtype=np.float64)).all():
            cause = domain_cause(node.op.name, inputs[0]) if inputs else None
            if cause is not None:
                return f"{cause}: {node.name} is not finite here, so neither is the derivative"
            return f"the forward pass is not finite at {node.name} (0/0 or similar), so autograd's value is not " \
                   f"finite, as PyTorch's is; SymPy's simplified form may have a limit there"
    return None


def _finite(sizes: Any, magnitudes: dict[str, np.ndarray] | None, key: str,
            floor: np.ndarray | float = 0.0) -> np.ndarray:
    """Magnitudes as an array (a non-finite one allows nothing, `floor` at least), kept in `magnitudes[key]`."""
    size = np.asarray(sizes, dtype=np.float64)
    size = np.maximum(np.where(np.isfinite(size), size, 0.0), floor)
    if magnitudes is not None:
        magnitudes[key] = size
    return size


FORMED = 64
"""A displayed derivative is formed from at most this many output terms; past that it is too large to print."""


def symbolic_check(tr: Trace, weights: np.ndarray, computed: dict[str, Any], selection: dict[str, np.ndarray],
                   tolerances: dict[str, tuple[float, float]], of: str, exact: bool = False,
                   progress: Progress | None = None, seconds: float = 10.0, gamma: float = 0.0,
                   magnitudes: dict[str, np.ndarray] | None = None,
                   terms: Callable[[], dict[str, np.ndarray]] | None = None) -> dict[str, InputCheck]:
    """Compare autograd's gradient of each selected leaf element with SymPy's.

    Each element's rounding allowance is `gamma`·M (see `rounding`), M from the same derivative's
    terms, and at least `terms()[name]` (the top sum's, `numeric.term_magnitudes`: SymPy collects
    like terms; measured once SymPy has taken the graph on, as it costs replays of its own);
    `magnitudes`, when given, receives each input's M (per selected element).
    """
    w = witness(tr, exact, selection, seconds)
    top = terms() if terms is not None else {}
    rp, calc = w.rp, w.calc
    checked = {rp.symbols[name].flat[k] for name, flat in selection.items() for k in flat}
    uses: dict[sp.Symbol, list[tuple[sp.Expr, Any, sp.Expr]]] = {}
    pairs = [zip(rp.out.flat, np.asarray(weights, dtype=np.float64).flat)]
    pairs += [zip(np.broadcast_to(e, g.shape).flat, g.flat) for terms in rp.cuts.values() for e, g in terms]
    for e, g in itertools.chain(*pairs):
        if g == 0:
            continue
        exact_g = w.meaning.number(float(g))
        use = (e, exact_g if exact else float(g), exact_g)
        for s in calc.free(e):
            if s in checked:
                uses.setdefault(s, []).append(use)
    tick = _ticker(w.meaning, sum(len(flat) for flat in selection.values()), progress)
    singular = _first_singular(tr)
    results = {}
    for name, flat in selection.items():
        leaf = tr.leaves[name]
        order = display_positions(flat, leaf.shape)
        expected = np.empty(len(flat))
        size = np.empty(len(flat))
        kept: dict[int, Kept] = {}
        reasons: dict[int, str] = {}
        unnamed: set[int] = set()
        for pos, k in enumerate(flat):
            s = rp.symbols[name].flat[k]
            parts, sizes, forms, memo, size_memo, shown_memo = [], [], [], {}, {}, {}
            if s in rp.dropped and s not in uses:  # an op dropped it (a draw, a tie): no formula, its reason says why
                unnamed.add(pos)
            formed = pos in order and pos not in unnamed and sum(len(calc.args_with(e, s)) if e.is_Add else 1
                                          for e, _, _ in uses.get(s, ())) <= FORMED
            for e, g, shown_g in uses.get(s, ()):
                parts.append(g * w.value(e, s, memo))
                sizes.append(abs(g) * w.magnitude(e, s, size_memo))
                if formed:
                    forms.append(shown_g * w.derivative(e, s, shown_memo))
            value = w.total(parts) if parts else sp.S.Zero
            expected[pos] = w.to_float(value)
            size[pos] = sum(sizes)
            if formed:
                index = tuple(int(i) for i in np.unravel_index(k, leaf.shape))
                kept[pos] = Kept(index, sp.Add(*forms), value)
            if s in rp.kinks and (s in uses or s in rp.dropped):
                reasons[pos] = rp.kinks[s]
            tick()
        got = as_float64(computed.get(name), leaf.shape, 0.0).reshape(-1)[flat]
        for pos in np.flatnonzero(~np.isfinite(got) | ~np.isfinite(expected)):
            # a kink counts even where SymPy simplified its term away: 0·√x at 0 is 0 to SymPy but
            # 0·∞ = nan to autograd, as to PyTorch; else the place the forward stopped being finite
            reason = rp.kinks.get(rp.symbols[name].flat[flat[pos]], singular)
            if reason is not None:
                reasons.setdefault(int(pos), reason)
        uniform = bool(np.all(np.isfinite(expected))) and np.allclose(expected, expected[:1], rtol=1e-12, atol=0)
        shown = [kept[p] for p in order if p in kept]
        formulas = describe(name, of, shown, uniform, rp) if shown or not order else () if unnamed >= set(order) \
            else (f"∂{of}/∂{name}: a sum of more than {FORMED} terms, too large to print",)
        size = _finite(size, magnitudes, name, top.get(name, 0.0))
        results[name] = compare(name, "symbolic", elements(name, leaf.shape, flat), expected, got, reasons,
                                leaf._data.size, tolerances[name], gamma * size,
                                derivative=formulas[0] if formulas else "", formulas=formulas)
    return results


def jacobian_check(tr: Trace, computed: dict[str, np.ndarray], rows: np.ndarray, selection: dict[str, np.ndarray],
                   tolerances: dict[str, tuple[float, float]], of: str, exact: bool = False,
                   progress: Progress | None = None, seconds: float = 10.0, gamma: float = 0.0,
                   magnitudes: dict[str, np.ndarray] | None = None) -> dict[str, InputCheck]:
    """Compare each selected entry ∂outₖ/∂xⱼ of autograd's Jacobian blocks with SymPy's.

    Rounding allowances and `magnitudes` as in `symbolic_check`, per entry."""
    w = witness(tr, exact, selection, seconds)
    rp, calc = w.rp, w.calc
    zero = sp.S.Zero if exact else 0.0
    tick = _ticker(w.meaning, sum(len(flat) for flat in selection.values()), progress)
    results = {}
    for name, flat in selection.items():
        leaf = tr.leaves[name]
        block = np.asarray(computed[name], dtype=np.float64).reshape(rp.out.size, leaf._data.size)
        entries, expected, got, lines, sizes = [], [], [], [], []
        reasons: dict[int, str] = {}
        for (wrt, j_index), j in zip(elements(name, leaf.shape, flat), flat):
            s = rp.symbols[name].flat[j]
            memo: dict = {}
            size_memo: dict = {}
            for (of_k, k_index), k in zip(elements(of, rp.out.shape, rows), rows):
                e = rp.out.flat[k]
                uses = s in calc.free(e)
                value = w.value(e, s, memo) if uses else zero
                sizes.append(w.magnitude(e, s, size_memo) if uses else 0.0)
                lhs = f"∂{of_k}/∂{wrt}"
                if s in rp.kinks and (uses or s in rp.dropped or not np.isfinite(block[k, j])):
                    reasons[len(entries)] = rp.kinks[s]
                if uses and len(lines) < 2:
                    lines.append(line(lhs, w.derivative(e, s, {}) if printable(e) else None, value))
                entries.append((lhs, k_index + j_index))
                expected.append(w.to_float(value))
                got.append(block[k, j])
            tick()
        size = _finite(sizes, magnitudes, name)
        results[name] = compare(name, "symbolic", entries, np.array(expected), np.array(got), reasons,
                                rp.out.size * leaf._data.size, tolerances[name], gamma * size,
                                derivative=lines[0] if lines else "0", formulas=tuple(lines))
    return results


def hessian_check(tr: Trace, computed: dict[str, dict[str, np.ndarray]], selection: dict[str, np.ndarray],
                  tolerances: dict[str, tuple[float, float]], of: str, exact: bool = False,
                  progress: Progress | None = None, seconds: float = 10.0, gamma: float = 0.0,
                  magnitudes: dict[str, np.ndarray] | None = None) -> dict[str, InputCheck]:
    """Compare each selected second derivative ∂²out/∂s∂t of a one-element output with SymPy's."""
    w = witness(tr, exact, selection, seconds)
    rp, calc = w.rp, w.calc
    out = rp.out.reshape(-1)[0]
    zero = sp.S.Zero if exact else 0.0
    first: dict[sp.Symbol, sp.Expr] = {}
    memos: dict[Any, dict] = {}
    names = list(selection)
    tick = _ticker(w.meaning, sum(len(selection[a]) for a in names) * len(names), progress)
    results = {}
    for a in names:
        for b in names:
            la, lb = tr.leaves[a], tr.leaves[b]
            block = np.asarray(computed[a][b], dtype=np.float64).reshape(la._data.size, lb._data.size)
            entries, expected, got, lines, sizes = [], [], [], [], []
            reasons: dict[int, str] = {}
            for (by_i, i_index), i in zip(elements(a, la.shape, selection[a]), selection[a]):
                s = rp.symbols[a].flat[i]
                if s not in first:
                    first[s] = w.derivative(out, s, memos.setdefault(("form", s), {}))
                for (by_j, j_index), j in zip(elements(b, lb.shape, selection[b]), selection[b]):
                    t = rp.symbols[b].flat[j]
                    uses = t in calc.free(first[s])
                    value = w.value(first[s], t, memos.setdefault(("value", t), {})) if uses else zero
                    sizes.append(w.magnitude(first[s], t, memos.setdefault(("size", t), {})) if uses else 0.0)
                    lhs = f"∂²{of}/∂{by_i}∂{by_j}"
                    kink = rp.kinks.get(s) or rp.kinks.get(t)
                    if kink and (s in calc.free(out) and t in calc.free(out) or {s, t} & rp.dropped or
                                 not np.isfinite(block[i, j])):
                        reasons[len(entries)] = kink
                    if uses and len(lines) < 2:
                        lines.append(line(lhs, w.derivative(first[s], t, {}) if printable(first[s]) else None,
                                          value))
                    entries.append((lhs, i_index + j_index))
                    expected.append(w.to_float(value))
                    got.append(block[i, j])
                tick()
            key = a if a == b else f"{a},{b}"
            size = _finite(sizes, magnitudes, key)
            results[key] = compare(key, "symbolic", entries, np.array(expected), np.array(got), reasons,
                                   la._data.size * lb._data.size, tolerances[a], gamma * size,
                                   derivative=lines[0] if lines else "0", formulas=tuple(lines))
    return results
