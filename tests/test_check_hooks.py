"""Hooks: a hook that changes a gradient is verified as changed (the chain rule below it starts from
what it returned), never failed; a wrong VJP below a hook is still caught, by both witnesses."""
import json

import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients
from gradcli.engine import ops as O
from gradcli.program.scripts import BackwardCheck

DOUBLING = ("import torch\nv = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)\n"
            "h = v.register_hook(lambda grad: grad * 2)\nv.backward(torch.tensor([1.0, 2.0, 3.0]))\n"
            "print(v.grad)\nh.remove()\n")


def _checked(out, leaves, mode):
    out.backward()
    return check_gradients(out, leaves, None, {k: t.grad._data for k, t in leaves.items()}, mode=mode)


def _negated_below(x):
    """z = Σ tanh(x)²·x with tanh(x)'s gradient negated by a hook: x.grad = -2y·x·(1-y²) + y²."""
    y = x.tanh()
    y.register_hook(lambda grad: -grad)
    return (y * y * x).sum()


def test_the_documented_doubling_hook_passes(cli, tmp_path):
    script = tmp_path / "hook.grad"
    script.write_text(DOUBLING)
    result = cli("run", str(script), "--check")
    assert result.exit_code == 0, result.stdout
    text = " ".join(result.stdout.split())
    assert "changed by the hook at line 3" in text
    assert "\ntensor([2., 4., 6.])\n" in result.stdout  # the documented example's output


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
def test_a_leaf_hook_verifies_the_gradient_it_was_given(mode):
    x = g.tensor([1.0, -2.0], requires_grad=True)
    x.register_hook(lambda grad: grad * 10)
    report = _checked((x * x).sum(), {"x": x}, mode)
    np.testing.assert_allclose(x.grad._data, [20.0, -40.0])
    assert report.status == "pass" and report.inputs["x"].note.startswith("changed by the hook")


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
def test_a_hook_inside_the_graph_is_verified_from_what_it_returned(mode):
    x = g.tensor([0.5, -1.0, 2.0], requires_grad=True)
    report = _checked(_negated_below(x), {"x": x}, mode)
    v = np.array([0.5, -1.0, 2.0])
    y = np.tanh(v)
    np.testing.assert_allclose(x.grad._data, -2 * y * v * (1 - y * y) + y * y, rtol=1e-12)
    assert report.status == "pass", report.to_json()
    assert "below the hook" in report.inputs["x"].note


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
def test_a_wrong_vjp_below_a_hook_still_fails(patched, mode):
    patched(O.TANH, (lambda ns, gr, o, x: gr * (1.0 - o),))
    x = g.tensor([0.5, -1.0, 2.0], requires_grad=True)
    report = _checked(_negated_below(x), {"x": x}, mode)
    assert report.status == "fail" and report.inputs["x"].status == "fail"


