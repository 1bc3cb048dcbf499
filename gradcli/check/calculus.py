"""Differentiation pruned by free symbols, and float64 evaluation, over SymPy expressions.

`expr.diff(s)` asks every subexpression whether it contains `s`, and re-walks it to find out:
differentiating a 1,000-term sum by each of 350 symbols takes seconds. Here free symbols are
computed once per subexpression (without recursion), sums with many terms are indexed by
symbol, and only the terms that contain `s` are differentiated. The rules used are the sum,
product, power and chain rules; every function's own derivative comes from SymPy (`fdiff`, or
`diff` itself for functions that define their derivative differently), never from a VJP.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import sympy as sp
from sympy.core.function import Function

from gradcli.engine import special
from gradcli.engine.ops import TABLE

_INDEXED = 8


def extremum(fn: Any, args: list[Any]) -> Any:
    """Max/Min of SymPy arguments, evaluated only over atoms (symbols, numbers).

    Evaluated, Max compares its arguments through their assumptions: for a window of a max-pool over
    a convolution's sums that is most of a second each, and it never decides anything the checker
    needs (the value is computed at the point, ties are kinks: `check/kinks.py`).
    """
    return fn(*args) if len(args) <= 4 and all(getattr(a, "is_Atom", True) for a in args) else fn(*args, evaluate=False)


def _extremum_part(e: sp.Expr, i: int) -> sp.Expr:
    """∂Max(a…)/∂aᵢ = H(aᵢ − Max(others)), SymPy's rule, with the others left unevaluated when many."""
    others = e.args[:i] + e.args[i + 1:]
    fn = type(e)
    rest = others[0] if len(others) == 1 else extremum(fn, list(others))
    return sp.Heaviside(e.args[i] - rest) if fn is sp.Max else sp.Heaviside(rest - e.args[i])


def _call(fn: Any, u: sp.Expr) -> sp.Expr:
    """`fn(u)`, unevaluated unless `u` is a number (see `Meaning`: evaluation costs, never helps)."""
    return fn(u) if u.is_Number else fn(u, evaluate=False)


_DERIVATIVES: dict[type, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    sp.exp: lambda e, u: e,
    sp.log: lambda e, u: 1 / u,
    sp.sin: lambda e, u: _call(sp.cos, u),
    sp.cos: lambda e, u: -_call(sp.sin, u),
    sp.tan: lambda e, u: 1 + e ** 2,
    sp.tanh: lambda e, u: 1 - e ** 2,
    sp.Abs: lambda e, u: _call(sp.sign, u),
    sp.sign: lambda e, u: 2 * _call(sp.DiracDelta, u),
}
"""f'(u) for f(u) = e: SymPy's own rules for real arguments, restated so that f is not rebuilt
with evaluation (`tests/test_check_meaning.py` holds them to `sympy.diff`)."""


def _power_rule(base: sp.Expr, power: sp.Expr) -> sp.Expr:
    return power * base ** (power - 1)


def _chain_by_fdiff(e: sp.Expr) -> bool:
    """Other functions whose derivative SymPy itself forms as Σ fdiff(i)·∂argᵢ."""
    return isinstance(e, Function) and type(e)._eval_derivative is Function._eval_derivative


