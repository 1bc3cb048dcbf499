"""Symbolic replay: the recorded graph rebuilt as SymPy expressions of per-element leaf symbols.

Each element of each leaf gets its own real Symbol, named by gradcli from the leaf's identifier
and integer indices (`x[0,1]`, `x` for a 0-d tensor); nothing a user typed is ever parsed.
Every node is rebuilt with its op's `sym` meaning, in creation order, so control flow needs no
special case: the graph is the trace the program took.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from gradcli.check.calculus import FloatEvaluator
from gradcli.check.derived import Derived, derived
from gradcli.check.graph import Trace, label, trace
from gradcli.check.meaning import Meaning, TooLarge
from gradcli.check.numeric import Site, Tie, broadcasts, forward, kink_sites, leaf_values
from gradcli.engine.tensor import Node, Tensor


@dataclass
class Replay:
    """The output as an object array, plus what each symbol stands for."""

    out: np.ndarray
    symbols: dict[str, np.ndarray]
    where: dict[sp.Symbol, tuple[str, tuple[int, ...]]]
    kinks: dict[sp.Symbol, str] = field(default_factory=dict)
    dropped: set[sp.Symbol] = field(default_factory=set)
    """Kinked symbols that the kinked op's own meaning drops (median and kthvalue pick one of their ties):
    a kink for them even where the output does not name them."""
    cuts: dict[Node, list[tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    """Each hooked tensor's terms (`Cut.pairs`: expressions and the gradients they are weighted by); what is
    computed from it sees it held."""


def symbol(text: str) -> sp.Symbol:
    """Every symbol the checker makes (leaf elements, index forms) shares these assumptions."""
    return sp.Symbol(text, real=True)


def _leaf_elements(name: str, data: np.ndarray, keep: Any, meaning: Meaning, where: dict) -> np.ndarray:
    """Symbols for the elements at the flat indices `keep`; the others held at their values."""
    out = np.empty(data.shape, dtype=object)
    for k, v in enumerate(data.flat):
        out.flat[k] = meaning.fixed(v)
    for k in keep:
        idx = tuple(int(i) for i in np.unravel_index(k, data.shape))
        s = symbol(label(name, idx))
        out[idx] = s
        where[s] = (name, idx)
    return out


def _constant_near(e: Any, s: sp.Symbol, value: Any) -> bool:
    """Whether `e` stays constant as `s` moves a little from the point (`value` evaluates there).

    A Max or Min depends near the point on its active arguments only (those equal to its value: the
    others are strictly beyond it); anything else on all its arguments. A dead ReLU, Max(u, 0) with
    u < 0, is constant in every symbol of u, to every order.
    """
    stack = [e]
    while stack:
        x = stack.pop()
        if s not in getattr(x, "free_symbols", ()):
            continue
        if x is s:
            return False
        if isinstance(x, (sp.Max, sp.Min)):
            best = value(x)
            stack.extend(a for a in x.args if value(a) == best)
        else:
            stack.extend(x.args)
    return True


MAX_NESTING = 64
"""SymPy's derivatives and printing of functions nested deeper than this grow too slow (and recurse).

Only ops whose meaning wraps its operands in a function (`Op.nests`) count a level."""


_NAMES_NOTHING = np.empty(0, dtype=object)
"""A tie's stand-in for the op output `mark` asks for: every symbol at a tie counts as `dropped`."""


def _derivative(d: Derived, tr: Trace, meaning: Meaning, keep: dict[str, np.ndarray], node: Node,
                kinks: dict[sp.Symbol, str]) -> np.ndarray:
    """A create_graph result's meaning: ∂(Σ w·y)/∂x from y's own forward replayed, in the outer replay's symbols.

    Every element of x is a symbol while differentiating; those the outer replay holds at their
    values are held again afterwards. Kinks inside y's forward are kinks of this derivative too.
    """
    names = {id(t): name for name, t in tr.leaves.items()}
    x = names.get(id(d.leaf), "derived_by")
    leaves = dict(tr.leaves) if id(d.leaf) in names else {**tr.leaves, x: d.leaf}
    inner = trace(d.output, leaves)
    keep_inner = {**keep, x: np.arange(d.leaf._data.size)}
    sites = kink_sites(inner, forward(inner, leaf_values(inner))) if any(n.op.kink for n in inner.nodes) else []
    rp = replay(inner, meaning, sites, keep_inner)
    kinks.update({s: reason for s, reason in rp.kinks.items() if s not in kinks})
    ys = np.asarray(rp.out, dtype=object).reshape(-1)
    weights = np.broadcast_to(d.weights, d.output.shape).reshape(-1)
    kept = set(int(k) for k in keep.get(x, ())) if x in names.values() else set()
    held = {s: meaning.fixed(d.leaf._data.reshape(-1)[k]) for k, s in enumerate(rp.symbols[x].reshape(-1))
            if k not in kept}
    out = np.empty(d.leaf._data.size, dtype=object)
    for k, s in enumerate(rp.symbols[x].reshape(-1)):
        terms = [meaning.number(float(w)) * sp.diff(y, s) for w, y in zip(weights, ys)
                 if w != 0 and s in getattr(y, "free_symbols", ())]
        meaning.spend(0)
        out[k] = sp.Add(*terms).xreplace(held) if terms else sp.Integer(0)
    if out.shape != (int(np.prod(node.shape)),):
        raise TooLarge(f"the gradient {d.what} has shape {tuple(node.shape)}, not its input's")
    return meaning.as_array(out.reshape(node.shape))


