"""`run --check` at the scale of scripts: one SymPy proof per graph structure, a witness for every call,
a summary per site, and every gradient a script computes (backward, autograd.grad, jacobian, hessian) checked."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gradcli as g
from gradcli.check import checker
from gradcli.check.graph import trace
from gradcli.check.policy import POLICY, LoopPolicy, structure
from gradcli.engine import ops as O
from gradcli.program.scripts import BackwardCheck, run_file

pytest_plugins = ["pytester"]

FIT = """\
import torch
x = torch.linspace(-3, 3, 40)
y = torch.sin(x)
a = torch.tensor(0.1, requires_grad=True)
b = torch.tensor(0.8, requires_grad=True)
c = torch.tensor(-0.05, requires_grad=True)
for t in range({steps}):
    y_pred = a + b * x + c * x ** 2
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
    a.data = a.data - 1e-3 * a.grad
    b.data = b.data - 1e-3 * b.grad
    c.data = c.data - 1e-3 * c.grad
    a.grad = None
    b.grad = None
    c.grad = None
"""


def script(tmp_path: Path, text: str, name: str = "script.grad") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_training_loop_is_one_proof_and_a_witness_per_call(tmp_path):
    result = run_file(script(tmp_path, FIT.format(steps=25)), checker("symbolic"))
    assert result.status == "ok" and result.backward_calls == 25
    (site,) = result.sites
    assert (site.line, site.what, site.calls, site.failed, site.structures) == (10, "loss.backward()", 25, 0, 1)
    assert site.witnesses == {"symbolic": 1, "numeric": 24}
    assert [e.call for e in result.events if isinstance(e, BackwardCheck)] == [1]
    assert (result.checks_passed, result.checks_failed) == (25, 0)
    data = result.to_json()
    assert data["policy"] == POLICY and data["warnings"] == [] and data["sites"][0]["site"] == "loss.backward()"
    assert data["sites"][0]["witnesses"] == {"symbolic": 1, "numeric": 24} and 0 <= data["sites"][0]["worst"][
        "margin"] < 1


def test_the_same_structure_with_new_data_is_not_proved_again():
    def loss(values, w):
        x = g.tensor(values)
        return ((w * x - 1.0) ** 2).sum()
    w = g.tensor(0.5, requires_grad=True)
    first, second = loss([1.0, 2.0], w), loss([3.0, -1.0], w)
    assert structure(trace(first, {"w": w})) == structure(trace(second, {"w": w}))
    assert structure(trace(first, {"w": w})) != structure(trace(((w * g.tensor([1.0, 2.0])) ** 3).sum(), {"w": w}))
    policy = LoopPolicy()
    for out in (first, second):
        out.backward()
        verdict = policy.gradients(out, {"w": w}, None, {"w": w.grad._data}, line=1, what="out.backward()", of="out")
        w.grad = None
        assert verdict.report.status == "pass"
    assert [verdict.proof, dict(policy.sites[(1, "out.backward()")].witnesses)] == [False,
                                                                                    {"symbolic": 1, "numeric": 1}]


def test_a_vjp_wrong_only_at_later_values_is_caught_at_its_call(tmp_path, patched, cli, monkeypatch):
    """tanh's VJP goes wrong once tanh(w) passes 0.83: the first call's proof passes, call 4's witness fails."""
    right = O.TANH.vjps[0]
    patched(O.TANH, (lambda ns, gr, o, x: right(ns, gr, o, x) + ns.where(o > 0.83, 0.5, 0.0),))
    text = ("w = torch.tensor([0.5, -0.25], requires_grad=True)\nfor step in range(8):\n"
            "    loss = (w * 1.0).tanh().sum()\n    loss.backward()\n    w.data = w.data + 0.3\n    w.grad = None\n")
    result = run_file(script(tmp_path, text, "late.grad"), checker("symbolic"))
    (site,) = result.sites
    assert result.status == "failed" and (site.calls, site.failed) == (8, 5)
    assert (site.first_failure, site.worst.call, site.worst.input, site.worst.element.label) == (4, 8, "w", "w[0]")
    assert [(e.call, e.passed) for e in result.checks] == [(1, True), (4, False)]
    monkeypatch.chdir(tmp_path)
    out = cli("run", "--check", "late.grad")
    assert out.exit_code == 1 and "check failed: loss.backward() at late.grad:4 (call 4)" in out.stderr
    assert "5 of 8 calls of loss.backward() at line 4 failed" in out.stderr
    row = [line for line in out.stdout.splitlines() if line.startswith("│    4 │")][0]
    assert [c.strip() for c in row.strip("│").split("│")][:4] == ["4", "loss.backward()", "8", "5 (first: call 4)"]