class Calculus:
    """Caches free symbols and per-symbol term indexes across all derivatives of one check."""

    def __init__(self) -> None:
        self._free: dict[sp.Basic, frozenset] = {}
        self._index: dict[sp.Basic, dict[sp.Symbol, list[sp.Basic]]] = {}
        self._outers: dict[Any, sp.Expr] = {}

    def _outer(self, key: Any, make: Callable[..., sp.Expr], *args: Any) -> sp.Expr:
        """The outer factor of a chain rule (f'(u) for f(u)), the same for every symbol: made once."""
        f = self._outers.get(key)
        if f is None:
            f = self._outers[key] = make(*args)
        return f

    def free(self, e: Any) -> frozenset:
        """The symbols `e` contains (a plain number, a leaf element held at its value, has none)."""
        if not isinstance(e, sp.Basic):
            return frozenset()
        return bottom_up(e, self._free, lambda x: frozenset((x,)) if x.is_Symbol else None,
                         lambda x, args: frozenset().union(*args))

    def args_with(self, e: sp.Basic, s: sp.Symbol) -> list[sp.Basic]:
        """The arguments of `e` that contain `s`; for long argument lists, through an index built once."""
        if len(e.args) <= _INDEXED:
            return [a for a in e.args if s in self.free(a)]
        index = self._index.get(e)
        if index is None:
            index = {}
            for a in e.args:
                for t in self.free(a):
                    index.setdefault(t, []).append(a)
            self._index[e] = index
        return index.get(s, [])

    def pieces(self, e: sp.Expr, s: sp.Symbol, memo: dict) -> list[sp.Expr]:
        """Terms whose sum is ∂e/∂s, left unsummed so a caller can add their values instead."""
        if e.is_Add:
            return [self.diff(a, s, memo) for a in self.args_with(e, s)]
        return [self.diff(e, s, memo)]

    def diff(self, e: sp.Expr, s: sp.Symbol, memo: dict) -> sp.Expr:
        """∂e/∂s; `memo` caches subexpression derivatives for this one `s`."""
        if s not in self.free(e):
            return sp.S.Zero
        if e.is_Symbol:
            return sp.S.One
        if e in memo:
            return memo[e]
        d = self.diff
        if e.is_Add:
            r = sp.Add(*(d(a, s, memo) for a in self.args_with(e, s)))
        elif e.is_Mul:
            args = e.args
            r = sp.Add(*(sp.Mul(*args[:i], d(a, s, memo), *args[i + 1:])
                         for i, a in enumerate(args) if s in self.free(a)))
        elif e.is_Pow:
            base, power = e.args
            if s not in self.free(power):
                r = self._outer(e, _power_rule, base, power) * d(base, s, memo)
            else:
                r = e * (d(power, s, memo) * sp.log(base) + power * d(base, s, memo) / base)
        elif isinstance(e, (sp.Max, sp.Min)):
            r = sp.Add(*(self._outer((e, i), _extremum_part, e, i) * d(a, s, memo)
                         for i, a in enumerate(e.args) if s in self.free(a)))
        elif type(e) in _DERIVATIVES:
            u = e.args[0]
            r = self._outer(e, _DERIVATIVES[type(e)], e, u) * d(u, s, memo)
        elif _chain_by_fdiff(e):
            r = sp.Add(*(self._outer((e, i), e.fdiff, i + 1) * d(a, s, memo)
                         for i, a in enumerate(e.args) if s in self.free(a)))
        else:
            r = e.diff(s)
        memo[e] = r
        return r

    def slope(self, e: sp.Expr, s: sp.Symbol, value: FloatEvaluator, memo: dict, absolute: bool = False) -> float:
        """The value of ∂e/∂s at the evaluator's point, by the same rules as `diff` without building it.

        Sums, products and powers (p·b^(p-1)) are combined in float64; each other outer factor
        f'(u) is the very expression `diff` uses, evaluated. Forming the derivative expression costs SymPy
        constructions per term and symbol; this costs float arithmetic.

        `absolute` adds the magnitudes of every term instead (with an `AbsoluteEvaluator`): the
        size of what a floating-point evaluation of ∂e/∂s sums, which bounds its rounding error.
        """
        if s not in self.free(e):
            return 0.0
        if e.is_Symbol:
            return 1.0
        if e in memo:
            return memo[e]
        m = abs if absolute else _same

        def d(a: sp.Expr) -> float:
            return self.slope(a, s, value, memo, absolute)
        if e.is_Add:
            r = sum(m(d(a)) for a in self.args_with(e, s))
        elif e.is_Mul:
            args = e.args
            r = 0.0
            for i, a in enumerate(args):
                if s in self.free(a):
                    r += m(d(a) * math.prod(value(b) for b in args[:i] + args[i + 1:]))
        elif e.is_Pow:
            base, power = e.args
            if s not in self.free(power):
                p = value(power)
                r = m(p * float_pow(value(base), p - 1) * d(base))
            else:
                b, p = value(base), value(power)
                r = m(value(e) * (d(power) * guard(math.log)(b) + p * d(base) / b)) \
                    if b != 0 else m(value(self.diff(e, s, {})))
        elif isinstance(e, (sp.Max, sp.Min)):
            r = sum(m(value(self._outer((e, i), _extremum_part, e, i)) * d(a))
                    for i, a in enumerate(e.args) if s in self.free(a))
        elif type(e) in _DERIVATIVES:
            u = e.args[0]
            r = m(value(self._outer(e, _DERIVATIVES[type(e)], e, u)) * d(u))
        elif _chain_by_fdiff(e):
            r = sum(m(value(self._outer((e, i), e.fdiff, i + 1)) * d(a))
                    for i, a in enumerate(e.args) if s in self.free(a))
        else:
            r = m(value(e.diff(s)))
        memo[e] = r
        return r


def _same(v: float) -> float:
    return v


def float_pow(b: float, p: float) -> float:
    try:
        r = b ** p
    except (ZeroDivisionError, OverflowError):
        return math.inf
    return math.nan if isinstance(r, complex) else float(r)


def guard(fn: Callable[..., float]) -> Callable[..., float]:
    """Math domain errors become what float64 arithmetic would give: inf or nan, never an exception."""
    def safe(*x: float) -> float:
        try:
            return fn(*x)
        except OverflowError:
            return math.inf
        except ValueError:
            return -math.inf if x == (0,) else math.nan
    return safe


def sign(x: float) -> float:
    return math.copysign(1.0, x) if x else (x if math.isnan(x) else 0.0)


def _heaviside(x: float, at_zero: float = 0.5) -> float:
    return at_zero if x == 0 else (1.0 if x > 0 else (0.0 if x < 0 else math.nan))


def _dirac(x: float, *order: float) -> float:
    return math.inf if x == 0 else (0.0 if not math.isnan(x) else math.nan)


