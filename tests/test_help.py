"""Each command's --help speaks for that command: its own defaults and scope, a unit or an example
where one helps, and no option without a description. Golden files at a fixed width (the Cli
fixture sets COLUMNS=100 and TERM=dumb; click caps help at 80 columns), so nothing depends on the
terminal the tests run in."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from gradcli.cli import app

GOLDEN = Path(__file__).parent / "golden"
COMMANDS = ("eval", "jacobian", "hessian", "run", "plot", "ops")


def command(name: str) -> Any:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", COMMANDS)
def test_help_is_the_golden_text(cli, name):
    result = cli(name, "--help")
    assert result.exit_code == 0
    assert result.stdout == (GOLDEN / f"help_{name}.txt").read_text(encoding="utf-8")


def test_the_command_list_is_not_cut_short(cli):
    result = cli("--help")
    assert result.exit_code == 0
    assert result.stdout == (GOLDEN / "help.txt").read_text(encoding="utf-8")
    commands = result.stdout.split("Commands:")[1]
    assert "..." not in commands and all(f"  {name}  " in commands for name in COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_and_argument_is_described(name):
    for param in command(name).params:
        assert (getattr(param, "help", None) or "").strip(), f"gradcli {name}: {param.name} has no help"


@pytest.mark.parametrize("name, default, other", [("eval", "float64", "float32"), ("jacobian", "float64", "float32"),
                                                  ("hessian", "float64", "float32"), ("run", "float32", "float64"),
                                                  ("plot", "float64", "float32")])
def test_dtype_names_the_commands_own_default(cli, name, default, other):
    help_text = " ".join(cli(name, "--help").stdout.split())
    assert f"--dtype <float64|float32> The default float dtype: {default} (" in help_text
    assert f"[default: {default}]" in help_text and f"defaults to {other}" not in help_text


@pytest.mark.parametrize("name", ("eval", "jacobian", "hessian", "plot"))
def test_a_single_program_command_says_nothing_of_script_files(cli, name):
    help_text = " ".join(cli(name, "--help").stdout.split())
    for words in ("script file", "each file", "run:", "per file", "one line per file"):
        assert words not in help_text, f"gradcli {name} --help: {words!r}"


@pytest.mark.parametrize("name", ("eval", "jacobian", "hessian", "run"))
def test_limits_give_their_unit_and_default(cli, name):
    help_text = " ".join(cli(name, "--help").stdout.split())
    assert "--timeout SECONDS Stop" in help_text and "[default: 30]" in help_text
    assert "--max-steps N Most loop iterations allowed, all loops together, and as many calls of the program's own " \
        "functions (" in help_text
    assert help_text.count("[default: 50,000,000]") == 2  # --max-steps and --max-elements
    assert "--max-elements N Largest tensor allowed, in 8-byte elements (a float32 tensor may have twice as many), " \
        "checked before allocating (" in help_text


@pytest.mark.parametrize("name", COMMANDS)
def test_help_writes_metavars_and_defaults_one_way(cli, name):
    """No braces (typer's `{PROGRAM}`), and every default in typer's `[default: X]`, never in prose."""
    help_text = cli(name, "--help").stdout
    assert "{" not in help_text and "}" not in help_text
    assert "(default " not in help_text and "Default:" not in help_text


def test_version_and_completion_are_on_the_root(cli):
    for flag in ("-V", "--version"):
        result = cli(flag)
        assert result.exit_code == 0 and result.stdout.startswith("gradcli 0.")
    root = cli("--help").stdout
    assert "--install-completion" in root and "-V, --version" in root


def test_run_help_names_every_kind_of_file_it_runs(cli):
    help_text = " ".join(cli("run", "--help").stdout.split())
    assert "Scripts (.py, .grad) and notebooks (.ipynb)" in help_text and "*.grad" not in help_text


def test_run_speaks_of_files_where_eval_speaks_of_the_program(cli):
    run = " ".join(cli("run", "--help").stdout.split())
    assert "Stop a file after this many seconds" in run and "one object per file as it finishes" in run
    assert "each file starts from" in run
    evaluate = " ".join(cli("eval", "--help").stdout.split())
    assert "Stop the command after this many seconds" in evaluate and "printed under the output" in evaluate


@pytest.mark.parametrize("name", ("eval", "jacobian", "hessian", "run", "plot", "ops"))
def test_the_shared_options_come_in_one_order(cli, name):
    """--seed, --dtype and --json where a command has them, in that order, and --debug last before -h."""
    listed = [p.opts[-1] for p in command(name).params if getattr(p, "opts", None) and p.opts[-1].startswith("--")]
    shared = [o for o in listed if o in ("--seed", "--dtype", "--json")]
    assert shared == [o for o in ("--seed", "--dtype", "--json") if o in listed]
    assert listed[-1] == "--debug"