ONLY_GRAD = """\
import torch
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor(1.5, requires_grad=True)
y = (x ** 3 * w).sum()
(gx,) = torch.autograd.grad(y, x, create_graph=True)
(hx,) = torch.autograd.grad(gx.sum(), x)
assert allclose(hx, 6 * x * w)
J = torch.autograd.functional.jacobian(torch.sin, x)
H = torch.autograd.functional.hessian(torch.norm, x)
"""


def test_a_script_with_only_autograd_grad_reports_its_checks(tmp_path):
    result = run_file(script(tmp_path, ONLY_GRAD), checker("symbolic"))
    assert result.status == "ok" and result.backward_calls == 0
    assert [(s.line, s.what, s.calls, s.witnesses) for s in result.sites] == [
        (5, "grad(y, …)", 1, {"symbolic": 1}), (6, "grad(gx.sum(), …)", 1, {"symbolic": 1}),
        (8, "jacobian(torch.sin, …)", 1, {"symbolic": 1}), (9, "hessian(torch.norm, …)", 1, {"symbolic": 1})]
    assert (result.checks_passed, result.checks_failed, result.warnings) == (4, 0, [])
    second = result.checks[1].report.inputs["x"]
    assert second.checked == 3 and second.derivative.startswith("∂gx.sum()/∂x[")
    assert result.checks[3].report.mode == "hessian" and result.checks[3].report.inputs["x"].checked == 9


def test_a_wrong_vjp_inside_autograd_grad_is_caught(tmp_path, patched):
    patched(O.MUL, (lambda ns, gr, o, a, b: 2 * gr * b, O.MUL.vjps[1]))
    result = run_file(script(tmp_path, "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                       "(gx,) = torch.autograd.grad((x * x).sum(), x)\n"), checker("symbolic"))
    assert result.status == "failed" and result.checks_failed == 1
    worst = result.checks[0].report.inputs["x"].worst
    assert (result.checks[0].what, worst.label, worst.expected, worst.got) == ("grad((x * x).sum(), …)", "x[1]", 4.0,
                                                                              6.0)


SEVERAL_OUTPUTS = """import torch
x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor([1.5, 0.25, -1.0], requires_grad=True)
a = (x * w).sin()
b = (x ** 2).sum()
gx, gw = torch.autograd.grad([a, b], [x, w], grad_outputs=[torch.tensor([1.0, 2.0, 3.0]), None])
"""


def test_autograd_grad_of_several_outputs_is_the_gradient_of_their_weighted_sum(tmp_path):
    """PyTorch sums the outputs' contributions: ∂(Σ v·a + b)/∂x = v·w·cos(w·x) + 2x, judged by SymPy."""
    result = run_file(script(tmp_path, SEVERAL_OUTPUTS), checker("symbolic"))
    assert result.status == "ok" and result.warnings == []
    assert [(s.line, s.what, s.calls, s.unchecked, s.witnesses) for s in result.sites] == [
        (6, "grad([a, b], …)", 1, 0, {"symbolic": 1})]
    report = result.checks[0].report
    assert {name: c.checked for name, c in report.inputs.items()} == {"x": 3, "w": 3}


def test_a_wrong_vjp_inside_autograd_grad_of_several_outputs_is_caught(tmp_path, patched):
    patched(O.SIN, (lambda ns, gr, o, x: gr * ns.cos(x) * 1.5,))
    result = run_file(script(tmp_path, SEVERAL_OUTPUTS), checker("symbolic"))
    assert result.status == "failed"
    assert [(s.line, s.failed) for s in result.sites] == [(6, 1)]
    worst = result.checks[0].report.inputs["w"].worst
    x, w, v = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -1.0]), np.array([1.0, 2.0, 3.0])
    k = int(worst.index[0])
    assert worst.expected == pytest.approx((v * x * np.cos(w * x))[k], rel=1e-6)
    assert worst.got == pytest.approx(1.5 * worst.expected, rel=1e-6)


