"""An output named by its source reads as math: a compound expression is parenthesised wherever
it is differentiated (`∂(sin(x) * x ** 2)/∂x`), in tables, formulas and legends, while JSON keeps
the name as the program wrote it."""
from __future__ import annotations

import json

import pytest

from gradcli.source import operand


@pytest.mark.parametrize("text, shown", [
    ("out", "out"), ("x.grad", "x.grad"), ("y[0]", "y[0]"), ("y[:, 1]", "y[:, 1]"), ("f(x)", "f(x)"),
    ("(x ** 3).sum()", "(x ** 3).sum()"), ("sin(x) * x ** 2", "(sin(x) * x ** 2)"), ("-x", "(-x)"),
    ("x[0] * x[1]", "(x[0] * x[1])"), ("a if c else b", "(a if c else b)"), ("x @ w", "(x @ w)"),
    ("y = x", "(y = x)"),
])
def test_operand_parenthesises_what_has_an_operator(text, shown):
    assert operand(text) == shown


def test_eval_title_and_formula_of_an_unnamed_output(cli):
    result = cli("eval", "sin(x)*x**2", "x=1.5", "--check")
    lines = result.stdout.splitlines()
    assert result.exit_code == 0
    assert lines[0] == "sin(x) * x ** 2 = 2.24436  shape () · float64"
    assert lines[1] == "∂(sin(x) * x ** 2)/∂x = 3.15164  shape () · float64"
    assert "  ∂(sin(x) * x ** 2)/∂x = x*(x*cos(x) + 2*sin(x)) = 3.15164" in lines


def test_json_keeps_the_name_as_written(cli):
    payload = json.loads(cli("eval", "sin(x)*x**2", "x=1.5", "--json").stdout)
    assert payload["output"]["name"] == "sin(x) * x ** 2"


def test_a_named_output_is_not_parenthesised(cli):
    assert cli("eval", "out = sin(x)*x**2", "x=1.5").stdout.splitlines()[1].startswith("∂out/∂x = 3.15164")


def test_summed_note_and_vector_table_title(cli):
    out = " ".join(cli("eval", "x * 2", "x=[1.0, 2.0]").stdout.split())
    assert "note: gradients of (x * 2).sum() (x * 2 is not a scalar); in PyTorch: " \
           "(x * 2).backward(torch.ones_like(x * 2))" in out
    assert "∂(x * 2)/∂x shape (2,) · float64" in out


def test_jacobian_rows_and_title(cli):
    out = cli("jacobian", "sin(x) * 2", "x=[1.5, 2.0]", "--check").stdout
    assert "∂(sin(x) * 2)/∂x  shape (2, 2) · float64 · rows (sin(x) * 2), columns x" in out
    assert "│ (sin(x) * 2)[1] │" in out
    assert "  ∂(sin(x) * 2)[0]/∂x[0] = 2*cos(x[0]) = 0.141474" in out


def test_hessian_title_and_formula(cli):
    out = cli("hessian", "x[0] * x[1]", "x=[1.5, 2.0]", "--check").stdout
    assert "∂²(x[0] * x[1])/∂x∂x  shape (2, 2) · float64" in out
    assert "∂²(x[0] * x[1])/∂x[0]∂x[1] = 1" in out


def test_plot_legend_and_gradient_table(cli):
    line = cli("plot", "sin(x)*x", "--range", "-1:1", "--points", "9").stdout.splitlines()[-1]
    assert line == "▚ sin(x) * x    ⢕ ∂(sin(x) * x)/∂x"
    field = cli("plot", "x*y", "--range", "x=-1:1", "--range", "y=-1:1", "--points", "9").stdout
    assert "┃  x ┃  y ┃ x * y ┃ ∂(x * y)/∂x ┃ ∂(x * y)/∂y ┃" in field
