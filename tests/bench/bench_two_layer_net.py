"""`run --check` on PyTorch's two-layer-net tutorial (500 iterations, 64x1000x100x10, float32).

Issue 23's target: at most 20 s under `run --check` on the reference machine. A script, not a
test: it runs the tutorial (`two_layer_net.py`, beside this script) with and without `--check`
and prints both wall times, their difference (the checking) and the load average, since other
processes share the machine, and the CPU time each took (what a busy machine does not inflate).
Run `python tests/bench/bench_two_layer_net.py [ITERATIONS]`.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def timed(script: Path, *options: str) -> tuple[float, float, int]:
    """Wall time, CPU time (user and system, of the child) and exit code of one run."""
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(script), "--quiet", "--timeout", "3600",
                           *options], capture_output=True, text=True)
    return time.perf_counter() - start, _children_cpu() - cpu, done.returncode


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    source = (HERE / "two_layer_net.py").read_text().replace("range(500)", f"range({iterations})")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "two_layer_net.py"
        script.write_text(source)
        plain, plain_cpu, rc_plain = timed(script)
        checked, checked_cpu, rc_checked = timed(script, "--check")
    print(f"two-layer net, {iterations} iterations, load {os.getloadavg()[0]:.1f}")
    print(f"  run          {plain:8.2f} s, CPU {plain_cpu:.2f} s (exit {rc_plain})")
    print(f"  run --check  {checked:8.2f} s, CPU {checked_cpu:.2f} s (exit {rc_checked}); checking "
          f"{checked - plain:.2f} s, CPU {checked_cpu - plain_cpu:.2f} s; "
          f"target 20 s: {'met' if checked <= 20 else 'NOT met'}")


if __name__ == "__main__":
    main()
