"""`gradcli run`: scripts show their prints as a learner expects, every backward call is checked on its
own contribution, and the exit code says whether everything held."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gradcli.check import checker
from gradcli.engine import ops as O
from gradcli.program.evaluation import Settings
from gradcli.program.scripts import BackwardCheck, Output, run_file, script_files

SAMPLES = sorted((Path(__file__).parent.parent / "samples").glob("*.grad"))


def script(tmp_path: Path, text: str, name: str = "script.grad") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def wrong_mul_vjp():
    """MulBackward0 returning twice the right gradient for its first input: the check must notice."""
    right = O.MUL.vjps
    object.__setattr__(O.MUL, "vjps", (lambda ns, g, o, a, b: 2 * g * b, right[1]))
    yield
    object.__setattr__(O.MUL, "vjps", right)


# -- the samples ---------------------------------------------------------------------------------------

def test_there_are_samples():
    assert len(SAMPLES) >= 14


def test_every_sample_passes_check(cli):
    result = cli("run", "--check", "--json", "samples/")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    files, summary = lines[:-1], lines[-1]["summary"]
    failures = {f["file"]: f["error"] or f["events"] for f in files if f["status"] != "ok"}
    assert not failures
    assert result.exit_code == 0
    assert [Path(f["file"]).name for f in files] == [p.name for p in SAMPLES]
    assert summary["ok"] == len(SAMPLES) and summary["checks_failed"] == 0
    assert all(f["checks"]["passed"] == sum(s["calls"] for s in f["sites"]) >= f["backward_calls"] for f in files)
    assert all(f["warnings"] == [] and all(s["unchecked"] == 0 for s in f["sites"]) for f in files)


# -- what a user sees -------------------------------------------------------------------------------------

SEED_000 = """\
import torch
from torch.autograd import Variable
x = Variable(torch.ones(2,2),requires_grad=True)
y = x + 2
print(x.creator)
print(y.creator)
z = y*y*3
out = z.mean()
out.backward()
print(x.grad)
print(y.grad)
print("out is", out.item(), "and", 1/4)
x.grad
"""


def test_prints_as_the_tutorial_shows_them(cli, tmp_path):
    path = script(tmp_path, SEED_000, "seed000.grad")
    result = cli("run", str(path))
    assert result.exit_code == 0, result.stderr
    body = result.stdout.split("gradcli run")[0]
    grad = "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n"  # what PyTorch prints for x.grad
    table = ("x.grad  shape (2, 2) · float32\n"  # the bare expression, displayed
             "┏━━━┳━━━━━┳━━━━━┓\n"
             "┃   ┃   0 ┃   1 ┃\n"
             "┡━━━╇━━━━━╇━━━━━┩\n"
             "│ 0 │ 4.5 │ 4.5 │\n"
             "│ 1 │ 4.5 │ 4.5 │\n"
             "└───┴─────┴─────┘\n")
    lines = body.splitlines()
    assert lines[0].startswith(f"{path} ─")
    assert body.split("\n", 1)[1] == "None\n<AddBackward0>\n" + grad + "None\nout is 27.0 and 0.25\n" + table


def test_a_python_file_shows_no_bare_expression(cli, tmp_path):
    """Python prints nothing for `x.grad` alone on a line, so a .py file shows only its prints; the same text as a
    .grad script shows the table."""
    text = "import torch\nx = torch.ones(2, requires_grad=True)\n(x * x).sum().backward()\nx.grad\nmodel = x * 3\nmodel\n" \
           "print(x.grad)\n"
    shown = {}
    for name in ("tutorial.py", "tutorial.grad"):
        result = cli("run", str(script(tmp_path, text, name)))
        assert result.exit_code == 0, result.stderr
        shown[name] = result.stdout.split("gradcli run")[0].split("\n", 1)[1]
    assert shown["tutorial.py"] == "tensor([2., 2.])\n"
    assert shown["tutorial.grad"].startswith("x.grad  shape (2,) · float32\n")
    assert "model  shape (2,) · float32\n" in shown["tutorial.grad"]
    assert shown["tutorial.grad"].endswith("tensor([2., 2.])\n")


def test_summary_table(cli, tmp_path, monkeypatch):
    script(tmp_path, SEED_000, "a.grad")
    script(tmp_path, "x = ones(2, requires_grad=True)\n", "b.grad")
    monkeypatch.chdir(tmp_path)
    result = cli("run", "--quiet", ".")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].strip() == "gradcli run · dtype float32"
    headers = [[c.strip() for c in line.strip("┃").split("┃")] for line in lines[2:4]]
    assert [" ".join(h).strip() for h in zip(*headers)] == ["file", "status", "backward calls", "checks passed", "time"]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│")]
    assert [r[:4] for r in rows] == [["a.grad", "ok", "1", "-"], ["b.grad", "ok", "0", "-"]]
    assert lines[-1].startswith("2 files: 2 ok, 0 failed, 0 error · ")
    assert "4.5" not in result.stdout  # --quiet shows the summary only


def test_a_print_shows_the_value_at_that_moment(tmp_path):
    path = script(tmp_path, "x = tensor([1.0, 2.0], requires_grad=True)\n(x * 3).sum().backward()\nprint(x.grad)\n"
                            "x.grad.zero_()\nprint(x.grad)\n")
    result = run_file(path)
    assert [e.kind for e in result.events] == ["print", "print"]  # zero_() is run for its effect, not shown
    first, second = (e.items[0][1] for e in result.events)
    np.testing.assert_array_equal(first._data, [3, 3])
    np.testing.assert_array_equal(second._data, [0, 0])


def test_json_lines(cli, tmp_path):
    path = script(tmp_path, "x = tensor([1.0, 2.0], requires_grad=True)\ny = x * x\ny.backward(tensor([1.0, 0.5]))\n"
                            "print(x.grad, y.grad_fn, 'text', None)\nx.grad\n")
    result = cli("run", "--json", "--check", str(path))
    assert result.exit_code == 0
    file, summary = (json.loads(line) for line in result.stdout.splitlines())
    assert file["status"] == "ok" and file["backward_calls"] == 1 and file["checks"] == {"passed": 1, "failed": 0, "undefined": 0}
    check, printed, shown = file["events"]
    assert check["kind"] == "check" and check["line"] == 3 and check["output"] == "y"
    assert check["check"]["status"] == "pass" and set(check["check"]["inputs"]) == {"x"}
    assert printed == {"kind": "print", "line": 4, "items": [
        {"source": "x.grad", "shape": [2], "dtype": "float32", "value": [2.0, 2.0]},
        {"source": "y.grad_fn", "value": "<MulBackward0>"}, {"source": "'text'", "value": "text"},
        {"source": "None", "value": None}], "text": "tensor([2., 2.]) <MulBackward0> text None\n"}
    assert shown["kind"] == "display" and shown["items"][0]["value"] == [2.0, 2.0]
    assert summary == {"summary": {**summary["summary"], "files": 1, "ok": 1, "failed": 0, "error": 0,
                                   "dtype": "float32", "backward_calls": 1, "checks_passed": 1, "checks_failed": 0, "exit_code": 0}}


# -- failures and exit codes --------------------------------------------------------------------------------

WRONG_EXPECTATION = """\
x = tensor([1.0, 2.0], requires_grad=True)
out = (x * x).sum()
out.backward()
assert allclose(x.grad, [2.0, 4.5])
print("never reached")
"""


def test_a_wrong_expected_number_fails_with_exit_1(cli, tmp_path, monkeypatch):
    path = script(tmp_path, WRONG_EXPECTATION, "wrong.grad").relative_to(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = cli("run", "--check", str(path))
    assert result.exit_code == 1
    assert "never reached" not in result.stdout
    assert result.stderr.splitlines() == [
        "error[assertion]: assertion failed: allclose(x.grad, [2.0, 4.5])",
        f"  --> {path}:4:1",
        "   | assert allclose(x.grad, [2.0, 4.5])",
        "   | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "   x.grad = tensor([2., 4.])",
        "   [2.0, 4.5] = [2.0, 4.5]",
    ]
    assert "│ failed │" in result.stdout


def test_a_syntax_error_exits_2_naming_file_and_line(cli, tmp_path, monkeypatch):
    path = script(tmp_path, "x = ones(2, requires_grad=True)\ny = (x * 2).sum(\n", "broken.grad").relative_to(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:4] == [
        "error[syntax]: '(' was never closed", f"  --> {path}:2:16", "   | y = (x * 2).sum(", "   |                ^"]


def test_an_error_beats_a_failure_and_every_file_still_runs(cli, tmp_path, monkeypatch):
    script(tmp_path, WRONG_EXPECTATION, "a_wrong.grad")
    script(tmp_path, "y = undefined_name + 1\n", "b_error.grad")
    script(tmp_path, "print('fine')\n", "c_ok.grad")
    monkeypatch.chdir(tmp_path)
    result = cli("run", ".")
    assert result.exit_code == 2
    assert "fine" in result.stdout
    assert "3 files: 1 ok, 1 failed, 1 error" in result.stdout
    assert "  --> b_error.grad:1:5" in result.stderr and "name 'undefined_name' is not defined" in result.stderr


def test_fail_fast_stops_after_the_first_failure(cli, tmp_path):
    script(tmp_path, WRONG_EXPECTATION, "a_wrong.grad")
    script(tmp_path, "print('fine')\n", "b_ok.grad")
    result = cli("run", "--fail-fast", str(tmp_path))
    assert result.exit_code == 1
    assert "fine" not in result.stdout
    assert "1 file: 0 ok, 1 failed, 0 error, 1 not run (--fail-fast)" in result.stdout


def test_missing_path_and_empty_directory_are_user_errors(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("run", "nope.grad")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error[argument]: no such file or directory: 'nope.grad'",
                                          "hint: give a script (.py, .grad or .ipynb) or a directory of them"]
    result = cli("run", ".")
    assert result.exit_code == 2 and "no .py, .grad or .ipynb files in directory" in result.stderr


def test_directories_expand_to_sorted_scripts(tmp_path):
    for name in ("b.grad", "a.grad", "notes.txt", "c.py", "d.ipynb"):
        script(tmp_path, "", name)
    (tmp_path / "sub").mkdir()
    script(tmp_path / "sub", "", "c.grad")
    assert script_files([tmp_path, tmp_path / "notes.txt"]) == [tmp_path / "a.grad", tmp_path / "b.grad",
                                                                 tmp_path / "c.py", tmp_path / "d.ipynb",
                                                                 tmp_path / "notes.txt"]


def test_affine_tutorial_error_has_the_fix(cli):
    result = cli("run", "tests/fixtures/tutorials/seed002_affine.grad")
    assert result.exit_code == 2
    assert "grad can be implicitly created only for scalar outputs" in result.stderr
    assert "y.backward(torch.ones(2))" in result.stderr


# -- settings -------------------------------------------------------------------------------------------------

def test_seed_and_dtype_apply_to_each_file(tmp_path):
    path = script(tmp_path, "x = randn(3)\nx\n")
    first = run_file(path, settings=Settings(seed=7)).events[0].items[0][1]
    again = run_file(path, settings=Settings(seed=7)).events[0].items[0][1]
    other = run_file(path, settings=Settings(seed=8)).events[0].items[0][1]
    np.testing.assert_array_equal(first._data, again._data)
    assert not np.array_equal(first._data, other._data)
    assert run_file(path, settings=Settings(dtype="float32")).events[0].items[0][1].dtype == np.float32


def test_bad_options_are_user_errors(cli, tmp_path):
    path = script(tmp_path, "")
    assert cli("run", "--dtype", "float16", str(path)).exit_code == 2
    assert cli("run", "--check=exact", str(path)).exit_code == 2


# -- checking each backward call -------------------------------------------------------------------------------

ACCUMULATE = """\
x = tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * x
y.backward(tensor([1.0, 1.0, 1.0]), retain_graph=True)
y.backward(tensor([1.0, 0.5, 0.0]), retain_graph=True)
assert allclose(x.grad, [4, 6, 6])
x.grad.data.zero_()
y.backward(tensor([0.0, 0.0, 2.0]))
assert allclose(x.grad, [0, 0, 12])
"""


def test_each_backward_call_is_checked_on_its_own_contribution(tmp_path, monkeypatch):
    import gradcli.check.policy
    seen = []

    def record(output, leaves, gradient, computed, **options):
        seen.append((sorted(leaves), gradient, {k: v.tolist() for k, v in computed.items()}))
        return gradcli.check.CheckReport("pass", options["mode"], "y", {})
    monkeypatch.setattr(gradcli.check.policy, "check_gradients", record)
    result = run_file(script(tmp_path, ACCUMULATE), checker("numeric"))
    assert result.status == "ok" and result.backward_calls == 3
    # the stand-in reports name no input, so no witness verified anything: unchecked, never counted as passed
    assert result.checks_passed == 0 and sum(s.unchecked for s in result.sites) == 3
    assert [(names, g.tolist(), c) for names, g, c in seen] == [
        (["x"], [1, 1, 1], {"x": [2, 4, 6]}),
        (["x"], [1, 0.5, 0], {"x": [2, 2, 0]}),
        (["x"], [0, 0, 2], {"x": [0, 0, 12]})]


def test_accumulation_passes_the_real_check(tmp_path):
    result = run_file(script(tmp_path, ACCUMULATE), checker("symbolic"))
    assert result.status == "ok", result.error or result.assertion
    assert [c.line for c in result.checks] == [3, 4, 7] and result.checks_failed == 0


def test_leaves_are_named_by_the_script(tmp_path):
    path = script(tmp_path, "w = ones(2, requires_grad=True)\nalias = w\n"
                            "out = (w * ones(2, requires_grad=True) + zeros(2)).sum()\nout.backward()\n")
    result = run_file(path, checker("symbolic"))
    assert list(result.checks[0].report.inputs) == ["w", "leaf0"]
    assert result.checks[0].output_name == "out"


def test_a_wrong_vjp_fails_the_check_with_exit_1(cli, tmp_path, monkeypatch, wrong_mul_vjp):
    script(tmp_path, "x = tensor([1.0, 2.0], requires_grad=True)\nout = (x * x).sum()\nout.backward()\n", "vjp.grad")
    monkeypatch.chdir(tmp_path)
    assert cli("run", "vjp.grad").exit_code == 0  # without --check nothing can tell
    result = cli("run", "--check", "vjp.grad")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "check failed: out.backward() at vjp.grad:3",
        "   x: worst x[1]: expected 4, got 6 (max abs err 2, all 2 elements)",
        "   ∂out/∂x[i] = 2*x[i]  (4 at x[1])"]
    assert "x     │ fail" in result.stdout and "x[1]: got 6, expected 4" in result.stdout
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("│ vjp.grad")]
    assert [c.strip() for c in row.strip("│").split("│")][:4] == ["vjp.grad", "failed", "1", "0/1"]


def test_check_events_come_in_order(tmp_path):
    result = run_file(script(tmp_path, "x = ones(2, requires_grad=True)\nprint(1)\nx.sum().backward()\nprint(2)\n"),
                      checker("symbolic"))
    assert [type(e) for e in result.events] == [Output, BackwardCheck, Output]
    assert result.checks[0].output_name == "x.sum()"


def test_quiet_still_says_why_a_file_failed(cli, tmp_path, monkeypatch):
    script(tmp_path, WRONG_EXPECTATION.replace('print("never reached")', 'print("shown only without --quiet")'), "w.grad")
    script(tmp_path, "print('hello')\n", "ok.grad")
    monkeypatch.chdir(tmp_path)
    result = cli("run", "--quiet", ".")
    assert result.exit_code == 1
    assert "hello" not in result.stdout and "ok.grad" in result.stdout
    assert result.stderr.startswith("error[assertion]: assertion failed: allclose(x.grad, [2.0, 4.5])\n  --> w.grad:4:1")


def test_explain_shows_each_backward_call_step_by_step(cli, tmp_path):
    path = script(tmp_path, "x = torch.ones(2, 2, requires_grad=True)\ny = x + 2\nz = y*y*3\nout = z.mean()\n"
                            "out.backward()\n")
    text = cli("run", "--explain", str(path)).stdout
    assert "out.backward() at line 5" in text
    order = [text.index(word) for word in ("MeanBackward0 (out)", "← all 0.75", "x ← all 4.5")]
    assert order == sorted(order)
    events = json.loads(cli("run", "--explain", "--json", str(path)).stdout.splitlines()[0])["events"]
    steps = [e for e in events if e["kind"] == "explain"][0]["steps"]
    assert [s["node"] for s in steps] == ["MeanBackward0", "MulBackward0", "MulBackward0", "AddBackward0"]
    assert steps[-1]["gradient_in"] == "all 4.5" and steps[-1]["passes"] == ["all 4.5", None]


def test_explain_and_check_together_leave_gradients_as_plain_backward(tmp_path):
    path = script(tmp_path, "x = torch.tensor([1.0, 2.0], requires_grad=True)\n(x * x).sum().backward()\n"
                            "assert allclose(x.grad, [2.0, 4.0])\n")
    result = run_file(path, checker("symbolic"), explain=True)
    assert result.status == "ok" and result.checks_passed == 1
    assert [type(e).__name__ for e in result.events] == ["Explanation", "BackwardCheck"]


@pytest.mark.parametrize("line, words", [
    ("x.grad = torch.ones(3)", "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'"),
    ("x.grad = 5", "assigned grad expected to be a Tensor or None but got grad of type int"),
    ("x.grad = torch.tensor([1, 2])", "attempting to assign a gradient with dtype 'int64'"),
    ("x.data = torch.ones(2, dtype=torch.int64)", "data set to a tensor that requires gradients must be floating point"),
])
def test_assigning_a_mismatched_grad_or_data_is_refused_where_it_happens(cli, tmp_path, line, words):
    path = script(tmp_path, f"x = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n{line}\ny.backward()\n")
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert words in " ".join(result.stderr.split()) and f"{path.name}:3" in result.stderr


def test_an_error_in_a_function_shows_the_call_stack_innermost_last(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a short relative path, so no line depends on the temp directory's length
    script(tmp_path, "import torch\ndef inner(v):\n    return v.item()\ndef outer(w):\n    return inner(w * 2)\n"
                     "y = outer(torch.ones(3))\n", name="F.grad")
    result = cli("run", "F.grad")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    start = lines.index("  the program's calls, innermost last:")
    assert [line.replace("F.grad", "F") for line in lines[start + 1:start + 10]] == [
        "  --> F:6:5", "   | y = outer(torch.ones(3))", "   |     ^^^^^^^^^^^^^^^^^^^^",
        "  --> F:5:12", "   |     return inner(w * 2)", "   |            ^^^^^^^^^^^^",
        "  --> F:3:12", "   |     return v.item()", "   |            ^^^^^^^^"]


def test_a_deep_recursion_shows_the_ends_of_its_call_stack(tmp_path, cli):
    path = script(tmp_path, "def f(n):\n    return f(n + 1)\nf(0)\n")
    text = cli("run", str(path)).stderr
    assert "maximum recursion depth exceeded" in text
    assert "... 191 more calls ..." in text and text.count("-->") == 10


def test_a_backward_of_an_expression_is_named_with_its_parentheses(cli, tmp_path):
    """`(m + k).backward()` is not `m + k.backward()`, which reads as a different program."""
    script = tmp_path / "sum.py"
    script.write_text("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                      "m = (x * x).sum()\nk = x.sum()\n(m + k).backward()\n")
    result = cli("run", str(script), "--check")
    assert result.exit_code == 0, result.stdout
    assert "(m + k).backward() at line 5" in result.stdout and "m + k.backward()" not in result.stdout
