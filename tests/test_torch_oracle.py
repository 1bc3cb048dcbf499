"""gradcli against PyTorch itself: the same programs, the same numbers, node names and error texts.

Skipped where torch is not installed (the normal suite). Run it with a torch environment:
`PYTHONPATH=. /work/torchvenv/bin/python -m pytest tests/test_torch_oracle.py`.
"""
from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli  # noqa: E402  (after the skip, so the module needs no torch to be collected)
from gradcli.engine import functions  # noqa: E402
from gradcli.engine.tensor import AccumulateGrad, Node  # noqa: E402
from gradcli.lang import builtins  # noqa: E402
from gradcli.errors import GradcliError  # noqa: E402

RNG = np.random.default_rng(20240611)


@pytest.fixture(autouse=True)
def _float64_torch():
    """gradcli defaults to float64; torch must too, or the numbers differ by float32 rounding."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


class TorchAPI:
    """torch under gradcli's function names (softplus lives in torch.nn.functional)."""

    softplus = staticmethod(torch.nn.functional.softplus)

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


class GradcliAPI:
    """gradcli's public functions, looked up by torch's names (then the functional API's)."""

    linalg = SimpleNamespace(**builtins.LINALG.members)

    def __getattr__(self, name: str) -> Any:
        return getattr(gradcli, name) if hasattr(gradcli, name) else getattr(functions, name)


APIS = {"torch": TorchAPI(), "gradcli": GradcliAPI()}


def r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def pos(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape)


def unit(*shape: int) -> np.ndarray:
    return RNG.uniform(-0.9, 0.9, shape)


def distinct(*shape: int) -> np.ndarray:
    """Values without ties, so max/min and friends have one answer."""
    return RNG.permutation(np.arange(int(np.prod(shape))) * 0.37 - 1.1).reshape(shape)


def node_name(t: Any) -> str | None:
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__ if isinstance(t, torch.Tensor) else fn.name


def graph_names(t: Any) -> list[str]:
    """Every node name reachable from the output, in a canonical (sorted) order."""
    names, seen, todo = [], {}, [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn  # kept alive, so ids stay unique
        names.append(fn.name if isinstance(fn, (Node, AccumulateGrad)) else type(fn).__name__)
        todo.extend(f for f, _ in fn.next_functions)
    return sorted(names)


def as_numpy(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    return t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t)


def run(m: Any, fn: Callable, arrays: list, gradient: Any) -> dict:
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *xs)
    out.backward(None if gradient is None else m.tensor(gradient))
    return {"out": as_numpy(out), "grads": [as_numpy(x.grad) for x in xs], "name": node_name(out),
            "graph": graph_names(out)}


