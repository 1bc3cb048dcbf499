"""Every op in the table against central finite differences (float64), first and second order.

A VJP is checked as a whole vector-Jacobian product: for a random upstream gradient G, the
gradient of sum(f(x) * G) from backward must match the one finite differences measure. Inputs
stay away from kinks (ties, zeros, clamp bounds); the kinks have their own tests.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcli
from gradcli.engine import functions as F
from gradcli.nn import conv as NC
from gradcli.nn import functional as NF
from gradcli.nn.weight_norms import weight_norm_of
from gradcli.engine import ops as O
from gradcli.engine.tensor import Node

EPS = 1e-6


def r(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + 7 * len(shape) + sum(shape)).standard_normal(shape)


def pos(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) + 1).uniform(0.5, 2.0, shape)


def away(*shape: int) -> np.ndarray:
    """Magnitudes in [0.2, 1.5] with random signs: no zeros for abs, relu, sign or clamp to sit on."""
    rng = np.random.default_rng(sum(shape) + 2)
    return rng.uniform(0.2, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def distinct(*shape: int) -> np.ndarray:
    """Well separated values, so max, min and maximum have one winner."""
    n = int(np.prod(shape, dtype=np.int64))
    return np.random.default_rng(n).permutation(np.arange(n) * 0.31 - 0.9).reshape(shape)


def shifted(*shape: int) -> np.ndarray:
    """`distinct` values moved off the grid, so they never tie with `distinct`'s."""
    return np.asarray(distinct(*shape) + 0.13)


def unit(*shape: int) -> np.ndarray:
    """Inside (-0.9, 0.9): the domain of asin, atanh, erfinv; off the integers floor and round jump at."""
    return np.random.default_rng(sum(shape) + 3).uniform(-0.9, 0.9, shape)


def loss(f: Callable, arrays: list[np.ndarray], G: np.ndarray) -> float:
    return float(np.sum(np.asarray(f(*[gradcli.tensor(a) for a in arrays]), dtype=np.float64) * G))


def numeric_vjp(f: Callable, arrays: list[np.ndarray], G: np.ndarray, eps: float = EPS) -> list[np.ndarray]:
    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a, dtype=np.float64)
        for idx in np.ndindex(*a.shape):
            shifted = [b.copy() for b in arrays]
            shifted[k][idx] = a[idx] + eps
            up = loss(f, shifted, G)
            shifted[k][idx] = a[idx] - eps
            g[idx] = (up - loss(f, shifted, G)) / (2 * eps)
        grads.append(g)
    return grads


def analytic_vjp(f: Callable, arrays: list[np.ndarray], G: np.ndarray) -> list[np.ndarray | None]:
    xs = [gradcli.tensor(a, requires_grad=True) for a in arrays]
    f(*xs).backward(gradcli.tensor(G))
    return [None if x.grad is None else x.grad.numpy() for x in xs]


def check_vjp(f: Callable, arrays: list[np.ndarray], rtol: float = 1e-6, atol: float = 1e-8, eps: float = EPS) -> None:
    out = f(*[gradcli.tensor(a) for a in arrays])
    G = np.random.default_rng(out.numel()).standard_normal(out.shape)
    for got, want, a in zip(analytic_vjp(f, arrays, G), numeric_vjp(f, arrays, G, eps), arrays):
        assert got is not None and got.shape == a.shape and got.dtype == a.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


