"""Shared fixtures: a CLI runner with a fixed-width, uncoloured console, as users see in a pipe."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import settings
from typer.testing import CliRunner

from gradcli.cli import app, normalise_argv

ENV = {"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"}

# CI replays the same examples every run (a red CI must mean a change broke something); a
# developer's run explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


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
