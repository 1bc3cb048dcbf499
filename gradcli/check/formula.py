"""The derivative as a learner reads it: `∂out/∂x[i,j] = 3*(x[i,j] + 2)/2 = 4.5`.

When every element's partial derivative is the same expression up to its own indices (an
elementwise program), it is printed once in index form. That form is found from one element
(its index values become `i, j, ...`) and then checked by instantiating it at a few other elements
and comparing with their actual derivatives; otherwise a few elements are printed one by one.
Simplification is bounded in size, and long expressions are cut, never dumped.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from sympy.core.function import Function
from sympy.core.parameters import evaluate

from gradcli.check.calculus import sympy_float
from gradcli.check.graph import label
from gradcli.check.replay import Replay, symbol

LETTERS = "ijkl"
CAP = 120
_FACTOR_OPS = 40
_SIMPLIFY_OPS = 15
_SHOWN = 3
_PRINTABLE = 1_500
_GENERALIZABLE = 300
_DEPTH = 200
_SMALL_INTEGER = 8
_LONG_DENOMINATOR = 10 ** 6


@dataclass(frozen=True)
class Kept:
    """One element's derivative kept for display: its index, the expression and its value there."""

    index: tuple[int, ...]
    expr: sp.Expr
    value: Any


def _generalize(e: sp.Expr, index: tuple[int, ...], rp: Replay) -> tuple[sp.Expr, dict] | None:
    if not index or len(index) > len(LETTERS) or len(set(index)) != len(index):
        return None
    letter = {v: LETTERS[p] for p, v in enumerate(index)}
    mapping, patterns = {}, {}
    for s in e.free_symbols:
        name, idx = rp.where[s]
        pattern = tuple(letter.get(c, c) for c in idx)
        g = symbol(label(name, pattern))
        mapping[s] = g
        patterns[g] = (name, pattern)
    return e.xreplace(mapping), patterns


def _instantiate(generic: sp.Expr, patterns: dict, index: tuple[int, ...], rp: Replay) -> sp.Expr | None:
    mapping = {}
    for g, (name, pattern) in patterns.items():
        idx = tuple(index[LETTERS.index(c)] if isinstance(c, str) else c for c in pattern)
        arr = rp.symbols[name]
        if any(not 0 <= v < n for v, n in zip(idx, arr.shape)) or not isinstance(arr[idx], sp.Symbol):
            return None
        mapping[g] = arr[idx]
    return generic.xreplace(mapping)


def _small(e: sp.Basic, nodes: int) -> bool:
    """At most `nodes` nodes and `_DEPTH` deep (SymPy's printer recurses), counted without recursion."""
    stack = [(e, 1)]
    size = 0
    while stack:
        x, depth = stack.pop()
        size += 1
        if size > nodes or depth > _DEPTH:
            return False
        stack.extend((a, depth + 1) for a in x.args)
    return True


def _held(e: sp.Expr) -> dict[sp.Basic, sp.Dummy]:
    """Numbers inside a function's argument or an exponent that `factor` could blow up, each by a Dummy.

    `factor` rewrites exp(a·w) for a rational a = p/q as a polynomial of degree p in exp(w/q):
    degree 11 for 1.1 written out, degree millions for a constant's binary value. Held as symbols,
    such numbers cost `factor` nothing; substituted back afterwards they print as they are.
    """
    held: dict[sp.Basic, sp.Dummy] = {}
    stack = [(e, False)]
    while stack:
        x, inside = stack.pop()
        if x.is_Number:
            if inside and (not x.is_Integer or abs(x) > _SMALL_INTEGER) and x not in held:
                held[x] = sp.Dummy()
            continue
        nested = inside or isinstance(x, Function)
        if x.is_Pow:
            stack.extend(((x.args[0], nested), (x.args[1], True)))
        else:
            stack.extend((a, nested) for a in x.args)
    return held


def tidy(e: sp.Expr, simplify: bool, factor_ops: int = _FACTOR_OPS, simplify_ops: int = _SIMPLIFY_OPS) -> sp.Expr:
    """The expression or its factored form, whichever is shorter; `simplify`'s only when clearly shorter.

    Both are bounded by the work given to them rather than by a clock (a thread cannot be
    stopped): only expressions of at most `factor_ops` operations are factored and at most
    `simplify_ops` simplified, with the numbers `factor` could blow up held as symbols (`_held`).
    Past that the derivative is shown as it is. `simplify` is tried only on expressions holding
    a function (its first call alone costs a cold process ~0.3 s), and kept only when much
    shorter: SymPy's favourite forms, like cosh(x)**(-2) for 1 - tanh(x)**2, read worse to a learner.
    """
    ops = sp.count_ops(e)
    if ops > factor_ops:
        return e
    held = _held(e)
    plain = e.xreplace(held) if held else e
    try:
        best = min([sp.factor(plain), plain], key=sp.count_ops)
        if simplify and ops <= simplify_ops and plain.atoms(Function):
            simpler = sp.simplify(plain)
            if sp.count_ops(simpler) < 0.75 * sp.count_ops(best):
                best = simpler
    except sp.polys.polyerrors.BasePolynomialError:
        return e
    return best.xreplace({d: n for n, d in held.items()}) if held else best