_FLOAT: dict[type, Callable[..., float]] = {
    sp.Add: lambda *a: sum(a),
    sp.Mul: lambda *a: math.prod(a),
    sp.Pow: float_pow,
    sp.Abs: abs,
    sp.sign: sign,
    sp.polygamma: lambda n, v: float(special.polygamma(int(n), v)),
    sp.Heaviside: _heaviside,
    sp.DiracDelta: _dirac,
    sp.Max: lambda *a: math.nan if any(map(math.isnan, a)) else max(a),
    sp.Min: lambda *a: math.nan if any(map(math.isnan, a)) else min(a),
}


_FLOAT.update({op.element.symbolic(sp): guard(op.element.numeric) for op in TABLE
               if op.element is not None and op.element.symbolic and isinstance(op.element.symbolic(sp), type)})
"""The SymPy functions the op table declares (`Element`) evaluate as their declared float meaning."""


def sympy_float(v: sp.Basic) -> float:
    """A SymPy number as a float: ±oo and zoo as inf, nan and anything non-real as nan."""
    if v in (sp.oo, sp.zoo):
        return math.inf
    if v == -sp.oo:
        return -math.inf
    try:
        return float(v)
    except TypeError:
        return math.nan


def bottom_up(e: sp.Basic, memo: dict, atom: Callable[[sp.Basic], Any],
              combine: Callable[[sp.Basic, list], Any]) -> Any:
    """A memoised post-order walk of an expression DAG, with an explicit stack (programs nest deep).

    `atom(x)` gives the value of a node that is not taken apart (None for one that is); `combine`
    builds a node's value from its arguments' values.
    """
    stack = [e]
    while stack:
        x = stack[-1]
        if x in memo:
            stack.pop()
            continue
        value = atom(x)
        if value is None:
            missing = [a for a in x.args if a not in memo]
            if missing:
                stack.extend(missing)
                continue
            value = combine(x, [memo[a] for a in x.args])
        stack.pop()
        memo[x] = value
    return memo[e]


class FloatEvaluator:
    """Evaluate expressions at a point in float64, memoised so shared subexpressions cost once.

    Walks the expression with an explicit stack (deep programs make deep expressions). Heads it
    does not know are handed to SymPy with the point substituted.
    """

    def __init__(self, values: dict[sp.Symbol, float]) -> None:
        self.values = values
        self.memo: dict[sp.Basic, float] = {}

    def __call__(self, e: sp.Basic) -> float:
        return bottom_up(e, self.memo, self._atom, self._combine)

    def _combine(self, x: sp.Basic, args: list) -> float:
        """Apply a head's float rule; a Heaviside whose argument rounds to 0.0 is decided exactly.

        SymPy's form of a comparison can cancel where the program's did not: (2.1e-39 - 1) + 1 is
        0.0 in floats, which would read as a tie the forward pass never saw.
        """
        if type(x) is sp.Heaviside and args[0] == 0.0 and x.args[0].free_symbols:
            exact = x.args[0].xreplace({s: sp.Rational(self.values[s]) for s in x.args[0].free_symbols})
            value = exact.evalf(60)
            if value.is_Number and value != 0:
                return 1.0 if value > 0 else 0.0
        return _FLOAT[type(x)](*args)

    def _atom(self, x: sp.Basic) -> float | None:
        """The value of a symbol, a number, or a head with no float rule (SymPy evaluates it whole)."""
        if x.is_Symbol:
            return self.values[x]
        if x.is_Number or x.is_NumberSymbol:
            return sympy_float(x)
        if type(x) in _FLOAT:
            return None
        return sympy_float(x.xreplace({s: sp.Float(self.values[s]) for s in x.free_symbols}).evalf())


class ExactEvaluator:
    """Evaluate with exact (Rational) leaf values; SymPy keeps the result exact until `to_float`."""

    def __init__(self, values: dict[sp.Symbol, sp.Expr]) -> None:
        self.values = values

    def __call__(self, e: sp.Basic) -> sp.Expr:
        return e.xreplace(self.values)

    @staticmethod
    def to_float(v: sp.Expr) -> float:
        return sympy_float(v.evalf(30))


class AbsoluteEvaluator:
    """Each expression's size as floating point builds it: sums and products of the terms' magnitudes.

    `|a| + |b|` for `a + b` (the cancellation rounding cannot see), `|a|·|b|` for a product, and
    `|base|^p` for a power with a non-negative constant exponent; any other function is a single
    rounding of its true value, so its magnitude is that value's. Memoised like `FloatEvaluator`.
    """

    def __init__(self, value: FloatEvaluator) -> None:
        self.value = value
        self.memo: dict[sp.Basic, float] = {}

    def __call__(self, e: sp.Basic) -> float:
        return bottom_up(e, self.memo, self._atom, self._combine)

    def _atom(self, x: sp.Basic) -> float | None:
        if x.is_Add or x.is_Mul or (x.is_Pow and x.args[1].is_Number and x.args[1] >= 0):
            return None
        return abs(self.value(x))

    @staticmethod
    def _combine(x: sp.Basic, args: list) -> float:
        if x.is_Pow:
            return float_pow(args[0], args[1])
        return sum(args) if x.is_Add else math.prod(args)
