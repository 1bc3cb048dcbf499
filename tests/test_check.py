"""`--check`: the seed programs pass, a wrong VJP is caught at the right element, kinks are
reported as undefined, large inputs are sampled, and the numeric witness agrees."""
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcli as g
from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.check import check_gradients


def run(out, leaves, gradient=None, **kw):
    """Run backward, then check what it added to each leaf's .grad."""
    before = {k: None if t.grad is None else t.grad._data.copy() for k, t in leaves.items()}
    out.backward(gradient)
    computed = {k: None if t.grad is None else t.grad._data - (0 if before[k] is None else before[k])
                for k, t in leaves.items()}
    return check_gradients(out, leaves, gradient, computed, **kw)


def seed000():
    x = g.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, z.mean()


def matrix(seed=3):
    r = np.random.default_rng(seed)
    x = g.tensor(r.standard_normal((10, 20)), requires_grad=True)
    y = g.tensor(r.standard_normal((10, 5)), requires_grad=True)
    w = g.tensor(r.standard_normal((20, 5)), requires_grad=True)
    return {"x": x, "y": y, "w": w}, g.mean(y - g.matmul(x, w))


def test_seed000_passes_and_writes_the_tutorials_formula():
    x, out = seed000()
    report = run(out, {"x": x})
    assert report.status == "pass"
    c = report.inputs["x"]
    assert (c.status, c.checked, c.total, c.max_abs_err) == ("pass", 4, 4, 0.0)
    assert c.derivative == "∂out/∂x[i,j] = 3*(x[i,j] + 2)/2 = 4.5"


def test_seed000_exact_mode_gives_the_exact_value():
    x, out = seed000()
    report = run(out, {"x": x}, exact=True)
    assert report.status == "pass"
    assert report.inputs["x"].derivative.endswith("= 9/2")


def test_seed002_scalar():
    x = g.tensor([2.0], requires_grad=True)
    out = (x + 2) ** 2 + 3
    report = run(out, {"x": x})
    assert report.status == "pass"
    assert report.inputs["x"].derivative in ("∂out/∂x[0] = 2*x[0] + 4 = 8", "∂out/∂x[0] = 2*(x[0] + 2) = 8")


def test_seed_matrix_example_passes():
    """How fast: tests/bench/bench_check.py."""
    leaves, out = matrix()
    out.backward()
    computed = {k: t.grad._data for k, t in leaves.items()}
    report = check_gradients(out, leaves, None, computed)
    assert report.status == "pass"
    assert {k: (c.checked, c.total) for k, c in report.inputs.items()} == {"x": (200, 200), "y": (50, 50),
                                                                            "w": (100, 100)}
    assert report.inputs["y"].derivative == "∂out/∂y[i,j] = 1/50 = 0.02"
    assert report.inputs["x"].derivative.startswith(
        "∂out/∂x[i,j] = -(w[j,0] + w[j,1] + w[j,2] + w[j,3] + w[j,4])/50")


