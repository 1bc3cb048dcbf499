"""The tolerance model: a correct float32 gradient never fails for its rounding, a wrong VJP of any op fails
in float32 as in float64."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from test_ops_fd import CASES, _ops_reached, distinct

import gradcli as g
from gradcli.check import check_gradients
from gradcli.check.graph import trace
from gradcli.check.rounding import growth
from gradcli.engine import ops as O


def cancelling_sum(w0: float = 3.0001):
    """A float32 loss whose gradient is a small difference of large terms, as a fit near its optimum has."""
    x = g.linspace(10, 20, 32, dtype="float32")
    w = g.tensor(w0, dtype="float32", requires_grad=True)
    loss = ((w * x - x * 3) ** 2).sum()
    loss.backward()
    return loss, w


def test_a_correct_float32_gradient_of_a_long_sum_passes():
    loss, w = cancelling_sum()
    report = check_gradients(loss, {"w": w}, None, {"w": w.grad._data})
    c = report.inputs["w"]
    assert report.status == "pass" and c.method == "symbolic" and c.margin < 0.1
    assert c.max_rel_err > 1e-4  # the rounding is real: the old flat rtol of 1e-4 called it a failure
    assert check_gradients(loss, {"w": w}, None, {"w": w.grad._data}, rtol=1e-4, atol=1e-5).status == "fail"


def test_the_allowance_grows_with_the_graph_and_the_dtype():
    loss, w = cancelling_sum()
    tr = trace(loss, {"w": w})
    u = np.finfo(np.float32).eps / 2
    assert len(tr.nodes) == 4 and growth(tr) == (2 * 4 + 6) * u  # the largest array has 32 elements
    x = g.linspace(10, 20, 32, dtype="float64")
    w64 = g.tensor(3.0, dtype="float64", requires_grad=True)
    assert growth(trace(((w64 * x - x * 3) ** 2).sum(), {"w": w64})) == growth(tr) * 2.0 ** -29


def test_the_same_wrong_vjp_fails_the_float32_sum(patched_vjps):
    patched_vjps(O.MUL, lambda right: lambda *a, **k: 2 * right(*a, **k))
    loss, w = cancelling_sum()
    report = check_gradients(loss, {"w": w}, None, {"w": w.grad._data})
    assert report.status == "fail"


@pytest.fixture
def patched_vjps():
    """Replace every VJP of an op with `wrong(right)` for the length of a test (Op is frozen)."""
    saved = []

    def patch(op, wrong):
        saved.append((op, op.vjps))
        object.__setattr__(op, "vjps", tuple(None if v is None else wrong(v) for v in op.vjps))
    yield patch
    for op, vjps in reversed(saved):
        object.__setattr__(op, "vjps", vjps)


# A Max over 12 elements costs SymPy seconds: these ops are planted in smaller programs.
SMALLER = [(lambda a: a.max(), [distinct(4)]), (lambda a: a.min(), [distinct(4)])]


@functools.lru_cache(maxsize=None)
def _first_cases(dtype: str) -> dict[str, tuple]:
    """Each op's first (smallest-listed) program that reaches it in `dtype`, found in one pass."""
    found: dict[str, tuple] = {}
    for fn, arrays in SMALLER + [case.values for case in CASES]:
        xs = [g.tensor(np.asarray(a, dtype=dtype), requires_grad=True) for a in arrays]
        for name in _ops_reached(fn(*xs)):
            found.setdefault(name, (fn, arrays))
    return found


def _first_case(op: O.Op, dtype: str):
    return _first_cases(dtype).get(op.name)


def _off(right):
    """A VJP that is wrong everywhere: twice the right gradient, plus a half."""
    return lambda *a, **k: 2 * right(*a, **k) + 0.5


@pytest.mark.parametrize("dtype, mode", [("float32", "symbolic"), ("float32", "numeric"), ("float64", "numeric")])
@pytest.mark.parametrize("op", [op for op in O.TABLE if any(v is not None for v in op.vjps) and not op.approximate],
                         ids=lambda op: op.name)