P = pytest.param
PROGRAMS = [
    P(lambda m, x: ((x + 2) * (x + 2) * 3).mean(), [np.ones((2, 2))], None, id="seed000"),
    P(lambda m, x: (x + 2) ** 2 + 3, [np.array([2.0])], None, id="seed002-scalar"),
    P(lambda m, x: x * 2, [r(3)], [1, 0.1, 0.01], id="seed002-weighted"),
    P(lambda m, x: x * 2, [r(2, 3)], [[1, 0.1, 0.01], [1, 1, 1]], id="seed002-2x3"),
    P(lambda m, x, y, w: m.mean(y - m.matmul(x, w)), [r(10, 20), r(10, 5), r(20, 5)], None, id="seed002-matrix"),
    P(lambda m, w, x, b: w * x + b, [r(2), r(1), r(1)], [1.0, 1.0], id="seed002-broadcast"),
    P(lambda m, a, b: a + b, [r(4, 3), r(3)], np.ones((4, 3)), id="add-(4,3)+(3,)"),
    P(lambda m, a, b: a - b, [r(4, 3), r(4, 1)], r(4, 3), id="sub-(4,3)-(4,1)"),
    P(lambda m, a, b: a * b, [r(4, 3), r()], r(4, 3), id="mul-(4,3)*()"),
    P(lambda m, a, b: a / b, [r(4, 3), pos(3)], r(4, 3), id="div-(4,3)/(3,)"),
    P(lambda m, a, b: b / a, [pos(4, 1), r(3)], r(4, 3), id="div-(3,)/(4,1)"),
    P(lambda m, a, b: a ** b, [pos(4, 3), r(3)], r(4, 3), id="pow-tensor-tensor"),
    P(lambda m, a: a ** 3, [r(4, 3)], r(4, 3), id="pow-tensor-number"),
    P(lambda m, a: a ** 2.5, [pos(4, 3)], r(4, 3), id="pow-tensor-float"),
    P(lambda m, a: 1.7 ** a, [r(4, 3)], r(4, 3), id="pow-number-tensor"),
    P(lambda m, a: 2 - a, [r(3)], r(3), id="rsub"),
    P(lambda m, a: 2 / a, [pos(3)], r(3), id="rdiv"),
    P(lambda m, a: -a + 1, [r(3)], r(3), id="neg"),
    P(lambda m, a, b: m.maximum(a, b), [distinct(4, 3), distinct(3)], r(4, 3), id="maximum"),
    P(lambda m, a, b: m.minimum(a, b), [distinct(4, 1), distinct(3)], r(4, 3), id="minimum"),
    P(lambda m, a, b: m.where(a > 0, a, b), [r(4, 3), r(3)], r(4, 3), id="where"),
    P(lambda m, a, b: a @ b, [r(3), r(3)], None, id="matmul-1d-1d"),
    P(lambda m, a, b: a @ b, [r(2, 3), r(3)], r(2), id="matmul-2d-1d"),
    P(lambda m, a, b: a @ b, [r(3), r(3, 4)], r(4), id="matmul-1d-2d"),
    P(lambda m, a, b: a @ b, [r(2, 3), r(3, 4)], r(2, 4), id="matmul-2d-2d"),
    P(lambda m, a, b: a @ b, [r(5, 2, 3), r(5, 3, 4)], r(5, 2, 4), id="matmul-batched"),
    P(lambda m, a, b: a @ b, [r(5, 1, 2, 3), r(4, 3, 2)], r(5, 4, 2, 2), id="matmul-broadcast-batched"),
    P(lambda m, a, b: a @ b, [r(5, 2, 3), r(3)], r(5, 2), id="matmul-3d-1d"),
    P(lambda m, a, b: a @ b, [r(3), r(5, 3, 2)], r(5, 2), id="matmul-1d-3d"),
    P(lambda m, a, b: a @ b, [r(2, 3), r(5, 3, 2)], r(5, 2, 2), id="matmul-2d-3d"),
    P(lambda m, a, b: m.dot(a, b), [r(4), r(4)], None, id="dot"),
    P(lambda m, a, b: m.outer(a, b), [r(4), r(3)], r(4, 3), id="outer"),
    P(lambda m, a, b: a.mm(b), [r(2, 3), r(3, 2)], r(2, 2), id="mm"),
    P(lambda m, x: x.sum(), [r(4, 3)], None, id="sum"),
    P(lambda m, x: x.sum(1), [r(4, 3)], r(4), id="sum-dim"),
    P(lambda m, x: x.sum((0, 2), keepdim=True), [r(4, 3, 2)], r(1, 3, 1), id="sum-tuple-keepdim"),
    P(lambda m, x: x.mean(-1), [r(4, 3)], r(4), id="mean-dim"),
    P(lambda m, x: x.mean((0, 1)), [r(4, 3, 2)], r(2), id="mean-tuple"),
    P(lambda m, x: x.max(), [distinct(4, 3)], None, id="max"),
    P(lambda m, x: x.max(1).values, [distinct(4, 3)], r(4), id="max-dim"),
    P(lambda m, x: x.min(0, keepdim=True)[0], [distinct(4, 3)], r(1, 3), id="min-dim-keepdim"),
    P(lambda m, x: x.prod(), [r(4, 3)], None, id="prod"),
    P(lambda m, x: x.prod(1), [r(4, 3)], r(4), id="prod-dim"),
    P(lambda m, x: x.prod(), [np.array([0.0, 2.0, 3.0])], None, id="prod-one-zero"),
    P(lambda m, x: x.prod(1), [np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])], r(2), id="prod-zeros-dim"),
    P(lambda m, x: x.var(), [r(4, 3)], None, id="var"),
    P(lambda m, x: x.var(1, keepdim=True), [r(4, 3)], r(4, 1), id="var-dim"),
    P(lambda m, x: x.var(0, unbiased=False), [r(4, 3)], r(3), id="var-biased"),
    P(lambda m, x: x.std(), [r(4, 3)], None, id="std"),
    P(lambda m, x: x.std((0, 1)), [r(4, 3, 2)], r(2), id="std-tuple"),
    P(lambda m, x: x.std(), [np.ones(3)], None, id="std-constant"),
    P(lambda m, x: x.norm(), [r(4, 3)], None, id="norm2"),
    P(lambda m, x: x.norm(1), [r(4, 3)], None, id="norm1"),
    P(lambda m, x: x.norm(3), [r(4, 3)], None, id="norm3"),
    P(lambda m, x: x.norm(float("inf")), [distinct(4, 3)], None, id="norm-inf"),
    P(lambda m, x: x.norm(dim=1), [r(4, 3)], r(4), id="norm-dim"),
    P(lambda m, x: x.norm(dim=1), [np.array([[0.0, 0.0], [3.0, 4.0]])], r(2), id="norm-zero-row"),
    P(lambda m, x: x.norm(3, dim=0, keepdim=True), [r(4, 3)], r(1, 3), id="norm3-dim"),
    P(lambda m, x: x.softmax(1), [r(4, 3)], r(4, 3), id="softmax"),
    P(lambda m, x: x.log_softmax(0), [r(4, 3)], r(4, 3), id="log_softmax"),
    P(lambda m, x: m.softmax(x, dim=-1), [r(2, 3, 4)], r(2, 3, 4), id="softmax-3d"),
    P(lambda m, x: x.clamp(-0.5, 0.5), [r(4, 3)], r(4, 3), id="clamp"),
    P(lambda m, x: x.clamp(min=0.1), [r(4, 3)], r(4, 3), id="clamp-min"),
    P(lambda m, x: m.clamp(x, max=0.1), [r(4, 3)], r(4, 3), id="clamp-max"),
    P(lambda m, x, lo, hi: x.clamp(lo, hi), [r(4, 3), r(3) - 0.5, r(3) + 0.5], r(4, 3), id="clamp-tensor-bounds"),
    P(lambda m, x, hi: m.clamp(x, max=hi), [r(4, 3), r(4, 1)], r(4, 3), id="clamp-tensor-max"),
    P(lambda m, x, lo: m.clamp(x, min=lo), [r(4, 3), r(3)], r(4, 3), id="clamp-tensor-min"),
    P(lambda m, x: x.reshape(3, 4), [r(4, 3)], r(3, 4), id="reshape"),
    P(lambda m, x: x.view(-1), [r(4, 3)], r(12), id="view"),
    P(lambda m, x: x.flatten(), [r(4, 3)], r(12), id="flatten"),
    P(lambda m, x: x.T, [r(4, 3)], r(3, 4), id="T"),
    P(lambda m, x: x.t(), [r(4, 3)], r(3, 4), id="t"),
    P(lambda m, x: x.transpose(0, 2), [r(4, 3, 2)], r(2, 3, 4), id="transpose"),
    P(lambda m, x: x.permute(2, 0, 1), [r(4, 3, 2)], r(2, 4, 3), id="permute"),
    P(lambda m, x: x.unsqueeze(1), [r(4, 3)], r(4, 1, 3), id="unsqueeze"),
    P(lambda m, x: x.squeeze(), [r(4, 1, 3)], r(4, 3), id="squeeze"),
    P(lambda m, x: x.squeeze(1), [r(4, 1, 3)], r(4, 3), id="squeeze-dim"),
    P(lambda m, x: x.expand(2, 4, 3), [r(4, 1)], r(2, 4, 3), id="expand"),
    P(lambda m, x: x.expand(4, 1), [r(4, 1)], r(4, 1), id="expand-same-shape"),
    P(lambda m, x: x.squeeze(0), [r(4, 3)], r(4, 3), id="squeeze-nothing"),
    P(lambda m, x: x.t(), [r(3)], r(3), id="t-vector"),
    P(lambda m, x: x.transpose(0, -1), [r(3)], r(3), id="transpose-vector"),
    P(lambda m, x: x.flatten() * 2, [r(3)], r(3), id="flatten-vector"),
    P(lambda m, x: x[0], [r(4, 3)], r(3), id="select"),
    P(lambda m, x: x[-1, 1], [r(4, 3)], None, id="select-2"),
    P(lambda m, x: x[:, 1:3], [r(4, 3)], r(4, 2), id="slice"),
    P(lambda m, x: x[1:, 0], [r(4, 3)], r(3), id="slice-then-select"),
    P(lambda m, x: x[::2], [r(4, 3)], r(2, 3), id="slice-step"),
    P(lambda m, x: x[[0, 2, 0, 0]], [r(4, 3)], r(4, 3), id="index-repeats"),
    P(lambda m, x: x[:, [1, 1]], [r(4, 3)], r(4, 2), id="index-columns"),
    P(lambda m, x: x[None], [r(4, 3)], r(1, 4, 3), id="index-none"),
    P(lambda m, x: x[..., 0], [r(4, 3)], r(4), id="index-ellipsis"),
    P(lambda m, x: x[x > 0], [np.array([1.0, -2.0, 3.0])], r(2), id="index-mask"),
    P(lambda m, a, b: m.cat([a, b]), [r(2, 3), r(4, 3)], r(6, 3), id="cat"),
    P(lambda m, a, b: m.cat([a, b, a], dim=1), [r(2, 3), r(2, 1)], r(2, 7), id="cat-dim1"),
    P(lambda m, a, b: m.stack([a, b]), [r(2, 3), r(2, 3)], r(2, 2, 3), id="stack"),
    P(lambda m, a, b: m.stack([a, b, b], dim=2), [r(2, 3), r(2, 3)], r(2, 3, 3), id="stack-dim2"),
    P(lambda m, x: x.float(), [r(3)], r(3), id="float"),
    P(lambda m, x: (x * x).sum() * x, [r(3)], r(3), id="reuse"),
    P(lambda m, x, w: (m.softmax(x @ w, dim=1).log() * m.eye(5)[:4]).sum(1).mean().neg(), [r(4, 3), r(3, 5)], None,
      id="cross-entropy"),
    P(lambda m, x, w, b: (x @ w + b).tanh().sigmoid().relu().sum(), [r(4, 3), r(3, 2), r(2)], None, id="mlp"),
    P(lambda m, a, b: m.dist(a, b), [r(4, 3), r(3)], None, id="dist"),
    P(lambda m, a, b: a.dist(b, 3), [r(4, 3), r(3)], None, id="dist-3"),
    P(lambda m, a, b: m.atan2(a, b), [r(4, 3), r(3)], r(4, 3), id="atan2"),
    P(lambda m, a, b: m.hypot(a, b), [r(4, 3), r(4, 1)], r(4, 3), id="hypot"),
    P(lambda m, a, b: m.fmod(a, b), [r(4, 3) * 3, -pos(3)], r(4, 3), id="fmod"),
    P(lambda m, a, b: m.remainder(a, b), [r(4, 3) * 3, -pos(3)], r(4, 3), id="remainder"),
    P(lambda m, a, b: m.xlogy(a, b), [r(4, 3), pos(3)], r(4, 3), id="xlogy"),
    P(lambda m, a, b: m.fmax(a, b), [distinct(4, 3), distinct(3) + 0.1], r(4, 3), id="fmax"),
    P(lambda m, a, b: a.fmin(b), [distinct(4, 3), distinct(4, 1) + 0.1], r(4, 3), id="fmin"),
    P(lambda m, a, b, w: m.lerp(a, b, w), [r(4, 3), r(3), unit(4, 3) + 0.4], r(4, 3), id="lerp"),
    P(lambda m, a, b: a.lerp(b, 0.7), [r(4, 3), r(3)], r(4, 3), id="lerp-number"),
    P(lambda m, x, a, b: m.addcmul(x, a, b, value=0.5), [r(4, 3), r(3), r(4, 1)], r(4, 3), id="addcmul"),
    P(lambda m, x, a, b: x.addcdiv(a, b, value=2), [r(3), r(4, 3), pos(4, 3)], r(4, 3), id="addcdiv"),
    P(lambda m, x: x.logsumexp(1), [r(4, 3)], r(4), id="logsumexp"),
    P(lambda m, x: m.logsumexp(x, (0, 2), keepdim=True), [r(4, 3, 2)], r(1, 3, 1), id="logsumexp-tuple"),
    P(lambda m, x: x.amax(), [distinct(4, 3)], None, id="amax"),
    P(lambda m, x: m.amin(x, (0, 2)), [distinct(4, 3, 2)], r(3), id="amin-tuple"),
    P(lambda m, x: x.median(), [distinct(4, 3)], None, id="median"),
    P(lambda m, x: x.median(1).values, [distinct(4, 3)], r(4), id="median-dim"),
    P(lambda m, x: m.median(x, 0, keepdim=True)[0], [distinct(4, 3)], r(1, 3), id="median-dim-keepdim"),
    P(lambda m, x: x.kthvalue(2, 0).values, [distinct(4, 3)], r(3), id="kthvalue"),
    P(lambda m, x: x.sort(0).values, [distinct(4, 3)], r(4, 3), id="sort"),
    P(lambda m, x: m.sort(x, descending=True)[0], [distinct(4, 3)], r(4, 3), id="sort-descending"),
    P(lambda m, x: x.topk(2).values, [distinct(4, 3)], r(4, 2), id="topk"),
    P(lambda m, x: x.topk(3, dim=0, largest=False)[0], [distinct(4, 3)], r(3, 3), id="topk-smallest"),
    P(lambda m, x: x.cumsum(1), [r(4, 3)], r(4, 3), id="cumsum"),
    P(lambda m, x: m.cumprod(x, 0), [r(4, 3)], r(4, 3), id="cumprod"),
    P(lambda m, x: x.cumprod(1), [np.array([[0.5, 0.0, 2.0, 0.0], [1.5, 2.0, 0.0, 3.0]])], r(2, 4), id="cumprod-zeros"),
    P(lambda m, x: m.linalg.vector_norm(x, 3, dim=(0, 1)), [r(4, 3, 2)], r(2), id="vector_norm"),
    P(lambda m, x: m.linalg.matrix_norm(x), [r(4, 3)], None, id="matrix_norm"),
    P(lambda m, x: m.linalg.matrix_norm(x, 1), [distinct(4, 3)], None, id="matrix_norm-1"),
    P(lambda m, x: m.linalg.matrix_norm(x, -float("inf")), [distinct(4, 3)], None, id="matrix_norm-neg-inf"),
    P(lambda m, x: m.linalg.norm(x), [r(4, 3)], None, id="linalg_norm"),
    P(lambda m, x: x.norm(-float("inf"), dim=1), [distinct(4, 3) + 0.05], r(4), id="norm-neg-inf"),
    P(lambda m, x: m.linalg.vector_norm(x, -1.5), [r(4, 3)], None, id="norm-negative"),
    P(lambda m, x: m.linalg.norm(x, dim=1), [r(4, 3)], r(4), id="linalg_norm-dim"),
    P(lambda m, x: x.flip(0), [r(4, 3)], r(4, 3), id="flip"),
    P(lambda m, x: m.flip(x, (0, 1)), [r(4, 3)], r(4, 3), id="flip-two"),
    P(lambda m, x: x.roll(1, 0), [r(4, 3)], r(4, 3), id="roll"),
    P(lambda m, x: x.roll(5), [r(4, 3)], r(4, 3), id="roll-flat"),
    P(lambda m, x: x.repeat(2, 1, 3), [r(4, 3)], r(2, 4, 9), id="repeat"),
    P(lambda m, x: m.tile(x, (2,)), [r(4, 3)], r(4, 6), id="tile"),
    P(lambda m, x: x.tril(-1), [r(4, 3)], r(4, 3), id="tril"),
    P(lambda m, x: m.triu(x, 1), [r(2, 4, 3)], r(2, 4, 3), id="triu"),
    P(lambda m, x: x.diagonal(), [r(4, 3)], r(3), id="diagonal"),
    P(lambda m, x: x.diagonal(1, 0, 2), [r(3, 2, 4)], r(2, 3), id="diagonal-offset"),
    P(lambda m, x: m.diag_embed(x, -1), [r(2, 3)], r(2, 4, 4), id="diag_embed"),
    P(lambda m, x: m.diag(x), [r(4)], r(4, 4), id="diag-vector"),
    P(lambda m, x: m.diag(x, 1), [r(4, 3)], r(2), id="diag-matrix"),
    P(lambda m, x: x.trace(), [r(4, 3)], None, id="trace"),
    P(lambda m, x: x.narrow(1, 1, 2), [r(4, 3)], r(4, 2), id="narrow"),
    P(lambda m, x: x.split(3)[1], [r(7, 2)], r(3, 2), id="split"),
    P(lambda m, x: m.split(x, [1, 2], 1)[1], [r(4, 3)], r(4, 2), id="split-sizes"),
    P(lambda m, x: x.chunk(2)[0] * x.chunk(2)[1], [r(4, 3)], r(2, 3), id="chunk"),
    P(lambda m, x: x.unbind(1)[2], [r(4, 3)], r(4), id="unbind"),
    P(lambda m, x: x.gather(1, m.tensor([[0, 0], [2, 1], [1, 1]])), [r(4, 3)], r(3, 2), id="gather"),
    P(lambda m, x, s: x.scatter(0, m.tensor([[1, 0, 3]]), s), [r(4, 3), r(1, 3)], r(4, 3), id="scatter"),
    P(lambda m, x: x.scatter(1, m.tensor([[0], [2]]), 0.5), [r(4, 3)], r(4, 3), id="scatter-value"),
    P(lambda m, x, s: x.scatter_add(0, m.tensor([[1, 1, 3], [0, 1, 1]]), s), [r(4, 3), r(2, 3)], r(4, 3),
      id="scatter_add"),
    P(lambda m, x: x.index_select(0, m.tensor([3, 0, 3])), [r(4, 3)], r(3, 3), id="index_select"),
    P(lambda m, x: x.masked_fill(m.tensor([True, False, True]), -1.0), [r(4, 3)], r(4, 3), id="masked_fill"),
    P(lambda m, x, v: x.masked_fill(m.tensor([True, False, True]), v), [r(4, 3), r()], r(4, 3),
      id="masked_fill-tensor"),
    P(lambda m, x: x.masked_select(m.tensor([[True], [False], [True], [True]])), [r(4, 3)], r(9), id="masked_select"),
    P(lambda m, x: x.take(m.tensor([[0, 5], [11, 5]])), [r(4, 3)], r(2, 2), id="take"),
    P(lambda m, x: x.movedim(0, 2), [r(2, 3, 4)], r(3, 4, 2), id="movedim"),
    P(lambda m, x: m.swapaxes(x, 0, 1), [r(4, 3)], r(3, 4), id="swapaxes"),
    P(lambda m, x: x.unflatten(1, (2, -1)), [r(3, 4)], r(3, 2, 2), id="unflatten"),
    P(lambda m, x: x.flatten(1), [r(2, 3, 4)], r(2, 12), id="flatten-start"),
    P(lambda m, x: x.view_as(m.ones(6, 2)), [r(4, 3)], r(6, 2), id="view_as"),
    P(lambda m, x: x[None].squeeze((0,)), [r(4, 3)], r(4, 3), id="squeeze-tuple"),
    P(lambda m, a, b: m.einsum("ij,jk->ik", a, b), [r(4, 3), r(3, 2)], r(4, 2), id="einsum-matmul"),
    P(lambda m, a, b: m.einsum("bij,bj->bi", a, b), [r(2, 4, 3), r(2, 3)], r(2, 4), id="einsum-batched"),
    P(lambda m, a, b: m.bmm(a, b), [r(2, 4, 3), r(2, 3, 2)], r(2, 4, 2), id="bmm"),
    P(lambda m, a, b: m.mv(a, b), [r(4, 3), r(3)], r(4), id="mv"),
    P(lambda m, a, b: m.tensordot(a, b, 1), [r(4, 3), r(3, 2)], r(4, 2), id="tensordot"),
    P(lambda m, a, b: m.tensordot(a, b, ([0, 2], [1, 0])), [r(2, 3, 4), r(4, 2)], r(3), id="tensordot-pairs"),
    P(lambda m, a, b: m.kron(a, b), [r(2, 3), r(3, 2)], r(6, 6), id="kron"),
    P(lambda m, a, b: m.linalg.cross(a, b), [r(4, 3), r(1, 3)], r(4, 3), id="cross"),
    P(lambda m, a, b: m.linalg.cross(a, b, dim=0), [r(3, 2), r(3, 2)], r(3, 2), id="cross-dim0"),
    P(lambda m, a: m.linalg.det(a), [r(3, 3)], None, id="det"),
    P(lambda m, a: a.det(), [r(2, 3, 3)], r(2), id="det-batched"),
    P(lambda m, a: m.linalg.slogdet(a).logabsdet, [r(3, 3)], None, id="slogdet"),
    P(lambda m, a: m.logdet(a), [r(3, 3) + 3 * np.eye(3)], None, id="logdet"),
    P(lambda m, a: m.linalg.inv(a), [r(3, 3) + 2 * np.eye(3)], r(3, 3), id="inv"),
    P(lambda m, a: a.inverse(), [r(2, 3, 3) + 2 * np.eye(3)], r(2, 3, 3), id="inverse-batched"),
    P(lambda m, a, b: m.linalg.solve(a, b), [r(3, 3) + 2 * np.eye(3), r(3)], r(3), id="solve-vector"),
    P(lambda m, a, b: m.linalg.solve(a, b), [r(3, 3) + 2 * np.eye(3), r(3, 2)], r(3, 2), id="solve-matrix"),
    P(lambda m, a: m.linalg.cholesky(a @ a.T + m.eye(3)), [r(3, 3)], r(3, 3), id="cholesky"),
    P(lambda m, a: m.linalg.matrix_power(a, 3), [r(3, 3)], r(3, 3), id="matrix_power"),
    P(lambda m, a: m.linalg.matrix_power(a, 4), [r(3, 3)], r(3, 3), id="matrix_power-4"),
    P(lambda m, a: m.linalg.matrix_power(a, -2), [r(3, 3) + 2 * np.eye(3)], r(3, 3), id="matrix_power-negative"),
]

