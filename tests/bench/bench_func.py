"""torch.func workloads side by side with PyTorch (issue 37): per-sample gradients of the tutorial's CNN,
the tutorial's batched Jacobians and Hessians, and a Lennard-Jones force fit (`vmap(jacrev(model))` in a
training loop). Each script (`func_*.py`, beside this one) times its own workload and prints its result; this
runs it under `gradcli run` and, when torch is installed, under Python with PyTorch, and prints both times,
their ratio (target: gradcli at most 2x PyTorch's), and whether the results agree. CPU seconds are the
fairer figure on a shared machine; the load average is printed too. Both run with one BLAS/OpenMP thread
(OMP_NUM_THREADS=1): on a busy 2-core machine a second thread's spinning only inflates CPU time. gradcli runs
with its default limits but a long --timeout, and says whether each workload would fit the default one.
Run `python tests/bench/bench_func.py [EPOCHS]` (the force fit's epochs; 400 as published).
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WORKLOADS = ("func_per_sample_grads.py", "func_batched_jacobians.py", "func_lennard_jones.py")
TARGET = 2.0
DEFAULT_TIMEOUT = 30.0


def _run(command: list[str]) -> tuple[str, float, float] | str:
    """The script's result line and workload CPU and wall seconds, or why it failed."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("result ", "seconds ")))
    if done.returncode != 0 or "seconds" not in lines:
        return f"exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
    cpu, wall = map(float, lines["seconds"].split())
    return lines.get("result", ""), cpu, wall


def main() -> None:
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    has_torch = importlib.util.find_spec("torch") is not None
    print(f"torch.func workloads, load {os.getloadavg()[0]:.1f}; torch {'present' if has_torch else 'absent'}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in WORKLOADS:
            script = Path(tmp) / name
            script.write_text((HERE / name).read_text().replace("EPOCHS = 400", f"EPOCHS = {epochs}"))
            ours = _run([sys.executable, "-m", "gradcli", "run", str(script), "--timeout", "3600"])
            theirs = _run([sys.executable, str(script)]) if has_torch else None
            print(f"  {name}")
            for who, got in (("gradcli", ours), ("pytorch", theirs)):
                if got is None:
                    continue
                text = got if isinstance(got, str) else f"CPU {got[1]:7.2f} s, wall {got[2]:7.2f} s  {got[0]}"
                print(f"    {who:8} {text}")
            if isinstance(ours, tuple):
                print(f"    {'fits' if ours[2] < DEFAULT_TIMEOUT else 'does NOT fit'} gradcli's default "
                      f"--timeout of {DEFAULT_TIMEOUT:g} s (wall {ours[2]:.1f} s, the workload alone)")
            if isinstance(ours, tuple) and isinstance(theirs, tuple):
                ratio = ours[1] / max(theirs[1], 1e-9)
                print(f"    CPU ratio {ratio:.2f} (target {TARGET:g}: {'met' if ratio <= TARGET else 'NOT met'}); "
                      f"results {'agree' if _agree(ours[0], theirs[0]) else 'DIFFER'}")


def _agree(ours: str, theirs: str) -> bool:
    """The printed numbers agree to float32's rounding (sums of many float32 terms differ in their order)."""
    import re
    a, b = (np.array([float(v) for v in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", text)]) for text in (ours, theirs))
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-4, atol=1e-3))


if __name__ == "__main__":
    main()
