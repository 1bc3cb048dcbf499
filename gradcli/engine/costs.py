"""How long an op that can run for minutes on tensors within the element cap would take: each is the `cost` of
its entry in the op table (seconds, from its inputs' shapes), read by `apply` before the op runs
(`budget.spend`). Estimates are optimistic, so that only work that surely cannot finish is refused."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine.budget import FLOPS, STEPS


def _batch(*xs: np.ndarray) -> int:
    """How many matrices a batched linear-algebra op works through (broadcast batch dimensions)."""
    return math.prod(np.broadcast_shapes(*(x.shape[:-2] for x in xs))) if any(x.ndim > 2 for x in xs) else 1


def matmul(a: np.ndarray, b: np.ndarray) -> float:
    rows = a.shape[-2] if a.ndim > 1 else 1
    cols = b.shape[-1] if b.ndim > 1 else 1
    return _batch(a, b) * rows * a.shape[-1] * cols / FLOPS


def cubic(x: np.ndarray, *rest: Any) -> float:
    """A factorization (det, inverse, solve, Cholesky): n³ per matrix."""
    n = x.shape[-1] if x.ndim else 1
    return _batch(x) * n ** 3 / FLOPS


def einsum(*xs: np.ndarray, equation: str) -> float:
    """NumPy's own count: every term of the naive loop for two operands, its optimized path's for more."""
    if len(xs) > 2:
        return float(np.einsum_path(equation, *xs, optimize="greedy")[1].split("Optimized FLOP count:")[1].split()[0]) \
            / STEPS
    sizes: dict[str, int] = {}
    for subscripts, x in zip(equation.split("->")[0].split(","), xs):
        sizes.update(zip(subscripts, x.shape))
    return len(xs) * math.prod(sizes.values()) / STEPS


def convolution(x: np.ndarray, w: np.ndarray, b: Any, stride: tuple[int, ...], padding: Any, dilation: tuple[int, ...],
                groups: int) -> float:
    """Each output position of each sample and channel reads C/G·∏kernel inputs."""
    positions = 1
    for n, k, d, pad, s in zip(x.shape[2:], w.shape[2:], dilation, padding, stride):
        positions *= max(0, (n + sum(pad) - d * (k - 1) - 1) // s + 1)
    return x.shape[0] * w.shape[0] * positions * math.prod(w.shape[1:]) / FLOPS


def sort(n: int) -> float:
    """A comparison sort of `n` elements."""
    return n * math.log2(n + 2) / STEPS
