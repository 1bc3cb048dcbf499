"""`--explain`: the backward pass step by step, reproducing the seed's hand derivation."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from rich.console import Console

from gradcli.engine import ops as O
from gradcli.engine.backward import run_backward
from gradcli.program.evaluation import evaluate
from gradcli.views.explain import explain_view
from gradcli.program.recorder import Recorder, summarize
from gradcli.engine.tensor import Tensor

SEED_000 = "y = x + 2; z = y*y*3; out = z.mean()"


def text_of(renderable, width: int = 120) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None).print(renderable)
    return buffer.getvalue()


def explained(program: str, **inputs):
    recorder = Recorder()
    result = evaluate(program, inputs, trace=recorder)
    return recorder, result


def passes(step) -> list:
    return [p.gradient for p in step.passes]


def test_seed000_four_steps_in_backward_order():
    recorder, result = explained(SEED_000, x="ones(2,2)")
    steps = recorder.steps
    assert [s.node.name for s in steps] == ["MeanBackward0", "MulBackward0", "MulBackward0", "AddBackward0"]
    assert [s.incoming for s in steps] == ["1", "all 0.25", "all 0.75", "all 4.5"]
    assert passes(steps[0]) == ["all 0.25"]                # mean over 4 elements
    assert passes(steps[1]) == ["all 0.75", None]          # z = (y*y)*3: times the constant 3
    assert passes(steps[2]) == ["all 2.25", "all 2.25"]    # y*y: b to a, a to b, 3*0.75 each
    assert passes(steps[3]) == ["all 4.5", None]           # y = x + 2: the sum of both shares, to x
    assert steps[2].passes[0].target is steps[3].node and steps[2].passes[1].target is steps[3].node
    assert steps[3].passes[0].target is result.leaves["x"]
    np.testing.assert_allclose(result.grads["x"], np.full((2, 2), 4.5))


def test_seed000_table_text():
    recorder, result = explained(SEED_000, x="ones(2,2)")
    text = text_of(explain_view(recorder, result.leaves))
    rows = [line for line in text.splitlines() if line.startswith("│") and line.split("│")[1].strip().isdigit()]
    assert [r.split("│")[2].strip() for r in rows] == ["MeanBackward0", "MulBackward0", "MulBackward0",
                                                       "AddBackward0"]
    assert "#2 MulBackward0 ← all 0.25" in rows[0]
    assert "#3 MulBackward0 ← all 0.75" in rows[1]
    assert "#4 AddBackward0 ← all 2.25" in rows[2]
    assert "x ← all 4.5" in rows[3]
    assert "constant 3: no gradient" in text and "constant 2: no gradient" in text
    assert "(sum of 2)" in text
    assert "∂(a*b)/∂a = b" in text and "∂mean(x)/∂xᵢ = 1/n" in text


def test_program_variables_name_the_nodes():
    recorder, result = explained(SEED_000, x="ones(2,2)")
    text = text_of(explain_view(recorder, result.leaves, result.env))
    assert "MeanBackward0 (out)" in text and "MulBackward0 (z)" in text and "AddBackward0 (y)" in text


def test_eval_explain_on_the_command_line(cli):
    result = cli("eval", SEED_000, "x=ones(2,2)", "--explain")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    order = [out.index(name) for name in ("│ MeanBackward0", "← all 0.75", "2.25", "x ← all 4.5")]
    assert order == sorted(order)


def test_broadcast_axes_are_named():
    recorder, _ = explained("out = (w*x + b).sum()", w="[[0.3, 0.7]]", x="[[1.0], [2.0]]", b="[0.5]")
    add, mul = recorder.steps[1], recorder.steps[2]
    assert add.passes[1].summed_axes == (0, 1) and add.passes[1].gradient == "4"
    assert mul.passes[0].summed_axes == (0,) and mul.passes[0].gradient == "all 3"
    assert mul.passes[1].summed_axes == (1,) and mul.passes[1].gradient == "all 1"
    text = text_of(explain_view(recorder, {}))
    assert "(broadcast: Σ over axes 0, 1)" in text and "(broadcast: Σ over axis 0)" in text


@pytest.mark.parametrize("a_shape, b_shape, expected", [
    ((3, 2, 4), (4, 5), ((), (0,))),       # batched matmul: the batch axis is summed away for b
    ((2, 4), (3, 4, 5), ((0,), ())),
    ((4,), (3, 4, 5), ((0,), ())),         # a vector against a batch: (3, 4) back to (4,)
    ((2, 4), (4,), ((), ())),
    ((2, 3), (3, 2), ((), ())),
])
def test_matmul_batch_axes(a_shape, b_shape, expected):
    r = np.random.default_rng(0)
    recorder, result = explained("out = (a @ b).sum()", a=r.standard_normal(a_shape), b=r.standard_normal(b_shape))
    step = next(s for s in recorder.steps if s.node.op is O.MATMUL)
    assert tuple(p.summed_axes for p in step.passes) == expected
    assert result.grads["a"].shape == a_shape and result.grads["b"].shape == b_shape


def test_expand_reports_its_summed_axis():
    recorder, _ = explained("out = x.expand(3, 2).sum()", x="[[1.0, 2.0]]")
    step = next(s for s in recorder.steps if s.node.op is O.EXPAND)
    assert step.passes[0].summed_axes == (0,) and step.passes[0].gradient == "all 3"


def test_a_leaf_used_twice_shows_each_share_not_the_total():
    """Summaries are taken when recorded: accumulation into .grad later adds in place."""
    recorder, result = explained("out = (x*2).sum() + (x*3).sum()", x="[1.0, 1.0]")
    shares = sorted(p.gradient for s in recorder.steps for p in s.passes
                    if p.target is result.leaves["x"])
    assert shares == ["all 2", "all 3"]
    np.testing.assert_allclose(result.grads["x"], [5.0, 5.0])


def test_tracing_changes_nothing():
    program, inputs = "h = tanh(W @ x); out = (h * h).mean()", {"W": "randn(3,4)", "x": "randn(4)"}
    plain = evaluate(program, inputs)
    traced = evaluate(program, inputs, trace=Recorder())
    for name in inputs:
        np.testing.assert_array_equal(plain.grads[name], traced.grads[name])


def test_create_graph_gradients_are_summarised_too():
    x = Tensor([1.0, 2.0], requires_grad=True)
    out = (x * x * x).sum()
    recorder = Recorder()
    run_backward((out,), (None,), create_graph=True, trace=recorder)
    shares = [p.gradient for s in recorder.steps for p in s.passes if p.target is x]
    assert shares == ["[1, 4]"] * 3     # x*x to the outer product's b, then to a and b of x*x: 3x² in all
    np.testing.assert_allclose(x.grad._data, [3.0, 12.0])


@pytest.mark.parametrize("value, text", [
    (np.float64(2.5), "2.5"), (np.ones((2, 2)) * 0.25, "all 0.25"), (np.array([0.1, 1.0, 1e-4]), "[0.1, 1, 0.0001]"),
    (np.array([[1.0, 2.0], [3.0, 4.0]]), "[[1, 2], [3, 4]]"), (np.arange(10.0), "min 0 · mean 4.5 · max 9"),
    (np.array([np.nan, 1.0]), "[nan, 1]"), (np.zeros(0), "empty"),
])
def test_summaries(value, text):
    assert summarize(value) == text


def test_an_output_that_is_an_input_has_no_steps():
    recorder, result = explained("out = x", x="[2.0]")
    assert recorder.steps == [] and "no steps" in text_of(explain_view(recorder, result.leaves))


def test_explain_steps_are_in_the_json_too(cli):
    out = json.loads(cli("eval", SEED_000, "x=ones(2,2)", "--explain", "--json").stdout)
    assert [s["node"] for s in out["explain"]] == ["MeanBackward0", "MulBackward0", "MulBackward0", "AddBackward0"]
    assert out["explain"][-1]["passes"] == ["all 4.5", None] and out["explain"][0]["rule"] == "∂mean(x)/∂xᵢ = 1/n"
