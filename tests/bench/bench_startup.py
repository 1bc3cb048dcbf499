"""Cold start of gradcli's commands against `import numpy` and PyTorch, as ratios from one run.

Usage: python tests/bench/bench_startup.py [--torch-python PATH] [--repeats N]

Each command is a fresh process, and the commands take turns (one run of each per round) so that a busy
machine's drift falls on all of them alike; the report is each one's median wall time, its peak resident
memory (from wait4's rusage), and its ratio to `python -c "import numpy"` (what any gradcli command loads)
and to `python -c "import torch"` (PATH is a Python with torch; the comparison is skipped without it).
The load average is printed with the numbers: on a shared machine, milliseconds say little without it.
Also fails (exit 1) if `gradcli eval` without --check imports SymPy or the torch library packages.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
GRADCLI = [sys.executable, "-m", "gradcli"]
SCRIPT = "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = (x + 2) ** 2\ny.sum().backward()\nprint(x.grad)\n"
TORCH_CODE = "import torch; x=torch.ones(2,2,requires_grad=True); ((x+2)**2+3).backward(torch.ones(2,2))"
PROBE = ("import sys; sys.argv=['gradcli','eval','z = (x+2)**2+3','x=ones(2,2)','--debug']\n"
         "from gradcli.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
         "print(' '.join(m for m in sys.modules if m == 'sympy' or m.startswith(('gradcli.nn', 'gradcli.optim', "
         "'gradcli.data', 'gradcli.func', 'gradcli.distributions'))))")


def measure(commands: dict[str, list[str]], repeats: int) -> dict[str, tuple[float, float, float]]:
    """Median wall seconds, median CPU seconds (user and system, the watchdog's child included) and max peak
    RSS (MiB) of each command over `repeats` rounds of cold processes. CPU time is what a busy machine
    disturbs least: the wall clock also counts the other jobs' turns."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    peaks: dict[str, list[float]] = {name: [] for name in commands}
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    for _ in range(repeats):
        for name, cmd in commands.items():
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=HERE)
            _, status, usage = os.wait4(proc.pid, 0)
            times[name].append(time.perf_counter() - start)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"command failed: {cmd}")
            peaks[name].append(usage.ru_maxrss / 1024)
            cpu[name].append(usage.ru_utime + usage.ru_stime)
    return {name: (statistics.median(times[name]), statistics.median(cpu[name]), max(peaks[name]))
            for name in commands}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--torch-python", default=shutil.which("python3"))
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(HERE)}, cwd=HERE)
    heavy = probe.stdout.split("\n")[-2].split()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "tiny.py"
        script.write_text(SCRIPT)
        commands = {"python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
                    "gradcli --help": [*GRADCLI, "--help"],
                    "gradcli eval (one line)": [*GRADCLI, "eval", "z = (x+2)**2+3", "x=ones(2,2)", "--grad", "ones(2,2)"],
                    "gradcli run (tiny script)": [*GRADCLI, "run", str(script)]}
        has_torch = args.torch_python is not None and subprocess.run(
            [args.torch_python, "-c", "import torch"], capture_output=True).returncode == 0
        if has_torch:
            commands["torch one-liner"] = [args.torch_python, "-c", TORCH_CODE]
        before = os.getloadavg()[0]
        results = measure(commands, args.repeats)
    numpy_wall, numpy_cpu, _ = results["python -c 'import numpy'"]
    torch_wall, torch_cpu, _ = results["torch one-liner"] if has_torch else (None, None, None)
    print(f"load average {before:.2f} before, {os.getloadavg()[0]:.2f} after; median of {args.repeats} cold runs; "
          "ratios of wall time, then of CPU time")
    for name, (wall, cpu, peak) in results.items():
        vs_torch = f"{wall / torch_wall:5.2f} {cpu / torch_cpu:5.2f} x torch" if torch_wall else ""
        print(f"{name:26s} {wall * 1000:6.0f} ms wall {cpu * 1000:6.0f} ms CPU  peak {peak:5.1f} MiB  "
              f"{wall / numpy_wall:5.2f} {cpu / numpy_cpu:5.2f} x numpy  {vs_torch}")
    if not has_torch:
        print("torch not available: pass --torch-python PATH to compare")
    if heavy:
        raise SystemExit(f"gradcli eval without --check imported {', '.join(heavy)}")


if __name__ == "__main__":
    main()