def _as_float32(m: Any, fn: Callable, arrays: list, gradient: Any) -> dict:
    f32 = F32[m is APIS["torch"]]
    xs = [m.tensor(a, requires_grad=True, dtype=f32) for a in arrays]
    out = fn(m, *xs)
    out.backward(None if gradient is None else m.tensor(gradient, dtype=f32))
    return {"out": as_numpy(out), "grads": [as_numpy(x.grad) for x in xs]}


# issue 12's functions in float32: the dtype is kept, the numbers agree to float32's precision.
FLOAT32_IDS = {"atan2", "hypot", "fmod", "xlogy", "fmax", "lerp", "addcmul", "addcdiv", "dist", "logsumexp-tuple",
               "amax", "median", "sort", "topk", "cumsum", "cumprod", "cumprod-zeros", "vector_norm", "matrix_norm-1",
               "flip", "roll-flat", "repeat", "triu", "diagonal-offset", "diag_embed", "trace", "split-sizes",
               "gather", "scatter", "scatter_add", "masked_fill", "take", "movedim", "einsum-batched", "bmm",
               "tensordot-pairs", "kron", "cross", "slogdet", "logdet", "inv", "solve-matrix",
               "matrix_power-negative"}


@pytest.mark.parametrize("fn, arrays, gradient", [p for p in PROGRAMS if p.id in FLOAT32_IDS])
def test_same_values_and_gradients_in_float32(fn: Callable, arrays: list, gradient: Any) -> None:
    got, want = _as_float32(APIS["gradcli"], fn, arrays, gradient), _as_float32(APIS["torch"], fn, arrays, gradient)
    assert got["out"].dtype == want["out"].dtype == np.float32
    np.testing.assert_allclose(got["out"], want["out"], rtol=2e-5, atol=2e-5)
    for g, w in zip(got["grads"], want["grads"], strict=True):
        assert g.dtype == w.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)


def test_float32_covers_the_listed_programs() -> None:
    assert FLOAT32_IDS <= {p.id for p in PROGRAMS}


INDICES = [
    P(lambda m, x: x.sort(1).indices, id="sort"), P(lambda m, x: x.sort(0, descending=True)[1], id="sort-descending"),
    P(lambda m, x: x.topk(2, 0).indices, id="topk"), P(lambda m, x: x.kthvalue(2, 1).indices, id="kthvalue"),
    P(lambda m, x: x.median(0).indices, id="median"), P(lambda m, x: x.median(1, keepdim=True)[1], id="median-keepdim"),
    P(lambda m, x: x.argmax(), id="argmax"), P(lambda m, x: m.argmin(x, 1), id="argmin"),
    P(lambda m, x: x.argmax(0, keepdim=True), id="argmax-keepdim"),
    P(lambda m, x: m.argmax(m.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), 1), id="argmax-ties"),
]


@pytest.mark.parametrize("fn", INDICES)
def test_same_indices(fn: Callable) -> None:
    x0 = distinct(4, 3)
    got, want = fn(APIS["gradcli"], APIS["gradcli"].tensor(x0)), fn(APIS["torch"], torch.tensor(x0))
    assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(as_numpy(got), as_numpy(want))


# einsum's node in PyTorch depends on how it decomposes the equation; gradcli shows ViewBackward0.
EINSUMS = [
    P(lambda m, x: m.einsum("ii", x), [r(3, 3)], None, id="einsum-trace"),
    P(lambda m, x: m.einsum("ii->i", x), [r(3, 3)], r(3), id="einsum-diagonal"),
    P(lambda m, a, b: m.einsum("ij,k->i", a, b), [r(4, 3), r(2)], r(4), id="einsum-summed-away"),
    P(lambda m, a, b: m.einsum("...j,...j->...", a, b), [r(2, 4, 3), r(4, 3)], r(2, 4), id="einsum-ellipsis"),
    P(lambda m, a, b, c: m.einsum("i,j,k->ijk", a, b, c), [r(2), r(3), r(2)], r(2, 3, 2), id="einsum-three"),
    P(lambda m, a, b: m.einsum("ij,ij->", a, b), [r(2, 3), r(2, 3)], None, id="einsum-inner"),
]


@pytest.mark.parametrize("fn, arrays, gradient", EINSUMS)
def test_same_einsum_values_and_gradients(fn: Callable, arrays: list, gradient: Any) -> None:
    want = run(APIS["torch"], fn, arrays, gradient)
    got = run(APIS["gradcli"], fn, arrays, gradient)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-12, atol=1e-13)
    for g, w in zip(got["grads"], want["grads"], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)

UNARY = [
    ("exp", lambda m, x: x.exp(), r), ("log", lambda m, x: x.log(), pos), ("log1p", lambda m, x: x.log1p(), pos),
    ("sqrt", lambda m, x: x.sqrt(), pos), ("abs", lambda m, x: x.abs(), r), ("sign", lambda m, x: x.sign(), r),
    ("sin", lambda m, x: x.sin(), r), ("cos", lambda m, x: x.cos(), r), ("tan", lambda m, x: x.tan(), r),
    ("tanh", lambda m, x: x.tanh(), r), ("sigmoid", lambda m, x: x.sigmoid(), r), ("relu", lambda m, x: x.relu(), r),
    ("softplus", lambda m, x: m.softplus(x), r), ("neg", lambda m, x: -x, r), ("square", lambda m, x: x ** 2, r),
    ("cube-root", lambda m, x: x ** (1 / 3), pos), ("exp-base", lambda m, x: 2.5 ** x, r),
    ("reciprocal", lambda m, x: 1 / x, pos), ("clamp", lambda m, x: x.clamp(-0.5, 0.5), r),
    ("asin", lambda m, x: x.asin(), unit), ("acos", lambda m, x: m.acos(x), unit), ("atan", lambda m, x: x.atan(), r),
    ("sinh", lambda m, x: x.sinh(), r), ("cosh", lambda m, x: m.cosh(x), r), ("asinh", lambda m, x: x.asinh(), r),
    ("acosh", lambda m, x: x.acosh(), lambda *s: pos(*s) + 1), ("atanh", lambda m, x: m.atanh(x), unit),
    ("arcsin", lambda m, x: m.arcsin(x), unit), ("log2", lambda m, x: x.log2(), pos),
    ("log10", lambda m, x: m.log10(x), pos), ("exp2", lambda m, x: x.exp2(), r), ("expm1", lambda m, x: x.expm1(), r),
    ("erf", lambda m, x: x.erf(), r), ("erfc", lambda m, x: m.erfc(x), r), ("erfinv", lambda m, x: x.erfinv(), unit),
    ("rsqrt", lambda m, x: x.rsqrt(), pos), ("reciprocal-method", lambda m, x: m.reciprocal(x), pos),
    ("square-fn", lambda m, x: m.square(x), r), ("logit", lambda m, x: x.logit(), lambda *s: unit(*s) * 0.5 + 0.5),
    ("logit-eps", lambda m, x: m.logit(x, eps=0.3), lambda *s: unit(*s) * 0.5 + 0.5),
    ("lgamma", lambda m, x: x.lgamma(), lambda *s: r(*s) * 3), ("digamma", lambda m, x: x.digamma(), pos),
    ("digamma-negative", lambda m, x: m.digamma(x), lambda *s: -pos(*s) - 0.25),
    ("polygamma", lambda m, x: m.polygamma(2, x), pos), ("floor", lambda m, x: x.floor() * x, lambda *s: r(*s) * 3),
    ("ceil", lambda m, x: m.ceil(x) * x, lambda *s: r(*s) * 3),
    ("trunc", lambda m, x: x.trunc() * x, lambda *s: r(*s) * 3),
    ("round", lambda m, x: x.round() * x, lambda *s: r(*s) * 3),
    ("frac", lambda m, x: x.frac() * x, lambda *s: r(*s) * 3),
    ("round-decimals", lambda m, x: m.round(x, decimals=2) * x, r), ("pow-number-base-fn", lambda m, x: m.pow(2, x), r),
    ("fmod-number", lambda m, x: m.fmod(x, 0.7), lambda *s: r(*s) * 3),
    ("remainder-operator", lambda m, x: x % 0.7, lambda *s: r(*s) * 3),
]
for _name, _fn, _gen in UNARY:
    PROGRAMS.append(P(_fn, [_gen(4, 3)], r(4, 3), id=f"unary-{_name}"))


# PyTorch's trigamma (digamma's derivative) is good to about 1e-9 relative; gradcli's to rounding
# (both checked against mpmath), so where trigamma enters, the agreement is that of PyTorch's.
TRIGAMMA = {"unary-digamma", "unary-digamma-negative", "digamma", "digamma-negative", "lgamma", "polygamma"}