def test_a_wrong_vjp_of_every_op_is_caught(op, dtype, mode, patched_vjps):
    """float32 has the looser tolerances, so what SymPy catches there it catches in float64 (test_check.py)."""
    case = _first_case(op, dtype)
    if case is None:
        assert (op.name, dtype) == ("cast", "float32"), "every op is reached in both dtypes except a no-op cast"
        return
    fn, arrays = case
    xs = {f"x{k}": g.tensor(np.asarray(a, dtype=dtype), requires_grad=True) for k, a in enumerate(arrays)}
    out = fn(*xs.values())
    weights = g.tensor(np.random.default_rng(out.numel()).standard_normal(out.shape), dtype=dtype)
    patched_vjps(op, _off)
    out.backward(weights)
    computed = {k: None if x.grad is None else x.grad._data for k, x in xs.items()}
    report = check_gradients(out, xs, weights, computed, mode)
    assert report.status == "fail", (op.name, dtype, mode, report.to_json())


def test_the_polynomial_fit_in_float32_passes_where_a_flat_rtol_failed():
    """PyTorch's polynomial example, scaled down to 500 points: at step 8, ∂loss/∂b is a small sum of large terms."""
    r = np.random.default_rng(1)
    x = g.linspace(-np.pi, np.pi, 500, dtype="float32")
    y = g.sin(x)
    params = {k: g.tensor(v, dtype="float32", requires_grad=True) for k, v in zip("abcd", r.standard_normal(4))}
    for step in range(8):
        for p in params.values():
            p.grad = None
        a, b, c, d = params.values()
        loss = (a + b * x + c * x ** 2 + d * x ** 3 - y).pow(2).sum()
        loss.backward()
        if step < 7:
            for p in params.values():
                p.data = p.data - 4e-6 * p.grad
    computed = {k: p.grad._data for k, p in params.items()}
    report = check_gradients(loss, params, None, computed)
    assert report.status == "pass" and {c.method for c in report.inputs.values()} == {"symbolic"}
    assert report.inputs["b"].max_rel_err > 1e-4
    assert check_gradients(loss, params, None, computed, rtol=1e-4, atol=1e-5).status == "fail"


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
def test_a_float32_sum_that_sympy_collects_is_judged_by_its_terms(mode):
    """Σ xᵢ·w is (Σ xᵢ)·w to SymPy, but float32 rounds each of the 500 products of ±1000: the allowance sees them.

    The gradient (-0.01) is far below what float32 can resolve here (about 0.3); an error past that still fails."""
    values = np.tile(np.array([1000.1, -1000.0], dtype=np.float32), 250) * np.float32(1.0001) ** np.arange(500.0)
    w = g.tensor(0.7, dtype="float32", requires_grad=True)
    loss = (g.tensor(values, dtype="float32") * w).sum()
    loss.backward()
    report = check_gradients(loss, {"w": w}, None, {"w": w.grad._data}, mode)
    assert report.status == "pass" and report.inputs["w"].max_rel_err > 0.1
    assert check_gradients(loss, {"w": w}, None, {"w": w.grad._data + 1.0}, mode).status == "fail"


def _matmul_near_fit(off: float = 0.0):
    """A float32 least-squares loss near its fit, checked by finite differences alone: its gradient xᵀ·2(xw - y)
    cancels inside the matrix product, below the top sum whose terms the allowance otherwise sees."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((16, 200)).astype(np.float32)
    ws = rng.standard_normal((200, 3)).astype(np.float32)
    ys = (xs.astype(np.float64) @ ws + 1e-4 * rng.standard_normal((16, 3))).astype(np.float32)
    w = g.tensor(ws, requires_grad=True)
    out = ((g.tensor(xs).matmul(w) - g.tensor(ys)) ** 2).sum()
    out.backward()
    return check_gradients(out, {"w": w}, None, {"w": w.grad._data + off}, mode="numeric")


def test_a_float32_fit_near_its_optimum_passes_by_finite_differences():
    report = _matmul_near_fit()
    assert report.status == "pass" and report.headline == "all gradients agree", report.to_json()


@pytest.mark.parametrize("factor", [1.1, -1.0])
def test_a_wrong_matmul_vjp_still_fails_near_the_fit(patched_vjps, factor):
    patched_vjps(O.MATMUL, lambda right: lambda *a, **k: factor * right(*a, **k))
    assert _matmul_near_fit().status == "fail"


def test_an_error_outside_the_vjps_is_not_taken_for_float32_rounding_near_the_fit():
    """float32's rounding is measured by two replays of the VJPs, never from the gradient under test."""
    assert _matmul_near_fit(off=1e-3).status == "fail"
