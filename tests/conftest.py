"""Shared fixtures: a CLI runner with a fixed-width, uncoloured console, as users see in a pipe."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import settings
from typer.testing import CliRunner

from gradcli.cli import app, normalise_argv

ENV = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"}

# Every run, inside CI or not, replays the same examples with no example database: a red run must
# mean a change broke something, on any machine. `pytest --hypothesis-profile=explore` searches new
# examples, many more of them; whatever it finds is a bug to fix in gradcli. (Tests that name their
# own max_examples, because each example runs SymPy, keep that count in both.)
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None, max_examples=300)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=5_000)
settings.load_profile("repeatable")


class Cli:
    """Runs `gradcli ARGS` in-process the way `main()` would, with stdout and stderr kept apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str):
        return self.runner.invoke(app, normalise_argv(list(args)), env=ENV, prog_name="gradcli", catch_exceptions=False)

    def json(self, *args: str) -> dict:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.stderr or result.stdout
        return json.loads(result.stdout)

    def checked_file(self, path: Path, text: str) -> dict:
        """`gradcli run PATH --check --json` of a script written there: its file record (it must not fail)."""
        path.write_text(text, encoding="utf-8")
        result = self("run", str(path), "--check", "--json")
        assert result.exit_code == 0, result.stdout
        return json.loads(result.stdout.splitlines()[0])


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture
def patched():
    """Swap an op's VJPs for the length of a test (Op is frozen, so around its __setattr__)."""
    saved = []

    def patch(op, vjps):
        saved.append((op, op.vjps))
        object.__setattr__(op, "vjps", vjps)
    yield patch
    for op, vjps in reversed(saved):
        object.__setattr__(op, "vjps", vjps)