P = pytest.param
BROADCAST_PAIRS = [((4, 3), (3,)), ((4, 3), (4, 1)), ((4, 3), ()), ((3,), (4, 3)), ((4, 1), (1, 3)), ((2, 1, 3), (4, 1))]
BINARY = {
    "add": (lambda a, b: a + b, r, r), "sub": (lambda a, b: a - b, r, r), "mul": (lambda a, b: a * b, r, r),
    "div": (lambda a, b: a / b, r, pos), "pow": (lambda a, b: a ** b, pos, r),
    "maximum": (gradcli.maximum, distinct, shifted), "minimum": (gradcli.minimum, distinct, shifted),
}
CASES = [
    P(fn, [ga(*sa), gb(*sb)], id=f"{name}-{sa}-{sb}")
    for name, (fn, ga, gb) in BINARY.items() for sa, sb in BROADCAST_PAIRS
] + [
    P(lambda a: a + 2.5, [r(4, 3)], id="add-number"),
    P(lambda a: 2.5 + a, [r(4, 3)], id="radd-number"),
    P(lambda a: a - 1.5, [r(4, 3)], id="sub-number"),
    P(lambda a: 1.5 - a, [r(4, 3)], id="rsub-number"),
    P(lambda a: a * -3.0, [r(4, 3)], id="mul-number"),
    P(lambda a: a / 4.0, [r(4, 3)], id="div-number"),
    P(lambda a: 2.0 / a, [pos(4, 3)], id="rdiv-number"),
    P(lambda a: a ** 3, [r(4, 3)], id="pow-int-exponent"),
    P(lambda a: a ** -1.5, [pos(4, 3)], id="pow-negative-exponent"),
    P(lambda a: 1.7 ** a, [r(4, 3)], id="pow-number-base"),
    P(lambda a: gradcli.pow(a, 2), [r(4, 3)], id="pow-function"),
    P(lambda a, b: gradcli.where(r(4, 3) > 0, a, b), [r(4, 3), r(3)], id="where"),
    P(lambda a, b: gradcli.where(a > 0, a, 0.5) * b, [r(4, 3), r(4, 1)], id="where-number"),
    P(lambda a: -a, [r(4, 3)], id="neg"),
    P(lambda a: a.exp(), [r(4, 3)], id="exp"),
    P(lambda a: a.log(), [pos(4, 3)], id="log"),
    P(lambda a: a.log1p(), [pos(4, 3)], id="log1p"),
    P(lambda a: a.sqrt(), [pos(4, 3)], id="sqrt"),
    P(lambda a: a.abs(), [away(4, 3)], id="abs"),
    P(lambda a: a.sign() * a, [away(4, 3)], id="sign"),
    P(lambda a: a.sin(), [r(4, 3)], id="sin"),
    P(lambda a: a.cos(), [r(4, 3)], id="cos"),
    P(lambda a: a.tan(), [r(4, 3) * 0.4], id="tan"),
    P(lambda a: a.tanh(), [r(4, 3)], id="tanh"),
    P(lambda a: a.sigmoid(), [r(4, 3)], id="sigmoid"),
    P(lambda a: a.relu(), [away(4, 3)], id="relu"),
    P(lambda a: F.softplus(a), [r(4, 3) * 3], id="softplus"),
    P(lambda a: gradcli.softplus(a), [np.array([25.0, -30.0, 19.0])], id="softplus-threshold"),
    P(lambda a: a.clamp(-0.5, 0.5), [away(4, 3) * 1.3], id="clamp"),
    P(lambda a: a.clamp(min=0.1), [away(4, 3)], id="clamp-min"),
    P(lambda a, lo, hi: a.clamp(lo, hi), [r(4, 3), r(3) - 0.5, r(4, 1) + 0.5], id="clamp-tensor-bounds"),
    P(lambda a, hi: gradcli.clamp(a, max=hi), [r(4, 3), r(3)], id="clamp-tensor-max"),
    P(lambda a: a.sum(), [r(4, 3)], id="sum"),
    P(lambda a: a.sum(1), [r(4, 3)], id="sum-dim"),
    P(lambda a: a.sum(-1, keepdim=True), [r(4, 3)], id="sum-keepdim"),
    P(lambda a: a.sum((0, 2)), [r(2, 3, 4)], id="sum-tuple"),
    P(lambda a: a.sum((0, 2), keepdim=True), [r(2, 3, 4)], id="sum-tuple-keepdim"),
    P(lambda a: a.mean(), [r(4, 3)], id="mean"),
    P(lambda a: a.mean(0), [r(4, 3)], id="mean-dim"),
    P(lambda a: a.mean((1, 2), keepdim=True), [r(2, 3, 4)], id="mean-tuple-keepdim"),
    P(lambda a: a.max(), [distinct(4, 3)], id="max"),
    P(lambda a: a.max(1).values, [distinct(4, 3)], id="max-dim"),
    P(lambda a: a.max(0, keepdim=True)[0], [distinct(4, 3)], id="max-dim-keepdim"),
    P(lambda a: a.min(), [distinct(4, 3)], id="min"),
    P(lambda a: a.min(-1).values, [distinct(2, 3, 4)], id="min-dim"),
    P(lambda a: a.prod(), [r(2, 3)], id="prod"),
    P(lambda a: a.prod(1), [r(4, 3)], id="prod-dim"),
    P(lambda a: a.prod(0, keepdim=True), [r(4, 3)], id="prod-dim-keepdim"),
    P(lambda a: a.prod(), [np.array([0.0, 2.0, -3.0])], id="prod-one-zero"),
    P(lambda a: a.prod(1), [np.array([[0.0, 2.0, 1.5], [1.0, 0.5, -3.0]])], id="prod-dim-one-zero"),
    P(lambda a: a.var(), [r(4, 3)], id="var"),
    P(lambda a: a.var(1), [r(4, 3)], id="var-dim"),
    P(lambda a: a.var((0, 1), unbiased=False, keepdim=True), [r(2, 3, 4)], id="var-tuple-biased"),
    P(lambda a: a.std(), [r(4, 3)], id="std"),
    P(lambda a: a.std(0, keepdim=True), [r(4, 3)], id="std-dim"),
    P(lambda a: a.std(correction=0), [r(4, 3)], id="std-correction"),
    P(lambda a: a.norm(), [r(4, 3)], id="norm2"),
    P(lambda a: a.norm(1), [away(4, 3)], id="norm1"),
    P(lambda a: a.norm(3), [r(4, 3)], id="norm3"),
    P(lambda a: a.norm(float("inf")), [distinct(4, 3)], id="norm-inf"),
    P(lambda a: a.norm(dim=1), [r(4, 3)], id="norm2-dim"),
    P(lambda a: a.norm(3, dim=0, keepdim=True), [r(4, 3)], id="norm3-dim"),
    P(lambda a: a.norm(float("inf"), dim=1), [distinct(4, 3)], id="norm-inf-dim"),
    P(lambda a: a.softmax(1), [r(4, 3)], id="softmax"),
    P(lambda a: gradcli.softmax(a, dim=0), [r(4, 3)], id="softmax-dim0"),
    P(lambda a: a.softmax(), [r(5)], id="softmax-1d"),
    P(lambda a: a.log_softmax(-1), [r(2, 3, 4)], id="log_softmax"),
    P(lambda a, b: a @ b, [r(3), r(3)], id="matmul-1d-1d"),
    P(lambda a, b: a @ b, [r(4, 3), r(3)], id="matmul-2d-1d"),
    P(lambda a, b: a @ b, [r(3), r(3, 2)], id="matmul-1d-2d"),
    P(lambda a, b: a @ b, [r(4, 3), r(3, 2)], id="matmul-2d-2d"),
    P(lambda a, b: a @ b, [r(2, 4, 3), r(2, 3, 2)], id="matmul-batched"),
    P(lambda a, b: a @ b, [r(2, 1, 2, 3), r(3, 3, 2)], id="matmul-broadcast-batched"),
    P(lambda a, b: a @ b, [r(2, 4, 3), r(3, 2)], id="matmul-3d-2d"),
    P(lambda a, b: a @ b, [r(2, 3), r(2, 3, 2)], id="matmul-2d-3d"),
    P(lambda a, b: a @ b, [r(2, 4, 3), r(3)], id="matmul-3d-1d"),
    P(lambda a, b: a @ b, [r(3), r(2, 3, 2)], id="matmul-1d-3d"),
    P(lambda a, b: F.dot(a, b), [r(4), r(4)], id="dot"),
    P(lambda a, b: gradcli.outer(a, b), [r(4), r(3)], id="outer"),
    P(lambda a, b: a.mm(b), [r(2, 3), r(3, 4)], id="mm"),
    P(lambda a: a.t(), [r(4, 3)], id="t"),
    P(lambda a: a.T, [r(2, 3, 4)], id="T"),
    P(lambda a: a.transpose(0, 2), [r(2, 3, 4)], id="transpose"),
    P(lambda a: a.permute(1, 2, 0), [r(2, 3, 4)], id="permute"),
    P(lambda a: a.reshape(3, 4), [r(4, 3)], id="reshape"),
    P(lambda a: a.view(-1, 2), [r(4, 3)], id="view"),
    P(lambda a: a.flatten(), [r(2, 3, 2)], id="flatten"),
    P(lambda a: a.squeeze(), [r(4, 1, 3)], id="squeeze"),
    P(lambda a: a.squeeze(1), [r(4, 1, 3)], id="squeeze-dim"),
    P(lambda a: a.unsqueeze(-1), [r(4, 3)], id="unsqueeze"),
    P(lambda a: a.expand(2, 4, 3), [r(4, 1)], id="expand"),
    P(lambda a: a.expand(-1, 3), [r(4, 1)], id="expand-keep"),
    P(lambda a: a[1], [r(4, 3)], id="index-int"),
    P(lambda a: a[-1, 2], [r(4, 3)], id="index-two-ints"),
    P(lambda a: a[:, 1:3], [r(4, 3)], id="index-slice"),
    P(lambda a: a[::2, ::-1], [r(4, 3)], id="index-steps"),
    P(lambda a: a[[0, 2, 0, 0]], [r(4, 3)], id="index-array-repeats"),
    P(lambda a: a[[0, 1, 1], [2, 2, 0]], [r(4, 3)], id="index-array-pairs"),
    P(lambda a: a[:, [1, 1, 0]], [r(4, 3)], id="index-array-columns"),
    P(lambda a: a[a > 0], [r(4, 3)], id="index-mask"),
    P(lambda a: a[None, ..., 0], [r(4, 3)], id="index-none-ellipsis"),
    P(lambda v: F.index_put(v, (4, 3), ([0, 2, 0], [1, 1, 1])), [r(3)], id="index_put-repeats"),
    P(lambda a, b: gradcli.cat([a, b]), [r(2, 3), r(4, 3)], id="cat"),
    P(lambda a, b: gradcli.cat([a, b, a], dim=1), [r(2, 3), r(2, 1)], id="cat-dim1-repeated"),
    P(lambda a, b: gradcli.stack([a, b]), [r(2, 3), r(2, 3)], id="stack"),
    P(lambda a, b: gradcli.stack([a, b, a], dim=-1), [r(2, 3), r(2, 3)], id="stack-last-repeated"),
    P(lambda a: F.clone(a) * a, [r(4, 3)], id="clone"),
    P(lambda a: a.float().double(), [r(4, 3)], id="cast"),
    P(lambda a: a.asin(), [unit(4, 3)], id="asin"),
    P(lambda a: a.acos(), [unit(4, 3)], id="acos"),
    P(lambda a: a.atan(), [r(4, 3)], id="atan"),
    P(lambda a: a.sinh(), [r(4, 3)], id="sinh"),
    P(lambda a: a.cosh(), [r(4, 3)], id="cosh"),
    P(lambda a: a.asinh(), [r(4, 3)], id="asinh"),
    P(lambda a: a.acosh(), [pos(4, 3) + 1.0], id="acosh"),
    P(lambda a: a.atanh(), [unit(4, 3)], id="atanh"),
    P(lambda a: a.log2(), [pos(4, 3)], id="log2"),
    P(lambda a: a.log10(), [pos(4, 3)], id="log10"),
    P(lambda a: a.exp2(), [r(4, 3)], id="exp2"),
    P(lambda a: a.expm1(), [r(4, 3)], id="expm1"),
    P(lambda a: a.erf(), [r(4, 3)], id="erf"),
    P(lambda a: a.erfc(), [r(4, 3)], id="erfc"),
    P(lambda a: a.erfinv(), [unit(4, 3)], id="erfinv"),
    P(lambda a: a.rsqrt(), [pos(4, 3)], id="rsqrt"),
    P(lambda a: a.reciprocal(), [pos(4, 3)], id="reciprocal"),
    P(lambda a: F.square(a), [r(4, 3)], id="square"),
    P(lambda a: a.logit(), [unit(4, 3) * 0.5 + 0.5], id="logit"),
    P(lambda a: a.logit(eps=0.2), [unit(4, 3) * 0.5 + 0.5], id="logit-eps"),
    P(lambda a: a.lgamma(), [r(4, 3) * 3], id="lgamma"),
    P(lambda a: a.digamma(), [pos(4, 3)], id="digamma"),
    P(lambda a: a.sinc(), [r(4, 3)], id="sinc"),
    P(lambda a: a.digamma(), [np.array([-0.5, -2.3, -7.9])], id="digamma-negative"),
    P(lambda a: a.polygamma(2), [pos(4, 3)], id="polygamma"),
    P(lambda a: a.floor() * a, [unit(4, 3) * 3], id="floor"),
    P(lambda a: a.ceil() * a, [unit(4, 3) * 3], id="ceil"),
    P(lambda a: a.trunc() * a, [unit(4, 3) * 3], id="trunc"),
    P(lambda a: a.round() * a, [unit(4, 3) * 3], id="round"),
    P(lambda a: a.round(decimals=1) * a, [np.array([0.123, -0.371, 2.519])], id="round-decimals"),
    P(lambda a: a.frac(), [unit(4, 3) * 3], id="frac"),
    P(lambda a, b: F.atan2(a, b), [r(4, 3), r(3)], id="atan2"),
    P(lambda a, b: F.hypot(a, b), [r(4, 3), r(4, 1)], id="hypot"),
    P(lambda a, b: F.fmod(a, b), [unit(4, 3) * 3, pos(3)], id="fmod"),
    P(lambda a: F.fmod(a, 0.7), [unit(4, 3) * 3], id="fmod-number"),
    P(lambda a, b: a % b, [unit(4, 3) * 3, -pos(3)], id="remainder"),
    P(lambda a, b: F.div(a, b, rounding_mode="trunc") * a + b, [unit(4, 3) * 3, pos(3)], id="div_trunc"),
    P(lambda a, b: (a / b).div(-0.7, rounding_mode="floor") * b, [unit(4, 3) * 3, pos(3)], id="div_floor"),
    P(lambda a, b: F.add(a, b * a, alpha=-2.5), [unit(4, 3), unit(3)], id="add_alpha"),
    P(lambda a, b: b.sub(a.exp(), alpha=0.75) * a, [unit(4, 3), unit(3)], id="sub_alpha"),
    P(lambda a, b: F.xlogy(a, b), [r(4, 3), pos(3)], id="xlogy"),
    P(lambda a, b: F.fmax(a, b), [distinct(4, 3), shifted(3)], id="fmax"),
    P(lambda a, b: F.fmin(a, b), [distinct(4, 3), shifted(4, 1)], id="fmin"),
    P(lambda a, b, w: F.lerp(a, b, w), [r(4, 3), r(3), unit(4, 3) + 0.5], id="lerp"),
    P(lambda a, b: F.lerp(a, b, 0.3), [r(4, 3), r(3)], id="lerp-number"),
    P(lambda x, a, b: F.addcmul(x, a, b, value=0.5), [r(4, 3), r(3), r(4, 1)], id="addcmul"),
    P(lambda x, a, b: x.addcdiv(a, b, value=2), [r(3), r(4, 3), pos(4, 3)], id="addcdiv"),
    P(lambda a, b: F.dist(a, b, 3), [r(4, 3), r(3)], id="dist"),
    P(lambda a: a.logsumexp(1), [r(4, 3)], id="logsumexp"),
    P(lambda a: F.logsumexp(a, (0, 2), keepdim=True), [r(2, 3, 4)], id="logsumexp-tuple"),
    P(lambda a: a.amax(), [distinct(4, 3)], id="amax"),
    P(lambda a: a.amax((0, 2)), [distinct(2, 3, 4)], id="amax-tuple"),
    P(lambda a: a.amin(1, keepdim=True), [distinct(4, 3)], id="amin"),
    P(lambda a: a.median(), [distinct(4, 3)], id="median"),
    P(lambda a: a.median(1).values, [distinct(4, 3)], id="median-dim"),
    P(lambda a: a.median(0, keepdim=True)[0], [distinct(4, 3)], id="median-dim-keepdim"),
    P(lambda a: a.kthvalue(2, 0).values, [distinct(4, 3)], id="kthvalue"),
    P(lambda a: a.sort(0).values * r(4, 3), [distinct(4, 3)], id="sort"),
    P(lambda a: a.sort(descending=True)[0] * r(4, 3), [distinct(4, 3)], id="sort-descending"),
    P(lambda a: a.topk(2).values, [distinct(4, 3)], id="topk"),
    P(lambda a: a.topk(2, dim=0, largest=False).values, [distinct(4, 3)], id="topk-smallest"),
    P(lambda a: a.cumsum(1), [r(4, 3)], id="cumsum"),
    P(lambda a: a.cumsum(0), [r(4, 3)], id="cumsum-dim0"),
    P(lambda a: a.cumprod(1), [r(4, 3)], id="cumprod"),
    P(lambda a: a.cumprod(0), [np.array([[0.5, 0.0], [0.0, 2.0], [1.5, -1.0], [0.7, 0.0]])], id="cumprod-zeros"),
    P(lambda a: F.vector_norm(a, 3, dim=(0, 1)), [r(2, 3, 2)], id="vector_norm"),
    P(lambda a: a.norm(-float("inf"), dim=1), [distinct(4, 3) + 0.05], id="norm-neg-inf"),
    P(lambda a: a.norm(-1.5), [away(4, 3)], id="norm-negative"),
    P(lambda a: F.matrix_norm(a), [r(4, 3)], id="matrix_norm-fro"),
    P(lambda a: F.matrix_norm(a, 1), [away(4, 3)], id="matrix_norm-1"),
    P(lambda a: F.matrix_norm(a, float("-inf")), [away(4, 3)], id="matrix_norm-neg-inf"),
    P(lambda a: F.linalg_norm(a), [r(4, 3)], id="linalg_norm"),
    P(lambda a, b: F.solve_triangular(a, b, upper=False), [r(3, 3) + 4 * np.eye(3), r(3, 2, seed=1)],
      id="solve_triangular-lower"),
    P(lambda a, b: F.solve_triangular(a, b, upper=True), [r(2, 3, 3) + 4 * np.eye(3), r(2, 3, 2, seed=1)],
      id="solve_triangular-upper-batched"),
    P(lambda a: a.flip(0), [r(4, 3)], id="flip"),
    P(lambda a: a.flip(0, -1) * r(4, 3), [r(4, 3)], id="flip-two"),
    P(lambda a: a.roll(1, 0) * r(4, 3), [r(4, 3)], id="roll"),
    P(lambda a: a.roll((1, -2), (0, 1)) * r(4, 3), [r(4, 3)], id="roll-two"),
    P(lambda a: a.roll(5) * r(4, 3), [r(4, 3)], id="roll-flat"),
    P(lambda a: a.repeat(2, 3), [r(4, 3)], id="repeat"),
    P(lambda a: a.repeat(2, 1, 2), [r(4, 3)], id="repeat-new-dim"),
    P(lambda a: F.tile(a, (2,)), [r(4, 3)], id="tile"),
    P(lambda a: a.tril(), [r(4, 3)], id="tril"),
    P(lambda a: a.triu(1), [r(2, 4, 3)], id="triu"),
    P(lambda a: a.diagonal(), [r(4, 3)], id="diagonal"),
    P(lambda a: a.diagonal(1, 0, 2), [r(3, 2, 4)], id="diagonal-offset"),
    P(lambda a: F.diag_embed(a, -1), [r(2, 3)], id="diag_embed"),
    P(lambda a: F.diag(a), [r(4)], id="diag-vector"),
    P(lambda a: F.diag(a, 1), [r(4, 3)], id="diag-matrix"),
    P(lambda a: a.trace(), [r(4, 3)], id="trace"),
    P(lambda a: a.narrow(1, 1, 2), [r(4, 3)], id="narrow"),
    P(lambda a: a.split(3)[1], [r(7, 2)], id="split"),
    P(lambda a: a.split([1, 2], 1)[1] * 2, [r(4, 3)], id="split-sizes"),
    P(lambda a: a.chunk(2)[0] * a.chunk(2)[1], [r(4, 3)], id="chunk"),
    P(lambda a: a.unbind(1)[2] * a.unbind(1)[0], [r(4, 3)], id="unbind"),
    P(lambda a: a.gather(1, F.as_tensor([[0, 0], [2, 1], [1, 1]])), [r(4, 3)], id="gather"),
    P(lambda a, s: a.scatter(0, F.as_tensor([[1, 0, 3]]), s), [r(4, 3), r(2, 3)], id="scatter"),
    P(lambda a: a.scatter(1, F.as_tensor([[0], [2]]), 0.5), [r(4, 3)], id="scatter-value"),
    P(lambda a, s: a.scatter_add(0, F.as_tensor([[1, 1, 3], [0, 1, 1]]), s), [r(4, 3), r(2, 3)], id="scatter_add"),
    P(lambda a: a.index_select(0, F.as_tensor([3, 0, 3])), [r(4, 3)], id="index_select"),
    P(lambda a: a.masked_fill(F.as_tensor([True, False, True]), -1.0), [r(4, 3)], id="masked_fill"),
    P(lambda a: a.masked_select(F.as_tensor([[True], [False], [True], [True]])), [r(4, 3)], id="masked_select"),
    P(lambda a: a.take(F.as_tensor([[0, 5], [11, 5]])), [r(4, 3)], id="take"),
    P(lambda a: a.movedim(0, 2), [r(2, 3, 4)], id="movedim"),
    P(lambda a: a.swapaxes(0, 1), [r(4, 3)], id="swapaxes"),
    P(lambda a: a.unflatten(1, (2, -1)), [r(3, 4)], id="unflatten"),
    P(lambda a: a.flatten(1), [r(2, 3, 4)], id="flatten-start"),
    P(lambda a: a.view_as(F.as_tensor(r(6, 2))), [r(4, 3)], id="view_as"),
    P(lambda a, b: F.einsum("ij,jk->ik", a, b), [r(4, 3), r(3, 2)], id="einsum-matmul"),
    P(lambda a, b: F.einsum("bij,bj->bi", a, b), [r(2, 4, 3), r(2, 3)], id="einsum-batched"),
    P(lambda a: F.einsum("ii", a), [r(3, 3)], id="einsum-trace"),
    P(lambda a: F.einsum("ii->i", a), [r(3, 3)], id="einsum-diagonal"),
    P(lambda a, b: F.einsum("ij,k->i", a, b), [r(4, 3), r(2)], id="einsum-summed-away"),
    P(lambda a, b: F.einsum("...j,...j->...", a, b), [r(2, 4, 3), r(4, 3)], id="einsum-ellipsis"),
    P(lambda a, b, c: F.einsum("i,j,k->ijk", a, b, c), [r(2), r(3), r(2)], id="einsum-three"),
    P(lambda a, b: F.bmm(a, b), [r(2, 4, 3), r(2, 3, 2)], id="bmm"),
    P(lambda a, b: F.mv(a, b), [r(4, 3), r(3)], id="mv"),
    P(lambda a, b: F.tensordot(a, b, 1), [r(4, 3), r(3, 2)], id="tensordot"),
    P(lambda a, b: F.tensordot(a, b, ([0, 2], [1, 0])), [r(2, 3, 4), r(4, 2)], id="tensordot-pairs"),
    P(lambda a, b: F.kron(a, b), [r(2, 3), r(3, 2)], id="kron"),
    P(lambda a, b: F.cross(a, b), [r(4, 3), r(1, 3)], id="cross"),
    P(lambda a, b: F.cross(a, b, dim=0), [r(3, 2), r(3, 2)], id="cross-dim0"),
    P(lambda a: F.det(a), [r(3, 3)], id="det"),
    P(lambda a: F.det(a), [r(2, 3, 3)], id="det-batched"),
    P(lambda a: F.det(a), [np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -1.0, 2.0]])], id="det-singular"),
    P(lambda a: F.slogdet(a).logabsdet, [r(3, 3)], id="slogdet"),
    P(lambda a: F.logdet(a), [r(3, 3) + 3 * np.eye(3)], id="logdet"),
    P(lambda a: F.inverse(a), [r(3, 3) + 2 * np.eye(3)], id="inverse"),
    P(lambda a: F.inverse(a), [r(2, 3, 3) + 2 * np.eye(3)], id="inverse-batched"),
    P(lambda a, b: F.solve(a, b), [r(3, 3) + 2 * np.eye(3), r(3)], id="solve-vector"),
    P(lambda a, b: F.solve(a, b), [r(3, 3) + 2 * np.eye(3), r(3, 2)], id="solve-matrix"),
    P(lambda a, b: F.solve(a, b), [r(2, 3, 3) + 2 * np.eye(3), r(2, 3)], id="solve-batched-vectors"),
    P(lambda a: F.cholesky(a @ a.T + gradcli.eye(3)), [r(3, 3)], id="cholesky"),
    P(lambda a: F.cholesky(a @ a.transpose(-1, -2) + gradcli.eye(2)), [r(2, 2, 2)], id="cholesky-batched"),
    P(lambda a: F.matrix_power(a, 3), [r(3, 3)], id="matrix_power"),
    P(lambda a: F.matrix_power(a, -2), [r(3, 3) + 2 * np.eye(3)], id="matrix_power-negative"),
    P(lambda x, w, b: ((x @ w + b).tanh() * 2).log_softmax(1).sum(1).mean(), [r(4, 3), r(3, 2), r(2)], id="mlp"),
    P(lambda x: (x * x).sum() * x + x[0], [r(3)], id="reuse"),
]

