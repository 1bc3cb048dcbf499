"""How long the default limits take to stop a runaway program, and how much of them real programs use.

Usage: python tests/bench/bench_limits.py
Reports, from one run: seed 000's while loop on x=zeros(3) stopped by the defaults through the
command line (a cold process) and through `gradcli.evaluate()`; a 2,000-iteration training loop
of 15 statements and every sample, as fractions of the default time limit (they must stay well
below 1 for the defaults to suit them on slower machines).
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gradcli
from gradcli.errors import LimitError
from gradcli.lang.limits import DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT
from gradcli.program.evaluation import Settings
from gradcli.program.scripts import run_file, script_files

RUNAWAY = "y = x * 2\nwhile y.data.norm() < 1000:\n    y = y * 2"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TRAINING = """\
import torch
x = torch.randn(8, 3)
t = torch.randn(8, 1)
w1 = torch.randn(3, 4, requires_grad=True)
b1 = torch.zeros(4, requires_grad=True)
w2 = torch.randn(4, 1, requires_grad=True)
lr = 0.01
for step in range(2000):
    h = (x @ w1 + b1).tanh()
    y = h @ w2
    err = y - t
    loss = (err * err).mean()
    loss.backward()
    w1.data = w1.data - lr * w1.grad.data
    b1.data = b1.data - lr * b1.grad.data
    w2.data = w2.data - lr * w2.grad.data
    w1.grad.zero_()
    b1.grad.zero_()
    w2.grad.zero_()
    if step == 0:
        first = loss.item()
    k = step + 1
    last = loss.detach()
assert k == 2000 and last.item() < first
"""


def runaway_cli() -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "gradcli", "eval", RUNAWAY, "x=zeros(3)"], capture_output=True,
                          text=True, env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": ""})
    return time.perf_counter() - start, proc.returncode, proc.stderr.splitlines()[0]


def runaway_evaluate() -> tuple[float, str]:
    start = time.perf_counter()
    try:
        gradcli.evaluate(RUNAWAY, {"x": "zeros(3)"})
    except LimitError as exc:
        return time.perf_counter() - start, exc.message
    raise SystemExit("the runaway loop was not stopped")


def script_seconds(path: Path) -> float:
    """The script's own time (what the time limit counts), with no checks."""
    start = time.perf_counter()
    result = run_file(path, settings=Settings(timeout=None))
    if result.status != "ok":
        raise SystemExit(f"{path} did not run: {result.error or result.assertion}")
    return time.perf_counter() - start


def main() -> None:
    print(f"defaults: --max-steps {DEFAULT_MAX_STEPS:,}, --timeout {DEFAULT_TIMEOUT:g} s")
    seconds, code, line = runaway_cli()
    print(f"seed 000 runaway, gradcli eval (cold process): {seconds:5.2f} s, exit {code}: {line}")
    seconds, message = runaway_evaluate()
    print(f"seed 000 runaway, gradcli.evaluate():         {seconds:5.2f} s: {message}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "training.grad"
        path.write_text(TRAINING, encoding="utf-8")
        seconds = script_seconds(path)
    print(f"2,000-iteration training loop of 15 statements: {seconds:5.2f} s = {seconds / DEFAULT_TIMEOUT:.2f} "
          f"of the time limit")
    worst = max((script_seconds(p), p.name) for p in script_files([SAMPLES]))
    print(f"slowest sample ({worst[1]}): {worst[0]:5.2f} s = {worst[0] / DEFAULT_TIMEOUT:.2f} of the time limit")


if __name__ == "__main__":
    main()