def _readable(e: sp.Expr) -> sp.Expr:
    """Numbers that are exact binary values of floats (huge denominators) shown as 6-digit decimals.

    Replaced without evaluation: only the printed text changes, and re-evaluating functions of
    long sums costs SymPy milliseconds each.
    """
    long = {r: sp.Float(r, 6) for r in e.atoms(sp.Rational) if r.q > _LONG_DENOMINATOR}
    if not long:
        return e
    with evaluate(False):
        return e.xreplace(long)


def show(e: sp.Expr) -> str:
    """The expression's text, cut at a term boundary past `CAP` characters with a count of what is left."""
    e = _readable(e)
    text = str(e)
    if e.is_Add and len(text) > CAP:
        text = _cut_terms(e)
    return text if len(text) <= CAP else _cut_inside(text)


def _cut_inside(text: str) -> str:
    """Text past `CAP` cut at the last term or argument boundary inside it, `…` for the rest, and its
    parentheses closed: `w[0]*(x[0]**2 + 3*x[1] + …)`, never a cut through a name or a number."""
    head = text[:CAP - 8]
    cuts = [(head.rfind(sep), sep) for sep in (" + ", " - ", ", ")]
    at, sep = max(cuts)
    if at < CAP // 3:
        at, sep = max(head.rfind(c) for c in "*/("), ""
        at += 1
    head = head[:at] + (f"{sep.rstrip()} …" if sep else "…")
    depth = head.count("(") - head.count(")")
    brackets = head.count("[") - head.count("]")
    return head + "]" * max(brackets, 0) + ")" * max(depth, 0)


def _cut_terms(e: sp.Expr) -> str:
    terms = [str(t) for t in e.as_ordered_terms()]
    out = terms[0]
    for k, t in enumerate(terms[1:], start=1):
        piece = f" - {t[1:]}" if t.startswith("-") else f" + {t}"
        if len(out) + len(piece) > CAP - 24:
            return f"{out} + … ({len(terms) - k:,} more terms)"
        out += piece
    return out


def value_text(v: Any) -> str:
    if isinstance(v, sp.Basic):
        text = str(v)
        return text if v.is_Rational and len(text) <= 16 else f"{sympy_float(v.evalf(30)):.6g}"
    return f"{v:.6g}"


def describe(name: str, of: str, kept: list[Kept], uniform: bool, rp: Replay) -> tuple[str, ...]:
    """Formula lines for one input: one in index form when it holds for every kept element."""
    if not kept:
        return ()
    kept = [k for k in kept if printable(k.expr)]
    if not kept:
        return (f"∂{of}/∂{name}: too large to print",)
    first = kept[0]
    general = None
    if len(kept) > 1 and all(_small(k.expr, _GENERALIZABLE) for k in kept):
        general = _generalize(first.expr, first.index, rp)
    if general is not None:
        generic, patterns = general
        if all(_instantiate(generic, patterns, k.index, rp) == k.expr for k in kept[1:]):
            lhs = f"∂{of}/∂{label(name, tuple(LETTERS[:len(first.index)]))}"
            value = value_text(first.value)
            text = show(tidy(generic, True))
            if uniform:
                return (f"{lhs} = {text}" + ("" if text == value else f" = {value}"),)
            return (f"{lhs} = {text}  ({value} at {label(name, first.index)})",)
    listed = sorted(kept, key=lambda k: k.index)[:_SHOWN]
    return tuple(line(f"∂{of}/∂{label(name, k.index)}", k.expr, k.value, n == 0) for n, k in enumerate(listed))


def printable(e: sp.Basic) -> bool:
    """Whether a formula is small enough to print; a derivative is about as large as its function, so asking of
    the function saves forming a derivative nobody will read (printing a conv net's takes a minute)."""
    return _small(e, _PRINTABLE)


def line(lhs: str, expr: sp.Expr | None, value: Any, simplify: bool = False) -> str:
    """`lhs = expression = value`, without repeating a value that is the expression itself.

    `expr` None, or past `printable`: the value alone, saying the formula is too large to print.
    """
    if expr is None or not printable(expr):
        return f"{lhs} = {value_text(value)} (the formula is too large to print)"
    text, shown = show(tidy(expr, simplify)), value_text(value)
    return f"{lhs} = {text}" if text == shown else f"{lhs} = {text} = {shown}"


def display_positions(flat: np.ndarray, shape: tuple[int, ...]) -> list[int]:
    """Positions (into `flat`) of the elements whose derivative is kept for display.

    The first is the last element whose index values are all distinct: its large indices are
    the least likely to coincide with constant indices in its derivative, so its index form is
    the most likely to hold. The others, spread over the rest, are what that form is proved on.
    """
    if len(flat) == 0:
        return []
    first = len(flat) - 1
    for pos in range(len(flat) - 1, -1, -1):
        idx = np.unravel_index(flat[pos], shape)
        if len({int(i) for i in idx}) == len(idx):
            first = pos
            break
    return list(dict.fromkeys([first, 0, len(flat) // 2, len(flat) - 1]))