# torch.nn.functional (targets and weights are constants; inputs stay off the kinks)
CASES += [
    P(lambda a: NF.relu6(a * 4), [away(4, 3)], id="relu6"),
    P(lambda a: NF.hardtanh(a, -0.5, 0.7), [away(4, 3)], id="hardtanh"),
    P(lambda a: NF.leaky_relu(a, 0.1), [away(4, 3)], id="leaky_relu"),
    P(lambda a: NF.elu(a, 0.5), [away(4, 3)], id="elu"),
    P(lambda a: NF.selu(a), [away(4, 3)], id="selu"),
    P(lambda a: NF.celu(a, 2.0), [r(4, 3)], id="celu"),
    P(lambda a: NF.gelu(a), [r(4, 3)], id="gelu"),
    P(lambda a: NF.gelu(a, approximate="tanh"), [r(4, 3)], id="gelu-tanh"),
    P(lambda g, a: F.gelu_backward(g, a, "none"), [r(4, 3), r(3)], id="gelu_backward"),
    P(lambda g, a: F.gelu_backward(g, a, "tanh"), [r(4, 3), r(4, 3, seed=1)], id="gelu_backward-tanh"),
    P(lambda a: NF.silu(a), [r(4, 3)], id="silu"),
    P(lambda a: NF.mish(a), [r(4, 3)], id="mish"),
    P(lambda a: NF.hardsigmoid(a * 3), [away(4, 3)], id="hardsigmoid"),
    P(lambda a: NF.hardswish(a * 3), [away(4, 3)], id="hardswish"),
    P(lambda a: NF.logsigmoid(a * 5), [r(4, 3)], id="logsigmoid"),
    P(lambda a: NF.softplus(a, beta=2.0, threshold=3.0), [r(4, 3) * 2], id="softplus-beta"),
    P(lambda a: NF.softsign(a) + NF.softmin(a, 1), [away(4, 3)], id="softsign-softmin"),
    P(lambda a: NF.normalize(a), [r(4, 3)], id="normalize"),
    P(lambda a, b: NF.cosine_similarity(a, b), [r(4, 3), r(4, 3, seed=1)], id="cosine_similarity"),
    P(lambda a, b: NF.pairwise_distance(a, b), [r(4, 3), r(4, 3, seed=1)], id="pairwise_distance"),
    P(lambda x, w, b: NF.linear(x, w, b), [r(4, 3), r(2, 3), r(2)], id="linear"),
    P(lambda x, w, b: NF.linear(x, w, b), [r(2, 4, 3), r(2, 3), r(2)], id="linear-3d"),
    P(lambda a: NF.pad(a, (1, -1, 0, 2), value=0.3), [r(4, 3)], id="pad"),
    P(lambda a, w, b: NF.layer_norm(a, (3,), w, b), [r(4, 3), r(3), r(3, seed=1)], id="layer_norm"),
    P(lambda v, g: weight_norm_of(v, g, 0), [r(2, 3), r(2, 1, seed=1)], id="weight_norm-first"),
    P(lambda v, g: weight_norm_of(v, g, 2), [r(2, 2, 3), r(1, 1, 3, seed=1)], id="weight_norm-last"),
    P(lambda a, b: NF.mse_loss(a, b), [r(4, 3), r(3)], id="mse_loss-broadcast"),
    P(lambda a, b: NF.mse_loss(a, b, reduction="none"), [r(4, 3), r(4, 3, seed=1)], id="mse_loss-none"),
    P(lambda a, b: NF.smooth_l1_loss(a, b, beta=0.8), [r(4, 3), r(4, 3, seed=1)], id="smooth_l1_loss"),
    P(lambda a, b: NF.huber_loss(a, b, reduction="sum", delta=0.6), [r(4, 3), r(4, 3, seed=1)], id="huber_loss"),
    P(lambda a: NF.cross_entropy(a, gradcli.tensor([0, 2, 1, -100])), [r(4, 3)], id="cross_entropy"),
    P(lambda a: NF.nll_loss(a, gradcli.tensor([[0, 1], [2, 2]]), reduction="none"), [r(2, 3, 2)], id="nll_loss"),
    P(lambda a, b: NF.binary_cross_entropy(a.sigmoid(), b.sigmoid()), [r(4, 3), r(4, 3, seed=1)], id="bce"),
    P(lambda a, b: NF.binary_cross_entropy_with_logits(a, b, pos_weight=gradcli.tensor([1.0, 2.0, 0.5])),
      [r(4, 3), r(4, 3, seed=1)], id="bce_with_logits"),
    P(lambda a, b: NF.kl_div(a, b.softmax(1), reduction="batchmean"), [r(4, 3), r(4, 3, seed=1)], id="kl_div"),
    P(lambda x, w, b: NC.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2), [r(2, 2, 4, 4), r(4, 1, 2, 3), r(4)],
      id="conv2d"),
    P(lambda x, w: NC.conv1d(x, w, padding="same", dilation=2), [r(1, 2, 6), r(3, 2, 3)], id="conv1d-same"),
    P(lambda x: NC.max_pool2d(x, 2, padding=1), [r(1, 2, 4, 5)], id="max_pool2d"),
    P(lambda x: NC.avg_pool2d(x, 3, stride=2, padding=1), [r(1, 2, 5, 4)], id="avg_pool2d"),
    P(lambda x: NC.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), [r(1, 2, 6, 5)],
      id="avg_pool2d-ceil"),
    P(lambda x: NC.avg_pool1d(x, 2, ceil_mode=True), [r(1, 2, 5)], id="avg_pool1d-ceil"),
    P(lambda x, w, b: NC.batch_norm(x, None, None, w, b, training=True) ** 2, [r(3, 2, 2, 2), r(2), r(2, seed=1)],
      id="batch_norm"),
    P(lambda x, w: NC.batch_norm(x, gradcli.tensor([0.5, -1.0]), gradcli.tensor([2.0, 0.5]), w) ** 2, [r(4, 2), r(2)],
      id="batch_norm-eval"),
    P(lambda x: NC.fold(NC.unfold(x, 2, padding=1, stride=2).exp(), (3, 4), 2, padding=1, stride=2),
      [r(1, 2, 3, 4)], id="unfold-fold"),
]