@pytest.mark.parametrize("fn, arrays, gradient", PROGRAMS)
def test_same_values_gradients_and_node_names(fn: Callable, arrays: list, gradient: Any,
                                              request: pytest.FixtureRequest) -> None:
    want = run(APIS["torch"], fn, arrays, gradient)
    got = run(APIS["gradcli"], fn, arrays, gradient)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-12, atol=1e-13)
    rtol = 1e-8 if request.node.callspec.id in TRIGAMMA else 1e-10
    for g, w in zip(got["grads"], want["grads"]):
        assert (g is None) == (w is None)
        if w is not None:
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)
    assert got["name"] == want["name"]


NAMED_GRAPHS = ["seed000", "seed002-matrix", "seed002-broadcast", "pow-tensor-tensor", "rsub", "where", "matmul-2d-2d",
                "select", "slice", "cat", "stack", "softmax", "mlp", "reuse"]


@pytest.mark.parametrize("fn, arrays, gradient", [p for p in PROGRAMS if p.id in NAMED_GRAPHS])
def test_same_graph(fn: Callable, arrays: list, gradient: Any) -> None:
    assert run(APIS["gradcli"], fn, arrays, gradient)["graph"] == run(APIS["torch"], fn, arrays, gradient)["graph"]


def second_derivative(m: Any, fn: Callable, x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gradient, and the gradient of its squared norm (zero when the gradient is constant).

    For piecewise-linear ops (relu, clamp) PyTorch records the gradient as a function of x and
    gradcli as a constant; both are right, so only the numbers are compared.
    """
    x = m.tensor(x0, requires_grad=True)
    autograd = m.autograd if m is APIS["torch"] else m
    (g,) = autograd.grad(fn(m, x).sum(), x, create_graph=True)
    if not g.requires_grad:
        return as_numpy(g), np.zeros_like(x0)
    (h,) = autograd.grad((g * g).sum(), x)
    return as_numpy(g), as_numpy(h)


@pytest.mark.parametrize("fn, gen", [P(fn, gen, id=name) for name, fn, gen in UNARY])
def test_second_derivatives(fn: Callable, gen: Callable, request: pytest.FixtureRequest) -> None:
    x0 = gen(5)
    rtol = 1e-8 if request.node.callspec.id in TRIGAMMA else 1e-10
    for got, want in zip(second_derivative(APIS["gradcli"], fn, x0), second_derivative(APIS["torch"], fn, x0)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


# Second derivatives (create_graph) of issue 12's functions beyond one elementwise input.
SECOND = [
    P(lambda m, x: m.atan2(x, x * x + 1) + m.hypot(x, x + 2) + m.lerp(x, x * x, x), unit, id="binary"),
    P(lambda m, x: m.addcdiv(x, x, x * x + 1, value=2) + m.xlogy(x, x * x + 1), unit, id="ternary"),
    P(lambda m, x: x.reshape(2, 2).logsumexp(1).sum() + x.cumprod(0)[-1] + x.cumsum(0) ** 2, r, id="scans"),
    P(lambda m, x: x.sort()[0] ** 3 * m.arange(4.0) + x.amax() ** 2, distinct, id="sort-amax"),
    P(lambda m, x: m.linalg.det(x.reshape(2, 2)) * x.sum(), r, id="det"),
    P(lambda m, x: m.linalg.inv(x.reshape(2, 2) + 3 * m.eye(2)).sum() * x.sum(), r, id="inv"),
    P(lambda m, x: m.linalg.cholesky(x.reshape(2, 2) @ x.reshape(2, 2).T + m.eye(2)).sum(), r, id="cholesky"),
    P(lambda m, x: m.linalg.solve(x.reshape(2, 2) + 3 * m.eye(2), x[:2]).sum(), r, id="solve"),
    P(lambda m, x: m.einsum("ij,jk->ik", x.reshape(2, 2), x.reshape(2, 2)) ** 2, r, id="einsum"),
]


@pytest.mark.parametrize("fn, gen", SECOND)
def test_second_derivatives_of_compositions(fn: Callable, gen: Callable) -> None:
    x0 = gen(4)
    for got, want in zip(second_derivative(APIS["gradcli"], fn, x0), second_derivative(APIS["torch"], fn, x0)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


KINKS = [
    P(lambda m, x: x.relu(), [0.0, 1.0, -1.0], id="relu-at-0"),
    P(lambda m, x: x.abs(), [0.0, 1.0, -1.0], id="abs-at-0"),
    P(lambda m, x: x.sign(), [0.0, 1.0], id="sign"),
    P(lambda m, x: x.sqrt(), [0.0, 1.0], id="sqrt-at-0"),
    P(lambda m, x: x.log(), [0.0, 1.0], id="log-at-0"),
    P(lambda m, x: x.max(), [1.0, 3.0, 3.0], id="max-ties"),
    P(lambda m, x: x.min(), [1.0, 1.0, 3.0], id="min-ties"),
    P(lambda m, x: x.max(1).values, [[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]], id="max-dim-first-index"),
    P(lambda m, x: x.min(0, keepdim=True).values, [[1.0, 3.0], [1.0, 2.0]], id="min-dim-first-index"),
    P(lambda m, x: m.maximum(x, m.tensor([1.0, 3.0, 3.0])), [1.0, 3.0, 4.0], id="maximum-ties"),
    P(lambda m, x: m.minimum(x, m.tensor([1.0, 3.0, 3.0])), [1.0, 3.0, 4.0], id="minimum-ties"),
    P(lambda m, x: x.clamp(0.0, 1.0), [0.0, 1.0, 2.0, -1.0, 0.5], id="clamp-bounds"),
    P(lambda m, x: x.norm(), [0.0, 0.0], id="norm-at-0"),
    P(lambda m, x: x.norm(1), [0.0, 1.0, -2.0], id="norm1-at-0"),
    P(lambda m, x: x.norm(3), [0.0, 0.0], id="norm3-at-0"),
    P(lambda m, x: x.norm(float("inf")), [3.0, 1.0, -3.0], id="norm-inf-ties"),
    P(lambda m, x: x.norm(float("inf")), [0.0, 0.0], id="norm-inf-at-0"),
    P(lambda m, x: x.prod(), [0.0, 2.0, 0.0], id="prod-two-zeros"),
    P(lambda m, x: x.std(), [1.0, 1.0, 1.0], id="std-constant"),
    P(lambda m, x: x ** 0, [0.0, 1.0], id="pow-0**0"),
    P(lambda m, x: x ** 2, [0.0, 1.0], id="pow-0**2"),
    P(lambda m, x: x ** 0.5, [0.0, 1.0], id="pow-0**0.5"),
    P(lambda m, x: x ** m.tensor([0.0, 2.0]), [0.0, 0.0], id="pow-0**tensor"),
    P(lambda m, x: m.tensor([0.0, 0.0]) ** x, [0.0, 2.0], id="pow-exponent-base-0"),
    P(lambda m, x: 0 ** x, [0.0, 2.0], id="pow-number-0"),
    P(lambda m, x: m.softplus(x), [25.0, 20.0, 19.0, -30.0, -800.0], id="softplus-threshold"),
    P(lambda m, x: x.sigmoid(), [-30.0, -800.0, 40.0, 0.0], id="sigmoid-tails"),
    P(lambda m, x: m.where(x > 0, x.sqrt(), x), [-1.0, 1.0], id="where-nan-branch"),
    P(lambda m, x: x.floor() + x.ceil() + x.trunc() + x.round() + x.frac(), [-1.0, 0.0, 2.0, 0.5, 1.5, -2.5],
      id="steps-at-jumps"),
    P(lambda m, x: m.atan2(x, m.tensor([0.0, 1.0])), [0.0, 0.0], id="atan2-origin"),
    P(lambda m, x: m.hypot(x, m.tensor([0.0, 1.0])), [0.0, 0.0], id="hypot-origin"),
    P(lambda m, x: m.xlogy(x, m.tensor([0.0, 2.0, 0.0])), [0.0, 0.0, 1.0], id="xlogy-at-0"),
    P(lambda m, x: m.fmax(x, m.tensor([1.0, float("nan"), 3.0])), [1.0, 2.0, float("nan")], id="fmax-ties-nan"),
    P(lambda m, x: m.fmin(m.tensor([1.0, float("nan"), 3.0]), x), [1.0, 2.0, float("nan")], id="fmin-ties-nan"),
    P(lambda m, x: m.fmod(x, 1.0) + m.remainder(x, -1.0), [-2.0, 0.0, 3.0, 2.5], id="fmod-remainder-jumps"),
    P(lambda m, x: m.logit(x, eps=0.25), [0.25, 0.75, 0.1, 0.5], id="logit-eps-bounds"),
    P(lambda m, x: m.logit(x), [0.0, 1.0, 0.5], id="logit-ends"),
    P(lambda m, x: x.rsqrt() + x.reciprocal(), [0.0, 4.0], id="rsqrt-reciprocal-at-0"),
    P(lambda m, x: x.erfinv(), [1.0, -1.0, 0.0], id="erfinv-ends"),
    P(lambda m, x: x.lgamma() + x.digamma(), [0.0, -1.0, -2.0], id="gamma-poles"),
    P(lambda m, x: m.lerp(x, m.tensor([2.0, 2.0]), m.tensor([0.5, 1.0])), [0.0, 1.0], id="lerp-sides"),
    P(lambda m, x: x.amax() + x.amin(), [1.0, 3.0, 3.0, 1.0], id="amax-amin-ties"),
    P(lambda m, x: x.norm(-float("inf")) + x.norm(-1), [2.0, -1.0, 1.0, 3.0], id="norm-neg-inf-ties"),
    P(lambda m, x: x.norm(-1), [2.0, 0.0, 1.0], id="norm-negative-at-0"),
    P(lambda m, x: x.median(), [2.0, 1.0, 2.0, 3.0, 2.0], id="median-ties"),
    P(lambda m, x: x.median(), [1.0, 2.0, 2.0, 3.0], id="median-even-ties"),
    P(lambda m, x: x.logsumexp(0), [float("-inf"), float("-inf")], id="logsumexp-all-neg-inf"),
    P(lambda m, x: x.logsumexp(0), [float("-inf"), 1.0], id="logsumexp-one-neg-inf"),
    P(lambda m, x: x.cumprod(0) * m.arange(1.0, 6.0), [2.0, 0.0, 2.0, 0.0, 2.0], id="cumprod-two-zeros"),
    P(lambda m, x: x.sort()[0] * m.arange(1.0, 6.0), [2.0, 1.0, 2.0, 3.0, 2.0], id="sort-ties-stable"),
]


@pytest.mark.parametrize("fn, values", KINKS)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_same_subgradients(fn: Callable, values: list) -> None:
    got = run(APIS["gradcli"], lambda m, x: fn(m, x).sum(), [np.array(values)], None)["grads"][0]
    want = run(APIS["torch"], lambda m, x: fn(m, x).sum(), [np.array(values)], None)["grads"][0]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def torch_message(text: str) -> str:
    """torch prints shapes as torch.Size([2, 3]); gradcli as Python's (2, 3)."""
    def size(match: re.Match) -> str:
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
    return re.sub(r"torch\.Size\(\[([^\]]*)\]\)", size, text)


def _freed(m: Any) -> None:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    y.backward()


ERRORS = [
    P(lambda m: (m.ones(2, 3, requires_grad=True) * 2).backward(), id="non-scalar"),
    P(lambda m: (m.ones(2, 3, requires_grad=True) * 2).backward(m.ones(3)), id="gradient-shape"),
    P(lambda m: m.ones(2).sum().backward(), id="no-grad-fn"),
    P(lambda m: m.tensor([1, 2], requires_grad=True), id="integer-requires-grad"),
    P(lambda m: m.ones(2, 3) @ m.ones(2, 3), id="mm-shapes"),
    P(lambda m: m.ones(2, 3) @ m.ones(2), id="mv-shapes"),
    P(lambda m: m.ones(2) @ m.ones(3, 2), id="vm-shapes"),
    P(lambda m: m.ones(2) @ m.ones(3), id="dot-shapes"),
    P(lambda m: m.ones(4, 2, 3) @ m.ones(4, 2, 3), id="bmm-shapes"),
    P(lambda m: m.ones(4, 2, 3) @ m.ones(2, 3), id="folded-mm-shapes"),
    P(lambda m: m.ones(4, 2, 3) @ m.ones(5, 3, 3), id="batch-broadcast"),
    P(lambda m: m.ones(()) @ m.ones(3), id="matmul-0d"),
    P(lambda m: m.ones(2, 3) + m.ones(2), id="broadcast"),
    P(lambda m: m.ones(4, 3) * m.ones(2, 1, 2), id="broadcast-3d"),
    P(lambda m: m.where(m.ones(2, 3) > 0, m.ones(2, 3), m.ones(3, 3)), id="where-broadcast"),
    P(_freed, id="freed-graph"),
    P(lambda m: m.ones(2, 3).reshape(4), id="reshape"),
    P(lambda m: m.ones(2, 3).view(5, -1), id="view"),
    P(lambda m: m.ones(2, 3).item(), id="item"),
    P(lambda m: m.ones(2, 3, requires_grad=True).numpy(), id="numpy"),
    P(lambda m: m.ones(2, 3).sum(2), id="dim-range"),
    P(lambda m: m.ones(2, 3).softmax(-3), id="softmax-dim-range"),
    P(lambda m: m.ones(2, 3).unsqueeze(3), id="unsqueeze-range"),
    P(lambda m: m.ones(2, 3).expand(3, 3), id="expand"),
    P(lambda m: m.ones(2, 3, 4).t(), id="t-3d"),
    P(lambda m: m.stack([m.ones(2, 3), m.ones(3, 2)]), id="stack"),
    P(lambda m: m.ones(2).retain_grad(), id="retain-grad"),
    P(lambda m: m.ones(2, requires_grad=True).zero_(), id="leaf-in-place"),
    P(lambda m: (m.ones(2, requires_grad=True) * 2).requires_grad_(False), id="requires-grad-non-leaf"),
    P(lambda m: m.tensor([1, 2]).mean(), id="mean-integer"),
    P(lambda m: m.dot(m.ones(2, 2), m.ones(2, 2)), id="dot-2d"),
    P(lambda m: m.dot(m.ones(2), m.ones(3)), id="dot-lengths"),
    P(lambda m: m.ones(2, 3)[torch.tensor([0.0]) if m is APIS["torch"] else m.tensor([0.0])], id="float-index"),
    P(lambda m: (m.autograd if m is APIS["torch"] else m).grad(m.ones(2, requires_grad=True).sum(), [m.ones(2)]),
      id="grad-input-no-grad"),
    P(lambda m: (m.autograd if m is APIS["torch"] else m).grad(
        (x := m.ones(2, requires_grad=True)).sum(), x, m.ones(2)), id="grad-outputs-shape"),
    P(lambda m: m.ones(2, 3)[5], id="index-range"),
    P(lambda m: m.cat([m.ones(2, 3), m.ones(3)]), id="cat-ndim"),
    P(lambda m: m.cat([m.ones(2, 3), m.ones(2, 2)]), id="cat-sizes"),
    P(lambda m: m.cat([m.ones(2, 3), m.ones(2, 2)], dim=-2), id="cat-sizes-negative-dim"),
    P(lambda m: (m.autograd if m is APIS["torch"] else m).grad(
        m.ones(2, requires_grad=True).sum(), [m.ones(2, requires_grad=True)]), id="grad-unused"),
    P(lambda m: m.ones(2, 3)[:, 7], id="index-range-dim1"),
    P(lambda m: m.ones(2, 3)[[0, 5]], id="index-array-range"),
    P(lambda m: m.linalg.cross(m.ones(2, 3), m.ones(3)), id="cross-ndim"),
    P(lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2)), id="cross-size"),
    P(lambda m: m.ones(2, 3).gather(1, m.tensor([[0, 3]])), id="gather-range"),
    P(lambda m: m.ones(2, 3).repeat(2), id="repeat-dims"),
    P(lambda m: m.ones(2, 3).narrow(1, 2, 2), id="narrow-range"),
    P(lambda m: m.ones(2, 3).unflatten(1, (2, 2)), id="unflatten-sizes"),
    P(lambda m: m.ones(2, 3).split([1, 2]), id="split-sizes"),
    P(lambda m: m.ones(2, 3).index_select(0, m.tensor([0, 2])), id="index_select-range"),
    P(lambda m: m.ones(2, 3).kthvalue(4), id="kthvalue-range"),
    P(lambda m: m.ones(2, 3).topk(4), id="topk-range"),
    P(lambda m: m.ones(2, 3).tril().trace() + m.ones(3).tril(), id="tril-vector"),
    P(lambda m: m.ones(2, 3).diagonal(0, 1, 1), id="diagonal-same-dims"),
    P(lambda m: m.ones(2, 3).movedim((0, 1), (0,)), id="movedim-count"),
    P(lambda m: m.linalg.det(m.ones(2, 3)), id="det-square"),
    P(lambda m: m.ones(2).masked_fill(m.tensor([True, False]), m.ones(2)), id="masked_fill-value-dims"),
    P(lambda m: m.tensordot(m.ones(2, 2), m.ones(2, 2), 3), id="tensordot-dims"),
    P(lambda m: m.linalg.inv(m.ones(3)), id="inv-vector"),
    P(lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [2.0, 4.0]])), id="inv-singular"),
    P(lambda m: m.linalg.inv(m.tensor([[0.0, 0.0, 1.0], [1.0, 2.0, 0.0], [2.0, 4.0, 0.0]])), id="inv-singular-3"),
    P(lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]])), id="cholesky-not-pd"),
    P(lambda m: m.linalg.solve(m.tensor([[1.0, 2.0], [2.0, 4.0]]), m.ones(2)), id="solve-singular"),
    P(lambda m: _functional_api(m).hessian(lambda v: v ** 3, m.ones(2), create_graph=True), id="hessian-vector"),
    P(lambda m: m.ones(2, 3).t().view(6), id="view-needs-a-copy"),
]


