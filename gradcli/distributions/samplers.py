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
"""
from __future__ import annotations

import math

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