def _positive(*shape: int, seed: int = 0) -> np.ndarray:
    return np.abs(r(*shape, seed=seed)) + 0.5


CASES += [P(lambda a, b, name=op.name: getattr(a, name)(b), [_positive(4, 3), _positive(4, 3, seed=1)],
            id=f"{op.name}-declared")
          for op in O.TABLE if op.names and op.names.signature and op.names.signature.form == "binary"]
CASES += [P(lambda a, name=op.name: getattr(a, name)(1), [r(4, 3)], id=f"{op.name}-declared")
          for op in O.TABLE if op.names and op.names.signature and op.names.signature.form == "reduction"]
"""Every function declared with a form, checked as its declaration says it is called (a new one needs no row)."""

# The forward rounds to float32, so finite differences need float32-sized steps and tolerances.
LOOSE = {"cast": {"rtol": 1e-4, "atol": 1e-4, "eps": 1e-2}}


@pytest.mark.parametrize("fn, arrays", CASES)
def test_vjp_matches_finite_differences(fn: Callable, arrays: list, request: pytest.FixtureRequest) -> None:
    check_vjp(fn, arrays, **LOOSE.get(request.node.callspec.id, {}))


def _ops_reached(output: gradcli.Tensor) -> set[str]:
    reached, stack = set(), [output.grad_fn]
    while stack:
        node = stack.pop()
        if type(node) is Node and node.op.name not in reached:
            reached.add(node.op.name)
            stack.extend(node.inputs)
    return reached