def _error(m: Any, fn: Callable) -> BaseException:
    with pytest.raises((RuntimeError, IndexError, TypeError, GradcliError)) as info:
        fn(m)
    return info.value


@pytest.mark.parametrize("fn", ERRORS)
def test_error_texts_start_with_torchs(fn: Callable) -> None:
    want = torch_message(str(_error(APIS["torch"], fn)))
    got = _error(APIS["gradcli"], fn)
    assert isinstance(got, GradcliError)
    assert got.message.startswith(want), f"\n torch: {want}\n gradcli: {got.message}"
    assert got.hint


def _accumulated(m: Any) -> list:
    x = m.tensor(1.0, requires_grad=True)
    w = m.tensor(2.0, requires_grad=True)
    out = x * 1 + w
    out.backward(retain_graph=True)
    seen = [as_numpy(x.grad).copy(), as_numpy(w.grad).copy()]
    out.backward()
    return seen + [as_numpy(x.grad), as_numpy(w.grad)]


def _gradient_kept(m: Any) -> list:
    g = m.tensor([1.0, 1.0])
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([1.0, 2.0], requires_grad=True)
    y = x + w
    y.backward(g, retain_graph=True)
    y.backward(g)
    x.grad.zero_()
    return [as_numpy(g), as_numpy(x.grad), as_numpy(w.grad)]


def _retained(m: Any) -> list:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y * y
    z.sum().backward()
    return [as_numpy(y.grad), as_numpy(x.grad), y.is_leaf, y.retains_grad, z.grad_fn is not None]


def _grad_mode_flags(m: Any) -> list:
    x = m.tensor([1.0, 2.0], requires_grad=True)
    c = m.tensor([3.0, 4.0])
    y = x * c
    d = y.detach()
    return [y.requires_grad, y.is_leaf, (c * 2).requires_grad, d.requires_grad, d.is_leaf, x.is_leaf,
            (c * 2).grad_fn is None]


def _mixed_dtype(m: Any) -> list:
    f32, f64 = (torch.float32, torch.float64) if m is APIS["torch"] else ("float32", "float64")
    x = m.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    (x * 2).backward(m.tensor([1.0, 1.0], dtype=f64))
    return [str(x.grad.dtype).removeprefix("torch."), as_numpy(x.grad)]


def _zero_dim_promotion(m: Any) -> list:
    f32, f64 = (torch.float32, torch.float64) if m is APIS["torch"] else ("float32", "float64")
    a = m.tensor([1.0, 2.0], requires_grad=True, dtype=f32)
    s = m.tensor(3.0, requires_grad=True, dtype=f64)
    y = a * s + m.tensor(0.5, dtype=f64)
    y.sum().backward()
    wide = a * m.tensor([2.0, 2.0], dtype=f64)
    return [str(y.dtype).removeprefix("torch."), str(wide.dtype).removeprefix("torch."), as_numpy(a.grad),
            as_numpy(s.grad), str(s.grad.dtype).removeprefix("torch.")]


@pytest.mark.parametrize("program", [_accumulated, _gradient_kept, _retained, _grad_mode_flags, _mixed_dtype,
                                     _zero_dim_promotion])
def test_same_autograd_state(program: Callable) -> None:
    got, want = program(APIS["gradcli"]), program(APIS["torch"])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_same_functional_layouts() -> None:
    def f(m: Any) -> Callable:
        return lambda x, w: (m.tanh(x @ w) * x.sum()).softmax(0)
    x0, w0 = r(3, 2), r(2, 4)
    got = gradcli.jacobian(f(gradcli), (gradcli.tensor(x0), gradcli.tensor(w0)))
    want = torch.autograd.functional.jacobian(f(torch), (torch.tensor(x0), torch.tensor(w0)))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(as_numpy(g), as_numpy(w), rtol=1e-10, atol=1e-12)

    def s(m: Any) -> Callable:
        return lambda x, w: ((x @ w).sin() ** 2).sum() + (x ** 3).sum()
    got = gradcli.hessian(s(gradcli), (gradcli.tensor(x0), gradcli.tensor(w0)))
    want = torch.autograd.functional.hessian(s(torch), (torch.tensor(x0), torch.tensor(w0)))
    for grow, wrow in zip(got, want, strict=True):
        for g, w in zip(grow, wrow, strict=True):
            assert g.shape == tuple(w.shape)
            np.testing.assert_allclose(as_numpy(g), as_numpy(w), rtol=1e-10, atol=1e-12)


def test_same_repr() -> None:
    for make in [lambda m: m.ones(2, 2, requires_grad=True) + 2, lambda m: m.tensor([4.5, 1.0, -2.25]),
                 lambda m: m.tensor([[1e-5, 1.0], [3.0, 4.0]]), lambda m: m.tensor([1e9, 1.0]),
                 lambda m: m.tensor(3.0, requires_grad=True), lambda m: m.tensor([1.0, 2.0]).float(),
                 lambda m: m.tensor([1, 2, 3])]:
        assert repr(make(gradcli)) == repr(make(torch))


