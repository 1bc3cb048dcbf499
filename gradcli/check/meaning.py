"""The SymPy meaning of the op table: `S`, the namespace every `Op.sym` calls.

Values are NumPy object arrays whose elements are SymPy expressions (0-d arrays for scalars), so
shapes, broadcasting, indexing, reshapes and concatenation come from NumPy itself and only the
arithmetic is symbolic. Sums are built with one `Add(*terms)` rather than a chain of `+` (which
re-flattens at every step), and `work` counts the terms made so a program too big for SymPy
stops early.

An element may also be a plain Python float: a leaf element the check does not differentiate by
(outside the sample) is fixed at its value, which leaves every checked partial derivative
unchanged. Arithmetic between such known values stays in float64 (as the forward computed it),
so a sampled check of a large input costs little more than its sample.

A float enters SymPy as the exact Rational of its binary value, never as a Float: SymPy builds
`Float·w` terms about six times slower than `Rational·w` (each Float coefficient sets off
assumption deduction), and the exact value is the one the forward used.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from gradcli.check.calculus import extremum, float_pow, guard, sign, sympy_float
from gradcli.engine import special
from gradcli.engine.ops import TABLE

_SHORT_DIGITS = 6


class TooLarge(Exception):
    """The program is too large, too deep or too slow for SymPy: the message says which."""


def _short_decimal(text: str) -> Fraction | None:
    """The decimal a float prints as, when that is short (`0.1`, `2.5e-05`): SymPy shows it exactly."""
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    if len(mantissa.rstrip("0")) > _SHORT_DIGITS:
        return None
    return Fraction(text)


def exact(v: float) -> sp.Expr:
    """A float's exact binary value (±oo and nan for the non-finite)."""
    if not math.isfinite(v):
        return sp.nan if math.isnan(v) else (sp.oo if v > 0 else -sp.oo)
    return sp.Rational(*v.as_integer_ratio())


