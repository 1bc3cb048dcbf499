"""`run --check` on per-sample gradients of a CNN (`tests/bench/cnn_vmap.py`): answered in seconds, one SymPy
proof for the eight examples (their index arrays are data, not structure), and a wrong convolution or
max-pool VJP caught, at the first example by SymPy and at a later one by finite differences."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gradcli as g
from gradcli.check import checker, policy, symbolic
from gradcli.check.graph import trace
from gradcli.check.policy import structure
from gradcli.engine import ops as O
from gradcli.nn import functional as F
from gradcli.program.scripts import BackwardCheck, run_file

CNN = Path(__file__).parent / "bench" / "cnn_vmap.py"


def _run():
    return run_file(CNN, checker("symbolic"))


def _first(result) -> BackwardCheck:
    return next(e for e in result.events if isinstance(e, BackwardCheck))


@pytest.fixture
def attempts(monkeypatch):
    """How many times SymPy's witness was built."""
    count = [0]
    real = symbolic.witness

    def counted(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(symbolic, "witness", counted)
    return count


def test_eight_examples_are_one_proof_and_seven_finite_difference_checks(attempts):
    result = _run()
    (site,) = result.sites
    assert result.status == "ok" and (site.calls, site.failed, site.structures) == (8, 0, 1)
    assert site.witnesses == {"symbolic": 1, "numeric": 7} and attempts[0] == 1
    report = _first(result).report
    assert {c.method for c in report.inputs.values()} == {"symbolic"}
    assert all(c.status != "fail" for c in report.inputs.values())


def test_index_arrays_are_data_in_a_structure_key():
    w = g.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)

    def key(target, reduction="mean"):
        return structure(trace(F.cross_entropy(w * 1.0, g.tensor(target), reduction=reduction), {"w": w}))
    assert key([0, 2]) == key([1, 1])
    assert key([0, 2]) != key([0, 2], "sum")


def test_a_proof_sympy_gave_up_on_is_not_attempted_again(monkeypatch, attempts):
    monkeypatch.setattr(policy, "PROOF_SECONDS", 0.0)
    result = _run()
    (site,) = result.sites
    assert result.status == "ok" and site.witnesses == {"numeric": 8} and attempts[0] == 1
    first = _first(result).report
    assert all(c.method == "numeric" and "too slow for SymPy" in c.note for c in first.inputs.values())


def _scaled(op, slot: int, factor: float, after: int = 0):
    """op's VJP for input `slot` times `factor` from its call `after + 1` on (the first `after` calls are right)."""
    right = op.vjps
    calls = [0]

    def wrong(*args, **kwargs):
        calls[0] += 1
        return right[slot](*args, **kwargs) * (factor if calls[0] > after else 1.0)
    object.__setattr__(op, "vjps", right[:slot] + (wrong,) + right[slot + 1:])
    return right


@pytest.mark.parametrize("op, slot", [(O.CONVOLUTION, 1), (O.MAX_POOL, 0)], ids=["conv weight", "max-pool"])
def test_a_wrong_vjp_is_caught_by_sympy_at_the_first_example(op, slot):
    right = _scaled(op, slot, 1.5)
    try:
        result = _run()
    finally:
        object.__setattr__(op, "vjps", right)
    (site,) = result.sites
    assert result.status == "failed" and site.first_failure == 1
    failed = [c for c in _first(result).report.inputs.values() if c.status == "fail"]
    assert failed and all(c.method == "symbolic" for c in failed)


def test_a_vjp_wrong_only_after_the_first_example_is_caught_by_finite_differences():
    right = _scaled(O.MAX_POOL, 0, 1.5, after=1)
    try:
        result = _run()
    finally:
        object.__setattr__(O.MAX_POOL, "vjps", right)
    (site,) = result.sites
    assert result.status == "failed" and site.first_failure == 2 and site.failed == 7
    assert site.worst.method == "numeric" and site.worst.margin > 1
    assert np.isfinite(site.worst.margin)


POOLED = """\
import torch
import torch.nn.functional as F
w = torch.tensor([[1.0, 2.0], [0.5, 4.0]], requires_grad=True)
x = torch.tensor([[[X]]])
out = F.max_pool2d(F.relu(x * w), 2).sum() + (w * w).sum()
out.backward()
"""


@pytest.mark.parametrize("x, undefined", [("[-1.0, -2.0], [-3.0, -4.0]", 0), ("[2.0, 1.0], [4.0, 0.5]", 4)],
                         ids=["dead relus", "a true tie"])
def test_a_window_of_dead_relus_is_no_kink_but_a_tie_of_live_ones_is(tmp_path, x, undefined):
    """Tied at 0 because every ReLU in the window is off, the max-pool's output is 0 near the point whatever
    the weights do: no subgradient choice matters, so the derivative is proved, not left undefined. Tied at 2
    with slopes, the choice matters (PyTorch takes the first) and those elements stay undefined."""
    path = tmp_path / "pooled.py"
    path.write_text(POOLED.replace("X", x), encoding="utf-8")
    result = run_file(path, checker("symbolic"))
    report = _first(result).report
    assert result.status == "ok" and report.inputs["w"].method == "symbolic", (result.error, result.assertion, report)
    assert report.inputs["w"].undefined_count == undefined