TWICE = ["(x * 2).sum()", "(x + x).sum()", "x.sum()", "(x * c).sum()", "m.where(c > 3, x, c).sum()", "(x / 2).sum()",
         "(2 / x).sum()", "(x ** 2).sum()", "x.exp().sum()", "(-x).sum()", "x[0]", "x.reshape(2, 1).sum()",
         "(x - c).sum()", "(x * x).sum()", "x.max()", "x.abs().sum()", "x.relu().sum()", "x.sign().sum()",
         "x.clamp(0, 1).sum()", "x.mean()", "m.cat([x, x]).sum()", "x.float().sum()", "m.maximum(x, c).sum()",
         "x @ c", "c @ x", "x.norm()", "x.softmax(0)[0]", "(2 ** x).sum()", "(c ** x).sum()", "x.var()", "x.prod()",
         "x.sigmoid().sum()", "x.t().sum()", "x.unsqueeze(0).expand(3, 2).sum()", "m.stack([x, c]).sum()"]


def _second_backward_fails(m: Any, expression: str) -> bool:
    x = m.tensor([1.0, -2.0], requires_grad=True)
    c = m.tensor([3.0, 4.0])
    y = eval(expression, {"m": m, "x": x, "c": c})  # the test's own expressions, never user text
    y.backward()
    try:
        y.backward()
    except (RuntimeError, GradcliError):
        return True
    return False


@pytest.mark.parametrize("expression", TWICE)
def test_same_ops_free_their_saved_values(expression: str) -> None:
    """Ops that save nothing can run backward twice; the others fail, as in PyTorch."""
    assert _second_backward_fails(APIS["gradcli"], expression) == _second_backward_fails(APIS["torch"], expression)


def _create_graph_grads(m: Any) -> list:
    x = m.tensor([1.0, -2.0], requires_grad=True)
    w = m.tensor([0.5, 3.0], requires_grad=True)
    names = []
    for make in [lambda: (x * x).sum(), lambda: (x * w).sum(), lambda: x.sum()]:
        make().backward(create_graph=True)
        names.append([node_name(x.grad), node_name(w.grad) if w.grad is not None else None, x.grad is w.grad])
    return names + [as_numpy(x.grad).tolist(), as_numpy(w.grad).tolist()]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_same_gradients_accumulated_under_create_graph() -> None:
    assert _create_graph_grads(APIS["gradcli"]) == _create_graph_grads(APIS["torch"])


FLOAT32 = [
    P(lambda m, x, w: (x @ w).tanh().sum(), id="matmul-tanh"),
    P(lambda m, x, w: (x.softmax(1) * w.t()[:4]).mean(), id="softmax"),
    P(lambda m, x, w: ((x * 0.5 + 1.5) ** 2).sum() + w.norm(), id="pow-norm"),
]


FLOAT32 += [P(lambda m, x, w, fn=fn: (fn(m, x.sigmoid() * 0.8 + 0.1) * w[0, 0]).sum(), id=f"unary-{name}")
            for name, fn, _ in UNARY]


@pytest.mark.parametrize("fn", FLOAT32)
def test_float32_programs(fn: Callable) -> None:
    """float32 stays float32 (Python numbers do not promote it), with float32-sized differences."""
    x0, w0 = r(4, 3).astype(np.float32), r(3, 5).astype(np.float32)
    results = []
    for m, dtype in ((APIS["gradcli"], "float32"), (APIS["torch"], torch.float32)):
        x, w = m.tensor(x0, requires_grad=True, dtype=dtype), m.tensor(w0, requires_grad=True, dtype=dtype)
        out = fn(m, x, w)
        out.backward()
        results.append([as_numpy(out), as_numpy(x.grad), as_numpy(w.grad)])
    for got, want in zip(*results):
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


PROMOTIONS = [
    P(lambda m: m.tensor([1, 2]) * 2.5, id="int-times-float"),
    P(lambda m: m.tensor([1, 2]) / m.tensor([2, 4]), id="int-div-int"),
    P(lambda m: m.tensor([1.0], dtype=F32[m is APIS["torch"]]) + m.tensor([1.0]), id="float32-plus-float64"),
    P(lambda m: m.tensor([1.0], dtype=F32[m is APIS["torch"]]) * 2, id="float32-times-int"),
    P(lambda m: m.tensor([1, 2]).sum(), id="int-sum"),
    P(lambda m: m.tensor([True, False]) * 1.5, id="bool-times-float"),
]
F32 = {True: torch.float32, False: "float32"}


@pytest.mark.parametrize("fn", PROMOTIONS)
def test_same_result_dtypes(fn: Callable) -> None:
    got, want = fn(APIS["gradcli"]), fn(APIS["torch"])
    assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(as_numpy(got), as_numpy(want))


# -- whole programs: the same text run by gradcli's interpreter and by Python with torch -------------
# (these are the test's own programs, run by Python only here, in the oracle test)
SCRIPTS = {
    "descent with a function, no_grad and f-strings": """
import torch
def loss_fn(w, x, y):
    return ((w * x - y) ** 2).mean()
x = torch.tensor([1.0, 2.0, 3.0])
y = 2 * x + 1
w = torch.tensor([0.5], requires_grad=True)
for step in range(4):
    loss = loss_fn(w, x, y)
    loss.backward()
    with torch.no_grad():
        w -= 0.05 * w.grad
    w.grad.zero_()
    print(f"{step:>2d} {loss.item():.6f} {w.item():10.6f} {w}")
print(w.is_leaf, w.requires_grad, w.grad)
""",
    "gradient modes": """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x ** 2
with torch.no_grad():
    s = x.sum() * 3
    with torch.enable_grad():
        t = x * 2
(y + s + t).sum().backward()
@torch.no_grad()
def frozen(v):
    return v * 2
torch.set_grad_enabled(False)
u = x * 2
torch.set_grad_enabled(True)
print(x.grad, s.requires_grad, t.requires_grad, frozen(x).requires_grad, u.requires_grad, torch.is_grad_enabled())
""",
    "in-place on the graph and CopySlices": """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.add_(1)
y.mul_(x)
y[0] = 5.0
y[1:] += x[1:] ** 2
y.sum().backward()
print(y, x.grad)
z = torch.zeros(3)
v = torch.tensor(2.0, requires_grad=True)
z[0] = v * 3
z[2] = v ** 2
z.sum().backward()
print(z, v.grad)
""",
    "data and detach": """
import torch
b = torch.tensor([4.0, -1.0], requires_grad=True)
for _ in range(3):
    (b ** 2).sum().backward()
    b.data.sub_(0.25 * b.grad.data)
    b.grad = None
c = b.detach()
c.mul_(2)
b.data *= 10
print(b, c)
""",
    "functional API with the program's functions": """
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp
def f(v):
    return v.tanh() * v.sum()
def s(v):
    return (v.sin() ** 2).sum() + v[0] * v[1] ** 2
x = torch.tensor([0.3, -0.7, 1.1])
u = torch.tensor([1.0, -2.0, 0.5])
print(jacobian(f, x))
print(hessian(s, x))
print(vjp(f, x, u))
print(jvp(f, x, u))
print(hvp(s, x, u))
print(vhp(s, x, u))
print(jacobian(lambda a, b: a * b.exp(), (x, u)))
""",
    "hooks": """
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * 3
h = y.register_hook(lambda g: g * 10)
seen = []
def watch(g):
    seen.append(g)
x.register_hook(watch)
y.retain_grad()
(y ** 2).sum().backward(retain_graph=True)
print(x.grad, y.grad, seen)
h.remove()
x.grad = None
(y ** 2).sum().backward()
print(x.grad, len(seen))
z = torch.tensor([1.0, 2.0], requires_grad=True)
z.register_hook(lambda g: g * 0 + 1)
(z * 5).sum().backward()
print(z.grad)
""",
    "saved tensors and next_functions": """
import torch
b = torch.ones(2, requires_grad=True)
c = torch.tensor([2.0, 3.0])
z = b * c
y = b * 2
e = b.exp()
p = b ** 3
q = (b * 3) * b
print(z.grad_fn._saved_self, z.grad_fn._saved_other, repr(y.grad_fn._saved_other), y.grad_fn._saved_self)
print(e.grad_fn._saved_result, p.grad_fn._saved_exponent, p.grad_fn._saved_self, q.grad_fn._saved_self)
for f in (2 * b, 1 - b, b ** 2, 2 ** b, 2 + b, b - 1, b / 2, b * c):
    print(f.grad_fn.next_functions[0][0] is not None, len(f.grad_fn.next_functions))
d = b * 1
d[0] = 3.0
k = torch.zeros(2)
k.copy_(b)
print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name(), d.grad_fn.name(), k.grad_fn.name())
""",
    "numpy views": """
import torch
import numpy as np
a = np.array([[1.0, 2.0], [3.0, 4.5]])
t = torch.tensor(a, requires_grad=True)
print(a, t, np.array(t.detach()))
x = torch.tensor([1.0, 2.5], requires_grad=True)
(x * x).sum().backward()
print(x.grad.numpy(), x.detach().numpy())
print(f"{x.grad.numpy()}")
""",
    "formatting": """
import torch
v = torch.tensor([1.5, -2.25])
x = torch.tensor(3.14159)
print(f"{x:.3f}|{x}|{v}|{v!r}|{x.item():+.2e}|{7:05d}|{'ab':>5}|{0.5:%}|{1234567.891:,.2f}")
print("{} {:.2f} {name}".format(v, x, name="w"), "%.4f %5.1f %-4d| %s %r" % (x, 2.25, 7, v, "s"))
print(x.shape, v.shape, v.size(), [v.shape], len(v), str(v.shape))
""",
    "comprehensions and iteration": """
import torch
xs = [torch.tensor(float(i), requires_grad=True) for i in range(1, 4)]
loss = sum(x ** 2 for x in xs)
loss.backward()
print([x.grad for x in xs], loss)
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
for i, (row, k) in enumerate(zip(m, [10, 20])):
    print(i, row * k, row.sum().item())
print(torch.stack([r * 2 for r in m]), [len(r) for r in m], sorted([3, 1, 2]), list(reversed(range(3))))
""",
    "views, create_graph functionals and inference mode": """
import torch
from torch.autograd.functional import jacobian, hessian
w = torch.tensor(2.0, requires_grad=True)
x = torch.zeros(2, 3, requires_grad=True).clone()
x[:, 0].add_(w)
row = x[1]
row.mul_(w)
x.t()[2].fill_(5.0)
x.sum().backward()
print(x, row, w.grad, x.grad_fn.name())
v = torch.tensor([0.5, -1.0], requires_grad=True)
J = jacobian(lambda t: t.sin() * t.sum(), v, create_graph=True)
J.sum().backward()
print(J, v.grad, hessian(lambda t: (t ** 3).sum(), v.detach()))
with torch.inference_mode():
    a = torch.ones(2) * 3
print(a.is_inference(), a.requires_grad, torch.is_inference_mode_enabled(), (a.clone() * v).sum())
""",
}


