"""Every `--check` step is bounded: constants that are not differentiated never blow SymPy up, and a
step past its budget falls back (finite differences for the proof, the plain form for the formula)."""
import numpy as np
import pytest
import sympy as sp

from gradcli.check.formula import tidy

# Each of these hung (or took minutes, past 4 GB) in `factor` while printing the derivative: the
# constant x1 entered SymPy as the exact rational of its binary value.
HANGS = [
    ("out = exp(x1*w).sum()", ["x1=[1.1]", "w=[2.2]"], "w",
     lambda v: {"w": v["x1"] * np.exp(v["x1"] * v["w"])}),
    ("out = exp(0.123456789 * x).sum()", ["x=[0.3, 0.9]"], None,
     lambda v: {"x": 0.123456789 * np.exp(0.123456789 * v["x"])}),
    ("out = torch.nn.functional.binary_cross_entropy(torch.sigmoid(x1*w1 + b), y)",
     ["x1=[0.7, 1.3]", "w1=[0.35]", "b=[0.1]", "y=[1.0, 0.0]"], "w1,b",
     lambda v: {"w1": [np.mean((1 / (1 + np.exp(-(v["x1"] * v["w1"] + v["b"]))) - v["y"]) * v["x1"])],
                "b": [np.mean(1 / (1 + np.exp(-(v["x1"] * v["w1"] + v["b"]))) - v["y"])]}),
    ("out = torch.log(1 + torch.exp(-y*(x1*w))).mean()", ["x1=[0.31, 1.7, -2.2]", "y=[1., -1., 1.]", "w=[0.77]"],
     "w", lambda v: {"w": [np.mean(-v["y"] * v["x1"] / (1 + np.exp(v["y"] * v["x1"] * v["w"])))]}),
]


def _values(specs):
    """The inputs here are plain lists of numbers, read as float64."""
    return {s.split("=")[0]: np.array(s.split("=", 1)[1].strip("[] ").split(","), dtype=np.float64) for s in specs}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("program, inputs, wrt, derivative", HANGS, ids=["exp", "literal", "bce", "logistic"])
def test_a_constant_that_is_not_differentiated_answers_with_the_right_verdict(cli, program, inputs, wrt,
                                                                               derivative, dtype):
    args = ["eval", program, *inputs, "--check", "--dtype", dtype] + (["--wrt", wrt] if wrt else [])
    out = cli.json(*args)
    assert out["check"]["status"] == "pass"
    expected = derivative(_values(inputs))
    for name, want in expected.items():
        entry = out["check"]["inputs"][name]
        assert entry["status"] == "pass" and entry["method"] == "symbolic"
        got = np.asarray(out["grads"][name]["value"], dtype=float)
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)


def test_the_printed_derivative_keeps_the_constant_as_a_number(cli):
    out = cli.json("eval", "out = exp(x1*w).sum()", "x1=[1.1]", "w=[2.2]", "--check", "--wrt", "w")
    assert out["check"]["inputs"]["w"]["derivative"] == "∂out/∂w[0] = 1.1*exp(1.1*w[0]) = 12.3704"


def test_a_wrong_vjp_is_still_caught_with_a_constant_in_the_exponent(cli, patched):
    from gradcli.engine import ops as O
    patched(O.EXP, (lambda ns, gr, o, x: gr * o * 1.5,))
    result = cli("eval", "out = exp(x1*w).sum()", "x1=[1.1]", "w=[2.2]", "--check", "--wrt", "w")
    assert result.exit_code == 1
    assert "MISMATCH" in result.stdout


def test_factor_past_its_budget_returns_the_expression_as_it_is():
    x = sp.Symbol("x", real=True)
    e = x / 2 + 1
    assert str(tidy(e, False)) == "(x + 2)/2"
    assert tidy(e, False, factor_ops=0) is e


def test_simplify_past_its_budget_is_not_tried():
    x = sp.Symbol("x", real=True)
    e = sp.sin(x) ** 2 + sp.cos(x) ** 2
    assert tidy(e, True) == 1
    assert tidy(e, True, simplify_ops=0) == e


