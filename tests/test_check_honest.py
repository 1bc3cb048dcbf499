"""Issue 34: `--check` says what it verified and judges what a program means.

A gradient differentiated again is judged against SymPy's derivative of the original forward; a
checked run behaves as a plain one; a default atol is relative to each gradient's size; a sampled
input also gets a direction through all its elements, and the title names the witness and coverage.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients, checker
from gradcli.engine import ops as O
from gradcli.program.scripts import Output, run_file
from language_helpers import torch_printed

CUBE = ("import torch\n\nclass Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward({saved})\n        return x ** 3\n\n    @staticmethod\n    def backward(ctx, g):\n"
        "        d, = ctx.saved_tensors\n        return g * {grad}\n\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "w = torch.tensor([1.0, 1.0], requires_grad=True)\ny = Cube.apply(x).sum() + (x ** 2).sum()\n"
        "g, = torch.autograd.grad(y, x, create_graph=True)\n(g * w).sum().backward()\nprint(x.grad)\n")
SAVED_DERIVATIVE = CUBE.format(saved="3 * x ** 2", grad="d")
"""Right once (3x² is the derivative) but a constant when differentiated again: x.grad is 2w, the truth (6x+2)·w."""
SAVED_INPUT = CUBE.format(saved="x", grad="3 * d ** 2")


def _run(cli, tmp_path, source, *options, name="prog.py"):
    path = tmp_path / name
    path.write_text(source)
    return cli("run", str(path), *options)


def _events(result):
    return json.loads(result.stdout.splitlines()[0])["events"]


def test_a_backward_wrong_when_differentiated_again_fails_at_the_second_backward(cli, tmp_path):
    result = _run(cli, tmp_path, SAVED_DERIVATIVE, "--check", "--json")
    assert result.exit_code == 1, result.stdout
    checks = {e["line"]: e["check"] for e in _events(result) if e["kind"] == "check"}
    assert checks[17]["status"] == "pass"  # the first derivative is right
    second = checks[18]["inputs"]
    assert checks[18]["status"] == "fail" and set(second) == {"x", "w"}  # no phantom leaf0
    assert second["x"]["worst"]["expected"] == 14.0 and second["x"]["worst"]["got"] == 2.0  # (6·2+2)·1 against 2
    assert "Cube.backward at line 10" in second["x"]["note"]
    assert "SymPy's derivative of its output's forward" in second["x"]["note"]
    assert second["w"]["status"] == "pass"


def test_a_backward_that_stays_differentiable_passes_twice(cli, tmp_path):
    result = _run(cli, tmp_path, SAVED_INPUT, "--check")
    assert result.exit_code == 0, result.stdout
    assert "tensor([ 8., 14.])" in result.stdout  # (6x+2)·w at x = 1, 2


def test_the_checked_program_prints_what_torch_prints(cli, tmp_path):
    plain = _run(cli, tmp_path, SAVED_DERIVATIVE)
    checked = _run(cli, tmp_path, SAVED_DERIVATIVE, "--check")
    assert "tensor([2., 2.])" in plain.stdout and "tensor([2., 2.])" in checked.stdout
    assert torch_printed(SAVED_DERIVATIVE) == ["tensor([2., 2.])"]


REFUSED = ("import torch\n\nclass Cube(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        ctx.save_for_backward(3 * x ** 2)\n        ctx.kept = [3 * x]\n        return x ** 3\n\n"
           "    @staticmethod\n    def backward(ctx, g):\n        d, = ctx.saved_tensors\n"
           "        print(d.requires_grad, ctx.kept[0].requires_grad)\n        return g * d\n\n"
           "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = Cube.apply(x).sum()\n"
           "g, = torch.autograd.grad(y, x, create_graph=True)\nprint(g.requires_grad)\ng.sum().backward()\n")


def test_check_never_changes_what_a_program_does(cli, tmp_path):
    """What a Function's forward saved does not require grad (its forward runs with gradients off), so the
    gradient is a constant and its backward is PyTorch's error, with --check as without."""
    plain, checked = (_run(cli, tmp_path, REFUSED, *options) for options in ((), ("--check",)))
    assert plain.exit_code == checked.exit_code == 2
    for result in (plain, checked):
        printed = [line for line in result.stdout.splitlines() if line.startswith("False")]
        assert printed == ["False False", "False"], result.stdout
        assert "does not require grad" in result.stdout + result.stderr
    with pytest.raises(AssertionError, match="does not require grad"):
        torch_printed(REFUSED)


