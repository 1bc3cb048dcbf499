"""The directional witness: later calls of a verified graph structure are checked along random directions
(v·∇L against the central difference along v), and a wrong VJP is still caught there.

`DIRECTIONAL_WORK` is set to 0 so that tiny graphs take the path a two-layer net takes."""
from pathlib import Path

import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients, checker, checks
from gradcli.check.graph import select
from gradcli.check import numeric
from gradcli.check.numeric import directional_check, hooked
from gradcli.check.graph import trace
from gradcli.engine import ops as O
from gradcli.program.scripts import BackwardCheck, run_file

NET = """\
import torch
torch.manual_seed(0)
x = torch.randn(8, 5)
y = torch.randn(8, 2)
w1 = torch.randn(5, 4, requires_grad=True)
w2 = torch.randn(4, 2, requires_grad=True)
for t in range({steps}):
    loss = (x.mm(w1).tanh().mm(w2) - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        w1 -= 1e-3 * w1.grad
        w2 -= 1e-3 * w2.grad
        w1.grad.zero_()
        w2.grad.zero_()
"""


@pytest.fixture
def by_directions(monkeypatch):
    monkeypatch.setattr(checks, "DIRECTIONAL_WORK", 0)


def _run(tmp_path: Path, text: str):
    path = tmp_path / "net.py"
    path.write_text(text, encoding="utf-8")
    return run_file(path, checker("symbolic"))


def test_later_calls_of_a_verified_structure_go_by_directions(tmp_path, by_directions):
    result = _run(tmp_path, NET.format(steps=6))
    (site,) = result.sites
    assert result.status == "ok" and (site.calls, site.failed, site.structures) == (6, 0, 1)
    assert site.witnesses == {"symbolic": 1, "directional": 5}
    assert 0 <= site.worst.margin < 1


def test_without_the_work_limit_lowered_a_small_net_stays_element_by_element(tmp_path):
    (site,) = _run(tmp_path, NET.format(steps=3)).sites
    assert site.witnesses == {"symbolic": 1, "numeric": 2}


def test_a_vjp_wrong_only_at_later_calls_is_caught_by_a_direction(tmp_path, by_directions, patched):
    """tanh's VJP goes wrong once the weights have moved: the first call's proof passes, a direction fails."""
    right = O.TANH.vjps[0]
    calls = []

    def late(ns, gr, o, x):
        calls.append(1)
        return right(ns, gr, o, x) * (1.0 if len(calls) <= 1 else 1.01)
    patched(O.TANH, (late,))
    result = _run(tmp_path, NET.format(steps=4))
    (site,) = result.sites
    assert result.status == "failed" and (site.calls, site.failed, site.first_failure) == (4, 3, 2)
    shown = [e for e in result.events if isinstance(e, BackwardCheck)]
    assert [e.call for e in shown] == [1, 2]
    failing = shown[1].report.inputs["w1"]
    # the direction failed, so the call was checked element by element too, which names the element
    assert failing.status == "fail" and failing.method == "numeric" and failing.worst.label.startswith("w1[")


def _grads(out, leaves):
    out.backward()
    return {k: t.grad._data.copy() for k, t in leaves.items()}


def test_an_element_outside_the_sample_is_caught_only_by_the_direction(by_directions, patched):
    """An input of 300 elements is sampled (64); a VJP wrong at one element outside the sample fails the direction."""
    unsampled = int(np.setdiff1d(np.arange(300), select(300, checks.BUDGET, 64, 0))[0])
    right = O.SIN.vjps[0]

    def one_wrong(ns, gr, o, x):
        bump = np.zeros(300)
        bump[unsampled] = 1.0
        return right(ns, gr, o, x) + bump
    patched(O.SIN, (one_wrong,))
    w = g.tensor(np.linspace(-1.0, 1.0, 300), requires_grad=True)
    out = (w.sin() * 3.0).sum()
    report = check_gradients(out, {"w": w}, None, _grads(out, {"w": w}), mode="numeric", verified=True)
    entry = report.inputs["w"]
    assert report.status == "fail" and entry.method == "directional" and entry.worst.label == "w·v1"
    assert abs(entry.worst.got - entry.worst.expected) > 0.1 and entry.coverage.endswith("all 300 elements")


def test_a_passing_direction_says_which_witness_decided(by_directions):
    w = g.tensor([0.3, -1.2, 2.0], requires_grad=True)
    out = (w.exp() * w).sum()
    report = check_gradients(out, {"w": w}, None, _grads(out, {"w": w}), mode="numeric", verified=True)
    entry = report.inputs["w"]
    assert report.status == "pass" and entry.method == "directional" and entry.checked == 1
    assert entry.coverage == "1 random direction through all 3 elements" and not entry.sampled
    assert "random directions" in entry.note and report.headline == "all gradients agree"


