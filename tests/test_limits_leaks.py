"""Nothing of Python's own objects is shown to a program: a module, a builtin, a method or an object prints as
Python shows its kind, without an address and without the Python object behind it (issue 35)."""
from __future__ import annotations

import json

import pytest

from tests.language_helpers import cpython, run


@pytest.mark.parametrize("source, shown", [
    ("import random\nprint(zip, random)", "<built-in function zip> <module 'random'>"),
    ("import math\nprint(math, len, print)", "<module 'math'> <built-in function len> <built-in function print>"),
    ("def f(): pass\nprint(f, lambda: 0)", "<function f> <function <lambda>>"),
    ("class A:\n    def m(self): pass\nprint(A().m, A.m, A, A())",
     "<bound method A.m of <__main__.A object>> <function m> <class '__main__.A'> <__main__.A object>"),
    ("import collections\nP = collections.namedtuple('P', 'x y')\nprint(P, P(1, 2))", "<class '__main__.P'> P(x=1, y=2)"),
    ("import numbers\nprint(numbers.Real, ValueError)", "<class 'numbers.Real'> <class 'ValueError'>"),
    ("class A:\n    @classmethod\n    def make(cls): pass\nprint(A.make)",
     "<bound method A.make of <class '__main__.A'>>"),
    ("import torch\nprint(torch.sin, torch)", "<built-in function sin> <module 'torch'>"),
    ("import pprint\nprint(pprint.PrettyPrinter())", "<pprint.PrettyPrinter object>"),
    ("import torch\nprint(torch.nn.Linear(2, 2).parameters())", "<generator object Module.parameters>"),
])
def test_modules_functions_and_objects_print_as_their_kind(source, shown):
    assert run(source).printed == [shown]


def test_a_warning_about_a_builtin_shows_the_builtin_not_the_python_function():
    assert run("import warnings\nwarnings.warn(zip)").printed == ["UserWarning: <built-in function zip>"]


def test_strings_and_plain_values_still_print_as_python_prints_them():
    source = "print(repr('a\\nb'), None, range(3), 'x')"
    assert run(source).printed == cpython(source)


@pytest.mark.parametrize("value, kind, text", [
    ("float('nan')", "ValueError", "cannot convert float NaN to integer"),
    ("float('inf')", "OverflowError", "cannot convert float infinity to integer"),
    ("-float('inf')", "OverflowError", "cannot convert float infinity to integer"),
])
def test_percent_d_of_a_float_that_is_no_integer_is_pythons_exception(value, kind, text):
    source = f"try:\n    '%d' % {value}\nexcept {kind} as e:\n    print(type(e).__name__, e)"
    assert run(source).printed == cpython(source) == [f"{kind} {text}"]


def test_an_uncaught_percent_d_of_nan_is_a_program_error_with_exit_2(cli, tmp_path):
    path = tmp_path / "nan.grad"
    path.write_text("s = '%d' % float('nan')\n")
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert "ValueError: cannot convert float NaN to integer" in result.stdout + result.stderr
    assert "internal error" not in result.stdout + result.stderr


CONTROLS = "s = 'a\\x1b]52;c;aGk=\\x07b\\x1b[31mc\\rd\\u202ee'\n"
ESCAPED = "a\\x1b]52;c;aGk=\\x07b\\x1b[31mc\\rd\\u202ee"


def test_control_characters_a_program_prints_are_shown_escaped(cli, tmp_path):
    path = tmp_path / "controls.grad"
    path.write_text(CONTROLS + "print(s)\nprint('line\\nnext')\n", encoding="utf-8")
    result = cli("run", str(path))
    assert result.exit_code == 0
    assert ESCAPED + "\nline\nnext\n" in result.stdout
    assert "\x1b" not in result.stdout and "\r" not in result.stdout and "\u202e" not in result.stdout


def test_control_characters_in_gradclis_own_messages_are_shown_escaped(cli, tmp_path):
    path = tmp_path / "controls.grad"
    path.write_text(CONTROLS + "raise ValueError(s)\n", encoding="utf-8")
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert f"ValueError: {ESCAPED}" in result.stderr and "\x1b" not in result.stderr


def test_json_output_escapes_what_a_terminal_acts_on(cli, tmp_path):
    path = tmp_path / "controls.grad"
    path.write_text("raise ValueError('a\\x9b31mb\\u202ec\\x1bd')\n", encoding="utf-8")
    result = cli("run", str(path), "--json")
    assert result.exit_code == 2
    assert "\\u009b31mb\\u202ec\\u001bd" in result.stdout
    assert not any(ch in result.stdout for ch in "\x9b\u202e\x1b")
    assert json.loads(result.stdout.splitlines()[0])["error"]["message"] == "ValueError: a\x9b31mb\u202ec\x1bd"
