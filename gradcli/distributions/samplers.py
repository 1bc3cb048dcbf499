"""PyTorch's CPU samplers for the gamma and Poisson families, draw for draw.

ATen draws these one element at a time (a serial kernel over the output in row-major order), each
from double uniforms (`random64`'s 53 bits) and double normals (Box-Muller with the cached second
sample that `randn` also uses), so the words a seeded program consumes, and so its numbers, are
PyTorch's:

- gamma: Marsaglia and Tsang's rejection method; a concentration below 1 is boosted by one with a
  factor (1 - u)^(1/α). The constants are float literals in ATen (0.0331f, 1.0f/3.0f), which matter
  in the last bits; for a float32 concentration the boost and d = α - 1/3 are float32 arithmetic.
- Dirichlet: a gamma draw per concentration in float64, each row divided by its sum, then clamped
  into [tiny, 1) of the dtype.
- Poisson: for a rate of 10 or more Hörmann's transformed rejection (1993), below it the product of
  uniforms until it falls under e^-rate.
- Binomial: for a mean of 10 or more (of the rarer outcome) Hörmann's BTRS with Stirling tails, below it
  the inversion by geometric waiting times; count and probability keep the dtype's own arithmetic where
  ATen's `scalar_t` does (float32 products and log1p for a float32 tensor).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine.random import Generator

_F32 = np.float32
_THIRD32 = float(_F32(1.0) / _F32(3.0))
_C0331 = float(_F32(0.0331))


def _uniform(gen: Generator) -> float:
    return float(gen.standard_uniform(1, np.float64)[0])


def _normal(gen: Generator) -> float:
    return float(gen.normal(1, np.float64)[0])


def gamma_one(gen: Generator, alpha: float, single: bool) -> float:
    """One standard gamma draw of concentration `alpha`, as ATen's `sample_gamma` (float32 arithmetic where
    its scalar type is float: `single`)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        exponent = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1 - _uniform(gen), exponent)
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    d = float(_F32(alpha) - _F32(_THIRD32)) if single else alpha - _THIRD32
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = _normal(gen)
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - _uniform(gen)
        xx = x * x
        if u < 1.0 - _C0331 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """`torch._standard_gamma`: a draw per element, never below the dtype's smallest normal number."""
    single = alpha.dtype == np.float32
    tiny = np.finfo(alpha.dtype).tiny
    out = [max(tiny, alpha.dtype.type(gamma_one(gen, float(a), single))) for a in alpha.ravel().tolist()]
    return np.array(out, dtype=alpha.dtype).reshape(alpha.shape)


def dirichlet(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """`torch._sample_dirichlet`: float64 gamma draws normalised along the last dimension."""
    draws = [max(np.finfo(np.float64).tiny, gamma_one(gen, float(a), False)) for a in alpha.ravel().tolist()]
    gammas = np.array(draws).reshape(alpha.shape)
    ratios = (gammas / gammas.sum(-1, keepdims=True)).astype(alpha.dtype)
    below_one = np.nextafter(alpha.dtype.type(1), alpha.dtype.type(0))
    return np.minimum(below_one, np.maximum(np.finfo(alpha.dtype).tiny, ratios))


def poisson_one(gen: Generator, rate: float) -> int:
    if rate >= 10:
        slam, loglam = math.sqrt(rate), math.log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform(gen) - 0.5
            v = _uniform(gen)
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + rate + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= \
                    -rate + k * loglam - math.lgamma(k + 1.0):
                return k
    if rate == 0:
        return 0
    count, product, limit = 0, 1.0, math.exp(-rate)
    while True:
        product *= _uniform(gen)
        if product > limit:
            count += 1
        else:
            return count


def poisson(gen: Generator, rates: np.ndarray) -> np.ndarray:
    """`torch.poisson`: a count per rate, in the rates' dtype."""
    return np.array([poisson_one(gen, float(r)) for r in rates.ravel().tolist()],
                    dtype=rates.dtype).reshape(rates.shape)


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log k! minus Stirling's approximation of it: a table up to 9, a series beyond."""
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(gen: Generator, count: Any, prob: Any, T: type) -> Any:
    """Count geometric waiting times until they pass `count` (for a small mean)."""
    log_q = float(np.log1p(-T(prob)))
    total, successes = 0.0, T(0)
    while True:
        total += math.ceil(math.log(_uniform(gen)) / log_q)
        if total > float(count):
            return successes
        successes = T(successes + T(1))


def _btrs(gen: Generator, count: Any, prob: Any, T: type) -> Any:
    """Hörmann's transformed rejection with squeeze (BTRS), as ATen writes it."""
    stddev = float(np.sqrt(T(T(count * prob) * T(T(1) - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(T(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(prob) / (1 - float(prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float(T(T(count + T(1)) * prob)))
    n = float(count)
    while True:
        u = _uniform(gen) - 0.5
        v = _uniform(gen)
        us = 0.5 - abs(u)
        k = float(T(math.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return T(k)
        v = math.log(v * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1))) + (n + 1) * math.log((n - m + 1) / (n - k + 1))
                 + (k + 0.5) * math.log(r * (n - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(n - m)
                 - _stirling_tail(k) - _stirling_tail(n - k))
        if v <= upper:
            return T(k)


def binomial_one(gen: Generator, count: Any, prob: Any, T: type) -> Any:
    """One binomial count, as ATen's `sample_binomial` (BTRS for a mean of 10 or more, else inversion)."""
    count, prob = T(count), T(prob)
    if count <= 0.0 or prob <= 0.0:
        return T(0)
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        return _btrs(gen, count, prob, T) if float(T(count * prob)) >= 10.0 else \
            _binomial_inversion(gen, count, prob, T)
    if prob > 0.5:
        q = T(1.0 - float(prob))
        drawn = _btrs(gen, count, q, T) if float(T(count * q)) >= 10.0 else _binomial_inversion(gen, count, q, T)
        return T(count - drawn)
    return T(math.nan)


def binomial(gen: Generator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """`torch.binomial(count, prob)`: a count per element, in the probabilities' dtype."""
    T = np.float32 if probs.dtype == np.float32 else np.float64
    out = [binomial_one(gen, c, p, T) for c, p in zip(counts.ravel().tolist(), probs.ravel().tolist())]
    return np.array(out, dtype=probs.dtype).reshape(probs.shape)