def test_a_long_rational_in_an_exponent_is_held_as_a_number_while_factoring():
    """Unheld, factor would write exp(p/q·w) as a polynomial of degree p in exp(w/q)."""
    w = sp.Symbol("w", real=True)
    c = sp.Rational(*1.1.as_integer_ratio())
    e = c * sp.exp(c * w) + sp.exp(2 * w)
    tidied = tidy(e, True)
    assert tidied.equals(e)
    assert sp.exp(c * w) in tidied.atoms(sp.exp)


def test_a_matmul_too_large_for_sympy_is_decided_before_sympy_starts():
    import gradcli as g
    from gradcli.check import check_gradients
    r = np.random.default_rng(0)
    x = g.tensor(r.standard_normal((64, 1000)))
    w = g.tensor(r.standard_normal((1000, 40)), requires_grad=True)
    out = (x @ w).sum()
    out.backward()
    report = check_gradients(out, {"w": w}, None, {"w": w.grad._data})
    entry = report.inputs["w"]
    assert report.status == "pass" and entry.method == "numeric"
    assert entry.note == ("too large for SymPy (about 2,560,001 terms, by the graph's matrix products; the limit "
                          "is 2,000,000): checked by finite differences instead")
    np.testing.assert_allclose(w.grad._data, np.repeat(x._data.sum(axis=0)[:, None], 40, axis=1))


def test_a_graph_whose_derivatives_would_walk_too_many_terms_goes_to_finite_differences(monkeypatch):
    """Each derivative walks the whole replay: terms times differentiated elements is what a proof costs."""
    import gradcli as g
    from gradcli.check import check_gradients
    from gradcli.check import symbolic
    monkeypatch.setattr(symbolic, "WORK_BUDGET", 50)
    x = g.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    w = g.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, -0.5]], requires_grad=True)
    out = (x @ w).tanh().sum()
    out.backward()
    report = check_gradients(out, {"w": w}, None, {"w": w.grad._data})
    entry = report.inputs["w"]
    assert report.status == "pass" and entry.method == "numeric"
    assert entry.note == ("too large for SymPy (about 17 terms for each of 6 derivatives; the limit is 50 in all): "
                          "checked by finite differences instead")
    h = np.tanh(x._data @ w._data)
    np.testing.assert_allclose(w.grad._data, x._data.T @ (1 - h * h))


ENCODER_LAYER = """import torch
import torch.nn as nn
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=4, nhead=1, dim_feedforward=8, dropout=0.0, batch_first=True)
x = torch.randn(1, 3, 4)
out = layer(x).pow(2).mean()
out.backward()
"""


def test_a_one_layer_transformer_encoder_goes_numeric_before_sympy_replays_it(tmp_path, monkeypatch):
    """990 terms, 172 derivatives: the terms alone let SymPy try, and it spent minutes (165 s once) in its
    walks of attention's nested trees. The tree estimate refuses it before the replay starts."""
    from gradcli.check import checker, symbolic
    from gradcli.program.scripts import BackwardCheck, run_file

    def never(*args, **kwargs):
        raise AssertionError("SymPy's replay started")
    monkeypatch.setattr(symbolic, "replay", never)
    path = tmp_path / "encoder.py"
    path.write_text(ENCODER_LAYER)
    result = run_file(path, checker())
    assert result.status == "ok"
    report = next(e for e in result.events if isinstance(e, BackwardCheck)).report
    assert report.status == "pass" and {c.method for c in report.inputs.values()} == {"numeric"}
    note = report.inputs["linear1.weight"].note
    assert note.startswith("too large for SymPy (an element nests about 4.9e+08 terms as a tree") and \
        note.endswith("the limit is 1e+08): checked by finite differences instead")



def test_the_tree_estimate_counts_nesting_not_terms():
    """A chain of products multiplies its fan-ins: x @ x @ x of a 3×3 is a tree of 3·(3·(1+1)+1+1)+1 terms
    per element, the same 9 elements at each step for `terms_estimate`."""
    import gradcli as g
    from gradcli.check.graph import trace, tree_estimate
    x = g.tensor(np.eye(3), requires_grad=True)
    once = tree_estimate(trace((x @ x).sum(), {"x": x}))
    twice = tree_estimate(trace((x @ x @ x).sum(), {"x": x}))
    assert once == 1 + 9 * (1 + 3 * (1 + 1))  # the sum's 9 elements of 1 + 3·(1 + 1)
    assert twice == 1 + 9 * (1 + 3 * ((1 + 3 * 2) + 1))