TINY = ("import torch\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, g):\n"
        "        x, = ctx.saved_tensors\n        return g * {factor} * x\n\nw = torch.tensor([0.5, -1.5]{dtype}, requires_grad=True)\n"
        "loss = {scale} * Sq.apply(w).sum()\nloss.backward()\n")


@pytest.mark.parametrize("scale", ["1e-7", "1e-12", "1.0", "1e6"])
@pytest.mark.parametrize("factor, dtype, exit_code", [("2", "", 0), ("4", "", 1), ("6", "", 1), ("2", ", dtype=torch.float64", 0),
                                                      ("2.0002", ", dtype=torch.float64", 1)])
def test_tolerances_scale_with_the_gradient(cli, tmp_path, scale, factor, dtype, exit_code):
    """A 2x or 3x error fails at any scale, in float32; a 1e-4 relative error fails in float64; right passes."""
    result = _run(cli, tmp_path, TINY.format(factor=factor, dtype=dtype, scale=scale), "--check")
    assert result.exit_code == exit_code, result.stdout


def test_the_scaled_atol_is_reported_per_gradient():
    w = g.tensor([0.5, -1.5], requires_grad=True, dtype="float32")
    out = (w * w).sum() * 1e-7
    out.backward()
    report = check_gradients(out, {"w": w}, None, {"w": w.grad._data * 3})
    c = report.inputs["w"]
    assert report.status == "fail" and c.atol == pytest.approx(1e-5 * 3e-7)
    assert check_gradients(out, {"w": w}, None, {"w": w.grad._data}, atol=1e-5).status == "pass"  # an --atol is absolute


def test_a_sampled_check_names_its_witness_and_coverage(cli):
    result = cli("eval", "y = (x @ x).sum()", "x=randn(300,300)", "--check")
    assert result.exit_code == 0, result.stdout
    text = " ".join(result.stdout.split())
    assert "check (numeric: 64 of 90,000 elements + 1 direction through all): all gradients agree" in text
    assert "check (symbolic)" not in text
    report = cli.json("eval", "y = (x @ x).sum()", "x=randn(300,300)", "--check")["check"]
    assert report["witness"] == "numeric: 64 of 90,000 elements + 1 direction through all"
    assert report["inputs"]["x"]["direction"]["status"] == "pass"


ONE_WRONG = ("import torch\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
             "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, g):\n"
             "        x, = ctx.saved_tensors\n        d = 2 * x\n        d[{k}] = d[{k}] * 3\n        return g * d\n\n"
             "torch.manual_seed(0)\nx = torch.randn(48, 48, dtype=torch.float64, requires_grad=True)\n"
             "Sq.apply(x).sum().backward()\n")


@pytest.mark.parametrize("k", [0, 17, 47])
def test_one_wrong_element_outside_the_sample_is_caught_by_the_direction(cli, tmp_path, k):
    result = _run(cli, tmp_path, ONE_WRONG.format(k=k), "--check", "--json")
    assert result.exit_code == 1, result.stdout
    check = _events(result)[0]["check"]
    assert check["status"] == "fail" and check["inputs"]["x"]["direction"]["status"] == "fail"
    assert check["inputs"]["x"]["checked"] == 64 and check["inputs"]["x"]["total"] == 2304


def test_a_sample_with_no_direction_never_says_all_agree():
    x = g.tensor(np.linspace(-1.0, 1.0, 2_000), requires_grad=True)
    out = (x * x).sum()
    out.backward()
    report = check_gradients(out, {"x": x}, None, {"x": x.grad._data})
    assert report.headline == "all gradients agree" and report.inputs["x"].through is not None
    import dataclasses
    alone = dataclasses.replace(report, inputs={"x": dataclasses.replace(report.inputs["x"], through=None)})
    assert alone.headline == "the 64 sampled elements agree"
    assert alone.witness == "symbolic: 64 of 2,000 elements"


MODULE = ("import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.fc1 = torch.nn.Linear(3, 4)\n        self.fc2 = torch.nn.Linear(4, 1)\n\n"
          "    def forward(self, x):\n        return self.fc2(torch.tanh(self.fc1(x)))\n\n"
          "torch.manual_seed(0)\nmodel = Net()\nx = torch.randn(5, 3)\nloss = model(x).pow(2).mean()\nloss.backward()\n")


