"""The seed tutorials' code, pasted as the blogs print it (tests/fixtures/tutorials/), runs under `gradcli run
--check` and shows what PyTorch shows; the one snippet today's PyTorch rejects fails with PyTorch's error and
a hint that fixes it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gradcli import randn
from gradcli.program.evaluation import Settings, engine_settings
from gradcli.check import checker
from gradcli.program.scripts import run_file

TUTORIALS = Path(__file__).parent / "fixtures" / "tutorials"
AFFINE = TUTORIALS / "seed002_affine.grad"
RUNNABLE = sorted(p for p in TUTORIALS.glob("*.grad") if p != AFFINE)


def run_json(cli, path: Path) -> dict:
    result = cli("run", "--check", "--json", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[0])


def printed(payload: dict) -> list[tuple[str, object]]:
    return [(item["source"], item["value"]) for event in payload["events"] if event["kind"] != "check"
            for item in event["items"]]


def test_every_tutorial_fixture_is_here():
    assert len(RUNNABLE) >= 10 and AFFINE.exists()


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.stem)
def test_tutorial_runs_and_every_backward_is_proved(path):
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok", result.error
    assert result.checks_passed == result.backward_calls and result.checks_failed == 0


def test_seed000_variable_prints_like_pytorch(cli):
    out = printed(run_json(cli, TUTORIALS / "seed000_variable.grad"))
    assert out[:2] == [("x.creator", None), ("y.creator", "<AddBackward0>")]
    assert [name for name, _ in out[2:]] == ["x", "y", "z", "x.grad", "y.grad"]
    assert out[3][1] == [[3.0, 3.0], [3.0, 3.0]] and out[4][1] == [[27.0, 27.0], [27.0, 27.0]]
    assert out[5][1] == [[4.5, 4.5], [4.5, 4.5]]
    assert out[6] == ("y.grad", None)  # y is not a leaf: PyTorch keeps no gradient for it


def test_seed000_while_loop_displays_the_bare_expression(cli):
    payload = run_json(cli, TUTORIALS / "seed000_while_loop.grad")
    (event,) = [e for e in payload["events"] if e["kind"] == "display"]
    assert event["items"][0]["source"] == "x.grad"
    with engine_settings(Settings()):
        x = randn(3)._data  # the script's first random draw, seed 0
    gradients = np.float32([0.1, 1.0, 0.0001]).astype(np.float64)  # torch.FloatTensor rounds them to float32
    scale = np.asarray(event["items"][0]["value"]) / gradients
    doublings = np.log2(scale[0])
    np.testing.assert_allclose(scale, scale[0])
    assert doublings == int(doublings)
    assert np.linalg.norm(x * scale[0]) >= 1000 > np.linalg.norm(x * scale[0] / 2)


def test_seed002_scalar_is_float32_like_torch_tensor(cli):
    out = dict(printed(run_json(cli, TUTORIALS / "seed002_scalar.grad")))
    assert out == {"z": [19.0], "x.grad": [8.0]}
    text = cli("run", str(TUTORIALS / "seed002_scalar.grad")).stdout
    assert "\ntensor([19.], grad_fn=<AddBackward0>)\ntensor([8.])\n" in text  # the blog's PyTorch output


def test_seed002_retain_graph_zeroes_between_backwards(cli):
    payload = run_json(cli, TUTORIALS / "seed002_retain_graph.grad")
    assert printed(payload) == [("x.grad", [3.0, 3.0, 3.0]), ("x.grad", [3.0, 3.0, 3.0])]
    assert payload["checks"] == {"passed": 2, "failed": 0, "undefined": 0}


def test_seed002_weighted_gradients(cli):
    out = printed(run_json(cli, TUTORIALS / "seed002_matrix_weighted.grad"))
    np.testing.assert_allclose(out[-1][1], [[2, 0.2, 0.02], [2, 2, 2]], rtol=1e-6)
    out = printed(run_json(cli, TUTORIALS / "seed002_vector_weights.grad"))
    np.testing.assert_allclose(out[-1][1], [2, 0.2, 0.02], rtol=1e-6)


def test_seed002_affine_fails_like_pytorch_and_shows_the_fix(cli):
    result = cli("run", "--check", str(AFFINE))
    assert result.exit_code == 2
    assert result.stderr.startswith("error[backward]: grad can be implicitly created only for scalar outputs\n"
                                    f"  --> {AFFINE}:12:1\n")
    assert "y.backward(torch.ones(2))" in result.stderr
    assert "│ error  │" in result.stdout


def test_seed002_affine_with_the_hinted_fix_runs(tmp_path):
    fixed = tmp_path / "affine_fixed.grad"
    fixed.write_text(AFFINE.read_text(encoding="utf-8").replace("y.backward()#", "y.backward(torch.ones(2))#", 1),
                     encoding="utf-8")
    result = run_file(fixed, checker("symbolic"))
    assert result.status == "ok" and result.checks_passed == 1
    grads = {title: value for event in result.events if hasattr(event, "items") for title, value in event.items}
    assert grads["x.grad"] is None  # x was made without requires_grad
    np.testing.assert_allclose(grads["w.grad"]._data, [1.0, 1.0])
    np.testing.assert_allclose(grads["b.grad"]._data, [2.0])  # b broadcast over both elements of y
