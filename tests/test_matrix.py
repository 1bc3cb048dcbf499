"""`gradcli jacobian` and `gradcli hessian`: values against finite differences and SymPy, layouts, errors."""
from __future__ import annotations

import json

import numpy as np
import pytest

from gradcli.program.evaluation import Settings, engine_settings, run_program
from gradcli.engine.autograd import hessian_of, jacobian_of

H1, H2 = 1e-6, 1e-4
R = np.random.default_rng(11)


def forward(program: str, values: dict[str, np.ndarray]) -> np.ndarray:
    with engine_settings(Settings()):
        return np.array(run_program(program, values).output._data, dtype=float)


def numeric_jacobian(program: str, values: dict[str, np.ndarray], name: str) -> np.ndarray:
    """Central differences of the forward pass alone: no VJP involved."""
    base = forward(program, values)
    x = values[name]
    jac = np.zeros(base.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += H1
        down[idx] -= H1
        change = forward(program, {**values, name: up}) - forward(program, {**values, name: down})
        jac[(...,) + idx] = change / (2 * H1)
    return jac


def numeric_hessian(program: str, values: dict[str, np.ndarray], a: str, b: str) -> np.ndarray:
    """Second central differences of the (scalar) forward pass."""
    xa, xb = values[a], values[b]
    hess = np.zeros(xa.shape + xb.shape)
    for i in np.ndindex(*xa.shape):
        for j in np.ndindex(*xb.shape):
            total = 0.0
            for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                moved = {k: v.copy() for k, v in values.items()}
                moved[a][i] += si * H2
                moved[b][j] += sj * H2
                total += si * sj * float(forward(program, moved))
            hess[i + j] = total / (4 * H2 * H2)
    return hess


def computed(program: str, values: dict[str, np.ndarray], hessian: bool = False):
    with engine_settings(Settings()):
        prog = run_program(program, values)
        leaves = list(prog.leaves.values())
        blocks = hessian_of(prog.output, leaves) if hessian else jacobian_of(prog.output, leaves)
    return prog, blocks


JACOBIAN_CASES = {
    "softmax": ("y = softmax(x, dim=-1)", {"x": np.array([0.2, -1.0, 0.7])}),
    "broadcast": ("y = w * x + b", {"w": R.standard_normal((2, 3)), "x": R.standard_normal(3),
                                    "b": R.standard_normal(1)}),
    "matmul": ("y = tanh(W @ x)", {"W": R.standard_normal((3, 4)), "x": R.standard_normal(4)}),
    "matrix output": ("y = (A @ B).sigmoid()", {"A": R.standard_normal((2, 3)), "B": R.standard_normal((3, 2))}),
    "reduction": ("y = (x * x).sum(dim=1) / x.norm()", {"x": R.standard_normal((2, 3))}),
}
HESSIAN_CASES = {
    "cubic": ("out = (x ** 3).sum() + x[0] * x[1]", {"x": np.array([1.0, 2.0, -1.0])}),
    "broadcast": ("out = ((w * x + b) ** 2).mean()", {"w": R.standard_normal((2, 2)), "x": R.standard_normal(2),
                                                      "b": R.standard_normal(1)}),
    "matmul": ("out = tanh(W @ x).sum()", {"W": R.standard_normal((2, 3)), "x": R.standard_normal(3)}),
    "softmax": ("out = (softmax(x, dim=0) * t).sum()", {"x": R.standard_normal(3), "t": np.array([0.1, 0.5, 2.0])}),
}


@pytest.mark.parametrize("case", JACOBIAN_CASES)
def test_jacobian_against_finite_differences(case):
    program, values = JACOBIAN_CASES[case]
    prog, blocks = computed(program, values)
    for name, block in zip(prog.leaves, blocks):
        assert block.shape == prog.output.shape + values[name].shape
        np.testing.assert_allclose(block, numeric_jacobian(program, values, name), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", HESSIAN_CASES)
def test_hessian_against_finite_differences(case):
    program, values = HESSIAN_CASES[case]
    prog, rows = computed(program, values, hessian=True)
    names = list(prog.leaves)
    for a, row in zip(names, rows):
        for b, block in zip(names, row):
            assert block.shape == values[a].shape + values[b].shape
            np.testing.assert_allclose(block, numeric_hessian(program, values, a, b), rtol=1e-5, atol=1e-6)


def check_api():
    return pytest.importorskip("gradcli.check", reason="the SymPy checker is not available")


@pytest.mark.parametrize("case", JACOBIAN_CASES)
def test_jacobian_against_sympy(case):
    check = check_api()
    program, values = JACOBIAN_CASES[case]
    prog, blocks = computed(program, values)
    report = check.jacobian_check(prog.output, prog.leaves, dict(zip(prog.leaves, blocks)))
    assert report.status == "pass", report.to_json()


@pytest.mark.parametrize("case", HESSIAN_CASES)
def test_hessian_against_sympy(case):
    check = check_api()
    program, values = HESSIAN_CASES[case]
    prog, rows = computed(program, values, hessian=True)
    blocks = {a: dict(zip(prog.leaves, row)) for a, row in zip(prog.leaves, rows)}
    assert check.hessian_check(prog.output, prog.leaves, blocks).status == "pass"


def as_array(entry: dict) -> np.ndarray:
    return np.asarray(entry["value"], dtype=float)


def test_acceptance_softmax_jacobian(cli):
    out = cli.json("jacobian", "y = softmax(x, dim=-1)", "x=[0.2, -1.0, 0.7]")
    x = np.array([0.2, -1.0, 0.7])
    s = np.exp(x) / np.exp(x).sum()
    assert out["jacobian"]["x"]["shape"] == [3, 3]
    np.testing.assert_allclose(as_array(out["jacobian"]["x"]), np.diag(s) - np.outer(s, s), rtol=1e-12)
    assert out["output"]["name"] == "y" and out["output"]["shape"] == [3]
    np.testing.assert_allclose(as_array(out["output"]), s)
    assert "check" not in out


def test_acceptance_hessian(cli):
    out = cli.json("hessian", "out = (x ** 3).sum() + x[0] * x[1]", "x=[1.0, 2.0, -1.0]")
    np.testing.assert_allclose(as_array(out["hessian"]["x"]["x"]), [[6, 1, 0], [1, 12, 0], [0, 0, -6]])
    assert out["hessian"]["x"]["x"]["shape"] == [3, 3] and out["output"]["value"] == 10.0


def test_json_layouts_of_several_inputs(cli):
    out = cli.json("jacobian", "y = W @ x + b", "W=ones(2,3)", "x=[1.0, 2.0, 3.0]", "b=[0.5]")
    assert {k: v["shape"] for k, v in out["jacobian"].items()} == {"W": [2, 2, 3], "x": [2, 3], "b": [2, 1]}
    np.testing.assert_allclose(as_array(out["jacobian"]["W"])[1], [[0, 0, 0], [1, 2, 3]])
    hess = cli.json("hessian", "out = (W @ x).tanh().sum()", "W=ones(2,3)", "x=[0.1, 0.2, 0.3]")["hessian"]
    assert {(a, b): v["shape"] for a, row in hess.items() for b, v in row.items()} == {
        ("W", "W"): [2, 3, 2, 3], ("W", "x"): [2, 3, 3], ("x", "W"): [3, 2, 3], ("x", "x"): [3, 3]}
    np.testing.assert_allclose(as_array(hess["W"]["x"]), np.transpose(as_array(hess["x"]["W"]), (1, 2, 0)))


def test_wrt_of_and_unused_inputs(cli):
    out = cli.json("jacobian", "h = W @ x; y = h * 2", "W=ones(2,3)", "x=[1.0, 2.0, 3.0]", "u=[1.0]",
                   "--wrt", "x,u", "--of", "h")
    assert set(out["jacobian"]) == {"x", "u"} and out["output"]["name"] == "h"
    np.testing.assert_allclose(as_array(out["jacobian"]["x"]), np.ones((2, 3)))
    np.testing.assert_allclose(as_array(out["jacobian"]["u"]), np.zeros((2, 1)))


def test_scalar_output_jacobian_is_the_gradient(cli):
    jac = cli.json("jacobian", "out = (x * x).sum()", "x=[1.0, -2.0]")["jacobian"]["x"]
    grad = cli.json("eval", "out = (x * x).sum()", "x=[1.0, -2.0]")["grads"]["x"]
    assert jac == grad


def test_table_labels(cli):
    result = cli("jacobian", "y = x.sum(dim=0)", "x=[[1.0, 2.0], [3.0, 4.0]]")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "x[0,0]" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["", "x[0,0]", "x[0,1]", "x[1,0]", "x[1,1]"]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│ y[")]
    assert rows == [["y[0]", "1", "0", "1", "0"], ["y[1]", "0", "1", "0", "1"]]
    assert "∂y/∂x  shape (2, 2, 2)" in result.stdout


def test_large_blocks_are_summarised(cli):
    result = cli("jacobian", "y = tanh(W @ x)", "W=randn(40,40)", "x=randn(40)", "--wrt", "x")
    assert result.exit_code == 0 and "…" in result.stdout and "│ y[39] │" in result.stdout
    assert "│ y[20] │" not in result.stdout


def test_full_shows_every_element():
    import io

    from rich.console import Console

    from gradcli.views.render import block_view
    buffer = io.StringIO()
    view = block_view("∂y/∂x", "y", (40,), "x", (40,), np.eye(40), full=True)
    Console(file=buffer, width=4000, color_system=None).print(view)
    assert "…" not in buffer.getvalue() and "│ y[20] │" in buffer.getvalue() and "x[39]" in buffer.getvalue()


def test_hessian_of_a_vector_is_a_clear_error(cli):
    result = cli("hessian", "y = x * 2", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    assert "scalar" in result.stderr and "gradcli jacobian" in result.stderr and "y.sum()" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize("args, words", [
    (("jacobian", "y = ones(2)", "x=[1.0]"), ["does not depend"]),
    (("jacobian", "y = x * 2", "x=[1.0]", "--wrt", "q"), ["--wrt q"]),
    (("jacobian", "y = ones(2) * 2"), ["no inputs"]),
    (("jacobian", "y = x * 2", "x=[1.0]", "--check=bogus"), ["not a check mode"]),
    (("jacobian", "y = x.reshape(1, -1) * x.reshape(-1, 1)", "x=ones(60)", "--max-elements", "100000"),
     ["jacobian", "--max-elements"]),
    (("hessian", "out = (x * x).sum()", "x=ones(400)", "--max-elements", "100000"), ["hessian", "--max-elements"]),
])
def test_user_errors_exit_2(cli, args, words):
    result = cli(*args)
    assert result.exit_code == 2, result.stdout
    text = result.stderr.lower()
    assert all(w.lower() in text for w in words), text
    assert "traceback" not in text


def test_json_errors_are_json(cli):
    result = cli("hessian", "y = x * 2", "x=[1.0, 2.0]", "--json")
    assert result.exit_code == 2 and json.loads(result.stderr)["error"]["kind"] == "backward"


def test_float32_blocks(cli):
    out = cli.json("jacobian", "y = x * x", "x=[1.0, 2.0]", "--dtype", "float32")
    assert out["output"]["dtype"] == "float32"
    np.testing.assert_allclose(as_array(out["jacobian"]["x"]), [[2, 0], [0, 4]])


def has_check_view() -> bool:
    try:
        import gradcli.views.check_view  # noqa: F401
    except ImportError:
        return False
    return True


needs_check = pytest.mark.skipif(not has_check_view(), reason="gradcli.views.check_view is not available")


@needs_check
def test_check_on_the_command_line(cli):
    out = cli.json("jacobian", "y = softmax(x, dim=-1)", "x=[0.2, -1.0, 0.7]", "--check")
    assert out["check"]["status"] == "pass"
    out = cli.json("hessian", "out = (x ** 3).sum() + x[0] * x[1]", "x=[1.0, 2.0, -1.0]", "--check")
    assert out["check"]["status"] == "pass"
    text = cli("jacobian", "y = softmax(x, dim=-1)", "x=[0.2, -1.0, 0.7]", "--check")
    assert text.exit_code == 0 and "derive_by_array" in text.stdout and "transpose" in text.stdout


@needs_check
@pytest.mark.parametrize("mode", ["symbolic", "numeric", "all"])
def test_a_wrong_block_fails_the_check(cli, monkeypatch, mode):
    import gradcli.engine.autograd as functional
    real = functional.jacobian_of
    monkeypatch.setattr(functional, "jacobian_of", lambda out, xs, *names: [b * 1.01 for b in real(out, xs, *names)])
    result = cli("jacobian", "y = x * x", "x=[1.0, 2.0]", "--check", mode, "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["check"]["status"] == "fail"
    method = {"symbolic": "symbolic", "numeric": "numeric", "all": "symbolic"}[mode]
    assert json.loads(result.stdout)["check"]["inputs"]["x"]["method"] == method


@needs_check
@pytest.mark.parametrize("mode", ["numeric", "all"])
def test_finite_differences_witness_jacobians_and_hessians(cli, mode):
    out = cli.json("jacobian", "y = softmax(x, dim=-1) * w", "x=[0.2, -1.0, 0.7]", "w=[1.5, 2.0, -1.0]", "--check",
                   mode)
    c = out["check"]["inputs"]["x"]
    assert out["check"]["status"] == "pass" and (c["checked"], c["total"]) == (9, 9)
    assert (c["method"], "numeric" in c) == (("numeric", False) if mode == "numeric" else ("symbolic", True))
    out = cli.json("hessian", "out = (x ** 3).sum() * w.sum() + x[0] * x[1]", "x=[1.0, 2.0, -1.0]", "w=[0.5, 2.0]",
                   "--check", mode)
    assert out["check"]["status"] == "pass" and set(out["check"]["inputs"]) == {"x", "x,w", "w,x", "w"}
    assert out["check"]["inputs"]["x,w"]["max_abs_err"] < 1e-5


def test_the_element_cap_bounds_jacobians_built_inside_a_program(cli):
    result = cli("eval", "j = jacobian(exp, x); out = j.sum() * x.sum()", "x=randn(30)", "--max-elements", "100")
    assert result.exit_code == 2 and "the Jacobian ∂output/∂input 0 would have 900 elements" in result.stderr


@pytest.mark.parametrize("command, program", [("jacobian", "y = exp(x).sum()*x"), ("hessian", "y = (exp(x)*x).sum()")])
def test_tolerances_reach_the_check(cli, command, program):
    """Finite differences are never exact: within the default tolerance they agree, with zero tolerance they fail."""
    args = (command, program, "x=[0.3, 0.7]", "--check", "numeric")
    assert cli.json(*args)["check"]["status"] == "pass"
    strict = cli(*args, "--rtol", "0", "--atol", "0", "--json")
    assert strict.exit_code == 1 and json.loads(strict.stdout)["check"]["status"] == "fail"


def test_tolerance_options_read_alike_in_every_checking_command(cli):
    def described(command: str) -> list[str]:
        lines = cli(command, "--help").stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.lstrip().startswith("--rtol"))
        return lines[start:start + 7]
    assert described("eval")[0].split() == ["--rtol", "X", "Relative", "tolerance", "of", "--check,", "e.g.", "1e-6;",
                                            "with"]
    assert described("jacobian") == described("hessian") == described("eval")


@pytest.mark.parametrize("extra, message, hint", [
    (["--rtol", "1e-3"], "--rtol 0.001 is a tolerance of --check, and there is no --check",
     "add --check, e.g. --check --rtol 0.001"),
    (["--check", "--atol", "nan"], "--atol nan: a tolerance is a finite number of at least 0", "e.g. --atol 1e-9"),
    (["--check", "--rtol", "-1"], "--rtol -1: a tolerance is a finite number of at least 0", "e.g. --rtol 1e-6"),
    (["--exact"], "--exact is a way of --check, and there is no --check", "add --check"),
])
@pytest.mark.parametrize("command", ["eval", "jacobian", "hessian"])
def test_tolerances_that_mean_nothing_are_refused(cli, command, extra, message, hint):
    """A negative or nan tolerance failed 'got 2, expected 2'; without --check it did nothing, silently."""
    result = cli(command, "y = (x*x).sum()", "x=[1.0, 2.0]", *extra)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error[argument]: {message}", f"hint: {hint}"]