def _torch_output(source: str) -> list[str]:
    import contextlib
    import io
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(source, "<oracle program>", "exec"), {"__name__": "oracle"})  # noqa: S102 (the test's own text)
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize("source", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_same_program_output(source: str) -> None:
    from tests.language_helpers import run
    got = "\n".join(run(source, dtype="float64").printed).splitlines()
    assert got == _torch_output(source)


@pytest.mark.parametrize("source", [
    "import torch\nw = torch.ones(2, requires_grad=True)\nw -= 1",
    "import torch\nw = torch.ones(2, requires_grad=True)\nw[0] = 2.0",
    "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.exp()\ny.add_(1)\ny.sum().backward()",
    "import torch\nx = torch.ones(2, 3, requires_grad=True)\nz = (x * x).sum()\nwith torch.no_grad():\n"
    "    x.mul_(2)\nz.backward()",
    "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\na = x * 1\nz = (a * a).sum()\na.mul_(2)\nz.backward()",
    "import torch\nx = torch.zeros(2)\nx.add_(torch.ones(2, 2))",
    "import torch\nv = torch.ones(2)\ns = f'{v:.2f}'",
    "import torch\ntorch.ones(2).cuda()",
    "import torch\ntorch.ones(2, requires_grad=True).numpy()",
    "import torch\nb = torch.ones(2, requires_grad=True)\ne = b.exp()\ne.sum().backward()\nr = e.grad_fn._saved_result",
    "import torch\ntorch.ones(2).register_hook(lambda g: g)",
    "import torch\nw = torch.ones(1, requires_grad=True)\nw.register_hook(lambda g: torch.ones(3))\n(w * 2).sum().backward()",
    "import torch\nfrom torch.autograd.functional import vjp\nvjp(lambda v: v * 2, torch.ones(2))",
    "import torch\nfrom torch.autograd.functional import hvp\nhvp(lambda v: v * 2, torch.ones(2), torch.ones(2))",
])
def test_same_program_errors(source: str) -> None:
    from tests.language_helpers import fails
    with pytest.raises((RuntimeError, TypeError, AssertionError, ValueError)) as info:
        _torch_output(source)
    got = fails(source, dtype="float64")
    want = torch_message(str(info.value))
    assert got.message.startswith(want) or want.startswith(got.message), f"\n torch: {want}\n gradcli: {got.message}"
# -- torch.nn.functional, torch.nn and torch.optim ---------------------------------------------------
import gradcli.nn.functional as gradcli_functional  # noqa: E402
from gradcli.nn import modules as gradcli_nn  # noqa: E402
from gradcli.optim import optimizers as gradcli_optim  # noqa: E402

FUNCTIONAL = {"torch": (torch.nn.functional, torch.tensor), "gradcli": (gradcli_functional, gradcli.tensor)}
TARGETS = np.array([0, 2, 1, 2])
IGNORED = np.array([0, -100, 1, 2])
PROBS = RNG.dirichlet(np.ones(3), 4)
UNIT = RNG.uniform(0.05, 0.95, (4, 3))
AT_KINKS = np.array([[-3.0, -1.0, 0.0, 1.0], [3.0, 6.0, 2.5, -0.5]])


def run_functional(side: str, fn: Callable, arrays: list) -> dict:
    F, tensor = FUNCTIONAL[side]
    xs = [tensor(a, requires_grad=True) for a in arrays]
    out = fn(F, tensor, *xs)
    out.backward(tensor(np.random.default_rng(3).standard_normal(tuple(out.shape))))
    return {"out": as_numpy(out), "grads": [as_numpy(x.grad) for x in xs], "name": node_name(out),
            "graph": graph_names(out)}


FUNCTIONAL_PROGRAMS = [
    P(lambda F, T, x: F.relu6(x * 4), [AT_KINKS], id="relu6"),
    P(lambda F, T, x: F.hardtanh(x, -0.5, 2.5), [AT_KINKS], id="hardtanh"),
    P(lambda F, T, x: F.leaky_relu(x, 0.2), [AT_KINKS], id="leaky_relu"),
    P(lambda F, T, x: F.elu(x, 0.7), [AT_KINKS], id="elu"),
    P(lambda F, T, x: F.selu(x), [AT_KINKS], id="selu"),
    P(lambda F, T, x: F.celu(x, 1.5), [AT_KINKS], id="celu"),
    P(lambda F, T, x: F.gelu(x), [r(4, 3)], id="gelu"),
    P(lambda F, T, x: F.gelu(x, approximate="tanh"), [r(4, 3)], id="gelu-tanh"),
    P(lambda F, T, x: F.silu(x), [r(4, 3)], id="silu"),
    P(lambda F, T, x: F.mish(x), [r(4, 3)], id="mish"),
    P(lambda F, T, x: F.softsign(x), [r(4, 3)], id="softsign"),
    P(lambda F, T, x: F.hardsigmoid(x), [AT_KINKS], id="hardsigmoid"),
    P(lambda F, T, x: F.hardswish(x), [AT_KINKS], id="hardswish"),
    P(lambda F, T, x: F.logsigmoid(x), [r(4, 3) * 10], id="logsigmoid"),
    P(lambda F, T, x: F.softmin(x, 1), [r(4, 3)], id="softmin"),
    P(lambda F, T, x: F.softplus(x, beta=2, threshold=3), [r(4, 3) * 3], id="softplus-beta"),
    P(lambda F, T, x: F.normalize(x), [r(4, 3)], id="normalize"),
    P(lambda F, T, x: F.normalize(x, p=1, dim=0), [r(4, 3)], id="normalize-p1"),
    P(lambda F, T, x, y: F.cosine_similarity(x, y), [r(4, 3), r(4, 3)], id="cosine_similarity"),
    P(lambda F, T, x, y: F.pairwise_distance(x, y), [r(4, 3), r(4, 3)], id="pairwise_distance"),
    P(lambda F, T, x, w, b: F.linear(x, w, b), [r(4, 3), r(2, 3), r(2)], id="linear"),
    P(lambda F, T, x, w: F.linear(x, w), [r(4, 3), r(2, 3)], id="linear-no-bias"),
    P(lambda F, T, x, w, b: F.linear(x, w, b), [r(3), r(2, 3), r(2)], id="linear-1d"),
    P(lambda F, T, x, w, b: F.linear(x, w, b), [r(2, 4, 3), r(2, 3), r(2)], id="linear-3d"),
    P(lambda F, T, x: F.pad(x, (1, 2)), [r(4, 3)], id="pad"),
    P(lambda F, T, x: F.pad(x, (-1, 1, 2, 0), value=0.5), [r(4, 3)], id="pad-crop"),
    P(lambda F, T, x: F.layer_norm(x, (3,)), [r(4, 3)], id="layer_norm"),
    P(lambda F, T, x, w, b: F.layer_norm(x, (2, 3), w, b), [r(4, 2, 3), r(2, 3), r(2, 3)], id="layer_norm-affine"),
    P(lambda F, T, x, y: F.mse_loss(x, y), [r(4, 3), r(4, 3)], id="mse_loss"),
    P(lambda F, T, x, y: F.mse_loss(x, y, reduction="none"), [r(4, 3), r(4, 3)], id="mse_loss-none"),
    P(lambda F, T, x, y: F.l1_loss(x, y, reduction="sum"), [r(4, 3), r(4, 3)], id="l1_loss"),
    P(lambda F, T, x, y: F.smooth_l1_loss(x, y, beta=0.5), [r(4, 3), r(4, 3)], id="smooth_l1_loss"),
    P(lambda F, T, x, y: F.huber_loss(x, y, delta=0.7, reduction="sum"), [r(4, 3), r(4, 3)], id="huber_loss"),
    P(lambda F, T, x: F.cross_entropy(x, T(TARGETS)), [r(4, 3)], id="cross_entropy"),
    P(lambda F, T, x: F.cross_entropy(x, T(IGNORED), weight=T([0.2, 1.0, 3.0])), [r(4, 3)],
      id="cross_entropy-weight-ignore"),
    P(lambda F, T, x: F.cross_entropy(x, T(TARGETS), label_smoothing=0.1), [r(4, 3)], id="cross_entropy-smoothing"),
    P(lambda F, T, x: F.cross_entropy(x, T(IGNORED), weight=T([0.2, 1.0, 3.0]), label_smoothing=0.2), [r(4, 3)],
      id="cross_entropy-smoothing-weight"),
    P(lambda F, T, x: F.cross_entropy(x, T(TARGETS), reduction="none", label_smoothing=0.3), [r(4, 3)],
      id="cross_entropy-smoothing-none"),
    P(lambda F, T, x: F.cross_entropy(x, T(PROBS)), [r(4, 3)], id="cross_entropy-probabilities"),
    P(lambda F, T, x: F.cross_entropy(x, T(PROBS), weight=T([0.2, 1.0, 3.0]), label_smoothing=0.1), [r(4, 3)],
      id="cross_entropy-probabilities-weight"),
    P(lambda F, T, x: F.cross_entropy(x, T(2)), [r(3)], id="cross_entropy-1d"),
    P(lambda F, T, x: F.nll_loss(x, T(TARGETS), reduction="sum"), [r(4, 3)], id="nll_loss"),
    P(lambda F, T, x: F.nll_loss(x, T(np.array([[0, 1], [2, 0]]))), [r(2, 3, 2)], id="nll_loss-kdim"),
    P(lambda F, T, x, y: F.binary_cross_entropy(x, y), [UNIT, UNIT[::-1].copy()], id="binary_cross_entropy"),
    P(lambda F, T, x, y: F.binary_cross_entropy(x, y, weight=T([1.0, 2.0, 0.5])), [UNIT, UNIT[::-1].copy()],
      id="binary_cross_entropy-weight"),
    P(lambda F, T, x, y: F.binary_cross_entropy_with_logits(x, y), [r(4, 3), UNIT], id="bce_with_logits"),
    P(lambda F, T, x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=T([1.0, 2.0, 0.5]), reduction="sum"),
      [r(4, 3), UNIT], id="bce_with_logits-pos_weight"),
    P(lambda F, T, x, y: F.kl_div(x, y, reduction="batchmean"), [r(4, 3), UNIT], id="kl_div-batchmean"),
    P(lambda F, T, x, y: F.kl_div(x, y, log_target=True, reduction="sum"), [r(4, 3), r(4, 3)], id="kl_div-log"),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn, arrays", FUNCTIONAL_PROGRAMS)
def test_same_functional_values_gradients_and_graphs(fn: Callable, arrays: list) -> None:
    want = run_functional("torch", fn, arrays)
    got = run_functional("gradcli", fn, arrays)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-12, atol=1e-13)
    for g, w in zip(got["grads"], want["grads"]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert got["name"] == want["name"]


OPTIMIZERS = [
    P("SGD", {"lr": 0.1}, id="sgd"),
    P("SGD", {"lr": 0.1, "momentum": 0.9}, id="sgd-momentum"),
    P("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.01}, id="sgd-dampening-decay"),
    P("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}, id="sgd-nesterov-maximize"),
    P("Adam", {}, id="adam"),
    P("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.1, "amsgrad": True}, id="adam-amsgrad-decay"),
    P("AdamW", {"lr": 0.01}, id="adamw"),
]


def _optimized(side: str, name: str, options: dict, dtype: str) -> list[np.ndarray]:
    """Five steps of `name`, each parameter given the same gradient on both sides (a function of its
    current values), so the update arithmetic alone is compared; one parameter never has a grad."""
    def tensor(data: Any) -> Any:
        if side == "torch":
            return torch.tensor(data, requires_grad=True)
        return gradcli.tensor(data, requires_grad=True, dtype=dtype)
    optim = torch.optim if side == "torch" else gradcli_optim
    params = [tensor(np.linspace(-1.5, 2.0, 6).reshape(3, 2).astype(dtype)), tensor(np.array([0.5, -0.25], dtype)),
              tensor(np.ones(2, dtype=dtype))]
    opt = getattr(optim, name)(params, **options)
    for k in range(5):
        opt.zero_grad()
        for p in params[:2]:
            p.grad = tensor(np.sin(as_numpy(p) * 3 + k).astype(dtype)).detach()
        opt.step()
    assert params[2].grad is None and params[0].is_leaf
    return [as_numpy(p).copy() for p in params]



@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, options", OPTIMIZERS)
def test_optimizers_take_pytorchs_steps(name: str, options: dict, dtype: str) -> None:
    want = _optimized("torch", name, options, dtype)
    got = _optimized("gradcli", name, options, dtype)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        # PyTorch's kernels fuse a + alpha·b (one rounding): a few ulps apart, never more
        np.testing.assert_allclose(g, w, rtol=1e-14 if dtype == "float64" else 1e-6, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed, shape", [(0, (3, 2)), (7, (1, 1)), (3, (17, 5)), (11, (40, 64))])
def test_linear_and_dropout_draw_pytorchs_numbers(seed: int, shape: tuple, dtype: str) -> None:
    torch.set_default_dtype(getattr(torch, dtype))
    previous = gradcli.get_default_dtype()
    gradcli.set_default_dtype(dtype)
    try:
        torch.manual_seed(seed)
        want = torch.nn.Sequential(torch.nn.Linear(*shape), torch.nn.Dropout(0.4))
        want_out = want(torch.ones(2, shape[0]))
        gradcli.manual_seed(seed)
        got = gradcli_nn.Sequential(gradcli_nn.Linear(*shape), gradcli_nn.Dropout(0.4))
        got_out = got(gradcli.ones(2, shape[0]))
        for (name, p), (_, q) in zip(got.named_parameters(), want.named_parameters()):
            assert np.array_equal(p._data, as_numpy(q)), name
        np.testing.assert_array_equal(as_numpy(got_out) == 0, as_numpy(want_out) == 0)
        np.testing.assert_allclose(as_numpy(got_out), as_numpy(want_out), rtol=1e-6 if dtype == "float32" else 1e-12)
    finally:
        gradcli.set_default_dtype(previous)


def test_the_op_tables_function_only_and_method_only_names_are_pytorchs() -> None:
    from tests.test_op_table import FUNCTION_ONLY, METHOD_ONLY
    assert sorted(n for n in FUNCTION_ONLY if hasattr(torch.Tensor, n)) == []
    assert sorted(n for n in FUNCTION_ONLY if not (hasattr(torch, n) or hasattr(torch.nn.functional, n))) == []
    assert sorted(n for n in METHOD_ONLY if callable(getattr(torch, n, None)) and n not in ("float", "double")) == []


# -- issue 11's remaining gaps: version counters for every in-place method, create_graph functionals, writes
# through views, inference mode --------------------------------------------------------------------------------
from tests.test_inplace import IN_PLACE_CALLS  # noqa: E402  (the engine test's list of every in-place method)


def _no_grad(m: Any) -> Any:
    from gradcli.engine.modes import no_grad
    return torch.no_grad() if m is APIS["torch"] else no_grad()


def _in_place_args(m: Any, name: str) -> tuple:
    def made(a: Any) -> Any:  # index_put_'s indices are a tuple of tensors
        if isinstance(a, tuple):
            return tuple(made(b) for b in a)
        return m.tensor(a.tolist()) if isinstance(a, gradcli.Tensor) else a
    return tuple(made(a) for a in IN_PLACE_CALLS[name])


@pytest.mark.parametrize("name", sorted(IN_PLACE_CALLS))
def test_every_in_place_method_raises_pytorchs_version_error(name: str) -> None:
    def saved_leaf(m: Any) -> None:
        w = m.tensor([0.5, 2.0, 3.0], requires_grad=True)
        z = (w * w).sum()
        with _no_grad(m):
            getattr(w, name)(*_in_place_args(m, name))
        z.backward()

    def saved_output(m: Any) -> None:
        y = m.tensor([0.5, 2.0, 3.0], requires_grad=True).exp()
        getattr(y, name)(*_in_place_args(m, name))
        y.sum().backward()
    for program in (saved_leaf, saved_output):
        want = str(_error(APIS["torch"], program))
        got = _error(APIS["gradcli"], program)
        assert isinstance(got, GradcliError) and want.startswith(got.message), f"\n torch: {want}\n gradcli: {got}"


def _functional_api(m: Any) -> Any:
    from gradcli.engine import autograd
    return torch.autograd.functional if m is APIS["torch"] else autograd


def _wavy(v: Any) -> Any:
    return (v.sin() ** 2).sum() + v[0] * v[1] ** 2


CREATE_GRAPH = [
    P(lambda A, x, u: A.jacobian(lambda v: v.tanh() * v.sum(), x, create_graph=True).sum(), id="jacobian"),
    P(lambda A, x, u: (A.hessian(_wavy, x, create_graph=True) ** 2).sum(), id="hessian"),
    P(lambda A, x, u: sum(t.sum() for t in A.vjp(lambda v: v.tanh() * v.sum(), x, u, create_graph=True)), id="vjp"),
    P(lambda A, x, u: sum(t.sum() for t in A.jvp(lambda v: v.tanh() * v.sum(), x, u, create_graph=True)), id="jvp"),
    P(lambda A, x, u: A.hvp(_wavy, x, u, create_graph=True)[1].sum(), id="hvp"),
    P(lambda A, x, u: A.vhp(_wavy, x, u, create_graph=True)[1].sum(), id="vhp"),
    P(lambda A, x, u: A.jacobian(lambda v: v * x.exp(), x, create_graph=True).sum(), id="closure"),
    P(lambda A, x, u: sum(j.sum() for j in A.jacobian(lambda a, b: a * b.exp(), (x, x * 2), create_graph=True)),
      id="two-inputs-one-computed"),
    P(lambda A, x, u: A.jacobian(lambda v: A.jacobian(_wavy, v, create_graph=True), x, create_graph=True).sum(),
      id="jacobian-of-jacobian"),
]


@pytest.mark.parametrize("program", CREATE_GRAPH)
def test_create_graph_functionals_backpropagate_pytorchs_numbers(program: Callable) -> None:
    x0, u0 = np.array([0.3, -0.7, 1.1]), np.array([1.0, -2.0, 0.5])
    results = []
    for m in (APIS["gradcli"], APIS["torch"]):
        x = m.tensor(x0, requires_grad=True)
        out = program(_functional_api(m), x, m.tensor(u0))
        out.backward()
        results.append((as_numpy(out), as_numpy(x.grad)))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _modes(m: Any) -> Any:
    from gradcli.engine import modes
    return torch if m is APIS["torch"] else modes


def _inference_flags(m: Any) -> list:
    M = _modes(m)
    x = m.tensor([1.0, 2.0])
    w = m.ones(2, requires_grad=True)
    with M.inference_mode():
        a = m.ones(2)
        b = a * 2 + w
        inside = [M.is_grad_enabled(), M.is_inference_mode_enabled(), x[0].is_inference(), x.detach().is_inference()]
        with M.inference_mode(False):
            c = w * 2
            inside += [M.is_grad_enabled(), c.requires_grad, c.is_inference()]
        a.add_(1)
    with M.no_grad():
        with M.inference_mode(False):
            inside.append(M.is_grad_enabled())
    (a + w).sum().backward()
    return inside + [a.is_inference(), b.is_inference(), b.requires_grad, a[0].is_inference(), a.t().is_inference(),
                     a.clone().is_inference(), (a * 2).is_inference(), as_numpy(a).tolist(), as_numpy(w.grad).tolist(),
                     M.is_grad_enabled(), M.is_inference_mode_enabled(), M.inference_mode(lambda v: v.exp())(w).is_inference()]


def test_same_inference_mode_flags() -> None:
    assert _inference_flags(APIS["gradcli"]) == _inference_flags(APIS["torch"])


def _inference_tensor(m: Any) -> Any:
    with _modes(m).inference_mode():
        return m.tensor([1.0, 2.0])


@pytest.mark.parametrize("fn", [
    P(lambda m: _inference_tensor(m) * m.ones(2, requires_grad=True), id="saved-for-backward"),
    P(lambda m: m.ones(2, requires_grad=True).exp() * _inference_tensor(m)[0], id="saved-view"),
    P(lambda m: _inference_tensor(m).add_(1), id="in-place"),
    P(lambda m: _inference_tensor(m)[1:].mul_(2), id="in-place-through-a-view"),
    P(lambda m: _inference_tensor(m).zero_(), id="zero_"),
    P(lambda m: _inference_tensor(m).requires_grad_(), id="requires-grad"),
])
def test_same_inference_tensor_errors(fn: Callable) -> None:
    want = str(_error(APIS["torch"], fn))
    got = _error(APIS["gradcli"], fn)
    assert isinstance(got, GradcliError) and got.message == want and got.hint


VIEW_WRITES = [
    P(lambda x, w: x[0].add_(1).mul_(w), id="select"),
    P(lambda x, w: x[1:].mul_(w), id="slice"),
    P(lambda x, w: x[:, 0].sub_(w), id="column"),
    P(lambda x, w: x.t().mul_(w), id="t"),
    P(lambda x, w: x.transpose(0, 1)[1].add_(w), id="transpose-row"),
    P(lambda x, w: x.view(6).mul_(w), id="view"),
    P(lambda x, w: x.reshape(3, 2)[0].mul_(w), id="reshape-row"),
    P(lambda x, w: x[0][1:].add_(w * w), id="view-of-view"),
    P(lambda x, w: x.unsqueeze(0).squeeze(0).flatten()[2:5].exp_(), id="chain-exp"),
    P(lambda x, w: x.narrow(1, 1, 2).copy_(w.expand(2, 2)), id="narrow-copy"),
    P(lambda x, w: x[1].clamp_(0.5, 4.0), id="clamp"),
    P(lambda x, w: x.permute(1, 0)[0].fill_(w), id="permute-fill"),
    P(lambda x, w: x.detach().mul_(w), id="detach"),
    P(lambda x, w: x[0].__setitem__(1, w * 3), id="setitem-of-view"),
    P(lambda x, w: x.data[0].mul_(3), id="view-of-data"),
    P(lambda x, w: (x.retain_grad(), x[1].mul_(w)), id="retain-grad"),
    P(lambda x, w: x.expand(1, 2, 3)[0, 1].mul_(w), id="expand-repeating-nothing"),
]


@pytest.mark.parametrize("write", VIEW_WRITES)
def test_in_place_through_a_view_updates_the_base_as_pytorch(write: Callable) -> None:
    x0 = np.arange(6.0).reshape(2, 3) - 2.5
    results = []
    for m in (APIS["gradcli"], APIS["torch"]):
        leaf, w = m.tensor(x0, requires_grad=True), m.tensor(1.5, requires_grad=True)
        x = leaf * 1
        write(x, w)
        (x * m.tensor(x0 + 4)).sum().backward()
        results.append([as_numpy(x), node_name(x), as_numpy(leaf.grad), as_numpy(w.grad),
                        as_numpy(x.grad if x.retains_grad else None)])
    got, want = results
    assert got[1] == want[1]
    for g, t in zip(got[:1] + got[2:], want[:1] + want[2:]):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [
    P(lambda m: m.zeros(3).expand(2, 3).add_(1), id="expand"),
    P(lambda m: m.zeros(3, requires_grad=True)[0].add_(1), id="view-of-leaf"),
    P(lambda m: (m.zeros(4, 2, requires_grad=True) * 1).unbind(0)[1].add_(1), id="unbind"),
    P(lambda m: (m.zeros(4, 2, requires_grad=True) * 1).split([1, 3])[1].mul_(2), id="split-with-sizes"),
    P(lambda m: (m.zeros(4, 2, requires_grad=True) * 1).chunk(2)[1].mul_(2), id="chunk"),
    P(lambda m: (lambda y: ((y * y).sum(), y[0].add_(1)))(m.ones(3, requires_grad=True) * 1)[0].backward(),
      id="version-through-a-view"),
    P(lambda m: (lambda e: (e[1:].add_(1), e.sum().backward()))(m.ones(3, requires_grad=True).exp()),
      id="saved-result-through-a-view"),
    P(lambda m: (lambda e: (e.detach()[0].add_(1), e.sum().backward()))(m.ones(3, requires_grad=True).exp()),
      id="through-a-view-of-detach"),
])
def test_same_view_update_errors(fn: Callable) -> None:
    want = str(_error(APIS["torch"], fn))
    got = _error(APIS["gradcli"], fn)
    assert isinstance(got, GradcliError) and want.startswith(got.message), f"\n torch: {want}\n gradcli: {got}"
