"""Hooks: a hook that changes a gradient is verified as changed (the chain rule below it starts from
what it returned), never failed; a wrong VJP below a hook is still caught, by both witnesses."""
import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients
from gradcli.engine import ops as O

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