def test_every_op_in_the_table_is_checked() -> None:
    reached = set()
    for case in CASES:
        fn, arrays = case.values
        reached |= _ops_reached(fn(*[gradcli.tensor(a, requires_grad=True) for a in arrays]))
    # A draw's implicit gradient through its concentration is an approximation with no finite-difference twin
    # (the draw is not a smooth function of the concentration at fixed noise); test_distributions.py holds it
    # to torch's numbers and --check reports it as not checked.
    assert {op.name for op in O.TABLE if not op.approximate} - reached == set()


def test_gradients_keep_float32() -> None:
    x = gradcli.tensor(r(4, 3), requires_grad=True, dtype="float32")
    b = gradcli.tensor(r(3), requires_grad=True)
    ((x * 2 + b).tanh() @ gradcli.ones(3, 2, dtype="float32")).sum().backward()
    assert x.grad.dtype == np.float32 and b.grad.dtype == np.float64


VALUES = st.floats(-2, 2).filter(lambda v: abs(v) > 0.1)  # finite differences need room around zero


@st.composite
def broadcastable(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    shape_a, shape_b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
    return draw(hnp.arrays(np.float64, shape_a, elements=VALUES)), draw(hnp.arrays(np.float64, shape_b, elements=VALUES))


@settings(max_examples=40, deadline=None)
@given(pair=broadcastable(), op=st.sampled_from(["add", "sub", "mul", "div"]))
def test_broadcasting_any_shapes(pair: tuple[np.ndarray, np.ndarray], op: str) -> None:
    a, b = pair
    check_vjp(BINARY[op][0], [a, b], rtol=1e-5, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), elements=VALUES),
       data=st.data(), op=st.sampled_from(["sum", "mean", "var", "prod", "norm"]), keepdim=st.booleans())