def test_parameters_are_reported_by_their_named_parameters_names(cli, tmp_path):
    result = _run(cli, tmp_path, MODULE, "--check", "--json")
    assert result.exit_code == 0, result.stdout
    inputs = _events(result)[0]["check"]["inputs"]
    assert list(inputs) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(c["status"] == "pass" for c in inputs.values())


def test_a_long_formula_is_cut_at_a_term_boundary_with_its_parentheses_closed():
    import sympy as sp
    from gradcli.check.formula import CAP, show
    xs = sp.symbols("x0:40", real=True)
    w = sp.Symbol("w", real=True)
    text = show(w * sp.Add(*[x ** 2 * sp.sin(x) for x in xs]))
    assert text.startswith("w*(x0**2*sin(x0) + ") and text.endswith(" + …)") and len(text) <= CAP
    assert text.count("(") == text.count(")")


def _notebook(tmp_path, cells):
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": text} for text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "checked.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def test_notebook_sites_are_named_by_cell_and_line(cli, tmp_path):
    path = _notebook(tmp_path, ["import torch", "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x * x).sum()\n"
                                "y.backward()", "z = (x ** 3).sum()\nz.backward()"])
    result = cli("run", "--check", str(path))
    assert result.exit_code == 0, result.stdout
    text = result.stdout
    assert "y.backward() at cell 2, line 3" in text and "z.backward() at cell 3, line 2" in text
    rows = [line for line in text.splitlines() if "backward()" in line and "│" in line]
    assert rows[0].startswith("│ cell 2, line 3") and rows[1].startswith("│ cell 3, line 2"), text


def test_a_failing_notebook_check_names_its_cell(cli, tmp_path):
    body = SAVED_DERIVATIVE.split("\nx = torch.tensor")
    path = _notebook(tmp_path, [body[0], "x = torch.tensor" + body[1]])
    result = cli("run", "--check", str(path))
    assert result.exit_code == 1
    assert "(g * w).sum().backward() at cell 2, line 5" in result.stdout
    assert "checked.ipynb,cell2,line5" in "".join((result.stdout + result.stderr).split())  # the failure's place, however it wraps
    notes = "".join(result.stdout.split())  # the notes name the Function's backward and the create_graph call by cell
    assert "Cube.backwardatcell1,line10" in notes and "grad(y,…)atcell2,line4" in notes, result.stdout
    assert "atline" not in notes


NON_LEAF = ("import torch\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n    def backward(ctx, g):\n"
            "        x, = ctx.saved_tensors\n        return g * {factor} * x\n\n"
            "a = torch.tensor([1.0, 2.0], requires_grad=True)\nh = a * 3\ns = Sq.apply(h).sum() + (a * h).sum()\n"
            "gh, = torch.autograd.grad(s, h)\nprint(gh)\n")


@pytest.mark.parametrize("factor, exit_code, printed", [("2", 0, "tensor([ 7., 14.])"), ("3", 1, "tensor([10., 20.])")])
def test_a_gradient_by_an_intermediate_tensor_is_checked(cli, tmp_path, factor, exit_code, printed):
    """∂s/∂h = 2h + a at h = 3a: [7, 14]; a backward 1.5x too big fails at the grad call."""
    result = _run(cli, tmp_path, NON_LEAF.format(factor=factor), "--check", "--json")
    assert result.exit_code == exit_code, result.stdout
    check = _events(result)[0]
    assert check["line"] == 17 and list(check["check"]["inputs"]) == ["h"]
    assert check["check"]["status"] == ("pass" if exit_code == 0 else "fail")
    assert _run(cli, tmp_path, NON_LEAF.format(factor=factor)).stdout.count(printed) == 1


def test_the_intermediate_gradient_matches_torch(tmp_path):
    assert torch_printed(NON_LEAF.format(factor="2")) == ["tensor([ 7., 14.])"]


NESTED = ("import torch\nfrom torch.func import vmap, grad\n\ndef f(x):\n    return (x.sin() * x).sum()\n\n"
          "torch.manual_seed(0)\nx = torch.randn(3, 2, 2)\nr = vmap(vmap(grad(f)))(x)\nprint(tuple(r.shape))\n")


