"""gradcli against PyTorch itself: the same programs, the same numbers, node names and error texts.

Skipped where torch is not installed (the normal suite). Run it with a torch environment:
`PYTHONPATH=. /work/torchvenv/bin/python -m pytest tests/test_torch_oracle.py`.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli  # noqa: E402  (after the skip, so the module needs no torch to be collected)
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
    """gradcli's public functions, looked up by torch's names."""

    def __getattr__(self, name: str) -> Any:
        return getattr(gradcli, name)


APIS = {"torch": TorchAPI(), "gradcli": GradcliAPI()}


def r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def pos(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape)


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
        names.append(type(fn).__name__ if hasattr(fn, "register_hook") else fn.name)
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
]

UNARY = [
    ("exp", lambda m, x: x.exp(), r), ("log", lambda m, x: x.log(), pos), ("log1p", lambda m, x: x.log1p(), pos),
    ("sqrt", lambda m, x: x.sqrt(), pos), ("abs", lambda m, x: x.abs(), r), ("sign", lambda m, x: x.sign(), r),
    ("sin", lambda m, x: x.sin(), r), ("cos", lambda m, x: x.cos(), r), ("tan", lambda m, x: x.tan(), r),
    ("tanh", lambda m, x: x.tanh(), r), ("sigmoid", lambda m, x: x.sigmoid(), r), ("relu", lambda m, x: x.relu(), r),
    ("softplus", lambda m, x: m.softplus(x), r), ("neg", lambda m, x: -x, r), ("square", lambda m, x: x ** 2, r),
    ("cube-root", lambda m, x: x ** (1 / 3), pos), ("exp-base", lambda m, x: 2.5 ** x, r),
    ("reciprocal", lambda m, x: 1 / x, pos), ("clamp", lambda m, x: x.clamp(-0.5, 0.5), r),
]
for _name, _fn, _gen in UNARY:
    PROGRAMS.append(P(_fn, [_gen(4, 3)], r(4, 3), id=f"unary-{_name}"))


@pytest.mark.parametrize("fn, arrays, gradient", PROGRAMS)
def test_same_values_gradients_and_node_names(fn: Callable, arrays: list, gradient: Any) -> None:
    want = run(APIS["torch"], fn, arrays, gradient)
    got = run(APIS["gradcli"], fn, arrays, gradient)
    np.testing.assert_allclose(got["out"], want["out"], rtol=1e-12, atol=1e-13)
    for g, w in zip(got["grads"], want["grads"]):
        assert (g is None) == (w is None)
        if w is not None:
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
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
def test_second_derivatives(fn: Callable, gen: Callable) -> None:
    x0 = gen(5)
    for got, want in zip(second_derivative(APIS["gradcli"], fn, x0), second_derivative(APIS["torch"], fn, x0)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


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