def test_a_wrong_vjp_inside_a_jacobian_is_caught(tmp_path, patched):
    patched(O.SIN, (lambda ns, gr, o, x: gr * ns.sin(x),))
    result = run_file(script(tmp_path, "x = torch.tensor([1.0, 2.0])\nJ = torch.autograd.functional.jacobian("
                                       "torch.sin, x)\n"), checker("symbolic"))
    assert result.status == "failed" and result.checks[0].report.mode == "jacobian"


def test_gradients_nothing_could_check_are_said(tmp_path, cli):
    path = script(tmp_path, "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 3\n"
                            "(g,) = torch.autograd.grad([(y * y).sum(), y.sum()], y)\n")  # several, by a non-leaf
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.sites[0].unchecked == 1
    assert result.warnings == ["line 3: 1 of 1 calls of grad([(y * y).sum(), y.sum()], …) were not checked (no witness "
                               "covers such a call)"]
    out = cli("run", "--check", str(path))
    assert out.exit_code == 0 and "warning: line 3: 1 of 1 calls" in out.stdout


def test_check_with_nothing_to_check_is_a_warning(tmp_path, cli):
    path = script(tmp_path, "x = torch.ones(2)\nprint(x.sum())\n")
    nothing = "--check found no gradient to check: the script calls neither backward nor a gradient function"
    out = cli("run", "--check", str(path))
    assert out.exit_code == 0 and f"warning: {nothing}" in " ".join(out.stdout.split())
    line = json.loads(cli("run", "--check", "--json", str(path)).stdout.splitlines()[0])
    assert line["warnings"] == [nothing]
    assert "warnings" not in json.loads(cli("run", "--json", str(path)).stdout.splitlines()[0])


def test_a_training_script_is_a_test_of_seconds(pytester):
    (pytester.path / "scripts").mkdir()
    (pytester.path / "scripts" / "fit.grad").write_text(FIT.format(steps=200), encoding="utf-8")
    result = pytester.runpytest("-p", "no:cacheprovider", "scripts")
    result.assert_outcomes(passed=1)


def test_float32_loop_checks_use_the_proofs_magnitudes(tmp_path):
    result = run_file(script(tmp_path, FIT.format(steps=6).replace("torch.linspace(-3, 3, 40)",
                                                                  "torch.linspace(-3, 3, 40, dtype=torch.float32)")
                             .replace("requires_grad=True", "requires_grad=True, dtype=torch.float32")),
                      checker("symbolic"))
    assert result.status == "ok" and result.sites[0].witnesses == {"symbolic": 1, "numeric": 5}
    assert np.isfinite(result.sites[0].worst.margin) and result.sites[0].worst.margin < 1


def test_a_second_backward_through_a_create_graph_gradient_is_checked(tmp_path):
    text = ("x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\n"
            "y.backward(create_graph=True)\ng = x.grad\nx.grad = None\ng.sum().backward()\n"
            "assert allclose(x.grad, 6 * x)\n")
    result = run_file(script(tmp_path, text), checker("symbolic"))
    assert result.status == "ok" and [(s.line, s.what, s.witnesses) for s in result.sites] == [
        (3, "y.backward()", {"symbolic": 1}), (6, "g.sum().backward()", {"symbolic": 1})]
    second = result.checks[1].report.inputs["x"]
    assert second.checked == 3 and second.derivative == "∂g.sum()/∂x[i] = 6*x[i]  (12 at x[2])"


