"""`gradcli eval`: the seed examples end to end, the text users see, and every error path's exit code."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).parent / "golden"


def grads(payload: dict, name: str) -> np.ndarray:
    return np.asarray(payload["grads"][name]["value"], dtype=float)


def test_seed000_mean_of_three_squares(cli):
    out = cli.json("eval", "y = x + 2; z = y*y*3; out = z.mean()", "x=ones(2,2)")
    assert out["output"] == {"name": "out", "shape": [], "dtype": "float64", "value": 27.0}
    np.testing.assert_allclose(grads(out, "x"), np.full((2, 2), 4.5))
    assert out["seed"] == 0


def test_seed002_scalar(cli):
    out = cli.json("eval", "z = (x+2)**2+3", "x=[2]")
    assert out["output"]["shape"] == [1]
    np.testing.assert_allclose(grads(out, "x"), [8.0])


@pytest.mark.parametrize("x, gradient, expected", [
    ("[1,2,3]", "[1, 0.1, 0.01]", [2, 0.2, 0.02]),
    ("[[1,2,3],[4,5,6]]", "[[1,0.1,0.01],[1,1,1]]", [[2, 0.2, 0.02], [2, 2, 2]]),
    ("[1,2,3]", "ones", [2, 2, 2]),
])
def test_weighted_backward(cli, x, gradient, expected):
    np.testing.assert_allclose(grads(cli.json("eval", "y = x*2", f"x={x}", "--grad", gradient), "x"), expected)


def test_while_loop_doubles_until_norm_reaches_1000(cli):
    out = cli.json("eval", "y = x * 2\nwhile y.data.norm() < 1000:\n    y = y * 2", "x=[0.5,-1.2,0.3]",
                   "--grad", "[0.1, 1.0, 0.0001]", "--of", "y")
    np.testing.assert_allclose(grads(out, "x"), [102.4, 1024.0, 0.1024])


def test_matrix_mean_from_npy_files(cli, tmp_path):
    r = np.random.default_rng(3)
    x, y, w = r.standard_normal((10, 20)), r.standard_normal((10, 5)), r.standard_normal((20, 5))
    for k, v in {"x": x, "y": y, "w": w}.items():
        np.save(tmp_path / f"{k}.npy", v)
    out = cli.json("eval", "out = mean(y - matmul(x, w))", *(f"{k}=@{tmp_path}/{k}.npy" for k in "xyw"))
    g = np.full((10, 5), 1 / 50)
    np.testing.assert_allclose(grads(out, "x"), -g @ w.T)
    np.testing.assert_allclose(grads(out, "y"), g)
    np.testing.assert_allclose(grads(out, "w"), -x.T @ g)


def test_torch_prefix_means_the_same(cli):
    a = cli.json("eval", "out = torch.mean(y - torch.matmul(x, w))", "x=randn(3,4)", "y=randn(3,2)", "w=randn(4,2)")
    b = cli.json("eval", "out = mean(y - matmul(x, w))", "x=randn(3,4)", "y=randn(3,2)", "w=randn(4,2)")
    assert a["grads"] == b["grads"]


def test_broadcast_affine(cli):
    out = cli.json("eval", "out = w*x + b", "w=[0.3,0.7]", "x=[1.0]", "b=[0.5]", "--grad", "[1, 1]")
    np.testing.assert_allclose(grads(out, "x"), [1.0])
    np.testing.assert_allclose(grads(out, "b"), [2.0])
    np.testing.assert_allclose(grads(out, "w"), [1.0, 1.0])


def test_wrt_reports_only_the_named_inputs(cli):
    out = cli.json("eval", "out = (w*x).sum()", "w=[1.,2.]", "x=[3.,4.]", "--wrt", "w")
    assert list(out["grads"]) == ["w"]


def test_float32_dtype_and_seeded_randn(cli):
    out = cli.json("eval", "out = (x*x).sum()", "x=randn(3)", "--dtype", "float32", "--seed", "7")
    assert out["output"]["dtype"] == "float32" and out["seed"] == 7
    x = np.float32([-0.1467950940132141, 0.7861412763595581, 0.9468216300010681])  # torch.manual_seed(7); randn(3)
    np.testing.assert_array_equal(grads(out, "x"), 2 * x)


def test_unused_input_has_null_gradient(cli):
    assert cli.json("eval", "out = x.sum()", "x=[1.]", "w=[2.]")["grads"]["w"] is None


def test_nan_and_inf_are_strings_in_json(cli):
    out = cli.json("eval", "out = log(x)", "x=[0., -1.]", "--grad", "ones")
    assert out["output"]["value"] == ["-inf", "nan"]
    assert out["grads"]["x"]["value"] == ["inf", -1.0]


def test_seed000_table_text(cli):
    result = cli("eval", "y = x + 2; z = y*y*3; out = z.mean()", "x=ones(2,2)", "--graph")
    assert result.exit_code == 0
    assert result.stdout == (GOLDEN / "seed000_eval.txt").read_text()


def test_nonfinite_warning_names_the_first_op(cli):
    result = cli("eval", "out = (log(x) * 2).sum()", "x=[0., 1.]")
    assert "warning: the result contains nan or inf first produced by LogBackward0" in result.stdout


def test_large_tensor_is_summarised_unless_full(cli):
    short = cli("eval", "out = (x*2).sum()", "x=ones(40,50)")
    assert "…" in short.stdout and "│ 20 │" not in short.stdout
    long = cli("eval", "out = (x*2).sum()", "x=ones(40,50)", "--full")
    assert "…" not in long.stdout


def test_three_d_gradient_is_one_table_per_slice(cli):
    text = cli("eval", "out = x.sum()", "x=ones(2,2,3)").stdout
    assert "∂out/∂x[0, :, :]" in text and "∂out/∂x[1, :, :]" in text


# -- errors: exit 2, no traceback, what / where / how ---------------------------------------------
@pytest.mark.parametrize("args, words", [
    (["z = (x+2", "x=1"], ["'(' was never closed", "^"]),
    (["z = maen(x)", "x=[1,2]"], ["name 'maen' is not defined", "did you mean 'mean'?"]),
    (["z = (x @ w).sum()", "x=ones(2,3)", "w=ones(2,3)"], ["(2, 3)", "mat1 and mat2 shapes cannot be multiplied"]),
    (["z = x.sum()", "x=ones(2,"], ["input 'x'"]),
    (["y = x*2", "x=[1,2,3]", "--grad", "[1,1]"], ["mismatch in shape"]),
    (["x.__class__.__bases__", "x=[1.0]"], ["attribute '__bases__' is not available"]),
    (["import os; z = x.sum()", "x=[1.0]"], ["import of 'os' is refused"]),
    (["z = x.sum()", "x=@missing.npy"], ["file not found"]),
    (["z = x.sum()", "1x=[1.0]"], ["not a valid identifier"]),
    (["z = x + y", "x=ones(3)", "y=ones(2)"], ["the size of tensor a (3) must match the size of tensor b (2)"]),
    (["z = x.sum()", "x=ones(100000, 100000)"], ["over the limit of 50,000,000", "--max-elements"]),
    (["while True:\n    pass\nz = x.sum()", "x=[1.]", "--max-steps", "1000"], ["more than 1,000 loop iterations"]),
    (["z = x.sum()", "x=[1.]", "--of", "q"], ["no variable 'q'"]),
    (["z = 2", "x=[1.]"], ["not a tensor"]),
    (["z = x.sum()", "x=[1.]", "--wrt", "w"], ["no input named 'w'"]),
    (["z = ones(2, bad=3)", "x=[1.]"], ["unexpected keyword argument 'bad'", "usage: ones("]),
    (["def f(n):\n    return f(n + 1)\nz = f(0)", "x=[1.]"], ["maximum recursion depth exceeded", "line 2"]),
    (["z = [a for a in x]", "x=[1.]"], ["the program's output 'z' is a list, not a tensor"]),
    (["z = '{0.__class__}'.format(x)", "x=[1.]"], ["format field '0.__class__' is not supported"]),
    (["z = x.sum()", "x=[1.]", "--dtype", "int8"], ["invalid value for '--dtype'", "float64", "float32"]),
])
def test_user_errors_exit_2_with_a_clear_message(cli, args, words):
    result = cli("eval", *args)
    text = (result.stdout + result.stderr).lower()
    assert result.exit_code == 2, text
    assert "traceback" not in text
    for word in words:
        assert word.lower() in text


def test_error_points_a_caret_at_the_mistake(cli):
    result = cli("eval", "y = x + 1\nz = maen(y)", "x=[1.]")
    assert result.stderr.splitlines()[1:4] == ["  --> line 2, column 5", "   | z = maen(y)", "   |     ^^^^"]


def test_json_errors_go_to_stderr(cli):
    result = cli("eval", "z = maen(x)", "x=[1,2]", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    error = json.loads(result.stderr)["error"]
    assert error == {"kind": "name", "message": "name 'maen' is not defined", "hint": "did you mean 'mean'?",
                     "line": 1, "column": 5, "calls": []}


def test_json_errors_carry_the_programs_call_stack(cli):
    result = cli("eval", "def f(v):\n    return v.mean(dim=5)\nz = f(x)", "x=[1,2]", "--json")
    error = json.loads(result.stderr)["error"]
    assert (error["line"], error["column"], error["calls"]) == (2, 12, [{"line": 3, "column": 5}])


@pytest.mark.parametrize("payload", [
    "().__class__.__bases__[0].__subclasses__()",
    "__import__('os').system('touch /tmp/gradcli-pwned')",
    "x.__class__.__init__.__globals__",
    "open('/etc/passwd')",
    "getattr(x, 'grad')",
    "exec('import os')",
])
def test_escape_payloads_are_refused_and_do_nothing(cli, payload):
    marker = Path("/tmp/gradcli-pwned")
    marker.unlink(missing_ok=True)
    result = cli("eval", payload, "x=[1.0]")
    assert result.exit_code == 2
    assert "traceback" not in (result.stdout + result.stderr).lower()
    assert not marker.exists()


def test_pickled_npy_is_refused(cli, tmp_path):
    np.save(tmp_path / "evil.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    result = cli("eval", "z = x.sum()", f"x=@{tmp_path}/evil.npy")
    assert result.exit_code == 2 and "refuses to load" in result.stderr


def test_npz_key_and_csv_inputs(cli, tmp_path):
    np.savez(tmp_path / "d.npz", a=np.array([1.0, 2.0]), b=np.array([3.0]))
    (tmp_path / "c.csv").write_text("1,2\n3,4\n")
    out = cli.json("eval", "z = (x*x).sum() + (c*y).sum()", f"x=@{tmp_path}/d.npz:a", f"c=@{tmp_path}/c.csv",
                   "y=ones(2,2)")
    np.testing.assert_allclose(grads(out, "x"), [2.0, 4.0])
    np.testing.assert_allclose(grads(out, "y"), [[1, 2], [3, 4]])


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.startswith("gradcli ")


def test_eval_never_imports_sympy():
    code = ("import sys; from gradcli.cli import main; sys.argv = ['gradcli', 'eval', 'z = (x+2)**2+3', 'x=[2]'];\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("False")


def test_python_dash_m_gradcli_works():
    out = subprocess.run([sys.executable, "-m", "gradcli", "eval", "z = (x+2)**2+3", "x=[2]", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["grads"]["x"]["value"] == [8.0]


def test_the_ambiguous_truth_hint_is_runnable(cli):
    bad = cli("eval", "out = x.sum() if x > 0 else x.prod()", "x=[1., 2.]")
    assert bad.exit_code == 2 and "(x > 0).all()" in bad.stderr
    good = cli.json("eval", "out = x.sum() if (x > 0).all() else x.prod()", "x=[1., 2.]")
    assert grads(good, "x").tolist() == [1.0, 1.0]


def test_loops_with_break_and_continue(cli):
    program = ("y = x\nfor i in range(10):\n    if i == 3:\n        continue\n    if i > 5:\n        break\n"
               "    y = y * 2\nk = 0\nwhile True:\n    k += 1\n    if k > 3:\n        break\nout = y.sum() * k")
    assert grads(cli.json("eval", program, "x=[1.]"), "x").tolist() == [128.0]


@pytest.mark.parametrize("program, spec, grad", [
    ("out = x.mean()", "x=zeros(0)", []),
    ("out = x.var()", "x=[1.0]", ["nan"]),
    ("out = x.std()", "x=[1.0]", ["nan"]),
])
def test_reductions_over_nothing_give_nan_as_pytorch(cli, program, spec, grad):
    result = cli("eval", program, spec, "--json")
    assert result.exit_code == 0 and result.stderr == ""
    out = json.loads(result.stdout)
    assert out["output"]["value"] == "nan" and out["grads"]["x"]["value"] == grad


def test_a_number_or_0d_spec_is_a_0d_input_as_in_pytorch(cli):
    for spec in ("x=2.5", "x=tensor(2.5)"):
        out = cli.json("eval", "out = x * 2", spec)
        assert out["output"]["shape"] == [] and out["grads"]["x"] == {"shape": [], "value": 2.0}


def test_inf_and_nan_can_be_written(cli):
    out = cli.json("eval", "out = x.norm(float('inf')) + x.norm(torch.inf)", "x=[3.0, -4.0]")
    assert out["output"]["value"] == 8.0 and grads(out, "x").tolist() == [0.0, -2.0]
    assert cli.json("eval", "out = x.sum()", "x=[np.nan, 1.0]")["output"]["value"] == "nan"


def test_a_number_too_large_for_a_float_is_an_input_error(cli):
    result = cli("eval", "out = (x*2).sum()", "x=[10**400]")
    assert result.exit_code == 2 and "10 ** 400 is too large for a float" in " ".join(result.stderr.split())


# -- the design card's example: an output that is not one number ---------------------------------------------
def test_a_vector_output_without_grad_gives_the_gradient_of_its_sum(cli):
    # z = (x+2)**2 + 3 at x = 1: d(sum z)/dx = 2(x+2) = 6 everywhere, what PyTorch gives for z.backward(ones_like(z))
    result = cli("eval", "z = (x+2)**2+3", "x=ones(2,2)")
    assert result.exit_code == 0 and result.stderr == ""
    assert ("note: gradients of z.sum() (z is not a scalar); in PyTorch: z.backward(torch.ones_like(z))"
            in result.stdout.splitlines())
    out = cli.json("eval", "z = (x+2)**2+3", "x=ones(2,2)")
    np.testing.assert_allclose(grads(out, "x"), np.full((2, 2), 6.0))
    assert out["gradient"] == {"shape": [2, 2], "value": [[1.0, 1.0], [1.0, 1.0]], "summed": True}


def test_a_given_gradient_is_recorded_and_no_note_is_shown(cli):
    result = cli("eval", "y = x*2", "x=[1,2,3]", "--grad", "[1, 0.1, 0.01]")
    assert "note:" not in result.stdout
    out = cli.json("eval", "y = x*2", "x=[1,2,3]", "--grad", "[1, 0.1, 0.01]")
    assert out["gradient"] == {"shape": [3], "value": [1.0, 0.1, 0.01], "summed": False}
    assert "gradient" not in cli.json("eval", "out = x.sum()", "x=[1,2,3]")


def test_the_summed_gradient_is_checked_as_the_sum(cli):
    out = cli.json("eval", "z = x * x", "x=[1.0, 3.0]", "--check")
    assert out["check"]["status"] == "pass"
    assert out["check"]["inputs"]["x"]["derivative"] == "∂Σz/∂x[i] = 2*x[i]  (6 at x[1])"


# -- the check names the real output --------------------------------------------------------------------------
def test_the_check_names_the_programs_output(cli):
    result = cli("eval", "z = ((x+2)**2+3).sum()", "x=ones(2,2)", "--check")
    assert "  ∂z/∂x[i,j] = 2*(x[i,j] + 2) = 6" in result.stdout.splitlines()
    assert "∂out" not in result.stdout
    check = cli.json("eval", "z = ((x+2)**2+3).sum()", "x=ones(2,2)", "--check")["check"]
    assert check["of"] == "z" and check["inputs"]["x"]["derivative"] == "∂z/∂x[i,j] = 2*(x[i,j] + 2) = 6"


# -- a closed pipe ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["run", "--json", "samples/scalar_backward.grad"],
    ["run", "samples/scalar_backward.grad"],
    ["eval", "out = (x * 2).sum()", "x=ones(3)", "--json"],
])
def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(args):
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=Path(__file__).parent.parent)
    proc.stdout.close()  # the reader is gone before gradcli writes, as with `| head -c 1` on a long output
    stderr = proc.stderr.read()
    assert proc.wait() == 141 and stderr == b""


# Programs a learner writes with issue 12's functions, through the language and `--check`.
LEARNER_PROGRAMS = [
    ("v, i = x.sort(descending=True); top = torch.topk(x, 2).values; out = (v * torch.arange(4.)).sum() + "
     "torch.logsumexp(x, 0) + x.cumsum(0).prod() + top.sum() + x.amax() * x.median()", ["x=[0.5,-1.2,0.3,2.0]"]),
    ("s = torch.linalg.slogdet(A); out = s.logabsdet + torch.linalg.solve(A, b).sum() + torch.det(A) + "
     "torch.linalg.inv(A).sum() + torch.linalg.cholesky(A @ A.T + torch.eye(2)).sum() + "
     "torch.linalg.matrix_power(A, 3).sum()", ["A=[[2.0,1.0],[0.5,3.0]]", "b=[1.0,-1.0]"]),
    ("y = torch.einsum('ij,jk->ik', x, x.T).tril().flip(0) + x.repeat(1, 2)[:, :2].diag_embed()[0]; "
     "z = y.gather(1, torch.tensor([[1], [0]])).masked_fill(torch.tensor([[True], [False]]), 0.5); "
     "out = (z * z).sum() + torch.linalg.vector_norm(x, 3) + x.roll(1, 0).unflatten(1, (2, 1)).sum()",
     ["x=[[0.3,-0.7],[1.1,0.4]]"]),
    ("out = (x.asin() + x.erfinv() + x.atan2(x + 2) + torch.hypot(x, x) + x.logit(eps=0.1) + x % 0.3 + "
     "torch.lerp(x, x * x, 0.25) + torch.xlogy(x, x + 1) + x.lgamma() + torch.addcdiv(x, x, x + 2)).sum()",
     ["x=[0.2,0.45,0.7]"]),
]


@pytest.mark.parametrize("program, inputs", LEARNER_PROGRAMS)
def test_learner_programs_pass_check(cli, program, inputs):
    result = cli("eval", program, *inputs, "--check", "--json")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)["check"]
    assert report["status"] == "pass"
    assert all(c["status"] == "pass" for c in report["inputs"].values())
