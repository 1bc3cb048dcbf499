"""Tables never cut a name: at 80 columns a column is never narrower than its longest name, and where
even that does not fit (40 columns) each row is shown as a block of `header value` lines. Golden
text at fixed widths; `…` stays what it means elsewhere, a summary of elements left out."""
from __future__ import annotations

import pytest

from conftest import ENV
from gradcli.cli import app, normalise_argv

LONG = ("hidden_activations = (weights_of_layer * inputs_to_the_net).tanh(); "
        "total_loss = hidden_activations.sum()")
INPUTS = ("weights_of_layer=[0.1, 0.2]", "inputs_to_the_net=[1.0, 2.0]")
SCRIPT = ("import torch\nweights_of_the_first_layer = torch.tensor([0.5, -1.0], requires_grad=True)\n"
          "(weights_of_the_first_layer * weights_of_the_first_layer).sum().backward()\n")


def at(cli, width: int, *args: str):
    return cli.runner.invoke(app, normalise_argv(list(args)), env={**ENV, "COLUMNS": str(width)},
                             prog_name="gradcli", catch_exceptions=False)


def after(text: str, heading: str) -> str:
    return text[text.index(heading):]


def test_the_check_table_keeps_long_input_names_whole_at_80(cli):
    shown = at(cli, 80, "eval", LONG, *INPUTS, "--check").stdout
    assert after(shown, "check (symbolic)").splitlines()[:7] == [
        "check (symbolic): all gradients agree",
        "┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┓",
        "┃ input             ┃ status ┃ witness ┃ abs err ┃ rel err ┃ checked ┃",
        "┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━┩",
        "│ weights_of_layer  │ pass   │ SymPy   │       0 │       0 │ 2/2     │",
        "│ inputs_to_the_net │ pass   │ SymPy   │       0 │       0 │ 2/2     │",
        "└───────────────────┴────────┴─────────┴─────────┴─────────┴─────────┘"]


def test_at_40_columns_each_row_of_the_check_is_a_block(cli):
    shown = at(cli, 40, "eval", LONG, *INPUTS, "--check").stdout
    assert after(shown, "check (symbolic)").splitlines()[:14] == [
        "check (symbolic): all gradients agree",
        "input   weights_of_layer",
        "status  pass",
        "witness SymPy",
        "abs err 0",
        "rel err 0",
        "checked 2/2",
        "",
        "input   inputs_to_the_net",
        "status  pass",
        "witness SymPy",
        "abs err 0",
        "rel err 0",
        "checked 2/2"]


@pytest.mark.parametrize("width, golden", [
    (80, ["checks by site",  # the names alone are wider than 80 columns in a table: a block
          "line                 3",
          "call                 (weights_of_the_first_layer * weights_of_the_first_layer).",
          "                     sum().backward()",
          "calls                1",
          "failed               0",
          "witnesses            SymPy 1",
          "worst (of tolerance) 0.0% at call 1, weights_of_the_first_layer[0]"]),
    (120, [
        "checks by site",
        "┏━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "┃ line ┃ call                                   ┃ calls ┃ failed ┃ witnesses ┃ worst (of tolerance)                    ┃",
        "┡━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
        "│    3 │ (weights_of_the_first_layer *          │     1 │      0 │ SymPy 1   │ 0.0% at call 1,                         │",
        "│      │ weights_of_the_first_layer).sum().     │       │        │           │ weights_of_the_first_layer[0]           │",
        "│      │ backward()                             │       │        │           │                                         │",
        "└──────┴────────────────────────────────────────┴───────┴────────┴───────────┴─────────────────────────────────────────┘",
    ]),
    (40, ["checks by site",
          "line       3",
          "call       (weights_of_the_first_layer *",
          "           weights_of_the_first_layer).",
          "           sum().backward()",
          "calls      1",
          "failed     0",
          "witnesses  SymPy 1",
          "worst (of  0.0% at call 1,",
          "tolerance) weights_of_the_first_layer[0]"]),
])
def test_a_long_gradient_call_is_wrapped_between_its_parts_never_cut(cli, tmp_path, width, golden):
    (tmp_path / "net.py").write_text(SCRIPT)
    shown = at(cli, width, "run", "--check", str(tmp_path / "net.py")).stdout
    assert after(shown, "checks by site").splitlines()[:len(golden)] == golden


def test_the_summary_keeps_a_long_path_whole_at_40(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "week_03_backpropagation"
    folder.mkdir()
    (folder / "exercise_with_a_long_name.py").write_text("print('ran')\n")
    shown = at(cli, 40, "run", "week_03_backpropagation").stdout
    assert shown.splitlines()[:4] == ["week_03_backpropagation/", "exercise_with_a_long_name.py", "─" * 40, "ran"]
    lines = after(shown, "gradcli run · dtype float32").splitlines()
    assert lines[:3] == ["gradcli run · dtype float32", "file       week_03_backpropagation/",
                         "           exercise_with_a_long_name.py"]
    assert lines[3:5] == ["status     ok", "backward   0"]


@pytest.mark.parametrize("width", [40, 52, 64, 80, 100])
@pytest.mark.parametrize("args", [
    ("eval", LONG, *INPUTS, "--check", "--explain"),
    ("ops", "log_softmax"),
    ("jacobian", "y = weights_of_layer * inputs_to_the_net", *INPUTS, "--check"),
])
def test_no_table_cuts_anything_at_any_width(cli, width, args):
    result = at(cli, width, *args)
    assert result.exit_code == 0 and "…" not in result.stdout


@pytest.mark.parametrize("width", [40, 60, 80])
def test_no_table_of_a_run_cuts_anything(cli, tmp_path, width):
    (tmp_path / "a_script_whose_name_is_longer_than_forty_columns.py").write_text(SCRIPT)
    result = at(cli, width, "run", "--check", "--explain", str(tmp_path))
    assert result.exit_code == 0 and "…" not in result.stdout


def test_the_whole_catalogue_at_80_shows_rows_as_blocks_rather_than_fold_a_name(cli):
    """Folding the catalogue's longest names (an optimizer's keyword, a loss's name) into a table at 80 columns
    broke them mid-word; each row is a block of whole lines instead, and a filtered listing stays a table."""
    shown = at(cli, 80, "ops").stdout.splitlines()
    assert shown[1:6] == ["call            -a", "kind            operator", "node            NegBackward0",
                          "derivative rule ∂(-x)/∂x = -1", "--check         yes"]
    assert "…" not in "\n".join(shown)
    assert any("initial_accumulator_value=" in line for line in shown)
    assert at(cli, 80, "ops", "relu").stdout.splitlines()[1].startswith("┏")


def test_ops_with_a_filter_says_where_that_name_is_reachable_only(cli):
    """It listed every name of every module (about 200 lines) under a three-row answer."""
    shown = at(cli, 80, "ops", "log_softmax").stdout
    assert after(shown, "also reachable as").splitlines() == [
        "also reachable as", "torch.NAME: log_softmax", "torch.nn.functional.NAME: log_softmax"]
    assert cli.json("ops", "log_softmax")["namespaces"] == {"torch": "log_softmax",
                                                           "torch.nn.functional": "log_softmax"}


def test_lines_under_a_check_wrap_under_their_indent(cli):
    shown = at(cli, 80, "jacobian", "y = x * x", "x=[1.0, 2.0]", "--check").stdout.splitlines()
    assert shown[-2:] == ["  layout: rows are output elements, columns input elements (PyTorch's); SymPy's",
                          "  derive_by_array gives the transpose"]