def test_reductions_any_dims(x: np.ndarray, data: Any, op: str, keepdim: bool) -> None:
    dims = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=x.ndim,
                              unique_by=lambda d: d % x.ndim))
    dim = tuple(dims) if len(dims) > 1 else dims[0]
    n = int(np.prod([x.shape[d] for d in dims]))
    if op == "var" and n < 2:
        return
    fn = getattr(gradcli.Tensor, op)
    got = fn(gradcli.tensor(x), dim=dim, keepdim=keepdim).numpy()
    want = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "var": lambda v, **k: np.var(v, ddof=1, **k),
            "norm": lambda v, **k: np.sqrt(np.sum(v * v, **k))}[op](x, axis=tuple(dims), keepdims=keepdim)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_vjp(lambda t: fn(t, dim=dim, keepdim=keepdim), [x], rtol=1e-5, atol=1e-6)


ELEMENTWISE = [
    ("exp", lambda x: x.exp(), r), ("log", lambda x: x.log(), pos), ("log1p", lambda x: x.log1p(), pos),
    ("sqrt", lambda x: x.sqrt(), pos), ("sin", lambda x: x.sin(), r), ("cos", lambda x: x.cos(), r),
    ("tan", lambda x: x.tan(), lambda n: r(n) * 0.4), ("tanh", lambda x: x.tanh(), r),
    ("sigmoid", lambda x: x.sigmoid(), r), ("softplus", lambda x: F.softplus(x), r), ("neg", lambda x: -x, r),
    ("abs", lambda x: x.abs() * x, away), ("relu", lambda x: x.relu() * x, away),
    ("sign", lambda x: x.sign() * x * x, away), ("clamp", lambda x: x.clamp(-0.5, 0.5) * x, away),
    ("square", lambda x: x ** 2, r), ("cube", lambda x: x * x * x, r), ("pow-float", lambda x: x ** 2.5, pos),
    ("pow-base", lambda x: 1.7 ** x, r), ("reciprocal", lambda x: 1 / x, pos), ("div", lambda x: x / (x + 3.0), pos),
    ("maximum", lambda x: gradcli.maximum(x * x, x + 1.3), r), ("where", lambda x: gradcli.where(x > 0, x ** 3, x), away),
    ("asin", lambda x: x.asin(), unit), ("acos", lambda x: x.acos(), unit), ("atan", lambda x: x.atan(), r),
    ("sinh", lambda x: x.sinh(), r), ("cosh", lambda x: x.cosh(), r), ("asinh", lambda x: x.asinh(), r),
    ("acosh", lambda x: x.acosh(), lambda n: pos(n) + 1.0), ("atanh", lambda x: x.atanh(), unit),
    ("log2", lambda x: x.log2(), pos), ("log10", lambda x: x.log10(), pos), ("exp2", lambda x: x.exp2(), r),
    ("expm1", lambda x: x.expm1(), r), ("erf", lambda x: x.erf(), r), ("erfc", lambda x: x.erfc(), r),
    ("erfinv", lambda x: x.erfinv(), unit), ("rsqrt", lambda x: x.rsqrt(), pos),
    ("reciprocal-method", lambda x: x.reciprocal(), pos), ("logit", lambda x: x.logit(), lambda n: unit(n) * 0.5 + 0.5),
    ("lgamma", lambda x: x.lgamma(), pos), ("digamma", lambda x: x.digamma(), pos),
    ("frac", lambda x: x.frac() * x, lambda n: unit(n) * 3), ("floor", lambda x: x.floor() * x, lambda n: unit(n) * 3),
    ("atan2", lambda x: F.atan2(x, x * x + 0.5), r), ("hypot", lambda x: F.hypot(x, x + 2.0), r),
    ("xlogy", lambda x: F.xlogy(x, x * x + 0.5), r), ("fmod", lambda x: F.fmod(x * x, x + 2.0), unit),
    ("lerp", lambda x: F.lerp(x, x * x, x), unit), ("addcdiv", lambda x: F.addcdiv(x, x, x * x + 1.0), r),
    ("logsumexp", lambda x: x.reshape(2, 3).logsumexp(1), r), ("cumsum", lambda x: x.cumsum(0) ** 2, r),
    ("cumprod", lambda x: x.cumprod(0), r), ("amax", lambda x: x.reshape(2, 3).amax(1) ** 2, distinct),
    ("sort", lambda x: x.sort()[0] ** 3 * gradcli.arange(6.0), distinct),
    ("gelu", lambda x: NF.gelu(x), r), ("gelu-tanh", lambda x: NF.gelu(x, approximate="tanh"), r),
    ("elu", lambda x: NF.elu(x, 0.5), away), ("silu", lambda x: NF.silu(x), r), ("mish", lambda x: NF.mish(x), r),
    ("logsigmoid", lambda x: NF.logsigmoid(x), r), ("softplus-beta", lambda x: NF.softplus(x, beta=2.0), r),
    ("layer_norm", lambda x: NF.layer_norm(x, (6,)) * x, r),
    ("batch_norm", lambda x: NC.batch_norm(x.reshape(3, 2), None, None, training=True) * x.reshape(3, 2), r),
    ("bce_with_logits", lambda x: NF.binary_cross_entropy_with_logits(x, x.sigmoid(), reduction="none"), r),
    ("mse_loss", lambda x: NF.mse_loss(x * x, x + 1.0, reduction="none"), r),
]


