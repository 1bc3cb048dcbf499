"""Shared fixtures: a CLI runner with a fixed-width, uncoloured console, as users see in a pipe."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gradcli.cli import app, normalise_argv

ENV = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"}


class Cli:
    """Runs `gradcli ARGS` in-process the way `main()` would, with stdout and stderr kept apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str):
        return self.runner.invoke(app, normalise_argv(list(args)), env=ENV, catch_exceptions=False)

    def json(self, *args: str) -> dict:
        result = self(*args, "--json")
        assert result.exit_code == 0, result.stderr or result.stdout
        return json.loads(result.stdout)


@pytest.fixture
def cli() -> Cli:
    return Cli()
