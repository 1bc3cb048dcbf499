"""Special functions NumPy lacks (erf, erfinv, lgamma, digamma, polygamma), on arrays.

gradcli's stack has no SciPy, so these are computed here: erf, erfc and lgamma by Python's
`math` element by element, erfinv by Newton's method from Winitzki's approximation, digamma and
polygamma by the recurrence ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x+1) − (−1)ⁿ n!/xⁿ⁺¹ up to x ≥ 10, its asymptotic
series there, and the reflection formula below 0. Each agrees with PyTorch to float64 rounding,
poles and domain edges included (lgamma(0) = inf, digamma(0) = -inf, erfinv(±1) = ±inf).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

# Bernoulli numbers B2, B4, ..., B18 for the asymptotic series.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798)
_SHIFT_TO = 10.0


def elementwise(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A float function of one float, applied to every element; float32 stays float32."""
    each = np.frompyfunc(fn, 1, 1)

    def run(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        return np.asarray(each(x.astype(np.float64)), dtype=np.float64).astype(dtype)
    return run


def _lgamma(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:
        return math.inf
    except OverflowError:
        return math.inf


def _erfinv(y: float) -> float:
    if not -1.0 < y < 1.0:
        return math.copysign(math.inf, y) if abs(y) == 1.0 else math.nan
    if y == 0.0:
        return y
    a = 0.147
    ln = math.log1p(-y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(4):
        slope = 2 / math.sqrt(math.pi) * math.exp(-x * x)
        if slope == 0.0:
            break
        miss = math.erf(x) - y if abs(y) <= 0.5 else (1.0 - abs(y) - math.erfc(abs(x))) * math.copysign(1.0, y)
        x -= miss / slope
    return x


erf = elementwise(math.erf)
erfc = elementwise(math.erfc)
erfinv = elementwise(_erfinv)
lgamma = elementwise(_lgamma)


def _cot_derivative(n: int, c: np.ndarray) -> np.ndarray:
    """dⁿ/duⁿ cot(u) as a polynomial in c = cot(u): P₀ = c, Pₖ₊₁ = −(1 + c²)·Pₖ′(c)."""
    p = np.polynomial.Polynomial([0.0, 1.0])
    for _ in range(n):
        p = -p.deriv() * np.polynomial.Polynomial([1.0, 0.0, 1.0])
    return p(c)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """ψ⁽ⁿ⁾(x), the (n+1)-th derivative of log Γ; n = 0 is digamma."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        out = _polygamma_positive(n, np.where(v < 0, 1.0 - v, v))
        reflected = v < 0
        if reflected.any():
            c = 1.0 / np.tan(np.pi * v)
            sign = -1.0 if n % 2 == 0 else 1.0
            out = np.where(reflected, sign * ((-1) ** n * np.pi ** (n + 1) * _cot_derivative(n, c) - out), out)
        pole = (v <= 0) & (v == np.floor(v))
        if n == 1:
            pole &= v == 0  # below 0 PyTorch keeps the reflection's (huge, finite) trigamma values
        at_pole = np.where(v == 0, -np.inf, np.nan) if n == 0 else (-1) ** (n + 1) * np.inf
        out = np.where(pole, at_pole, out)
    return out.astype(dtype)


def _polygamma_positive(n: int, x: np.ndarray) -> np.ndarray:
    factorial = math.factorial(n)
    sign = (-1) ** (n + 1)
    total = np.zeros_like(x)
    x = x.copy()
    while True:
        low = x < _SHIFT_TO
        if not low.any():
            break
        total = total + np.where(low, sign * factorial / x ** (n + 1), 0.0)
        x = np.where(low, x + 1.0, x)
    if n == 0:
        series = np.log(x) - 0.5 / x
        for k, b in enumerate(_BERNOULLI, 1):
            series = series - b / (2 * k * x ** (2 * k))
        return series + total
    series = math.factorial(n - 1) / x ** n + factorial / (2 * x ** (n + 1))
    for k, b in enumerate(_BERNOULLI, 1):
        series = series + b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * x ** (2 * k + n))
    return sign * series + total


def digamma(x: np.ndarray) -> np.ndarray:
    return polygamma(0, x)
