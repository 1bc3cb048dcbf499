"""The pytest plugin: `.grad` scripts become test items, failures read like `gradcli run`, `.py` tests are untouched."""
from __future__ import annotations

from pathlib import Path

import pytest

import gradcli.check.symbolic  # noqa: F401  (imported once here, not by every in-process pytest run below)
from gradcli.engine import ops as O

pytest_plugins = ["pytester"]

SAMPLES = Path(__file__).parent.parent / "samples"

PASSING = """\
x = tensor([1.0, 2.0], requires_grad=True)
out = (x * x).sum()
out.backward()
assert allclose(x.grad, [2.0, 4.0])
"""
WRONG = """\
x = tensor([1.0, 2.0], requires_grad=True)
out = (x * x).sum()
out.backward()
assert allclose(x.grad, [2.0, 4.5]), "d(sum x^2)/dx = 2x"
"""


QUIET = ("-p", "no:hypothesispytest", "-p", "no:benchmark", "-p", "no:cacheprovider")
"""Plugins each in-process run would import afresh (hypothesis alone takes about a second)."""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*QUIET, *args)


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def shows(result: pytest.RunResult, expected: list[str]) -> None:
    """`expected` appears as consecutive lines of pytest's output, exactly."""
    lines = result.stdout.lines
    starts = [i for i, line in enumerate(lines) if line == expected[0]]
    assert any(lines[i:i + len(expected)] == expected for i in starts), "\n".join(lines)


def test_scripts_in_a_given_directory_are_tests(pytester):
    write(pytester.path, "scripts/good.grad", PASSING)
    write(pytester.path, "scripts/test_plain.py", "def test_plain():\n    assert 1 + 1 == 2\n")
    result = run(pytester, "scripts", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["scripts/good.grad::good PASSED*", "scripts/test_plain.py::test_plain PASSED*"])


def test_a_wrong_expected_number_is_reported_with_file_line_and_values(pytester):
    write(pytester.path, "scripts/wrong.grad", WRONG)
    result = run(pytester, "scripts")
    result.assert_outcomes(failed=1)
    shows(result, [
        "error[assertion]: assertion failed: allclose(x.grad, [2.0, 4.5])",
        "  --> scripts/wrong.grad:4:1",
        '   | assert allclose(x.grad, [2.0, 4.5]), "d(sum x^2)/dx = 2x"',
        "   | " + "^" * 57,
        "   x.grad = tensor([2., 4.])",
        "   [2.0, 4.5] = [2.0, 4.5]",
        "   message: d(sum x^2)/dx = 2x",
    ])
    result.stdout.fnmatch_lines(["*_ wrong.grad _*", "FAILED scripts/wrong.grad::wrong - *"])
    assert "Traceback" not in result.stdout.str()


def test_a_wrong_gradient_is_reported_with_the_worst_element(pytester):
    write(pytester.path, "scripts/vjp.grad", PASSING.replace("assert allclose(x.grad, [2.0, 4.0])\n", ""))
    right = O.MUL.vjps
    object.__setattr__(O.MUL, "vjps", (lambda ns, g, o, a, b: 2 * g * b, right[1]))
    try:
        result = run(pytester, "scripts")
    finally:
        object.__setattr__(O.MUL, "vjps", right)
    result.assert_outcomes(failed=1)
    shows(result, ["check failed: out.backward() at scripts/vjp.grad:3",
                   "   x: worst x[1]: expected 4, got 6 (max abs err 2, all 2 elements)",
        "   ∂out/∂x[i] = 2*x[i]  (4 at x[1])"])


def test_a_user_error_is_reported_with_its_caret(pytester):
    write(pytester.path, "scripts/typo.grad", "x = ones(2, requires_grad=True)\ny = x.maen()\n")
    result = run(pytester, "scripts")
    result.assert_outcomes(failed=1)
    shows(result, ["error[name]: attribute 'maen' is not available on a tensor", "  --> scripts/typo.grad:2:5",
                   "   | y = x.maen()", "   |     ^^^^^^", "hint: did you mean 'mean'?"])


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = run(pytester, "--collect-only", "-q", *args)
    return [line for line in result.stdout.lines if "::" in line]


def test_only_direct_children_of_a_given_directory_unless_gradcli(pytester):
    write(pytester.path, "scripts/top.grad", PASSING)
    write(pytester.path, "scripts/fixtures/meant_to_fail.grad", WRONG)
    assert collected(pytester, "scripts") == ["scripts/top.grad::top"]
    assert collected(pytester, "scripts/fixtures") == ["scripts/fixtures/meant_to_fail.grad::meant_to_fail"]
    assert collected(pytester, "scripts/fixtures/meant_to_fail.grad") == [
        "scripts/fixtures/meant_to_fail.grad::meant_to_fail"]
    assert collected(pytester, "scripts", "--gradcli") == ["scripts/fixtures/meant_to_fail.grad::meant_to_fail",
                                                           "scripts/top.grad::top"]


def test_testpaths_are_directories_given_to_pytest(pytester):
    pytester.makeini("[pytest]\ntestpaths = scripts\n")
    write(pytester.path, "scripts/top.grad", PASSING)
    write(pytester.path, "scripts/deeper/not_collected.grad", PASSING)
    assert collected(pytester) == ["scripts/top.grad::top"]


def test_the_samples_pass_under_pytest(pytester):
    result = run(pytester, str(SAMPLES))
    result.assert_outcomes(passed=len(list(SAMPLES.glob("*.grad"))))


def _notebook(*cells: str) -> str:
    import json
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells]})


def test_notebooks_in_a_given_directory_are_tests(pytester):
    write(pytester.path, "nbs/good.ipynb", _notebook("%matplotlib inline\n" + PASSING))
    write(pytester.path, "nbs/bad.ipynb", _notebook("x = 1", "assert x == 2, 'x is one'"))
    result = run(pytester, "nbs", "-v")
    result.assert_outcomes(passed=1, failed=1)
    assert "nbs/bad.ipynb, cell 2, line 1, column 1" in result.stdout.str()


def test_pytest_n_runs_a_class_of_scripts_in_parallel(pytester):
    """`pytest -n 2 scripts/` (pytest-xdist): each worker collects the same items and runs its share."""
    pytest.importorskip("xdist")
    for k in range(4):
        write(pytester.path, f"scripts/student{k}.grad", PASSING)
    write(pytester.path, "scripts/student_wrong.grad", WRONG)
    result = pytester.runpytest_subprocess(*QUIET, "-n", "2", "-v", "scripts")
    result.assert_outcomes(passed=4, failed=1)
    out = result.stdout.str()
    assert "[gw0]" in out and "[gw1]" in out
    assert "d(sum x^2)/dx = 2x" in out