def test_nested_vmap_is_checked_per_example(cli, tmp_path):
    result = _run(cli, tmp_path, NESTED, "--check", "--json")
    assert result.exit_code == 0, result.stdout
    record = json.loads(result.stdout.splitlines()[0])
    site, = record["sites"]
    assert site["calls"] == 6 and site["unchecked"] == 0 and site["failed"] == 0 and record["warnings"] == []


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("program, inputs", [("out = (relu(x)**2).sum()", "x=[0.0, 1.0, -2.0]"),
                                             ("out = (relu(1 - x)**2).sum()", "x=[1.0, 0.5]")])
def test_a_c1_point_at_a_kink_is_verified_not_undefined(cli, program, inputs, dtype):
    report = cli.json("eval", program, inputs, "--check", "--dtype", dtype)["check"]
    x = report["inputs"]["x"]
    assert report["status"] == "pass" and "undefined" not in x, x
    assert "one-sided slopes agree" in x["note"] and x["numeric"]["status"] == "pass"


def test_a_corner_stays_undefined(cli):
    report = cli.json("eval", "out = relu(x).sum()", "x=[0.0, 1.0]", "--check")["check"]
    assert report["inputs"]["x"]["undefined_count"] == 1


def test_a_tie_only_float32_makes_stays_undefined(cli):
    """float32 rounds x + 1e-8 and 2x - 1 to one value at x = 1, and autograd splits the gradient there (1.5);
    the float64 function is smooth at that point (slope 1), so finite differences must not judge it."""
    report = cli.json("eval", "out = maximum(x + 1e-8, 2*x - 1).sum()", "x=[1.0]", "--check", "--dtype",
                      "float32")["check"]
    x = report["inputs"]["x"]
    assert report["status"] == "undefined" and x["undefined"][0]["got"] == 1.5 and "numeric" not in x, x


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_wrong_backward_at_a_c1_point_is_not_passed(cli, tmp_path, dtype):
    """At relu(x)² 's kink the one-sided slopes agree on 0; a backward claiming 1 there is not verified (finite
    differences never fail an element at a kink: autograd's convention may differ there), in float32 as in
    float64, and the same backward's error elsewhere fails the call."""
    source = ("import torch\n\nclass R2(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n        return x.clamp(min=0) ** 2\n\n    @staticmethod\n"
              "    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        return g * (2 * x.clamp(min=0) + 1)\n\n"
              f"x = torch.tensor([0.0, 1.0, -1.0], dtype=torch.{dtype}, requires_grad=True)\nR2.apply(x).sum().backward()\n")
    result = _run(cli, tmp_path, source, "--check", "--json")
    assert result.exit_code == 1, result.stdout
    x = _events(result)[0]["check"]["inputs"]["x"]
    assert x["status"] == "fail" and x["worst"]["got"] - x["worst"]["expected"] == 1.0, x


SOFTMAX = ("import torch\n\nclass Soft(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
           "        p = torch.softmax(x, dim=0)\n        ctx.save_for_backward(p)\n        return p\n\n"
           "    @staticmethod\n    def backward(ctx, g):\n        p, = ctx.saved_tensors\n        return {grad}\n\n"
           "x = torch.tensor([1000.0, 999.0, 1001.5], dtype=torch.float64, requires_grad=True)\n"
           "w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)\n(Soft.apply(x) * w).sum().backward()\nprint(x.grad)\n")
"""softmax's SymPy meaning is exp(x)/Σexp(x): its float64 value overflows at logits near 1000."""


@pytest.mark.parametrize("grad, exit_code", [("p * (g - (g * p).sum())", 0), ("p * g", 1)])
def test_logits_near_1000_are_judged_by_finite_differences_not_undefined(cli, tmp_path, grad, exit_code):
    """SymPy's float64 evaluation of exp(1000)/Σexp overflows; the stable forward's quotients decide."""
    result = _run(cli, tmp_path, SOFTMAX.format(grad=grad), "--check", "--json")
    assert result.exit_code == exit_code, result.stdout
    x = _events(result)[0]["check"]["inputs"]["x"]
    assert "undefined" not in x and "overflowed" in x["note"] and x["numeric"]["checked"] == 3


