"""Honest verdicts: a check that verified nothing says so (headline, JSON, run summaries), and a nan is
explained by its op's domain when that is the cause."""

import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients

ACOSH = ["eval", "out = (torch.acosh(x)*w).sum()", "x=[0.31,0.52,0.77]", "w=[1.,-2.,.5]", "--check"]


def test_all_undefined_is_not_agree(cli):
    result = cli(*ACOSH)
    assert result.exit_code == 0
    assert "check (symbolic): all 6 elements undefined (acosh is nan below 1): nothing verified" in \
        " ".join(result.stdout.split())
    assert "agree" not in result.stdout
    assert "x[0]: acosh is nan below 1: AcoshBackward0 is not finite here" in " ".join(result.stdout.split())


def test_all_undefined_json_status(cli):
    out = cli.json(*ACOSH)
    assert out["check"]["status"] == "undefined"
    assert {e["status"] for e in out["check"]["inputs"].values()} == {"undefined"}
    assert out["check"]["inputs"]["x"]["undefined_count"] == 3


def test_some_undefined_counts_what_was_verified():
    x = g.tensor([0.5, 2.0, 3.0], requires_grad=True)
    out = x.acosh().sum()
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data})
    assert report.status == "pass" and report.inputs["x"].status == "undefined"
    assert report.headline == "2 of 3 elements agree, 1 undefined"
    assert report.inputs["x"].undefined[0].reason.startswith("acosh is nan below 1")
    np.testing.assert_allclose(x.grad._data[1:], 1 / np.sqrt(np.array([2.0, 3.0]) ** 2 - 1))


def test_sqrt_of_a_negative_names_its_domain():
    x = g.tensor([-1.0, 2.0], requires_grad=True)
    out = g.sqrt(x).sum()
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data})
    assert report.inputs["x"].undefined[0].reason.startswith("sqrt is nan below 0")


def test_run_check_counts_undefined_calls_apart(cli, tmp_path):
    checks = cli.checked_file(tmp_path / "acosh.grad",
                              "import torch\nx = torch.tensor([0.31, 0.52], requires_grad=True)\n"
                              "out = torch.acosh(x).sum()\nout.backward()\n"
                              "y = torch.tensor([2.0], requires_grad=True)\n(y * y).sum().backward()\n")["checks"]
    assert checks == {"passed": 1, "failed": 0, "undefined": 1}


def _sqrt_times_zero(mode: str):
    x = g.tensor([0.0, 1.0, 4.0], requires_grad=True)
    out = (g.sqrt(x) * 0).sum() + (x[1:] * x[1:]).sum()
    out.backward()
    return x, check_gradients(out, {"x": x}, None, {"x": x.grad._data}, mode=mode)


def test_a_kink_simplified_away_is_undefined_not_a_failure():
    """SymPy reads 0·√x as 0, so x[0] leaves the expression; autograd's 0·∞ is nan there, as PyTorch's."""
    x, report = _sqrt_times_zero("symbolic")
    assert np.isnan(x.grad._data[0]) and list(x.grad._data[1:]) == [2.0, 8.0]
    assert report.status == "pass", report.to_json()
    assert report.headline == "2 of 3 elements agree, 1 undefined"
    assert report.inputs["x"].undefined[0].reason.startswith("SqrtBackward0 is at a kink")


def test_a_wrong_vjp_beside_a_simplified_kink_still_fails(patched):
    from gradcli.engine import ops as O
    patched(O.MUL, tuple(lambda ns, gr, o, a, b, v=v: v(ns, gr, o, a, b) * 1.5 for v in O.MUL.vjps))
    _, report = _sqrt_times_zero("symbolic")
    assert report.status == "fail" and report.inputs["x"].status == "fail"


def _checked_text(cli, path, source: str) -> str:
    """What `gradcli run PATH --check` prints for `source` (it must pass), on one line."""
    path.write_text(source, encoding="utf-8")
    result = cli("run", str(path), "--check")
    assert result.exit_code == 0, result.stdout
    return " ".join(result.stdout.split())


