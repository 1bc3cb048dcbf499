"""What a newcomer types first: the program from stdin or a file, the mistakes a shell makes easy
(an unquoted program, `--check bogus`), `run DIR` on a folder of `.py` files, and eval on a
program that makes its own leaves or calls backward itself."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}


def test_the_program_from_stdin_and_from_a_file(tmp_path):
    done = subprocess.run(["gradcli", "eval", "-", "x=2", "--json"], input="y = x ** 3\n", capture_output=True,
                          text=True, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["grads"]["x"]["value"] == 12.0
    (tmp_path / "prog.txt").write_text("h = x * w\nout = h.sum()\n")
    got = subprocess.run(["gradcli", "jacobian", f"@{tmp_path / 'prog.txt'}", "x=[1.0, 2.0]", "w=3", "--json"],
                         capture_output=True, text=True, env=ENV, timeout=120)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["jacobian"]["x"]["value"] == [3.0, 3.0]


def test_an_unreadable_program_file_is_a_user_error(cli, tmp_path):
    result = cli("eval", f"@{tmp_path / 'missing.txt'}", "x=1")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error[argument]: cannot read the program from '{tmp_path / 'missing.txt'}': No such file or directory",
        "hint: give @FILE of a readable text file, - for stdin, or the program itself"]


@pytest.mark.parametrize("words, shown", [
    (["y", "=", "x*2", "x=1"], "hint: quote the program as one argument: 'y = x*2' x=1"),
    (["z", "=", "(x+2)**2", "x=1", "w=2"], "hint: quote the program as one argument: 'z = (x+2)**2' x=1 w=2"),
])
def test_an_unquoted_program_is_named_as_such(cli, words, shown):
    result = cli("eval", *words)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "error[argument]: the program reached gradcli as several arguments: the shell splits it at its spaces", shown]


def test_a_bad_check_mode_is_named_not_read_as_an_input(cli, tmp_path):
    result = cli("eval", "y = x*2", "x=1", "--check", "bogus")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error[argument]: --check 'bogus' is not a check mode",
                                          "hint: use --check, --check numeric or --check all (a path or input "
                                          "named right after a bare --check is read as its mode: put --check after "
                                          "it)"]
    assert cli("eval", "y = x*2", "--check", "x=1").exit_code == 0  # an input after a bare --check
    (tmp_path / "a.grad").write_text("print('ran')\n")
    assert cli("run", "--check", str(tmp_path)).exit_code == 0  # and a directory


def test_run_dir_runs_py_grad_and_ipynb_and_names_what_it_skipped(cli, tmp_path):
    (tmp_path / "a.py").write_text("print('from a.py', 40 + 2)\n")
    (tmp_path / "b.grad").write_text("print('from b.grad')\n")
    (tmp_path / "notes.txt").write_text("not a script\n")
    (tmp_path / ".hidden").write_text("")
    result = cli("run", str(tmp_path))
    assert result.exit_code == 0
    assert "from a.py 42" in result.stdout and "from b.grad" in result.stdout
    assert "skipped (not .py, .grad or .ipynb): notes.txt" in result.stdout
    summary = json.loads(cli("run", "--json", str(tmp_path)).stdout.splitlines()[-1])["summary"]
    assert summary["files"] == 2 and summary["skipped"] == [str(tmp_path / "notes.txt")]


def test_eval_differentiates_the_leaves_a_program_makes(cli):
    program = "w = torch.tensor([1.0, 2.0], requires_grad=True)\nout = (w * w * x).sum()"
    payload = cli.json("eval", program, "x=3")
    assert payload["grads"] == {"x": {"shape": [], "value": 5.0}, "w": {"shape": [2], "value": [6.0, 12.0]}}
    assert payload["made_leaves"] == ["w"]
    text = " ".join(cli("eval", program, "x=3").stdout.split())
    assert "note: w is a leaf the program made (requires_grad=True), differentiated like the inputs" in text
    assert cli.json("eval", program, "x=3", "--wrt", "w")["grads"] == {"w": {"shape": [2], "value": [6.0, 12.0]}}


def test_eval_never_runs_a_second_backward_after_the_programs_own(cli):
    program = "x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 3).sum()\ny.backward()"
    result = cli("eval", program, "--check")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "note: the gradients are what the program's own backward call at line 3 left in .grad; gradcli ran no " \
           "backward of its own" in text and "all gradients agree" in text
    assert cli.json("eval", program)["grads"]["x"]["value"] == [3.0, 12.0]


def test_two_backward_calls_accumulate_and_cannot_be_checked_by_eval(cli):
    program = "y = (x * x).sum()\ny.backward(retain_graph=True)\ny.backward()"
    payload = cli.json("eval", program, "x=[1.0, 2.0]")
    assert payload["grads"]["x"]["value"] == [4.0, 8.0] and payload["own_backward"] == [2, 3]
    result = cli("eval", program, "x=[1.0, 2.0]", "--check")
    assert result.exit_code == 2
    assert "--check: the program's own backward (line 2, 3) is not one call on its output" in result.stderr
    assert "gradcli run --check" in result.stderr
    given = cli("eval", program, "x=[1.0, 2.0]", "--grad", "1")
    assert given.exit_code == 2 and "--grad: the program calls backward itself (line 2)" in given.stderr


@pytest.mark.parametrize("command", [["eval", "y = x * 2", "x=[1.0, 2.0]", "--check"], ["ops", "sigmoid"],
                                     ["eval", "y = (x", "x=1"]])
def test_no_color_means_no_escape_at_all_even_on_a_terminal(command):
    forced = {**ENV, "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    plain = subprocess.run(["gradcli", *command], capture_output=True, text=True, env=forced, timeout=120)
    assert "\x1b" not in plain.stdout + plain.stderr
    del forced["NO_COLOR"]
    styled = subprocess.run(["gradcli", *command], capture_output=True, text=True, env=forced, timeout=120)
    assert "\x1b[" in styled.stdout + styled.stderr  # the same command does style a terminal's text


def test_at_80_columns_the_summary_never_breaks_a_name_and_no_line_ends_in_spaces(tmp_path):
    deep = tmp_path / "course" / "week_three" / "assignments"
    deep.mkdir(parents=True)
    names = ["linear_regression_from_scratch.py", "softmax_classifier_weight_decay.grad"]
    for name in names:
        (deep / name).write_text("print('ok')\n")
    done = subprocess.run(["gradcli", "run", "-q", str(deep)], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert [line for line in lines if line != line.rstrip()] == []
    cells = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    for name in names:
        assert name in cells  # whole, on a line of its own, never cut inside
    assert "".join(cells).startswith(str(deep))


def test_a_labelled_run_names_its_file_by_the_label_only(cli, tmp_path):
    """What the %%gradcli magic does with its cell's temporary file (tests/test_jupyter.py runs it in a kernel)."""
    path = tmp_path / "cell.py"
    path.write_text("import torch\nx = torch.tensor([1.0], requires_grad=True)\n(x * x).sum().backward()\n"
                    "assert x.grad > 5\n")
    result = cli("run", "--check", "--label", "Cell In[3]", str(path))
    assert result.exit_code == 1 and str(tmp_path) not in result.stdout + result.stderr
    assert result.stdout.startswith("Cell In[3] ─")
    assert result.stderr.splitlines()[:2] == ["error[assertion]: assertion failed: x.grad > 5",
                                              "  --> Cell In[3], line 4, column 1"]
    record = json.loads(cli("run", "--json", "--label", "Cell In[3]", str(path)).stdout.splitlines()[0])
    assert record["file"] == record["error"]["file"] == "Cell In[3]"
    two = cli("run", "--label", "x", str(path), str(path))
    assert two.exit_code == 2 and "--label names one file, and there are 2" in two.stderr


@pytest.mark.parametrize("spec, hint", [
    ("x=abc", "hint: a spec is a number, a list, a constructor or a .npy file: 2.5, [1, 2, 3], ones(2,2), randn(3), "
              "@data.npy"),  # it suggested 'abs', a function, which is no input either
    ("x=onse(2)", "hint: did you mean 'ones'?"),
])
def test_a_wrong_input_spec_is_answered_with_what_a_spec_is(cli, spec, hint):
    result = cli("eval", "y = x*2", spec)
    assert result.exit_code == 2 and result.stderr.splitlines()[-1] == hint


def test_a_missing_input_is_named_in_the_hint(cli):
    result = cli("eval", "y = w*2")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("hint: define it first (w = ...); a program given to gradcli eval can "
                                              "also take it as an input after the program: w=[1.0, 2.0]")