def test_built_in_softmax_at_big_logits_agrees(cli):
    report = cli.json("eval", "out = (softmax(x, dim=0) * w).sum()", "x=[1000.0, 999.0, 1001.5]", "w=[1.0, 2.0, 3.0]",
                      "--check")["check"]
    assert report["status"] == "pass" and all("undefined" not in c for c in report["inputs"].values())


CUSTOM_JVP = ("import torch\nfrom torch.func import jvp\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(x):\n        return x * x\n\n    @staticmethod\n    def setup_context(ctx, inputs, output):\n"
              "        ctx.save_for_forward(inputs[0])\n\n    @staticmethod\n    def jvp(ctx, t):\n"
              "        x, = ctx.saved_tensors\n        return 2 * x * t\n\nx = torch.tensor([1.0, 2.0])\n"
              "p, t = jvp(Sq.apply, (x,), (torch.ones(2),))\nprint(t)\n")


def test_a_custom_jvp_is_checked_against_its_forward(cli, tmp_path):
    """Once not checked; now judged by SymPy's derivative of the forward (tests/test_check_custom_jvp.py)."""
    result = _run(cli, tmp_path, CUSTOM_JVP, "--check")
    assert result.exit_code == 0, result.stdout
    assert "jvp(Sq.apply, …) at line 19\ncheck (jacobian): all gradients agree" in result.stdout
    assert "were not checked" not in result.stdout


SAMPLES = sorted((Path(__file__).parent.parent / "samples").glob("*.grad"))
FIXTURES = [SAVED_DERIVATIVE, SAVED_INPUT, REFUSED, NON_LEAF.format(factor="2"), NESTED, MODULE, CUSTOM_JVP]


def _printed(result):
    return [(e.kind, e.line, e.text) for e in result.events if isinstance(e, Output)]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_prints_the_same_with_and_without_check(path):
    plain, checked = run_file(path), run_file(path, checker())
    assert plain.status == checked.status == "ok"
    assert _printed(plain) == _printed(checked)


@pytest.mark.parametrize("k", range(len(FIXTURES)))
def test_every_program_here_does_the_same_with_and_without_check(tmp_path, k):
    path = tmp_path / "prog.py"
    path.write_text(FIXTURES[k])
    plain, checked = run_file(path), run_file(path, checker())
    assert _printed(plain) == _printed(checked)
    assert (plain.error is None) == (checked.error is None)
    if plain.error is not None:
        assert plain.error.message == checked.error.message


HESSIAN_BY_TWO = ("import torch\nfrom torch.func import hessian\n\ndef f(x, y):\n    return (x.sin() * y ** 2).sum()\n\n"
                  "x = torch.tensor([0.5, 1.0], dtype=torch.float64)\ny = torch.tensor([2.0, -1.0], dtype=torch.float64)\n"
                  "H = hessian(f, argnums=(0, 1))(x, y)\nprint(H[0][1])\n")


def test_a_hessian_by_several_arguments_is_checked_block_by_block(cli, tmp_path):
    result = _run(cli, tmp_path, HESSIAN_BY_TWO, "--check", "--json")
    assert result.exit_code == 0, result.stdout
    record = json.loads(result.stdout.splitlines()[0])
    (site,) = record["sites"]
    assert (site["calls"], site["unchecked"], site["failed"]) == (1, 0, 0) and record["warnings"] == []
    blocks = _events(result)[0]["check"]["inputs"]
    assert set(blocks) == {"x", "x,y", "y,x", "y"} and all(b["status"] == "pass" for b in blocks.values())


def test_a_wrong_vjp_inside_a_hessian_by_several_arguments_fails_its_blocks(cli, tmp_path, patched):
    """sin's VJP 1% too big: ∂f/∂x is wrong, so the x and x,y blocks of jacfwd(jacrev(f)) are, against SymPy's
    second derivatives of f's own forward."""
    right = O.SIN.vjps[0]
    patched(O.SIN, (lambda ns, g, o, x: right(ns, g, o, x) * 1.01,))
    result = _run(cli, tmp_path, HESSIAN_BY_TWO, "--check", "--json")
    assert result.exit_code == 1, result.stdout
    blocks = _events(result)[0]["check"]["inputs"]
    assert blocks["x,y"]["status"] == "fail" and blocks["y"]["status"] == "pass"
    assert blocks["x,y"]["worst"]["expected"] == pytest.approx(2 * 2.0 * np.cos(0.5))
