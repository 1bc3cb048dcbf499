"""Whole training scripts in the style of the PyTorch tutorials and Dive into Deep Learning
(tests/fixtures/training_scripts/): every character they print equals what torch 2.13 printed for
them (the `.out` file beside each), and, where torch is installed, what torch prints now (each
float to its last printed digit ± 1: float32 rounds differently on different CPUs)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.printed_numbers import assert_printed_like_torch

SCRIPTS = sorted((Path(__file__).parent / "fixtures" / "training_scripts").glob("*.py"))


def printed(cli, path: Path) -> str:
    result = cli("run", "--json", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    file = json.loads(result.stdout.splitlines()[0])
    assert file["status"] == "ok", file.get("error")
    return "".join(e["text"] for e in file["events"] if e["kind"] == "print")


def test_there_are_scripts():
    assert len(SCRIPTS) >= 3


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_a_script_prints_what_torch_printed(path, cli):
    assert printed(cli, path) == path.with_suffix(".out").read_text()


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.stem)
def test_a_script_prints_what_torch_prints(path, cli):
    pytest.importorskip("torch")
    want = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert want.returncode == 0, want.stderr
    assert_printed_like_torch(printed(cli, path), want.stdout)