def _first_gradient(fn: Callable, x0: np.ndarray) -> np.ndarray:
    x = gradcli.tensor(x0, requires_grad=True)
    (g,) = gradcli.grad(fn(x).sum(), x)
    return g.numpy()


@pytest.mark.parametrize("fn, gen", [P(fn, gen, id=name) for name, fn, gen in ELEMENTWISE])
def test_second_derivative_through_create_graph(fn: Callable, gen: Callable) -> None:
    x0, v = gen(6), r(6, seed=1)
    x = gradcli.tensor(x0, requires_grad=True)
    (g,) = gradcli.grad(fn(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.numpy() if not g.requires_grad else g.detach().numpy(), _first_gradient(fn, x0))
    if g.requires_grad:
        (hv,) = gradcli.grad((g * gradcli.tensor(v)).sum(), x, allow_unused=True)
        hv = np.zeros(6) if hv is None else hv.numpy()
    else:
        hv = np.zeros(6)
    fd = (_first_gradient(fn, x0 + EPS * v) - _first_gradient(fn, x0 - EPS * v)) / (2 * EPS)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


HESSIANS = [
    P(lambda a, b: (a * b).sum(), [r(3), r(3)], id="mul"),
    P(lambda a, b: (a / b).sum(), [r(3), pos(3)], id="div"),
    P(lambda a, b: (a ** b).sum(), [pos(3), r(3)], id="pow"),
    P(lambda a, b: (a @ b).tanh().sum(), [r(2, 3), r(3, 2)], id="matmul"),
    P(lambda a, b: (a + b).exp().mean(), [r(2, 3), r(3)], id="broadcast"),
    P(lambda a, b: gradcli.maximum(a, b).pow(2).sum(), [distinct(4), shifted(4)], id="maximum"),
    P(lambda a: a.softmax(0)[0], [r(4)], id="softmax"),
    P(lambda a: a.log_softmax(0)[1], [r(4)], id="log_softmax"),
    P(lambda a: a.norm(), [r(4)], id="norm"),
    P(lambda a: a.norm(3), [r(4)], id="norm3"),
    P(lambda a: a.std(), [r(4)], id="std"),
    P(lambda a: a.var(), [r(4)], id="var"),
    P(lambda a: a.prod(), [r(4)], id="prod"),
    P(lambda a: a.prod(), [np.array([0.0, 1.5, -2.0, 0.5])], id="prod-with-zero"),
    P(lambda a: a.max() * a.sum(), [distinct(4)], id="max"),
    P(lambda a: (a.max(0).values ** 2).sum(), [distinct(3, 2)], id="max-dim"),
    P(lambda a: (a[[0, 0, 2]] ** 3).sum(), [r(3)], id="index-repeats"),
    P(lambda a, b: (gradcli.cat([a, b]) ** 3).sum() + (gradcli.stack([a, b]) ** 2).prod(), [r(2), r(2)], id="cat-stack"),
    P(lambda a: (a.reshape(2, 2).t() @ a.reshape(2, 2)).sum(), [r(4)], id="reshape-transpose"),
    P(lambda a: (a.unsqueeze(0).expand(3, 4) ** 2).sum(), [r(4)], id="expand"),
    P(lambda a: (a.cumprod(0) * gradcli.arange(1.0, 5.0)).sum(), [np.array([0.5, 0.0, -1.5, 2.0])], id="cumprod-zero"),
    P(lambda a: (a.cumprod(0) * gradcli.arange(1.0, 5.0)).sum(), [r(4)], id="cumprod"),
    P(lambda a: a.logsumexp(0), [r(4)], id="logsumexp"),
    P(lambda a: (F.einsum("ij,jk->ik", a, a) ** 2).sum(), [r(2, 2)], id="einsum"),
    P(lambda a: (F.cross(a, a.flip(0)) ** 2).sum(), [r(3)], id="cross"),
    P(lambda a: (a.roll(1) * a * a.tril().sum()).sum(), [r(2, 2)], id="roll-tril"),
    P(lambda a: (a.repeat(2, 1) ** 3).sum() + a.diagonal().prod(), [r(2, 2)], id="repeat-diagonal"),
    P(lambda a: (a.scatter_add(0, F.as_tensor([[1, 0]]), a[:1]) ** 3).sum(), [r(2, 2)], id="scatter_add"),
    P(lambda a: F.det(a.reshape(2, 2)), [r(4)], id="det"),
    P(lambda a: F.det(a.reshape(2, 2)) * a.sum(), [np.array([1.0, 2.0, 2.0, 4.0])], id="det-singular"),
    P(lambda a: F.inverse(a.reshape(2, 2) + 2 * gradcli.eye(2)).sum(), [r(4)], id="inverse"),
    P(lambda a, b: F.solve(a + 2 * gradcli.eye(2), b).sum(), [r(2, 2), r(2)], id="solve"),
    P(lambda a: F.slogdet(a + 2 * gradcli.eye(2)).logabsdet, [r(2, 2)], id="slogdet"),
    P(lambda a: F.cholesky(a @ a.T + gradcli.eye(2)).sum(), [r(2, 2)], id="cholesky"),
]


def _gradient_after_shift(fn: Callable, arrays: list, i: int, j: int, idx: tuple, shift: float) -> np.ndarray:
    """The gradient for input i, with element idx of input j moved by shift."""
    moved = [c.copy() for c in arrays]
    moved[j][idx] += shift
    xs = [gradcli.tensor(c, requires_grad=True) for c in moved]
    (g,) = gradcli.grad(fn(*xs), xs[i])
    return g.numpy()


@pytest.mark.parametrize("fn, arrays", HESSIANS)
def test_hessian_matches_finite_differences_of_the_gradient(fn: Callable, arrays: list) -> None:
    blocks = gradcli.hessian(fn, tuple(gradcli.tensor(a) for a in arrays))
    for i, a in enumerate(arrays):
        for j, b in enumerate(arrays):
            want = np.zeros(a.shape + b.shape)
            for idx in np.ndindex(*b.shape):
                up = _gradient_after_shift(fn, arrays, i, j, idx, EPS)
                want[(...,) + idx] = (up - _gradient_after_shift(fn, arrays, i, j, idx, -EPS)) / (2 * EPS)
            got = blocks[i][j].numpy()
            assert got.shape == a.shape + b.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_jacobian_layout_is_output_then_input() -> None:
    x0, w0 = r(2, 3), r(3, 4)

    def f(x: gradcli.Tensor, w: gradcli.Tensor) -> gradcli.Tensor:
        return (x @ w).tanh().sum(0)
    jx, jw = gradcli.jacobian(f, (gradcli.tensor(x0), gradcli.tensor(w0)))
    assert jx.shape == (4, 2, 3) and jw.shape == (4, 3, 4)
    for k in range(4):
        G = np.eye(4)[k]
        want_x, want_w = numeric_vjp(f, [x0, w0], G)
        np.testing.assert_allclose(jx.numpy()[k], want_x, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(jw.numpy()[k], want_w, rtol=1e-6, atol=1e-8)
    single = gradcli.jacobian(lambda x: x.softmax(), gradcli.tensor([0.2, -1.0, 0.7]))
    s = np.exp([0.2, -1.0, 0.7]) / np.exp([0.2, -1.0, 0.7]).sum()
    np.testing.assert_allclose(single.numpy(), np.diag(s) - np.outer(s, s), rtol=1e-12)


def test_hessian_layout_and_known_values() -> None:
    h = gradcli.hessian(lambda x: (x ** 3).sum() + x[0] * x[1], gradcli.tensor([1.0, 2.0, -1.0]))
    np.testing.assert_allclose(h.numpy(), [[6, 1, 0], [1, 12, 0], [0, 0, -6]])
    blocks = gradcli.hessian(lambda x, y: (x * x).sum() * y.sum(), (gradcli.tensor(r(2, 2)), gradcli.tensor(r(3))))
    assert [[b.shape for b in row] for row in blocks] == [[(2, 2, 2, 2), (2, 2, 3)], [(3, 2, 2), (3, 3)]]
