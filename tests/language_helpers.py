"""Running a program in-process, as `gradcli run` does, to read back its variables and printed text."""
from __future__ import annotations

from typing import Any

import pytest

from gradcli.errors import GradcliError
from gradcli.lang.formatting import to_str
from gradcli.lang.interpreter import Hooks, Interpreter
from gradcli.lang.parser import parse_program
from gradcli.program.evaluation import Settings, engine_settings


class Ran:
    """A finished program: its top-level variables, each print's text and each bare expression's."""

    def __init__(self, env: dict[str, Any], printed: list[str], shown: list[str]) -> None:
        self.env = env
        self.printed = printed
        self.shown = shown

    def __getitem__(self, name: str) -> Any:
        return self.env[name]


def run(source: str, max_steps: int = 1_000_000, dtype: str = "float32") -> Ran:
    """Run `source` under a script's settings (float32 by default, as PyTorch's tutorials are)."""
    printed: list[str] = []
    shown: list[str] = []

    def on_print(items: list[tuple[str, Any]], line: int, text: str) -> None:
        printed.append(text.removesuffix("\n"))
    def on_display(title: str, value: Any, line: int) -> None:
        shown.append(to_str(value))
    with engine_settings(Settings(dtype=dtype, max_steps=max_steps)):
        interpreter = Interpreter(source, hooks=Hooks(on_print=on_print, on_display=on_display), max_steps=max_steps)
        interpreter.run(parse_program(source))
    return Ran(interpreter.env, printed, shown)


def fails(source: str, kind: type[GradcliError] = GradcliError, max_steps: int = 1_000_000,
          dtype: str = "float32") -> GradcliError:
    with pytest.raises(kind) as caught:
        run(source, max_steps=max_steps, dtype=dtype)
    return caught.value


def cpython(source: str) -> list[str]:
    """What CPython itself prints for `source` (a pure-Python snippet): the oracle for the language."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=60,
                          env={"PYTHONHASHSEED": "0"})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def same_as_cpython(source: str) -> None:
    """`source` prints, line for line, what CPython prints for it (an object's address, `at 0x...`, aside)."""
    import re

    def masked(lines: list[str]) -> list[str]:
        return [re.sub(r" at 0x[0-9a-f]+", "", line) for line in lines]
    assert masked("\n".join(run(source).printed).splitlines()) == masked(cpython(source))


def oracle(source: str) -> dict[str, Any]:
    """The same program run by CPython with PyTorch itself, its top-level variables (skipped without torch)."""
    pytest.importorskip("torch")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<oracle>", "exec"), namespace)
    return namespace


def torch_printed(source: str) -> list[str]:
    """What Python with real PyTorch prints for `source`, line by line (the test skips without torch)."""
    import subprocess
    import sys
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