def test_jacobian_and_hessian_through_a_simplified_kink_are_undefined(cli, tmp_path):
    text = _checked_text(cli, tmp_path / "kinked.py", "import torch\nx = torch.tensor([0.0, 1.0], requires_grad=True)\n"
                      "J = torch.autograd.functional.jacobian(lambda t: torch.sqrt(t) * 0, x)\n"
                      "H = torch.autograd.functional.hessian(\n"
                      "    lambda t: (torch.sqrt(t) * 0).sum() + (t[1:] ** 3).sum(), x)\n"
                      "print(J, H)\n")
    assert "check (jacobian): 2 of 4 elements agree, 2 undefined" in text
    assert "check (hessian): 2 of 4 elements agree, 2 undefined" in text
    assert "tensor([[nan, 0.], [nan, 0.]]) tensor([[nan, 0.], [nan, 6.]])" in text


def test_a_tie_only_float32_sees_is_undefined_not_a_failure(cli, tmp_path):
    """1e8 absorbs 1.0 and 1.5 in float32 (its spacing there is 8), so autograd shares max's gradient
    three ways, as PyTorch does; in float64, where SymPy works, x[1] alone is the max."""
    text = _checked_text(cli, tmp_path / "tie.py", "import torch\nx = torch.tensor([1.0, 1.5, -3.0], requires_grad=True)\n"
                      "(x + 1e8).max().backward()\nprint(x.grad)\n"
                      "w = torch.tensor([[1.0, 1.5], [0.25, 2.0]], requires_grad=True)\n"
                      "torch.nn.functional.max_pool2d((w + 1e8).reshape(1, 1, 2, 2), 2).sum().backward()\n"
                      "print(w.grad)\n")
    assert "tensor([0.3333, 0.3333, 0.3333])" in text and "tensor([[1., 0.], [0., 0.]])" in text
    assert "all 3 elements undefined (MaxBackward1 is at a kink): nothing verified" in text
    assert "all 4 elements undefined (MaxPool2DWithIndicesBackward0 is at a kink): nothing verified" in text


def test_a_tie_the_median_drops_from_its_meaning_is_undefined_not_a_failure():
    """The median of [1, 1, 3] is x[1] to SymPy; autograd shares its gradient between the tied x[0] and x[1]
    as PyTorch does, so both are at the kink although the output's expression names only x[1]."""
    x = g.tensor([1.0, 1.0, 3.0], requires_grad=True)
    out = x.median() + x.kthvalue(2).values
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data})
    assert report.status == "pass" and report.headline == "1 of 3 elements agree, 2 undefined", report.to_json()
    assert report.inputs["x"].undefined[0].reason.startswith("MedianBackward0 is at a kink")


KINKED_FUNCTIONS = """\
import torch
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        g = g.clone()
        g[x < 0] = 0
        return g
class MyMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.maximum(a, b)
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        m = (a >= b).float()
        return g * m, g * (1 - m)
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
(MyReLU.apply(x) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([2.0, 2.0, 1.0], requires_grad=True)
MyMax.apply(a, b).sum().backward()
print(x.grad, a.grad, b.grad)
"""


def test_a_kink_inside_a_functions_forward_is_undefined_not_a_failure(cli, tmp_path):
    """relu at 0 and a tie in maximum, inside the program's own forward: its backward's convention there is not
    the derivative, which does not exist, so those elements are undefined and the rest are proved."""
    text = _checked_text(cli, tmp_path / "kinked.py", KINKED_FUNCTIONS)
    assert "check (symbolic): 2 of 3 elements agree, 1 undefined" in text
    assert "x[1]: ClampBackward1 in MyReLU.forward is at a kink" in text
    assert "the program's backward gives 2" in text
    assert "check (symbolic): 4 of 6 elements agree, 2 undefined" in text
    assert "tensor([0., 2., 3.]) tensor([0., 1., 1.]) tensor([1., 0., 0.])" in text


