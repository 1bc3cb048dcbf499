"""pytest collects `.grad` scripts and `.ipynb` notebooks as tests and runs each like `gradcli run --check`.

Which scripts: those directly inside a directory given to pytest (or `testpaths`), and scripts
named on the command line; `--gradcli` takes every `.grad` file pytest's directory walk finds.
Collecting only direct children keeps fixture scripts that are *meant* to fail (tests/fixtures/)
out of a plain `pytest tests/`, just as pytest leaves a fixture `.py` alone unless it is named
`test_*.py`. `.py` files are not touched.

Installed as the `pytest11` entry point `gradcli`, so it loads in every pytest run of this
environment: the module imports nothing of gradcli until a script actually runs.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

SUFFIX = ".grad"
SUFFIXES = (SUFFIX, ".ipynb")
_ARG_PATHS = pytest.StashKey[frozenset]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradcli", "gradcli scripts")
    group.addoption("--gradcli", action="store_true", default=False,
                    help="collect every *.grad file under the given paths as a test (by default only scripts "
                         "directly inside a directory passed to pytest)")
    group.addoption("--gradcli-timeout", type=float, default=None, metavar="SECONDS",
                    help="wall-clock limit of each .grad script, as gradcli run --timeout (default: the "
                         "gradcli_timeout ini value, else gradcli's default)")
    parser.addini("gradcli_timeout", "wall-clock limit in seconds of each .grad script (gradcli run --timeout)",
                  default=None)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix in SUFFIXES and _collects(file_path, parent.config):
        return GradFile.from_parent(parent, path=file_path)
    return None


def _collects(path: Path, config: pytest.Config) -> bool:
    if config.getoption("gradcli"):
        return True
    given = config.stash.get(_ARG_PATHS, None)
    if given is None:
        base = config.invocation_params.dir
        given = frozenset((base / arg.split("::")[0]).resolve() for arg in config.args)
        config.stash[_ARG_PATHS] = given
    path = path.resolve()
    return path in given or path.parent in given


class GradFile(pytest.File):
    """A script file: one test item, since a script stops at its first failure."""

    def collect(self) -> list[pytest.Item]:
        return [GradItem.from_parent(self, name=self.path.stem)]


class ScriptFailed(Exception):
    """A script's assert or check failed, or it stopped on an error; carries the run for the report."""

    def __init__(self, result: Any) -> None:
        super().__init__(f"{result.path}: {result.status}")
        self.result = result


class GradItem(pytest.Item):
    """Runs the script with every gradient checked by the loop policy, as `gradcli run --check` does."""

    def runtest(self) -> None:
        from gradcli.check import checker
        from gradcli.program.evaluation import SCRIPT_DTYPE, Settings
        from gradcli.program.scripts import run_file
        settings = Settings(dtype=SCRIPT_DTYPE, timeout=_timeout(self.config))  # PyTorch's default, as `run`
        result = run_file(_shown_path(self.path, self.config), checker("symbolic"), settings)
        if result.status != "ok":
            raise ScriptFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | Any:
        if isinstance(excinfo.value, ScriptFailed):
            return _plain_text(excinfo.value.result, self.config)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.path.name


def _timeout(config: pytest.Config) -> float:
    """`--gradcli-timeout`, else the `gradcli_timeout` ini value, else `gradcli run`'s default."""
    from gradcli.lang.limits import DEFAULT_TIMEOUT
    given = config.getoption("gradcli_timeout")
    if given is None:
        given = config.getini("gradcli_timeout")
    if given in (None, ""):
        return DEFAULT_TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise pytest.UsageError(f"gradcli timeout {given!r}: give a positive number of seconds")
    return seconds


def _shown_path(path: Path, config: pytest.Config) -> Path:
    """The script's path as the user typed it relative to where pytest runs, for short error locations."""
    try:
        return path.relative_to(config.invocation_params.dir)
    except ValueError:
        return path


def _plain_text(result: Any, config: pytest.Config) -> str:
    """The failure as `gradcli run` shows it, without colour, at pytest's terminal width."""
    from rich.console import Console

    from gradcli.views.script_view import failure_view
    width = config.get_terminal_writer().fullwidth
    buffer = io.StringIO()
    Console(file=buffer, width=max(width, 60), color_system=None, highlight=False, soft_wrap=False).print(
        failure_view(result))
    text = buffer.getvalue().rstrip("\n")
    if result.error is not None and "--timeout" in (result.error.hint or ""):
        text += "\nunder pytest: --gradcli-timeout SECONDS, or gradcli_timeout = SECONDS in the ini file"
    return text
