"""Cold-start cost of `gradcli eval` against the same job in PyTorch, as ratios from one run.

Usage: python tests/bench/bench_startup.py [--torch-python PATH] [--repeats N]
PATH is a Python with torch installed (skipped when absent). Reports the median wall time and the
peak resident memory of each command (from wait4's rusage), and whether SymPy was imported.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

GRADCLI = [sys.executable, "-m", "gradcli", "eval", "z = (x+2)**2+3", "x=ones(2,2)", "--grad", "ones(2,2)"]
TORCH_CODE = "import torch; x=torch.ones(2,2,requires_grad=True); ((x+2)**2+3).backward(torch.ones(2,2))"
NO_SYMPY = ("import sys; sys.argv=['gradcli','eval','z = (x+2)**2+3','x=ones(2,2)','--grad','ones(2,2)'];"
            "from gradcli.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'sympy' not in sys.modules, 'sympy was imported'")


def measure(cmd: list[str], repeats: int) -> tuple[float, float]:
    """Median seconds and max peak RSS (MiB) over `repeats` cold processes."""
    times, peaks = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"command failed: {cmd}")
        peaks.append(usage.ru_maxrss / 1024)
    return statistics.median(times), max(peaks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch-python", default=shutil.which("python3"))
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-c", NO_SYMPY], check=True, stdout=subprocess.DEVNULL)
    g_time, g_mem = measure(GRADCLI, args.repeats)
    print(f"gradcli eval      {g_time * 1000:7.0f} ms   peak {g_mem:6.1f} MiB   (sympy not imported)")
    has_torch = subprocess.run([args.torch_python, "-c", "import torch"], capture_output=True).returncode == 0
    if not has_torch:
        print("torch             not available: pass --torch-python PATH to compare")
        return
    t_time, t_mem = measure([args.torch_python, "-c", TORCH_CODE], args.repeats)
    print(f"torch one-liner   {t_time * 1000:7.0f} ms   peak {t_mem:6.1f} MiB")
    print(f"ratio             {g_time / t_time:7.2f} x time (target <= 0.25)   {g_mem / t_mem:5.2f} x memory")


if __name__ == "__main__":
    main()