def test_a_wrong_backward_beside_a_kink_in_its_forward_still_fails(cli, tmp_path):
    script = tmp_path / "wrong.py"
    script.write_text(KINKED_FUNCTIONS.replace("g[x < 0] = 0", "g[x < 0] = 0\n        g = g * 2"))
    result = cli("run", str(script), "--check")
    assert result.exit_code == 1 and "MyReLU.backward" in result.stdout


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
@pytest.mark.parametrize("build", [
    lambda x: g.where(x > 0, x + 1, x),  # a jump at 0
    lambda x: g.where(x > 0, x, g.zeros_like(x)),  # relu written with a mask
    lambda x: (x > 0).float() * x,
    lambda x: x * (x >= 0),
], ids=["jump", "where-relu", "mask-float", "mask-times"])
def test_a_mask_compared_on_its_boundary_is_undefined_never_agree(build, mode):
    """The mask is a constant of the graph, so no replay sees x cross 0: at x = 0 exactly nothing is verified."""
    x = g.tensor([0.0, 2.0], requires_grad=True)
    out = build(x).sum()
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data}, mode=mode)
    assert report.headline == "1 of 2 elements agree, 1 undefined", report.to_json()
    assert report.inputs["x"].undefined[0].label == "x[0]"
    assert "sits on its boundary" in report.inputs["x"].undefined[0].reason


def test_a_second_derivative_through_relu_at_0_is_undefined():
    x = g.tensor(0.0, requires_grad=True)
    from gradcli.engine.autograd import grad
    first, = grad(g.relu(x) ** 2, [x], create_graph=True)
    second, = grad(first, [x], retain_graph=True)
    report = check_gradients(first, {"x": x}, None, {"x": second._data}, mode="numeric")
    assert report.status == "undefined", report.to_json()


def test_a_leaf_that_left_its_boundary_is_checked_again(cli, tmp_path):
    """w[0] = 0 ties `w > 0` at the first step only; the step moves it to -0.1, and the next calls verify it."""
    file = cli.checked_file(tmp_path / "stale.py",
                            "import torch\nw = torch.tensor([0.0, 1.0], requires_grad=True)\nfor step in range(3):\n"
                            "    torch.where(w > 0, w * w, w).sum().backward()\n    with torch.no_grad():\n"
                            "        w -= 0.1 * w.grad\n        w.grad.zero_()\n")
    assert file["checks"] == {"passed": 3, "failed": 0, "undefined": 0}


def test_a_wrong_vjp_beside_a_tied_mask_still_fails(patched):
    from gradcli.engine import ops as O
    patched(O.SIN, (lambda ns, gr, o, x: gr * ns.cos(x) * 1.5,))
    x = g.tensor([0.0, 2.0], requires_grad=True)
    out = (g.where(x > 0, x, g.zeros_like(x)) + x.sin()).sum()
    out.backward()
    assert check_gradients(out, {"x": x}, None, {"x": x.grad._data}).status == "fail"


@pytest.mark.parametrize("mode", ["symbolic", "numeric"])
@pytest.mark.parametrize("pick", [
    lambda x: x.kthvalue(2).values, lambda x: x.topk(2).values.sum(), lambda x: x.sort().values[1],
    lambda x: x.median(dim=0).values,
], ids=["kthvalue", "topk", "sort", "median-dim"])
def test_tied_elements_an_order_picks_among_are_undefined_never_agree(pick, mode):
    """[1, 1, 3]: which 1 the pick takes is arbitrary (PyTorch's kernels differ), and the gradient follows it."""
    x = g.tensor([1.0, 1.0, 3.0], requires_grad=True)
    out = pick(x)
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data}, mode=mode)
    assert report.headline == "1 of 3 elements agree, 2 undefined", report.to_json()
    assert "has tied elements to order" in report.inputs["x"].undefined[0].reason