def test_vjp_and_jvp_are_checked(tmp_path):
    # f = x³: vjp with v = [1, 0.5] is 3x²·v = [3, 6]; jvp with v = [1, 1] is J v = 3x² = [3, 12] at x = [1, 2]
    path = tmp_path / "functional.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import vjp, jvp\n"
                    "x = torch.tensor([1.0, 2.0])\n"
                    "out, g = vjp(lambda t: t ** 3, x, torch.tensor([1.0, 0.5]))\n"
                    "assert allclose(g, [3.0, 6.0])\n"
                    "out, j = jvp(lambda t: t ** 3, x, torch.tensor([1.0, 1.0]))\n"
                    "assert allclose(j, [3.0, 12.0])\n")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.warnings == []
    assert [(s.what, s.calls, s.unchecked) for s in result.sites] == [
        ("vjp(lambda t: t ** 3, …)", 1, 0), ("jvp(lambda t: t ** 3, …)", 1, 0)]


def test_a_wrong_vjp_is_caught_inside_jvp(tmp_path, patched):
    patched(O.POW, (lambda ns, g, o, a, b: g * 2.0 * a, O.POW.vjps[1]))
    path = tmp_path / "jvp.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import jvp\n"
                    "out, j = jvp(lambda t: t ** 3, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))\n")
    assert run_file(path, checker("symbolic")).checks_failed == 1


def test_hvp_is_checked_as_the_gradient_of_grad_dot_v(tmp_path):
    # f = Σx³: H = diag(6x), so H·[1, 0] at x = [1, 2] is [6, 0]
    path = tmp_path / "hvp.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import hvp\n"
                    "x = torch.tensor([1.0, 2.0])\n"
                    "_, h = hvp(lambda t: (t ** 3).sum(), x, torch.tensor([1.0, 0.0]))\n"
                    "assert allclose(h, [6.0, 0.0])\n")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.warnings == []
    assert [(s.what, s.calls, s.unchecked) for s in result.sites] == [("hvp(lambda t: (t ** 3).sum(), …)", 1, 0)]


LEGENDRE = """\
import torch
class P3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 1.5 * (5 * x ** 2 - 1)
x = torch.linspace(-1, 1, 50)
d = torch.tensor(0.3, requires_grad=True)
for t in range(6):
    loss = (P3.apply(d * x) - x).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        d -= 1e-3 * d.grad
        d.grad = None
"""


def test_a_function_applied_in_a_loop_is_one_structure(tmp_path):
    """Each step applies the Function anew; keyed by that application's identity, every step was a new
    structure and paid a SymPy proof (PyTorch's Legendre tutorial, 2,000 points: 30 s a step)."""
    result = run_file(script(tmp_path, LEGENDRE), checker("symbolic"))
    (site,) = result.sites
    assert result.status == "ok" and (site.calls, site.failed, site.structures) == (6, 0, 1)
    assert site.witnesses == {"symbolic": 1, "numeric": 5}
    wrong = run_file(script(tmp_path, LEGENDRE.replace("(5 * x ** 2 - 1)", "(5 * x ** 2 - 2)")), checker("symbolic"))
    assert wrong.status == "failed" and wrong.sites[0].failed == 6


def test_past_the_scripts_proof_time_new_structures_go_to_finite_differences_and_say_so(tmp_path, monkeypatch):
    from gradcli.check import policy
    monkeypatch.setattr(policy, "RUN_PROOF_SECONDS", 0.0)
    result = run_file(script(tmp_path, FIT.format(steps=3)), checker("symbolic"))
    (site,) = result.sites
    assert result.status == "ok" and site.witnesses == {"numeric": 3}
    (first,) = [e for e in result.events if isinstance(e, BackwardCheck)]
    assert all(c.method == "numeric" and c.note.startswith("SymPy's time for this script (over 0 s of CPU time in "
                                                           "proofs) is spent") for c in first.report.inputs.values())