def test_a_direction_that_moves_a_kink_hands_the_call_to_elements(by_directions):
    w = g.tensor([0.0, 1.5, -2.0], requires_grad=True)
    out = (w.relu() * 2.0).sum()
    grads = _grads(out, {"w": w})
    tr = trace(out, {"w": w})
    assert directional_check(tr, np.ones(()), grads, ["w"], {"w": (1e-3, 1e-5)}, 0.0, 0) == {}
    report = check_gradients(out, {"w": w}, None, grads, mode="numeric", verified=True)
    entry = report.inputs["w"]
    assert entry.method == "numeric" and entry.undefined_count == 1 and entry.undefined[0].label == "w[0]"


def test_only_the_input_whose_directions_move_a_kink_goes_element_by_element(by_directions):
    """Every direction of w1 moves the tie maximum(h, h); none of w2's does: w2 is judged by directions, and
    w1 by finite differences on `LATER_SAMPLE` elements drawn for this call."""
    rng = np.random.default_rng(3)
    x = g.tensor(rng.standard_normal((4, 30)))
    w1 = g.tensor(rng.standard_normal((30, 20)), requires_grad=True)
    w2 = g.tensor(rng.standard_normal((20, 2)), requires_grad=True)
    h = x.matmul(w1)
    out = (g.maximum(h, h).relu().matmul(w2) ** 2).sum()
    grads = _grads(out, {"w1": w1, "w2": w2})
    report = check_gradients(out, {"w1": w1, "w2": w2}, None, grads, mode="numeric", verified=True, call=2)
    assert report.status == "pass", report.to_json()
    assert report.inputs["w2"].method == "directional" and report.inputs["w1"].method == "numeric"
    assert report.inputs["w1"].checked == checks.LATER_SAMPLE


def test_a_hook_below_which_a_direction_checks_is_verified_as_changed(by_directions):
    x = g.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.tanh()
    y.register_hook(lambda grad: -grad)
    out = (y * y * x).sum()
    report = check_gradients(out, {"x": x}, None, _grads(out, {"x": x}), mode="numeric", verified=True)
    assert report.status == "pass" and report.inputs["x"].method == "directional"
    assert "below the hook" in report.inputs["x"].note


def test_a_wrong_vjp_below_a_hook_fails_a_direction(by_directions, patched):
    patched(O.TANH, (lambda ns, gr, o, x: gr * (1.0 - o),))
    x = g.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.tanh()
    y.register_hook(lambda grad: -grad)
    out = (y * y * x).sum()
    grads = _grads(out, {"x": x})
    tr = hooked(trace(out, {"x": x}), lambda hook: None)
    found = directional_check(tr, np.ones(()), grads, ["x"], {"x": (1e-3, 1e-5)}, 0.0, 0)
    assert found is not None and found["x"].status == "fail"
    report = check_gradients(out, {"x": x}, None, grads, mode="numeric", verified=True)
    assert report.status == "fail"


@pytest.mark.parametrize("share, accepted", [(None, False), (1.0, True)])
def test_a_kink_crossed_within_the_step_may_take_only_a_share_of_the_tolerance(monkeypatch, share, accepted):
    """A kink one direction's step crosses moves its central quotient by as much as it makes the sides differ.
    Here relu(w0) switches on within the step on one side only and moves the quotient by half the tolerance:
    accepted, that error and float32's own rounding of v·∇L (which the rest of the tolerance is for) added up
    to a false failure of a correct two-layer net near its fit. The direction is taken again 10 times shorter,
    where nothing crosses, and its quotient is then the exact slope (with the whole tolerance it was kept)."""
    if share is not None:
        monkeypatch.setattr(numeric, "KINK_SHARE", share)
    v = np.random.default_rng(0).standard_normal(2)
    h = numeric.SHORTEST  # the step a unit-sized loss and slope get
    tol = 1e-5 + 1e-3 * abs(v[1])
    c = 0.5 * tol / (0.3 * abs(v[0]))  # the crossing moves the quotient by 0.3·c·|v0|: half the tolerance
    w = g.tensor([-0.4 * h * v[0], 1.0], requires_grad=True)
    out = (w[0].relu() * c + w[1]).sum()
    grads = _grads(out, {"w": w})
    found = directional_check(trace(out, {"w": w}), np.ones(()), grads, ["w"], {"w": (1e-3, 1e-5)}, 0.0, 0)["w"]
    error = abs(found.worst.expected - found.worst.got)
    assert found.status == "pass"
    assert (error > 0.4 * tol) == accepted and (error < 1e-3 * tol) == (not accepted)
