"""The SymPy meaning of the op table: `S`, the namespace every `Op.sym` calls.

Values are NumPy object arrays of SymPy expressions (0-d arrays for scalars), so shapes,
broadcasting, indexing, reshapes and concatenation come from NumPy itself and only arithmetic is
symbolic. Sums are built with one `Add(*terms)` rather than a chain of `+` (which re-flattens at
every step), and `work` counts the terms created so a program too big for SymPy stops early.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

import numpy as np
import sympy as sp

_SHORT_DIGITS = 6


class TooLarge(Exception):
    """The symbolic replay would build more terms than the budget allows."""


def _short_decimal(text: str) -> Fraction | None:
    """The decimal a float prints as, when that is short (`0.1`, `2.5e-05`): SymPy shows it exactly."""
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    if len(mantissa.rstrip("0")) > _SHORT_DIGITS:
        return None
    return Fraction(text)


class Meaning:
    """`S`: elementwise SymPy functions plus array helpers over object arrays.

    `exact` decides what a float constant becomes when it is not a short decimal: its exact
    binary value as a Rational (`--exact`) or a 53-bit Float.
    """

    exp = staticmethod(sp.exp)
    log = staticmethod(sp.log)
    sqrt = staticmethod(sp.sqrt)
    Abs = staticmethod(sp.Abs)
    sign = staticmethod(sp.sign)
    sin = staticmethod(sp.sin)
    cos = staticmethod(sp.cos)
    tan = staticmethod(sp.tan)
    tanh = staticmethod(sp.tanh)
    Min = staticmethod(sp.Min)

    def __init__(self, exact: bool = False, budget: int = 2_000_000) -> None:
        self.exact = exact
        self.budget = budget
        self.work = 0

    # -- constants -----------------------------------------------------------------------
    def number(self, v: Any) -> sp.Expr:
        """A constant as SymPy sees it: integers and short decimals exactly, others by `exact`."""
        if isinstance(v, np.generic):
            text = str(v)
            v = v.item()
        else:
            text = repr(v)
        if isinstance(v, (bool, int)):
            return sp.Integer(int(v))
        v = float(v)
        if not np.isfinite(v):
            return sp.nan if np.isnan(v) else (sp.oo if v > 0 else -sp.oo)
        if v.is_integer():
            return sp.Integer(int(v))
        short = _short_decimal(text)
        if short is not None:
            return sp.Rational(short.numerator, short.denominator)
        if self.exact:
            exact = Fraction(v)
            return sp.Rational(exact.numerator, exact.denominator)
        return sp.Float(v)

    def constant(self, value: Any) -> np.ndarray:
        """A constant input (data of a tensor that needs no grad, or a Python number) as an object array."""
        value = np.asarray(value)
        out = np.empty(value.shape, dtype=object)
        for k, v in enumerate(value.flat):
            out.flat[k] = self.number(v)
        return out

    # -- elementwise -----------------------------------------------------------------------
    def _spend(self, n: int) -> None:
        self.work += n
        if self.work > self.budget:
            raise TooLarge(f"the symbolic replay passed {self.budget:,} terms")

    def as_array(self, x: Any) -> np.ndarray:
        """Object-array indexing yields a bare expression for one element: keep it an array."""
        if isinstance(x, np.ndarray):
            return x
        out = np.empty((), dtype=object)
        out[()] = x
        return out

    def map(self, fn: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
        self._spend(x.size)
        out = np.empty(x.shape, dtype=object)
        for k, u in enumerate(x.flat):
            out.flat[k] = fn(u)
        return out

    def broadcast(self, fn: Callable[[Any, Any], Any], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        pairs = np.broadcast(a, b)
        self._spend(pairs.size)
        out = np.empty(pairs.shape, dtype=object)
        for k, (u, v) in enumerate(pairs):
            out.flat[k] = fn(u, v)
        return out

    def pow(self, u: Any, v: Any) -> sp.Expr:
        return u ** v

    def Max(self, *args: Any) -> sp.Expr:
        return sp.Max(*args)

    def clamp(self, u: Any, lo: float | None, hi: float | None) -> sp.Expr:
        if lo is not None:
            u = sp.Max(u, self.number(lo))
        if hi is not None:
            u = sp.Min(u, self.number(hi))
        return u

    def where(self, c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The condition is data the program computed, fixed in the trace: select, no Piecewise needed."""
        c, a, b = np.broadcast_arrays(c, a, b)
        self._spend(c.size)
        out = np.empty(c.shape, dtype=object)
        for k, (ck, ak, bk) in enumerate(zip(c.flat, a.flat, b.flat)):
            out.flat[k] = ak if bool(ck) else bk
        return out

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """NumPy's matmul rules (1-D lifting, batch broadcasting), one `Add` per output element."""
        a2 = a.reshape((1,) + a.shape) if a.ndim == 1 else a
        b2 = b.reshape(b.shape + (1,)) if b.ndim == 1 else b
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        a2 = np.broadcast_to(a2, batch + a2.shape[-2:])
        b2 = np.broadcast_to(b2, batch + b2.shape[-2:])
        n, m = a2.shape[-2], b2.shape[-1]
        self._spend(int(np.prod(batch, dtype=np.int64)) * n * m * a2.shape[-1])
        out = np.empty(batch + (n, m), dtype=object)
        for idx in np.ndindex(*batch, n, m):
            *lead, i, j = idx
            row = a2[tuple(lead) + (i,)]
            col = b2[tuple(lead) + (slice(None), j)]
            out[idx] = sp.Add(*(row * col))
        if a.ndim == 1:
            out = out.reshape(out.shape[:-2] + out.shape[-1:])
        if b.ndim == 1:
            out = out.reshape(out.shape[:-1])
        return out

    # -- reductions over one flat vector -------------------------------------------------------
    def add_all(self, v: np.ndarray) -> sp.Expr:
        return sp.Add(*v)

    def mean_all(self, v: np.ndarray) -> sp.Expr:
        return sp.Add(*v) / len(v)

    def mul_all(self, v: np.ndarray) -> sp.Expr:
        return sp.Mul(*v)

    def max_all(self, v: np.ndarray) -> sp.Expr:
        return self._extremum(sp.Max, v)

    def min_all(self, v: np.ndarray) -> sp.Expr:
        return self._extremum(sp.Min, v)

    @staticmethod
    def _extremum(fn: Any, v: np.ndarray) -> sp.Expr:
        """Max/Min of many arguments compare them pairwise when evaluated: build them unevaluated."""
        return fn(*v) if len(v) <= 4 else fn(*v, evaluate=False)

    def var_all(self, v: np.ndarray, correction: int) -> sp.Expr:
        """Σx² − (Σx)²/n over n − c: the same function as Σ(x − x̄)², without n copies of x̄."""
        n = len(v)
        return (sp.Add(*(u * u for u in v)) - sp.Add(*v) ** 2 / n) / (n - correction)

    def norm_all(self, v: np.ndarray, p: float) -> sp.Expr:
        if p == 2:
            return sp.sqrt(sp.Add(*(u * u for u in v)))
        if p == 1:
            return sp.Add(*(sp.Abs(u) for u in v))
        if p == float("inf"):
            return self._extremum(sp.Max, np.array([sp.Abs(u) for u in v], dtype=object))
        q = self.number(p)
        return sp.Add(*(sp.Abs(u) ** q for u in v)) ** (1 / q)

    def softmax_1d(self, v: np.ndarray) -> np.ndarray:
        e = [sp.exp(u) for u in v]
        total = sp.Add(*e)
        return np.array([u / total for u in e] + [None], dtype=object)[:-1]

    def log_softmax_1d(self, v: np.ndarray) -> np.ndarray:
        lse = sp.log(sp.Add(*(sp.exp(u) for u in v)))
        return np.array([u - lse for u in v] + [None], dtype=object)[:-1]

    # -- reductions over axes -----------------------------------------------------------------
    def reduce(self, fn: Callable[[np.ndarray], Any], x: np.ndarray, dim: tuple[int, ...] | None,
               keepdim: bool) -> np.ndarray:
        """Apply a flat-vector reduction over `dim` (all axes when None), keeping dims on request."""
        self._spend(x.size)
        axes = tuple(range(x.ndim)) if dim is None else tuple(dim)
        rest = tuple(a for a in range(x.ndim) if a not in axes)
        moved = np.transpose(x, rest + axes)
        lead = moved.shape[:len(rest)]
        flat = moved.reshape(lead + (-1,))
        out = np.empty(lead, dtype=object)
        for idx in np.ndindex(*lead):
            out[idx] = fn(flat[idx])
        if keepdim:
            out = out.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
        return out

    def along(self, fn1d: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dim: int) -> np.ndarray:
        """Apply a vector-to-vector function to every 1-D slice along `dim` (softmax)."""
        self._spend(x.size)
        moved = np.moveaxis(x, dim, -1)
        out = np.empty(moved.shape, dtype=object)
        for idx in np.ndindex(*moved.shape[:-1]):
            out[idx] = fn1d(moved[idx])
        return np.moveaxis(out, -1, dim)

    def index_put(self, v: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
        """Scatter-add into zeros: repeated indices accumulate, as the forward's `np.add.at`."""
        self._spend(v.size)
        out = np.empty(shape, dtype=object)
        out.fill(sp.Integer(0))
        np.add.at(out, key, v)
        return out