def replay(tr: Trace, meaning: Meaning, sites: list[Site], keep: dict[str, np.ndarray]) -> Replay:
    """Rebuild `tr.output` symbolically; note which symbols feed an op evaluated on a kink.

    `keep[name]` lists the flat indices of the leaf's elements to make symbols of. The other
    elements, and leaves without an entry, are held at their values: no checked partial
    derivative depends on them being symbols.
    """
    where: dict[sp.Symbol, tuple[str, tuple[int, ...]]] = {}
    symbols = {name: _leaf_elements(name, t._data, keep.get(name, ()), meaning, where)
               for name, t in tr.leaves.items()}
    by_leaf = {id(t): symbols[name] for name, t in tr.leaves.items()}
    at_kink = {id(site.node): site for site in sites if not isinstance(site, Tie)}
    at_tie: dict[int, list[Tie]] = {}
    for site in sites:
        if isinstance(site, Tie):
            at_tie.setdefault(id(site.node), []).append(site)
    consumers: dict[Node, int] = {}
    for node in tr.nodes:
        for x in node.inputs:
            if type(x) is Node:
                consumers[x] = consumers.get(x, 0) + 1
    values: dict[Any, np.ndarray] = {}
    nesting: dict[Node, int] = {}
    constants: dict[int, np.ndarray] = {}
    kinks: dict[sp.Symbol, str] = {}
    dropped: set[sp.Symbol] = set()
    cuts: dict[Node, list[tuple[np.ndarray, np.ndarray]]] = {}
    value = FloatEvaluator({s: float(tr.leaves[name]._data[idx]) for s, (name, idx) in where.items()})

    def resolve(x: Any) -> np.ndarray:
        if type(x) is Node:
            return values[x]
        if type(x) is Tensor and id(x) in by_leaf:
            return by_leaf[id(x)]
        key = id(x)
        if key not in constants:  # a Function's argument may be a function or a module (checkpoint's): no number
            constants[key] = x if callable(x) and type(x) is not Tensor else \
                meaning.constant(x._data if type(x) is Tensor else x)
        return constants[key]

    def mark(reason: str, args: list[np.ndarray], mask: np.ndarray, out: np.ndarray) -> None:
        """The symbols of the arguments at a kink's `mask`: a symbol an argument there is constant in sees no
        kink (see `_constant_near`); one the op's output does not name is `dropped`."""
        named: set[sp.Symbol] | None = None
        for a in args:
            if broadcasts(np.shape(a), mask.shape):
                for e in np.broadcast_to(a, mask.shape)[mask]:
                    for s in getattr(e, "free_symbols", ()):
                        if (s not in kinks or s not in dropped) and not _constant_near(e, s, value):
                            kinks.setdefault(s, reason)
                            if named is None:
                                named = set().union(*(getattr(o, "free_symbols", ()) for o in out.flat))
                            if s not in named:
                                dropped.add(s)

    meaning.inner_kink = lambda function, node, args, mask, out: mark(
        f"{node.name} in {function}.forward is at a kink: {node.op.rule}", [meaning.as_array(a) for a in args],
        mask, out)
    for node in tr.nodes:
        depth = max((nesting[x] for x in node.inputs if type(x) is Node), default=0) + node.op.nests
        if depth > MAX_NESTING:
            raise TooLarge(f"nested too deeply for SymPy (functions over {MAX_NESTING} deep)")
        nesting[node] = depth
        args = [resolve(x) for x in node.inputs]
        out = meaning.as_array(node.op.sym(meaning, *args, **node.params))
        if out.shape != tuple(node.shape):
            raise RuntimeError(f"the SymPy meaning of {node.op.name} gave shape {out.shape}, its forward "
                               f"{tuple(node.shape)}")
        found = derived(node)
        if found is not None:
            out = _derivative(found, tr, meaning, keep, node, kinks)
        values[node] = out
        if node in tr.cuts:
            cuts[node] = tr.cuts[node].pairs(out, args)
            values[node] = meaning.as_array(np.vectorize(meaning.fixed, otypes=[object])(tr.cuts[node].held))
        site = at_kink.get(id(node))
        if site is not None:
            mark(site.reason, args, site.mask, out)
        for tie in at_tie.get(id(node), ()):  # what the mask hides, the output's expression cannot name
            mark(tie.reason, [out], tie.mask, _NAMES_NOTHING)
        for x in node.inputs:
            if type(x) is Node and x is not tr.root:
                consumers[x] -= 1
                if consumers[x] == 0:
                    del values[x]
    for name, t in tr.leaves.items():  # after the ops' own kinks, whose reasons say more
        for tie in at_tie.get(id(t), ()):
            mark(tie.reason, [symbols[name]], tie.mask, _NAMES_NOTHING)
    root = tr.root
    out = values[root] if type(root) is Node else resolve(root)
    return Replay(out, symbols, where, kinks, dropped, cuts)