def _vector(items: list[Any]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _value(u: Any) -> float | None:
    """A number's float value (a known float, a Python number, a SymPy number), else None."""
    if isinstance(u, (int, float)):
        return float(u)
    if isinstance(u, sp.Basic) and u.is_Number:
        return sympy_float(u)
    return None


def _symbolic(u: Any) -> Any:
    return exact(u) if type(u) is float else u


def _divide(a: float, b: float) -> float:
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _elementwise(numeric: Callable[[float], float], function: Any) -> Any:
    """One function of one element: float arithmetic for a known float, SymPy otherwise.

    A symbolic argument is wrapped unevaluated: SymPy's evaluation of `tanh(sum of 45 products)`
    queries the assumptions of every term (milliseconds each) and never simplifies such an
    argument anyway. Numbers are still evaluated (`exp(0)` is 1).
    """
    def apply(u: Any) -> Any:
        if type(u) is float:
            return numeric(u)
        return function(u) if getattr(u, "is_Number", True) else function(u, evaluate=False)
    return staticmethod(apply)


def _binary(numeric: Callable[[float, float], float], symbolic: Callable[[Any, Any], Any]) -> Any:
    """Float arithmetic when one operand is a known float and the other a number, else SymPy's."""
    def apply(u: Any, v: Any) -> Any:
        if type(u) is float or type(v) is float:
            a, b = _value(u), _value(v)
            if a is not None and b is not None:
                return numeric(a, b)
            u, v = _symbolic(u), _symbolic(v)
        return symbolic(u, v)
    return staticmethod(apply)


def _product(u: Any, v: Any) -> Any:
    """u·v, with a number times a symbol or function built directly in the form SymPy would give.

    Evaluated, `c*w` runs the full Mul flattening for a result known in advance: `Mul(c, w)`.
    """
    if u.is_Number and u not in (sp.S.Zero, sp.S.One) and not isinstance(v, (sp.Add, sp.Mul, sp.Number)):
        return sp.Mul(u, v, evaluate=False)
    if v.is_Number and u.is_Number is False:
        return _product(v, u)
    return u * v


class _Step(sp.Function):
    """floor, ceil, trunc and round with slope 0: SymPy states no derivative for its own (it leaves
    `Derivative(floor(x), x)` unevaluated), and PyTorch's gradient of a step is 0. The jumps are
    kinks (`check/kinks.py`), so the slope is never compared there."""

    _at: Callable[[Fraction], int] = staticmethod(math.floor)

    def fdiff(self, argindex: int = 1) -> sp.Expr:
        return sp.S.Zero

    @classmethod
    def eval(cls, u: sp.Expr) -> sp.Expr | None:
        if u.is_Rational:
            return sp.Integer(cls._at(Fraction(int(u.p), int(u.q))))
        if u.is_Float and u.is_finite:
            return sp.Integer(cls._at(Fraction(float(u))))
        return None


def _step(name: str, at: Callable[[Fraction], int]) -> type:
    return type(name, (_Step,), {"_at": staticmethod(at)})


Floor, Ceil, Trunc, Round = (_step("floor", math.floor), _step("ceil", math.ceil), _step("trunc", math.trunc),
                             _step("round", round))


def _float_step(fn: Callable[[float], float]) -> Callable[[float], float]:
    return lambda v: float(fn(v)) if math.isfinite(v) else v


def _nan_or(fn: Callable[..., float]) -> Callable[..., float]:
    return lambda *a: math.nan if any(map(math.isnan, a)) else fn(a)


class Meaning:
    """`S`: elementwise functions of one element, and array helpers over object arrays.

    The functions the op table declares with an `element` meaning (`exp`, `asin`, ...) are added
    from those declarations below the class; what is written here is the shared vocabulary
    (arithmetic, Max, Abs, the steps) and the meanings made of other meanings.

    `exact` decides what a leaf element held at its value is: a float (arithmetic in float64)
    or its exact value (`--exact`, arithmetic in SymPy).
    """

    Abs = _elementwise(abs, sp.Abs)
    sign = _elementwise(sign, sp.sign)
    add = _binary(lambda a, b: a + b, lambda u, v: u + v)
    sub = _binary(lambda a, b: a - b, lambda u, v: u - v)
    mul = _binary(lambda a, b: a * b, _product)
    div = _binary(_divide, lambda u, v: u / v)
    pow = _binary(float_pow, lambda u, v: u ** v)
    Max = _binary(_nan_or(max), lambda u, v: extremum(sp.Max, [u, v]))
    Min = _binary(_nan_or(min), lambda u, v: extremum(sp.Min, [u, v]))
    floor = _elementwise(_float_step(math.floor), Floor)
    ceil = _elementwise(_float_step(math.ceil), Ceil)
    trunc = _elementwise(_float_step(math.trunc), Trunc)

    def polygamma(self, n: int, u: Any) -> Any:
        if type(u) is float:
            return float(special.polygamma(n, np.float64(u)))
        return sp.polygamma(n, u)

    def logit(self, u: Any, eps: float | None) -> Any:
        if eps is not None:
            u = self.clamp(u, eps, 1.0 - eps)
        return self.log(self.div(u, self.sub(sp.Integer(1), u)))

    def round(self, u: Any, decimals: int) -> Any:
        scale = sp.Integer(10) ** decimals
        if type(u) is float:
            return float(np.round(u, decimals))
        return Round(u * scale) / scale

    @staticmethod
    def zero_where_zero(u: Any, otherwise: Callable[[], Any]) -> Any:
        """u's own zero where u is zero (a float or SymPy's), else `otherwise()`: xlogy's 0·log y is 0 for any y."""
        if _value(u) == 0:
            return 0.0 if type(u) is float else sp.S.Zero
        return otherwise()

    def lerp(self, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
        a, b, w = np.broadcast_arrays(a, b, w)
        out = np.empty(a.shape, dtype=object)
        for k, (u, v, t) in enumerate(zip(a.flat, b.flat, w.flat)):
            self.spend(1)
            out.flat[k] = self.add(u, self.mul(t, self.sub(v, u)))
        return out

    def addc(self, fn: Callable[[Any, Any], Any], x: np.ndarray, a: np.ndarray, b: np.ndarray,
             value: float) -> np.ndarray:
        """addcmul and addcdiv: x + value·fn(a, b)."""
        x, a, b = np.broadcast_arrays(x, a, b)
        v = self.number(value)
        out = np.empty(x.shape, dtype=object)
        for k, (s, u, t) in enumerate(zip(x.flat, a.flat, b.flat)):
            self.spend(1)
            out.flat[k] = self.add(s, self.mul(v, fn(u, t)))
        return out
    # torch.nn.functional: gelu's constants exactly (their binary values would make SymPy's factoring crawl)
    sqrt_half = sp.sqrt(2) / 2
    inv_sqrt_2pi = 1 / sp.sqrt(2 * sp.pi)
    sqrt_2_over_pi = sp.sqrt(2 / sp.pi)

    def __init__(self, exact: bool = False, budget: int = 2_000_000, seconds: float = 10.0) -> None:
        self.exact = exact
        self.budget = budget
        self.seconds = seconds
        self.deadline = time.process_time() + seconds
        self.work = 0
        self.inner_kink: Callable[[str, Any, list, np.ndarray, np.ndarray], None] | None = None
        """Told of each kink inside a program's Function's forward as `check.custom` replays it: (the
        Function's name, the forward's node, its arguments' expressions, the kinked elements' mask, its
        output's expressions)."""

    # -- constants -----------------------------------------------------------------------
    def number(self, v: Any) -> sp.Expr:
        """A constant as SymPy sees it: integers and short decimals as written, others by binary value."""
        if isinstance(v, np.generic):
            text = str(v)
            v = v.item()
        else:
            text = repr(v)
        if isinstance(v, (bool, int)):
            return sp.Integer(int(v))
        v = float(v)
        if not math.isfinite(v):
            return exact(v)
        if v.is_integer():
            return sp.Integer(int(v))
        short = _short_decimal(text)
        if short is not None:
            return sp.Rational(short.numerator, short.denominator)
        return exact(v)

    def constant(self, value: Any) -> np.ndarray:
        """A constant input (data of a tensor that needs no grad, or a Python number) as an object array."""
        value = np.asarray(value)
        out = np.empty(value.shape, dtype=object)
        for k, v in enumerate(value.flat):
            out.flat[k] = self.number(v)
        return out

    def fixed(self, v: Any) -> Any:
        """A leaf element held at its value: a float, or in exact mode an exact number."""
        return self.number(v) if self.exact else float(v)

    # -- elementwise -----------------------------------------------------------------------
    def spend(self, n: int) -> None:
        """Count `n` more terms against the budget, and stop once the time is up.

        The time is this process's CPU time: on a machine busy with other work, the same program
        gets the same witness (wall time would fall back to finite differences only under load).
        """
        self.work += n
        if self.work > self.budget:
            raise TooLarge(f"too large for SymPy (over {self.budget:,} terms)")
        if time.process_time() > self.deadline:
            raise TooLarge(f"too slow for SymPy (over {self.seconds:g} s of CPU time)")

    def as_array(self, x: Any) -> np.ndarray:
        """Object-array indexing yields a bare element for one element: keep it an array."""
        if isinstance(x, np.ndarray):
            return x
        out = np.empty((), dtype=object)
        out[()] = x
        return out

    def map(self, fn: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape, dtype=object)
        for k, u in enumerate(x.flat):
            self.spend(1)
            out.flat[k] = fn(u)
        return out

    def broadcast(self, fn: Callable[[Any, Any], Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        pairs = np.broadcast(a, b)
        out = np.empty(pairs.shape, dtype=object)
        for k, (u, v) in enumerate(pairs):
            self.spend(1)
            out.flat[k] = fn(u, v)
        return out

    def clamp(self, u: Any, lo: float | None, hi: float | None) -> Any:
        if lo is not None:
            u = self.Max(u, self.number(lo))
        if hi is not None:
            u = self.Min(u, self.number(hi))
        return u

    def where(self, c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The condition is data the program computed, fixed in the trace: select, no Piecewise needed."""
        c, a, b = np.broadcast_arrays(c, a, b)
        self.spend(c.size)
        out = np.empty(c.shape, dtype=object)
        for k, (ck, ak, bk) in enumerate(zip(c.flat, a.flat, b.flat)):
            out.flat[k] = ak if bool(ck) else bk
        return out

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """NumPy's matmul rules (1-D lifting, batch broadcasting), one sum per output element."""
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
        b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
        n, m = a2.shape[-2], b2.shape[-1]
        out = np.empty(batch + (n, m), dtype=object)
        mul = self.mul
        for idx in np.ndindex(*batch, n, m):
            self.spend(a2.shape[-1])
            *lead, i, j = idx
            row = a2[tuple(lead) + (i,)]
            col = b2[tuple(lead) + (slice(None), j)]
            out[idx] = self.total(mul(u, v) for u, v in zip(row, col))
        if a.ndim == 1:
            out = out.reshape(out.shape[:-2] + out.shape[-1:])
        if b.ndim == 1:
            out = out.reshape(out.shape[:-1])
        return out

    # -- reductions over one flat vector -------------------------------------------------------
    @staticmethod
    def total(items: Any) -> Any:
        """Σ items: known floats added in float64, the rest in one `Add`."""
        known, rest = 0.0, []
        floats = False
        for u in items:
            if type(u) is float:
                known += u
                floats = True
            else:
                rest.append(u)
        if not rest:
            return known
        return sp.Add(exact(known), *rest) if floats else sp.Add(*rest)

    def add_all(self, v: np.ndarray) -> Any:
        return self.total(v)

    def mean_all(self, v: np.ndarray) -> Any:
        """Σv/n, with 1/n kept as a factor: evaluated, SymPy would multiply it into every term."""
        whole = self.total(v)
        if isinstance(whole, sp.Add):
            return sp.Mul(sp.Rational(1, len(v)), whole, evaluate=False)
        return self.div(whole, sp.Integer(len(v)))

    def mul_all(self, v: np.ndarray) -> Any:
        known = [u for u in v if type(u) is float]
        rest = [u for u in v if type(u) is not float]
        product = math.prod(known)
        return product if not rest else (sp.Mul(exact(product), *rest) if known else sp.Mul(*rest))

    def max_all(self, v: np.ndarray) -> Any:
        return self._extremum(sp.Max, max, v)

    def min_all(self, v: np.ndarray) -> Any:
        return self._extremum(sp.Min, min, v)

    @staticmethod
    def _extremum(fn: Any, numeric: Callable, v: Any) -> Any:
        """Max/Min of many arguments compare them pairwise when evaluated: build them unevaluated."""
        known = [u for u in v if type(u) is float]
        rest = [u for u in v if type(u) is not float]
        if known:
            best = _nan_or(numeric)(*known)
            if not rest:
                return best
            rest.append(exact(best))
        return extremum(fn, rest)

    def var_all(self, v: np.ndarray, correction: int) -> Any:
        """Σx² − (Σx)²/n over n − c: the same function as Σ(x − x̄)², without n copies of x̄."""
        n = len(v)
        squares = self.total(self.mul(u, u) for u in v)
        mean_square = self.div(self.pow(self.total(v), sp.Integer(2)), sp.Integer(n))
        return self.div(self.sub(squares, mean_square), sp.Integer(n - correction))

    def norm_all(self, v: np.ndarray, p: float) -> Any:
        if p == 2:
            return self.sqrt(self.total(self.mul(u, u) for u in v))
        if p == 1:
            return self.total(self.Abs(u) for u in v)
        if p == float("inf"):
            return self._extremum(sp.Max, max, [self.Abs(u) for u in v])
        if p == -float("inf"):
            return self._extremum(sp.Min, min, [self.Abs(u) for u in v])
        q = self.number(p)
        return self.pow(self.total(self.pow(self.Abs(u), q) for u in v), 1 / q)

    def logsumexp_all(self, v: np.ndarray) -> Any:
        return self.log(self.total(self.exp(u) for u in v))

    def cumsum_1d(self, v: np.ndarray) -> np.ndarray:
        return _vector([self.total(v[:k + 1]) for k in range(len(v))])

    def cumprod_1d(self, v: np.ndarray) -> np.ndarray:
        return _vector([self.mul_all(v[:k + 1]) for k in range(len(v))])

    def softmax_1d(self, v: np.ndarray) -> np.ndarray:
        e = [self.exp(u) for u in v]
        whole = self.total(e)
        return _vector([self.div(u, whole) for u in e])

    def log_softmax_1d(self, v: np.ndarray) -> np.ndarray:
        lse = self.log(self.total(self.exp(u) for u in v))
        return _vector([self.sub(u, lse) for u in v])

    # -- reductions over axes -----------------------------------------------------------------
    def reduce(self, fn: Callable[[np.ndarray], Any], x: np.ndarray, dim: tuple[int, ...] | None,
               keepdim: bool) -> np.ndarray:
        """Apply a flat-vector reduction over `dim` (all axes when None), keeping dims on request."""
        axes = tuple(range(x.ndim)) if dim is None else tuple(dim)
        rest = tuple(a for a in range(x.ndim) if a not in axes)
        moved = np.transpose(x, rest + axes)
        lead = moved.shape[:len(rest)]
        flat = moved.reshape(lead + (-1,))
        out = np.empty(lead, dtype=object)
        for idx in np.ndindex(*lead):
            self.spend(flat.shape[-1])
            out[idx] = fn(flat[idx])
        if keepdim:
            out = out.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
        return out

    def along(self, fn1d: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dim: int) -> np.ndarray:
        """Apply a vector-to-vector function to every 1-D slice along `dim` (softmax)."""
        moved = np.moveaxis(x, dim, -1)
        out = np.empty(moved.shape, dtype=object)
        for idx in np.ndindex(*moved.shape[:-1]):
            self.spend(moved.shape[-1])
            out[idx] = fn1d(moved[idx])
        return np.moveaxis(out, -1, dim)

    def masked(self, x: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """x where `keep`, zero elsewhere (tril, triu)."""
        self.spend(x.size)
        out = np.array(x, dtype=object, copy=True)
        out[~np.broadcast_to(keep, x.shape)] = sp.S.Zero
        return out

    def diag_embed(self, x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
        n = x.shape[-1] + abs(offset)
        out = np.empty(x.shape[:-1] + (n, n), dtype=object)
        out.fill(sp.S.Zero)
        self.spend(out.size)
        for idx in np.ndindex(*x.shape):
            i = idx[-1]
            out[idx[:-1] + (i + max(-offset, 0), i + max(offset, 0))] = x[idx]
        return np.moveaxis(out, (-2, -1), (dim1 % out.ndim, dim2 % out.ndim))

    def scatter(self, x: np.ndarray, src: np.ndarray, key: tuple, add: bool) -> np.ndarray:
        """The input with `src` written (or added) at the index positions."""
        out = np.array(x, dtype=object, copy=True)
        self.spend(out.size)
        if add:
            np.add.at(out, key, src)
        else:
            out[key] = src
        return out

    def cross(self, a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
        a, b = np.broadcast_arrays(np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1))
        out = np.empty(a.shape, dtype=object)
        for idx in np.ndindex(*a.shape[:-1]):
            self.spend(6)
            u, v = a[idx], b[idx]
            out[idx] = _vector([self.sub(self.mul(u[(k + 1) % 3], v[(k + 2) % 3]),
                                         self.mul(u[(k + 2) % 3], v[(k + 1) % 3])) for k in range(3)])
        return np.moveaxis(out, -1, dim)

    def einsum(self, equation: str, *xs: np.ndarray) -> np.ndarray:
        """An explicit einsum ('ij,jk->ik'): each output element one sum of products."""
        ins, result = equation.split("->")
        subs = ins.split(",")
        sizes = {c: n for s, x in zip(subs, xs) for c, n in zip(s, x.shape)}
        summed = [c for c in dict.fromkeys("".join(subs)) if c not in result]
        out = np.empty(tuple(sizes[c] for c in result), dtype=object)
        for idx in np.ndindex(*out.shape):
            at = dict(zip(result, idx))
            terms = []
            for inner in np.ndindex(*(sizes[c] for c in summed)):
                at.update(zip(summed, inner))
                factors = [x[tuple(at[c] for c in s)] for s, x in zip(subs, xs)]
                term = factors[0]
                for f in factors[1:]:
                    term = self.mul(term, f)
                terms.append(term)
            self.spend(len(terms) * len(xs))
            out[idx] = self.total(terms)
        return out

    def matrices(self, x: np.ndarray, fn: Callable[[sp.Matrix], Any]) -> np.ndarray:
        """A function of each matrix of a batch, as a SymPy Matrix (its entries made symbolic)."""
        n, m = x.shape[-2:]
        lead = x.shape[:-2]
        cells = []
        for idx in np.ndindex(*lead):
            self.spend(n * m * n)
            cells.append(fn(sp.Matrix(n, m, [_symbolic(u) for u in x[idx].flat])))
        matrix = bool(cells) and isinstance(cells[0], sp.MatrixBase)
        out = np.empty(lead + (cells[0].shape if matrix else ()), dtype=object)
        for idx, cell in zip(np.ndindex(*lead), cells):
            if matrix:
                for (i, j), e in np.ndenumerate(np.array(cell.tolist(), dtype=object)):
                    out[idx + (i, j)] = e
            else:
                out[idx] = cell
        return out

    @staticmethod
    def inverse_of(m: sp.Matrix) -> sp.Matrix:
        return m.adjugate(method="berkowitz") / m.det(method="berkowitz")

    @staticmethod
    def cholesky_of(m: sp.Matrix) -> sp.Matrix:
        """PyTorch differentiates Cholesky as a function of the symmetric part of its input."""
        return ((m + m.T) / 2).cholesky(hermitian=False)

    def solve(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        inv = self.matrices(a, self.inverse_of)
        if b.ndim == a.ndim - 1:
            return self.matmul(inv, b.reshape(b.shape + (1,)))[..., 0]
        return self.matmul(inv, b)

    def index_put(self, v: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
        """Scatter-add into zeros: repeated indices accumulate, as the forward's `np.add.at`."""
        self.spend(v.size)
        out = np.empty(shape, dtype=object)
        out.fill(sp.Integer(0))
        np.add.at(out, key, v)
        return out


def _declared_elements() -> None:
    """`S.<name>` for every function the op table declares with an `element` meaning: of one element, of two
    (float arithmetic when both are known), or made of the other meanings."""
    for op in TABLE:
        element = op.element
        if element is None:
            continue
        if element.of is not None:
            setattr(Meaning, op.name, _composed(element.of))
        elif len(op.vjps) == 2:
            setattr(Meaning, op.name, _binary(guard(element.numeric), element.symbolic(sp)))
        else:
            setattr(Meaning, op.name, _elementwise(guard(element.numeric), element.symbolic(sp)))


def _composed(of: Callable[..., Any]) -> Callable[..., Any]:
    def meaning(self: Meaning, *elements: Any) -> Any:
        return of(self, *elements)
    return meaning


_declared_elements()
