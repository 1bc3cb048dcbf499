"""PyTorch's CPU random numbers, bit for bit: its Mersenne Twister and the transforms ATen applies to it.

A pasted tutorial prints PyTorch's numbers only if every draw consumes the same words of the same
generator and turns them into floats with the same roundings. The facts below come from ATen's CPU
generator and distribution kernels and were confirmed against torch 2.13 on x86-64 (AVX2 kernels,
with the fused multiply-adds the compiler makes of them):

- The generator is mt19937 seeded with the low 32 bits of the seed. `random()` is one 32-bit word;
  `random64()` is two, the first one the high half.
- A float32 uniform is the low 24 bits of one word times 2**-24; a float64 uniform the low 53 bits
  of `random64()` times 2**-53. `uniform_(a, b)` returns fma(u, b - a, a) in the tensor's dtype.
- Normal samples come from Box-Muller in two ways. A tensor of fewer than 16 elements (or a
  non-contiguous one) draws one element at a time in float64: two uniforms give r*cos and r*sin,
  the sine being kept in the generator for the next element (of any later call, until reseeded).
  From 16 elements the kernel first draws every uniform, then transforms each block of 16 in place,
  pairing element j with j+8; when the size is not a multiple of 16 it draws 16 fresh uniforms for
  the last 16 elements and transforms those again. float64 uses libm's log, cos and sin there;
  float32 uses Cephes-style polynomial log and sincos evaluated in float32 (`_log32`, `_sincos32`).
- `randint` and `random_(from, to)` are `low + word % (high - low)` (two words when the range needs
  them); `random_()` is a word (two for 8-byte dtypes) modulo the integers the dtype holds exactly;
  `exponential_(λ)` is -1/λ · log1p(-u) with a float64 uniform and libm's log1p; `cauchy_(m, σ)` is
  m + σ·tan(π(u - ½)) with a float64 uniform and libm's tan, one element at a time; `randperm` swaps
  element i with i + word % (n - i) from the front; `bernoulli` is `uniform < p`, the uniform being
  float64 for a Python-float p or a float64 p tensor, float32 for a float32 p tensor.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

DEFAULT_SEED = 67280421310721  # PyTorch's seed before any manual_seed
_WORD = np.uint64(0xFFFFFFFF)


def _mt19937_key(seed: int) -> np.ndarray:
    """The 624-word state of mt19937's integer seeding (the C++ standard's `seed(value)`)."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class Generator:
    """PyTorch's CPU generator: mt19937 plus the cached second sample of the last Box-Muller pair."""

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> "Generator":
        self._seed = seed
        self._engine = np.random.MT19937()
        self._engine.state = {"bit_generator": "MT19937", "state": {"key": _mt19937_key(seed), "pos": 624}}
        self._next_normal: float | None = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def stash(self) -> tuple:
        """Where the stream stands (what PyTorch's get_rng_state captures), to replay the same draws later."""
        return self._seed, self._engine.state, self._next_normal

    def restore(self, stash: tuple) -> None:
        self._seed, state, self._next_normal = stash
        self._engine.state = state

    def seed(self) -> int:
        """A fresh seed from the operating system's entropy, as PyTorch's `Generator.seed()`."""
        fresh = int(np.random.SeedSequence().entropy) % 2 ** 64
        self.manual_seed(fresh)
        return fresh

    # -- raw words --------------------------------------------------------------------
    def _words(self, count: int) -> np.ndarray:
        """`count` results of `random()`, as uint64 so arithmetic on them cannot wrap.

        Inside a vmap that batches by rules every example shares the draw: right for randomness="same", else
        vmap runs per example instead (or refuses, with randomness="error")."""
        from gradcli.engine.tensor import VMAP_LEVELS
        if VMAP_LEVELS and VMAP_LEVELS[-1].randomness != "same":
            from gradcli.engine.batched import RANDOM_DRAW, NoRule
            raise NoRule(RANDOM_DRAW)
        return self._engine.random_raw(count).astype(np.uint64) & _WORD

    def _words64(self, count: int) -> np.ndarray:
        pairs = self._words(2 * count)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    # -- distributions ----------------------------------------------------------------
    def standard_uniform(self, count: int, dtype: type) -> np.ndarray:
        """[0, 1) with the random bits PyTorch keeps: 24 of one word in float32 (float16 and bfloat16 too, rounded
        where the values land), or 53 of two for float64."""
        if np.dtype(dtype) != np.float64:
            return (self._words(count) & np.uint64(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)
        return (self._words64(count) & np.uint64(2 ** 53 - 1)).astype(np.float64) * 2.0 ** -53

    def uniform(self, count: int, dtype: type, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """In float32 for float16 and bfloat16 (PyTorch's accumulate type), rounded where the values land."""
        kind = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        low_, high_ = kind(low), kind(high)
        return fma(self.standard_uniform(count, dtype), high_ - low_, low_)

    def normal(self, count: int, dtype: type, mean: float = 0.0, std: float = 1.0,
               contiguous: bool = True) -> np.ndarray:
        kind = np.float64 if np.dtype(dtype) == np.float64 else np.float32  # float32 for the narrow floats
        if count < 16 or not contiguous:
            return self._normal_one_by_one(count, mean, std).astype(kind)
        box_muller = _box_muller32 if kind is np.float32 else _box_muller64
        out = box_muller(self.standard_uniform(count, kind)[: count // 16 * 16].reshape(-1, 16))
        if count % 16:
            tail = box_muller(self.standard_uniform(16, kind).reshape(1, 16))
            out = np.concatenate([out.ravel()[: count - 16], tail.ravel()])
        return fma(out.ravel(), kind(std), kind(mean))

    def _normal_one_by_one(self, count: int, mean: float, std: float) -> np.ndarray:
        out = np.empty(count)
        for i in range(count):
            if self._next_normal is None:
                u1, u2 = self.standard_uniform(2, np.float64)
                radius = math.sqrt(-2.0 * math.log1p(-u2))
                theta = 2.0 * math.pi * u1
                self._next_normal = radius * math.sin(theta)
                out[i] = radius * math.cos(theta)
            else:
                out[i], self._next_normal = self._next_normal, None
        return fma(out, np.float64(std), np.float64(mean))

    def integers(self, count: int, low: int, high: int) -> np.ndarray:
        """`randint`: a word modulo the range (two words from a range of 2**32), slightly biased as in PyTorch."""
        span = high - low
        words = self._words(count) if span < 2 ** 32 else self._words64(count)
        return (words % np.uint64(span)).astype(np.int64) + np.int64(low)

    def full_range(self, count: int, dtype: np.dtype) -> np.ndarray:
        """`random_()` without bounds: a word modulo the integers the dtype holds exactly (2**53 + 1 for float64,
        2**24 + 1 for float32, 2**63 for int64...); float64 and int64 take two words, the others one."""
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return (self._words(count) & np.uint64(1)).astype(bool)
        if dtype.kind == "f":
            span = 2 ** (np.finfo(dtype).nmant + 1) + 1
        else:
            span = int(np.iinfo(dtype).max) + 1
        words = self._words64(count) if dtype.itemsize == 8 else self._words(count)
        return (words % np.uint64(span)).astype(dtype)

    def exponential(self, count: int, dtype: type, lambd: float) -> np.ndarray:
        """-1/λ · log1p(-u) of float64 uniforms with the C library's log1p, then rounded to the dtype."""
        u = self.standard_uniform(count, np.float64)
        return (np.float64(-1.0 / lambd) * _libm(math.log1p, -u)).astype(dtype)

    def cauchy(self, count: int, dtype: type, median: float, sigma: float) -> np.ndarray:
        """median + sigma·tan(π(u - ½)) of float64 uniforms with the C library's tan, then rounded to the dtype."""
        u = self.standard_uniform(count, np.float64)
        return (np.float64(median) + np.float64(sigma) * _libm(math.tan, math.pi * (u - 0.5))).astype(dtype)

    def permutation(self, n: int) -> np.ndarray:
        out = np.arange(n, dtype=np.int64)
        offsets = self._words(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint64)
        for i, offset in enumerate(offsets.tolist()):
            j = i + offset
            out[i], out[j] = out[j], out[i]
        return out

    def bernoulli(self, p: float | np.ndarray, count: int) -> np.ndarray:
        """1.0 where a uniform falls below p: float64 uniforms for a number or float64 p, float32 for float32 p."""
        if isinstance(p, np.ndarray) and p.dtype == np.float32:
            return (self.standard_uniform(count, np.float32) < p.ravel()).astype(np.float64)
        return (self.standard_uniform(count, np.float64) < np.ravel(p)).astype(np.float64)


def new_generator(device: object = "cpu") -> Generator:
    """`torch.Generator()`: PyTorch's CPU generator at its default seed (`.manual_seed(n)` reseeds it)."""
    from gradcli.engine.devices import check_device
    check_device(device)
    return Generator()


# -- the float32 kernel's Box-Muller -----------------------------------------------------
_F32 = np.float32
_LOG_POLY = tuple(_F32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                                     1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                                     3.3333331174e-1))
_COS_POLY = tuple(_F32(c) for c in (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2))
_SIN_POLY = tuple(_F32(c) for c in (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1))
_PI4_PARTS = tuple(_F32(c) for c in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8))
_SIGN = np.int32(-0x80000000)


def _horner(coefficients: tuple, x: np.ndarray) -> np.ndarray:
    y = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        y = fma(y, x, c)
    return y


def _log32(x: np.ndarray) -> np.ndarray:
    """Natural log of positive float32 values: exponent and mantissa split, then a degree-9 polynomial."""
    bits = np.maximum(x, np.array(0x00800000, np.int32).view(_F32)).view(np.int32)
    exponent = (bits >> 23).astype(_F32) - _F32(126)
    mantissa = ((bits & np.int32(~0x7F800000)) | np.array(0.5, _F32).view(np.int32)).view(_F32)
    small = mantissa < _F32(0.707106781186547524)
    exponent = exponent - small.astype(_F32)
    m = (mantissa - _F32(1)) + np.where(small, mantissa, _F32(0))
    z = m * m
    y = fma(_horner(_LOG_POLY, m) * m, z, exponent * _F32(-2.12194440e-4))
    y = fma(z, _F32(-0.5), y)
    return fma(exponent, _F32(0.693359375), m + y)


def _sincos32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sine and cosine of float32 values: reduction by multiples of pi/4 in three parts, then two polynomials."""
    sign_sin = x.view(np.int32) & _SIGN
    x = np.abs(x)
    octant = ((x * _F32(1.27323954473516)).astype(np.int32) + 1) & np.int32(~1)
    y = octant.astype(_F32)
    for part in _PI4_PARTS:
        x = fma(y, part, x)
    sign_sin = sign_sin ^ ((octant & 4) << 29)
    sign_cos = (~(octant - 2) & 4) << 29
    use_sine_poly = (octant & 2) == 0
    z = x * x
    cos_poly = fma(_horner(_COS_POLY, z) * z, z, -(z * _F32(0.5))) + _F32(1)
    sin_poly = fma(_horner(_SIN_POLY, z) * z, x, x)
    sin = np.where(use_sine_poly, sin_poly, cos_poly)
    cos = np.where(use_sine_poly, cos_poly, sin_poly)
    return (sin.view(np.int32) ^ sign_sin).view(_F32), (cos.view(np.int32) ^ sign_cos).view(_F32)


def _box_muller32(blocks: np.ndarray) -> np.ndarray:
    radius = np.sqrt(_F32(-2) * _log32(_F32(1) - blocks[:, :8]))
    sin, cos = _sincos32(_F32(2 * math.pi) * blocks[:, 8:])
    return np.concatenate([radius * cos, radius * sin], axis=1)


def _box_muller64(blocks: np.ndarray) -> np.ndarray:
    radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - blocks[:, :8]))
    theta = 2.0 * math.pi * blocks[:, 8:]
    return np.concatenate([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], axis=1)


def _libm(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    """The C library's function elementwise (NumPy's SIMD versions may differ from it in the last bit)."""
    return np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


# -- fused multiply-add -------------------------------------------------------------------
def fma(a: np.ndarray, b: np.ndarray | np.floating, c: np.ndarray | np.floating) -> np.ndarray:
    """a*b + c rounded once, in a's dtype (float32 or float64), as the compiled kernels compute it."""
    if a.dtype == np.float32:
        product = a.astype(np.float64) * np.asarray(b, dtype=np.float64)  # exact: 24 + 24 bits
        addend = _like(c, product)
        total = product + addend
        out = total.astype(np.float32)
        # Rounding the float64 sum again to float32 can only err when it lands exactly halfway
        # between two float32 values (or among float32's subnormals): redo those exactly.
        unsure = ((total.view(np.int64) & 0x1FFFFFFF) == 0x10000000) | (np.abs(total) < 2.0 ** -126)
        if unsure.any():
            out[unsure] = _round_to_odd_sum(product[unsure], addend[unsure]).astype(np.float32)
        return out
    high, low = _exact_product(a, _like(b, a))
    total, rest = _exact_sum(_like(c, high), high)
    return total + _round_to_odd_sum(rest, low)


def _like(v: np.ndarray | np.floating, shape_of: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.asarray(v, dtype=np.float64), shape_of.shape)


def _exact_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, s the rounded sum (Knuth's two-sum)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _exact_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e == a * b exactly (Dekker's product with Veltkamp's split)."""
    def split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scaled = 134217729.0 * v
        high = scaled - (scaled - v)
        return high, v - high
    a_hi, a_lo = split(a)
    b_hi, b_lo = split(b)
    p = a * b
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _round_to_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: an inexact sum keeps its last bit set, so a later rounding to fewer bits is exact."""
    s, err = _exact_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    return np.where((err != 0) & even, np.nextafter(s, np.copysign(np.inf, err)), s)