def test_while_loop_with_a_gradient_vector():
    x = g.tensor([0.5, -1.2, 0.3], requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    report = run(y, {"x": x}, g.tensor([0.1, 1.0, 0.0001]), of="y")
    assert report.status == "pass"
    assert report.of == "(v·y)"
    assert report.inputs["x"].derivative == "∂(v·y)/∂x[0] = 512/5 = 102.4"


def test_broadcast_and_an_unnamed_leaf():
    w = g.tensor([0.3, 0.7], requires_grad=True)
    x = g.tensor([1.0], requires_grad=True)
    b = g.tensor([0.5], requires_grad=True)
    out = w * x + b
    report = run(out, {"w": w, "x": x}, g.tensor([1.0, 1.0]))
    assert report.status == "pass"
    assert set(report.inputs) == {"w", "x"}
    assert report.inputs["x"].derivative == "∂Σout/∂x[0] = w[0] + w[1] = 1"


def test_softmax_cross_entropy():
    r = np.random.default_rng(1)
    x = g.tensor(r.standard_normal((4, 3)), requires_grad=True)
    w = g.tensor(r.standard_normal((3, 5)), requires_grad=True)
    t = g.eye(5)[:4]
    out = -(g.log(g.softmax(x @ w, dim=1)) * t).sum(dim=1).mean()
    report = run(out, {"x": x, "w": w}, mode="all")
    assert report.status == "pass"
    assert all(c.numeric is not None and c.numeric.status == "pass" for c in report.inputs.values())
    assert all(len(c.derivative) <= 200 for c in report.inputs.values())


def test_many_ops_in_one_program():
    r = np.random.default_rng(5)
    x = g.tensor(r.uniform(0.5, 1.5, (3, 4)), requires_grad=True)
    w = g.tensor(r.standard_normal((4, 2)), requires_grad=True)
    h = (x @ w).tanh().sigmoid() + g.log_softmax(x, dim=1)[:, :2]
    h = g.cat([h, x.sqrt()[:, 1:3] * x.std(dim=1, keepdim=True)], dim=1)
    h = g.stack([h, h.exp().log1p()], dim=0).permute(1, 0, 2).reshape(3, -1)
    out = (g.maximum(h, h * 0.5).clamp(-2, 2).prod(dim=1) + x.norm(dim=1) + x.var(dim=0).sum() + h.max()).sum()
    report = run(out, {"x": x, "w": w}, mode="all")
    assert report.status == "pass", report.to_json()


def test_a_wrong_vjp_is_caught_at_the_right_element(patched):
    def off_at_1_0(ns, gr, o, a, b):
        bump = np.zeros(np.shape(gr))
        bump[1, 0] = 1.0
        return gr * b + bump
    patched(O.MUL, (off_at_1_0, O.MUL.vjps[1]))
    x = g.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = g.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    report = run((x * w).sum(), {"x": x, "w": w})
    assert report.status == "fail"
    assert report.inputs["w"].status == "pass"
    c = report.inputs["x"]
    assert c.status == "fail" and (c.worst.label, c.worst.index) == ("x[1,0]", (1, 0))
    assert (c.worst.expected, c.worst.got) == (2.0, 3.0)
    assert report.to_json()["inputs"]["x"]["status"] == "fail"


def test_a_wrong_tanh_vjp_fails_both_witnesses(patched):
    patched(O.TANH, (lambda ns, gr, o, x: gr * (1.0 - o),))
    x = g.tensor([0.3, -0.8, 1.1], requires_grad=True)
    report = run(x.tanh().sum(), {"x": x}, mode="all")
    c = report.inputs["x"]
    assert report.status == "fail" and c.numeric.status == "fail"
    assert c.derivative == "∂out/∂x[i] = 1 - tanh(x[i])**2  (0.359201 at x[2])"
    assert (c.worst.label, round(c.worst.expected, 6), round(c.worst.got, 6)) == ("x[1]", 0.559055, 1.664037)


def test_check_before_and_after_backward_agree():
    leaves, out = matrix(seed=4)
    twin, out2 = matrix(seed=4)
    out2.backward()
    computed = {k: t.grad._data for k, t in twin.items()}
    before = check_gradients(out, leaves, None, computed)
    out.backward()
    assert out.grad_fn.inputs[0].inputs[1].name == "MmBackward0"
    assert out.grad_fn.inputs[0].inputs[1].saved is None
    after = check_gradients(out, leaves, None, computed)
    assert before.status == after.status == "pass"
    assert before.to_json() == after.to_json()


@pytest.mark.parametrize("build, node", [
    (lambda x: x.relu().sum(), "ReluBackward0"),
    (lambda x: x.abs().sum(), "AbsBackward0"),
    (lambda x: x.sqrt().sum(), "SqrtBackward0"),
    (lambda x: x.clamp(min=0.0).sum(), "ClampBackward1"),
    (lambda x: (x.sign() * 2).sum(), "SignBackward0"),
])
def test_kinks_are_undefined_not_failures(build, node):
    x = g.tensor([0.0, 4.0], requires_grad=True)
    for mode in ("symbolic", "numeric"):
        x.grad = None
        report = run(build(x), {"x": x}, mode=mode)
        c = report.inputs["x"]
        assert report.status == "pass" and c.status == "undefined", (mode, c)
        assert [e.label for e in c.undefined] == ["x[0]"]
        assert c.undefined[0].reason.startswith(f"{node} is at a kink"), c.undefined[0].reason


def test_max_ties_are_undefined():
    x = g.tensor([1.0, 3.0, 3.0], requires_grad=True)
    report = run(x.max(), {"x": x}, mode="all")
    c = report.inputs["x"]
    assert c.status == "undefined" and report.status == "pass"
    assert [e.label for e in c.undefined] == ["x[1]", "x[2]"]
    assert "ties share" in c.undefined[0].reason


def test_a_kink_off_the_output_path_is_not_reported():
    x = g.tensor([0.0, 2.0], requires_grad=True)
    report = run(x.relu()[1] * 3, {"x": x}, mode="all")
    assert report.inputs["x"].status == "pass"


def test_large_inputs_are_sampled():
    x = g.tensor(np.linspace(-1.0, 1.0, 20_000), requires_grad=True)
    report = run((x * x * 3 + x.sin()).sum(), {"x": x})
    c = report.inputs["x"]
    assert report.status == "pass" and (c.checked, c.total) == (64, 20_000)
    assert c.coverage == "checked 64 of 20,000 elements + 1 direction through all"
    assert c.through.status == "pass" and c.through.method == "directional"
    assert report.witness == "symbolic + numeric: 64 of 20,000 elements + 1 direction through all"
    assert c.derivative.startswith("∂out/∂x[i] = 6*x[i] + cos(x[i])")


def test_numeric_mode_alone():
    leaves, out = matrix()
    report = run(out, leaves, mode="numeric")
    assert report.status == "pass" and report.mode == "numeric"
    # the default atol is relative to each gradient's size (at most 1e-5): see test_check_scale.py
    assert all(c.method == "numeric" and c.rtol == 1e-3 and 0 < c.atol <= 1e-5 for c in report.inputs.values())


def test_float32_tolerances():
    x = g.tensor([0.1, 0.2, 0.3], requires_grad=True, dtype="float32")
    report = run((x.exp() * 3).sum(), {"x": x})
    c = report.inputs["x"]
    assert report.status == "pass" and (c.rtol, c.atol) == (1e-4, 1e-5)
    assert run((x.exp() * 3).sum(), {"x": x}, rtol=1e-15, atol=0.0).status == "fail"


def test_deep_chains_fall_back_to_finite_differences():
    x = g.tensor([0.5, 0.2], requires_grad=True)
    y = x
    for _ in range(2000):
        y = y.tanh()
    report = run(y.sum(), {"x": x})
    c = report.inputs["x"]
    assert report.status == "pass" and c.method == "numeric"
    assert "finite differences" in c.note


def test_progress_reaches_the_total():
    seen = []
    leaves, out = matrix()
    run(out, leaves, mode="all", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (700, 700)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(seen))


def test_json_is_plain():
    x = g.tensor([0.0, 4.0], requires_grad=True)
    data = run(x.sqrt().sum(), {"x": x}).to_json()
    text = json.dumps(data, allow_nan=False)
    entry = json.loads(text)["inputs"]["x"]
    assert {"status", "max_abs_err", "max_rel_err", "checked", "total", "derivative"} <= set(entry)
    assert entry["undefined"][0] == {"element": "x[0]", "index": [0], "expected": "inf", "got": "inf",
                                     "reason": "SqrtBackward0 is at a kink: ∂√x/∂x = 1/(2√x)"}


def test_bad_arguments():
    x, out = seed000()
    with pytest.raises(ValueError, match="mode"):
        check_gradients(out, {"x": x}, mode="sometimes")
    with pytest.raises(ValueError, match="identifier"):
        check_gradients(out, {"x y": x})


def test_sympy_is_not_imported_by_gradcli_or_the_numeric_check():
    code = ("import sys, gradcli as g\nfrom gradcli.check import check_gradients\n"
            "x = g.ones(3, requires_grad=True); out = (x * x).sum(); out.backward()\n"
            "r = check_gradients(out, {'x': x}, None, {'x': x.grad._data}, mode='numeric')\n"
            "assert r.status == 'pass'\nassert 'sympy' not in sys.modules, 'sympy imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_past_the_time_limit_finite_differences_take_over():
    x, out = seed000()
    report = run(out, {"x": x}, seconds=0.0)
    c = report.inputs["x"]
    assert report.status == "pass" and c.method == "numeric"
    assert c.note == "too slow for SymPy (over 0 s of CPU time): checked by finite differences instead"


UNARY = ["exp", "tanh", "sin", "sigmoid", "abs", "relu", "softplus", "neg", "cos"]
BINARY = ["add", "sub", "mul", "maximum"]


@given(st.lists(st.tuples(st.sampled_from(UNARY + BINARY), st.integers(0, 3)), min_size=1, max_size=6),
       st.lists(st.floats(-2, 2, allow_nan=False), min_size=4, max_size=4))
@settings(max_examples=40, deadline=None)
def test_random_programs_pass(steps, values):
    """Chains of ops on a 2x2 input and its transpose: autograd and SymPy agree (or the point is a kink)."""
    x = g.tensor(np.reshape(values, (2, 2)), requires_grad=True)
    y = x
    for name, k in steps:
        other = [x, x.t(), y * 0.5, 1.5][k]
        y = getattr(g, name)(y, other) if name in BINARY else getattr(g, name)(y)
    report = run((y * g.tensor([[1.0, -2.0], [0.5, 3.0]])).sum(), {"x": x}, mode="all")
    assert report.status in ("pass", "undefined"), report.to_json()
    assert (report.status == "undefined") == (report.inputs["x"].verified == 0)


def test_a_kink_smoothed_over_by_the_program_is_undefined_not_failed():
    """max(-|x|, x) is just x, but autograd's convention at |0| and the tie gives 1/2, as PyTorch does."""
    x = g.tensor(np.zeros((2, 2)), requires_grad=True)
    out = (g.maximum(-(x.abs()), x) * g.tensor([[1.0, -2.0], [0.5, 3.0]])).sum()
    report = run(out, {"x": x}, mode="all")
    assert report.status == "undefined"  # every element sits on the kink: nothing is verified
    assert report.inputs["x"].numeric.status == "undefined"
    assert "PyTorch's convention" in report.inputs["x"].numeric.undefined[0].reason


def test_finite_differences_say_when_rounding_of_a_huge_output_hides_an_element():
    x = g.tensor(np.array([[0.0, 0.0], [0.0, 2.0]]), requires_grad=True)
    out = (g.exp(g.exp(x + x)) * g.tensor([[1.0, -2.0], [0.5, 3.0]])).sum()
    report = run(out, {"x": x}, mode="all")
    numeric = report.inputs["x"].numeric
    assert report.status == "pass" and numeric.status == "undefined"
    assert all("cannot resolve" in e.reason for e in numeric.undefined)
    assert report.inputs["x"].max_rel_err < 1e-12


def test_a_nan_born_in_the_forward_pass_is_undefined_not_failed():
    """SymPy simplifies x/x to 1, so it expects 0 where autograd (like PyTorch) gives nan at x = 0."""
    x = g.tensor([0.0, 2.0], requires_grad=True)
    report = run((x / x).sum(), {"x": x}, mode="all")
    entry = report.inputs["x"]
    assert report.status == "pass" and entry.status == "undefined" and entry.undefined_count == 1
    assert "not finite at DivBackward0" in entry.undefined[0].reason


@pytest.mark.parametrize("build, values", [
    (lambda x: g.maximum(x.abs() - x, x.t()), [0.0, 1.0, 2.1e-39, 0.0]),
    (lambda x: g.maximum(g.tanh(x), x), [0.0, 0.0, 0.0, 1.3085755495757325e-73]),
])
def test_comparisons_that_round_to_a_tie_in_floats_are_decided_exactly(build, values):
    """Found by hypothesis: SymPy's form of a comparison can cancel to 0.0 where the program's did not."""
    x = g.tensor(np.reshape(values, (2, 2)), requires_grad=True)
    report = run((build(x) * g.tensor([[1.0, -2.0], [0.5, 3.0]])).sum(), {"x": x}, mode="all")
    assert report.status != "fail", report.to_json()


def _u(*shape, lo=-0.9, hi=0.9):
    return np.random.default_rng(sum(shape) + 11).uniform(lo, hi, shape)


# op name -> (program, inputs): each of these ops is on the program's output path, away from kinks.
OP_PROGRAMS = {
    "asin": (lambda x: x.asin(), [_u(2, 3)]), "acos": (lambda x: x.acos(), [_u(2, 3)]),
    "atan": (lambda x: x.atan(), [_u(2, 3)]), "sinh": (lambda x: x.sinh(), [_u(2, 3)]),
    "cosh": (lambda x: x.cosh(), [_u(2, 3)]), "asinh": (lambda x: x.asinh(), [_u(2, 3)]),
    "acosh": (lambda x: x.acosh(), [_u(2, 3, lo=1.2, hi=3)]), "atanh": (lambda x: x.atanh(), [_u(2, 3)]),
    "log2": (lambda x: x.log2(), [_u(2, 3, lo=0.2, hi=3)]), "log10": (lambda x: x.log10(), [_u(2, 3, lo=0.2, hi=3)]),
    "exp2": (lambda x: x.exp2(), [_u(2, 3)]), "expm1": (lambda x: x.expm1(), [_u(2, 3)]),
    "erf": (lambda x: x.erf(), [_u(2, 3)]), "erfc": (lambda x: x.erfc(), [_u(2, 3)]),
    "erfinv": (lambda x: x.erfinv(), [_u(2, 3)]), "rsqrt": (lambda x: x.rsqrt(), [_u(2, 3, lo=0.2, hi=3)]),
    "reciprocal": (lambda x: x.reciprocal(), [_u(2, 3, lo=0.2, hi=3)]),
    "lgamma": (lambda x: x.lgamma(), [_u(2, 3, lo=0.2, hi=3)]),
    "digamma": (lambda x: x.digamma(), [_u(2, 3, lo=0.2, hi=3)]),
    "polygamma": (lambda x: x.polygamma(1), [_u(2, 3, lo=0.2, hi=3)]),
    "logit": (lambda x: x.logit(), [_u(2, 3, lo=0.1, hi=0.9)]),
    "floor": (lambda x: x.floor() * x, [_u(2, 3, lo=-2.9, hi=2.9)]),
    "ceil": (lambda x: x.ceil() * x, [_u(2, 3, lo=-2.9, hi=2.9)]),
    "trunc": (lambda x: x.trunc() * x, [_u(2, 3, lo=-2.9, hi=2.9)]),
    "round": (lambda x: x.round() * x, [_u(2, 3, lo=-2.9, hi=2.9)]),
    "frac": (lambda x: x.frac() * x, [_u(2, 3, lo=-2.9, hi=2.9)]),
    "atan2": (lambda a, b: F.atan2(a, b), [_u(2, 3), _u(3, lo=0.2, hi=2)]),
    "hypot": (lambda a, b: F.hypot(a, b), [_u(2, 3), _u(3, lo=0.2, hi=2)]),
    "fmod": (lambda a, b: F.fmod(a, b), [_u(2, 3, lo=-3, hi=3), _u(3, lo=0.4, hi=2)]),
    "remainder": (lambda a, b: a % b, [_u(2, 3, lo=-3, hi=3), _u(3, lo=0.4, hi=2)]),
    "xlogy": (lambda a, b: F.xlogy(a, b), [_u(2, 3), _u(3, lo=0.2, hi=2)]),
    "fmax": (lambda a, b: F.fmax(a, b), [_u(2, 3), _u(3) + 0.01]),
    "fmin": (lambda a, b: F.fmin(a, b), [_u(2, 3), _u(3) + 0.01]),
    "lerp": (lambda a, b, w: F.lerp(a, b, w), [_u(2, 3), _u(3), _u(2, 3, lo=0, hi=1)]),
    "addcmul": (lambda x, a, b: F.addcmul(x, a, b, value=0.5), [_u(2, 3), _u(3), _u(2, 1)]),
    "addcdiv": (lambda x, a, b: F.addcdiv(x, a, b, value=2), [_u(2, 3), _u(3), _u(2, 1, lo=0.3, hi=2)]),
    "logsumexp": (lambda x: x.logsumexp(1), [_u(2, 3)]), "amax": (lambda x: x.amax(0), [_u(2, 3)]),
    "amin": (lambda x: x.amin(), [_u(2, 3)]), "median": (lambda x: x.median(), [_u(2, 3)]),
    "cumsum": (lambda x: x.cumsum(1), [_u(2, 3)]), "cumprod": (lambda x: x.cumprod(1), [_u(2, 3)]),
    "flip": (lambda x: x.flip(1), [_u(2, 3)]), "roll": (lambda x: x.roll(1, 1), [_u(2, 3)]),
    "repeat": (lambda x: x.repeat(2, 1), [_u(2, 3)]), "tril": (lambda x: x.tril(), [_u(3, 3)]),
    "triu": (lambda x: x.triu(), [_u(3, 3)]), "diag_embed": (lambda x: F.diag_embed(x), [_u(2, 3)]),
    "scatter": (lambda x, s: x.scatter(0, F.as_tensor([[1, 0, 1]]), s), [_u(2, 3), _u(1, 3)]),
    "scatter_add": (lambda x, s: x.scatter_add(0, F.as_tensor([[1, 1, 0]]), s), [_u(2, 3), _u(1, 3)]),
    "cross": (lambda a, b: F.cross(a, b), [_u(2, 3), _u(2, 3)]),
    "einsum": (lambda a, b: F.einsum("ij,kj->ik", a, b), [_u(2, 3), _u(4, 3)]),
    "det": (lambda a: F.det(a), [_u(3, 3)]),
    "logabsdet": (lambda a: F.slogdet(a).logabsdet, [_u(3, 3)]),
    "inverse": (lambda a: F.inverse(a), [_u(2, 2) + 2 * np.eye(2)]),
    "solve": (lambda a, b: F.solve(a, b), [_u(2, 2) + 2 * np.eye(2), _u(2)]),
    "cholesky": (lambda a: F.cholesky(a), [_u(3, 3) @ _u(3, 3).T + np.eye(3)]),
}


def _op_program(name):
    fn, arrays = OP_PROGRAMS[name]
    xs = {f"x{i}": g.tensor(a, requires_grad=True) for i, a in enumerate(arrays)}
    out = fn(*xs.values())
    weights = np.random.default_rng(3).uniform(0.5, 1.5, out.shape)
    return xs, (out * g.tensor(weights)).sum()


@pytest.mark.parametrize("name", OP_PROGRAMS)
def test_each_new_op_passes_and_a_wrong_vjp_of_it_is_caught(name, patched, monkeypatch):
    leaves, out = _op_program(name)
    report = run(out, leaves)
    assert report.status == "pass", report.to_json()
    assert all(c.status == "pass" for c in report.inputs.values())
    if name == "einsum":  # its VJPs are made per call, one per operand
        from gradcli.engine.ops import linalg
        right = linalg._einsum_vjp
        monkeypatch.setattr(linalg, "_einsum_vjp", lambda *a: right(*a) * 2 + 0.5)
    op = getattr(O, name.upper())
    patched(op, tuple(None if v is None else (lambda *a, _v=v, **k: _v(*a, **k) * 2 + 0.5) for v in op.vjps))
    leaves, out = _op_program(name)
    report = run(out, leaves)
    assert report.status == "fail"
    assert all(c.status == "fail" for c in report.inputs.values())


@pytest.mark.parametrize("terminal, shown", [(False, False), (True, True)])
def test_the_progress_bar_shows_on_a_terminal_only(terminal, shown):
    """In a pipe a bar would leave an empty line before the check's report (seen in the docs test)."""
    import io

    from rich.console import Console

    from gradcli.views.progress import progress_reporter
    out = io.StringIO()
    with progress_reporter(Console(file=out, force_terminal=terminal, width=60), after=0.0) as progress:
        progress(1, 2)
    assert bool(out.getvalue()) is shown