def test_a_hook_that_returns_nothing_changes_nothing():
    x = g.tensor([1.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda grad: seen.append(1))
    report = _checked((x * x).sum(), {"x": x}, "symbolic")
    assert seen == [1] and report.status == "pass" and report.inputs["x"].note == ""


def _run_checked(tmp_path, text, name="hooked.py"):
    from gradcli.check import checker
    from gradcli.program.scripts import run_file
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return run_file(path, checker("symbolic"))


NODE_HOOK = """\
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x * x
z = y.sin()
h = z.grad_fn.{register}(lambda {args}: ({given}[0] * 3,))
z.sum().backward()
assert allclose(x.grad, 3 * 2 * x * torch.cos(x * x))
"""
PREHOOK = {"register": "register_prehook", "args": "go", "given": "go"}
POSTHOOK = {"register": "register_hook", "args": "gi, go", "given": "gi"}


@pytest.mark.parametrize("kind", [PREHOOK, POSTHOOK], ids=["prehook", "node hook"])
def test_a_node_hook_that_changes_gradients_is_verified_as_changed(tmp_path, kind):
    result = _run_checked(tmp_path, NODE_HOOK.format(**kind))
    assert result.status == "ok" and (result.checks_passed, result.checks_failed) == (1, 0)
    entry = result.checks[0].report.inputs["x"]
    assert entry.method == "symbolic" and "below the hook at line 5" in entry.note


@pytest.mark.parametrize("kind", [PREHOOK, POSTHOOK], ids=["prehook", "node hook"])
def test_a_wrong_vjp_below_a_node_hook_still_fails(tmp_path, patched, kind):
    patched(O.MUL, (lambda ns, gr, o, a, b: gr * b * 1.5, lambda ns, gr, o, a, b: gr * a))
    text = NODE_HOOK.format(**kind).replace("assert allclose(x.grad, 3 * 2 * x * torch.cos(x * x))\n", "")
    result = _run_checked(tmp_path, text)
    assert result.status == "failed" and result.checks_failed == 1
    worst = result.checks[0].report.inputs["x"].worst
    want = 3 * 2 * 2.0 * np.cos(4.0)
    assert worst.label == "x[1]" and worst.expected == pytest.approx(want, rel=1e-5)
    assert worst.got == pytest.approx(3 * 2.5 * 2.0 * np.cos(4.0), rel=1e-5)


OPTIMIZER_IN_HOOK = """\
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
def step(p):
    with torch.no_grad():
        p.add_(p.grad, alpha=-0.1)
    p.grad = None
w.register_post_accumulate_grad_hook(step)
for i in range(3):
    loss = (w * w * w).sum()
    loss.backward()
assert w.grad is None
print(w.tolist())
"""


def test_an_optimizer_in_a_post_accumulate_hook_is_verified_before_its_step(tmp_path):
    w = np.array([1.0, 2.0])
    for _ in range(3):
        w = w - 0.1 * 3 * w * w
    stepped = f"assert allclose(w, torch.tensor([{float(w[0])!r}, {float(w[1])!r}]))\n"
    result = _run_checked(tmp_path, OPTIMIZER_IN_HOOK.replace("print(w.tolist())\n", stepped))
    assert result.status == "ok" and (result.checks_passed, result.checks_failed) == (3, 0)
    first = result.checks[0].report.inputs["w"]
    assert "changed by the hook at line 3 after it was accumulated" in first.note
    assert first.formulas == ("∂loss/∂w[i] = 3*w[i]**2  (12 at w[1])",)  # at the values before the step


def test_a_wrong_vjp_under_a_post_accumulate_hook_still_fails(tmp_path, patched):
    patched(O.MUL, (lambda ns, gr, o, a, b: gr * b * 2.0, lambda ns, gr, o, a, b: gr * a))
    result = _run_checked(tmp_path, OPTIMIZER_IN_HOOK.replace("assert w.grad is None\n", ""))
    assert result.status == "failed" and result.checks_failed == 3


HOOKED_JACOBIAN = ("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                   "def f(v):\n    u = v * 3\n    u.register_hook(lambda g: g * 2)\n    return u * v\n"
                   "J = torch.autograd.functional.jacobian(f, x)\nassert allclose(J, [[9.0, 0.0], [0.0, 18.0]])\n"
                   "def plain(v):\n    return (v * 3).sum()\nK = torch.autograd.functional.jacobian(plain, x)\n")


def test_a_hook_inside_a_jacobian_of_several_rows_is_verified_row_by_row(cli, tmp_path):
    """A Jacobian of several outputs is one backward pass per row: each row is verified as the gradient its
    own pass computed, from what the hook returned in that pass (the site counts the rows)."""
    file = cli.checked_file(tmp_path / "jac.py", HOOKED_JACOBIAN)
    assert file["checks"] == {"passed": 3, "failed": 0, "undefined": 0}
    assert [(s["line"], s["calls"], s["unchecked"]) for s in file["sites"]] == [(7, 2, 0), (11, 1, 0)]
    assert file["warnings"] == []


PER_PASS = """\
import torch
seen = []
def scaled(g):
    seen.append(1)
    return g * len(seen)
def f(v):
    u = v.sin()
    u.register_hook(scaled)
    return u * v
x = torch.tensor([0.5, -1.0, 2.0])
J = torch.autograd.functional.jacobian(f, x)
print(J)
"""


def test_a_hook_that_changes_each_row_differently_is_verified_by_its_own_pass(tmp_path):
    """Row k's hook returned (k+1)·g: the last pass's change alone would fail rows 0 and 1."""
    result = _run_checked(tmp_path, PER_PASS)
    assert result.status == "ok", [e for e in result.events if isinstance(e, BackwardCheck)]
    assert [(s.line, s.calls, s.failed, s.unchecked) for s in result.sites] == [(11, 3, 0, 0)]
    x = np.array([0.5, -1.0, 2.0])
    rows = np.arange(1, 4) * np.cos(x) * x + np.sin(x)  # d(u·v)/dv with the hook scaling ∂/∂u by k+1
    printed = "".join(e.text for e in result.events if getattr(e, "kind", "") == "print")
    assert printed.startswith("tensor([[") and all(f"{r:.4f}" in printed for r in rows)


def test_a_wrong_vjp_below_a_hook_in_a_jacobian_fails_its_row(tmp_path, patched):
    patched(O.SIN, (lambda ns, gr, o, x: gr * ns.cos(x) * 1.5,))
    result = _run_checked(tmp_path, PER_PASS)
    assert result.status == "failed"
    assert [(s.line, s.calls, s.failed) for s in result.sites] == [(11, 3, 3)]


HOOKED_SECOND_ORDER = "a hook changed a gradient inside it, and its second level differentiates what the hook returned"


@pytest.mark.parametrize("call, what", [
    ("torch.autograd.functional.hessian(f, x)", "hessian(f, …)"),
    ("torch.autograd.functional.hvp(f, x, torch.ones(2))", "hvp(f, …)"),
    ("torch.autograd.functional.vhp(f, x, torch.ones(2))", "vhp(f, …)"),
    ("torch.autograd.functional.jvp(lambda v: f(v) * v, x, torch.ones(2))", "jvp(lambda v: f(v) * v, …)"),
    ("torch.func.hessian(f)(x)", "hessian(f)(…)"),
], ids=["hessian", "hvp", "vhp", "jvp", "func.hessian"])
def test_a_hook_inside_a_second_order_call_is_counted_not_checked_never_failed(cli, tmp_path, call, what):
    """Its headline and its warning say why, it exits 0, and the site counts it unchecked, never passed."""
    path = tmp_path / "hess.py"
    path.write_text("import torch\nx = torch.tensor([1.0, 2.0])\n"
                    "def f(v):\n    u = v * v\n    u.register_hook(lambda g: g * 2)\n    return u.sum()\n"
                    f"H = {call}\n")
    result = cli("run", str(path), "--check", "--json")
    assert result.exit_code == 0, result.stdout
    file = json.loads(result.stdout.splitlines()[0])
    assert [(s["line"], s["site"], s["calls"], s["unchecked"], s["failed"]) for s in file["sites"]] == [
        (7, what, 1, 1, 0)]
    assert file["warnings"] == [f"line 7: 1 of 1 calls of {what} were not checked "
                                f"({HOOKED_SECOND_ORDER})"]
    shown = next(e for e in file["events"] if e["kind"] == "check")["check"]
    assert shown["witness"] == "not checked" and shown["why"] == HOOKED_SECOND_ORDER
    text = " ".join(cli("run", str(path), "--check").stdout.split())
    assert f"check (not checked): {HOOKED_SECOND_ORDER}: nothing verified" in text


ONE_PASS = """\
import torch
from torch.autograd.functional import vjp, jacobian
from torch.func import grad, vmap
def f(x):
    h = x * x
    h.register_hook(lambda g: g * 2)
    return (h * 3).sum()
x = torch.tensor([1.0, 2.0, 3.0])
a = vjp(f, x)[1]
b = jacobian(f, x)
c = grad(f)(x)
d = vmap(grad(f))(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
assert allclose(a, [12.0, 24.0, 36.0]) and allclose(b, a) and allclose(c, a) and allclose(d[1], [36.0, 48.0])
"""


def test_a_hook_inside_a_one_pass_gradient_function_is_verified_as_changed(tmp_path):
    """vjp, and the gradient of a function returning one number (jacobian, torch.func.grad, vmap of it), make
    one backward pass: the hook's change is verified as for a plain backward (12x, not the derivative 6x)."""
    result = _run_checked(tmp_path, ONE_PASS)
    assert result.status == "ok" and result.warnings == []
    assert [(s.line, s.calls, s.failed, s.unchecked) for s in result.sites] == [
        (9, 1, 0, 0), (10, 1, 0, 0), (11, 1, 0, 0), (12, 2, 0, 0)]
    first = next(e for e in result.events if isinstance(e, BackwardCheck)).report
    assert first.inputs["x"].method == "symbolic" and "below the hook at line 6" in first.inputs["x"].note


def test_a_wrong_vjp_below_a_hook_in_a_one_pass_gradient_function_fails(tmp_path, patched):
    patched(O.MUL, (lambda ns, gr, o, a, b: gr * b * 2.0, lambda ns, gr, o, a, b: gr * a))
    result = _run_checked(tmp_path, ONE_PASS.replace("assert allclose", "_ = allclose"))
    assert result.status == "failed"
    assert [(s.line, s.failed) for s in result.sites] == [(9, 1), (10, 1), (11, 1), (12, 2)]
