"""Script loops side by side: gradcli's runner against hand-written NumPy (and PyTorch when given).

A script, not a test: timings depend on the machine and its load, so it reports ratios measured in
one run (issue 14's targets: per iteration <= 1.0x PyTorch and <= 1.5x NumPy, whole process <=
0.5x PyTorch, seed 000's while loop <= 10 µs per iteration, judged at the reference machine's speed:
see bench_engine.REFERENCE_TAPE_US).
Usage: python tests/bench/bench_scripts.py [--torch /path/to/python-with-torch] [--profile]
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
from gradcli.program.evaluation import Settings  # noqa: E402  (after the path insert)
from gradcli.program.scripts import run_file  # noqa: E402
from bench_engine import numpy_tape_us, reference_us  # noqa: E402  (tests/bench/, beside this script)
from polynomial import START, polynomial_fit  # noqa: E402

SHORT, LONG = 200, 2000

TORCH = """import sys, time, torch
def fit(n):
    x = torch.linspace(-3.141592653589793, 3.141592653589793, 2000)
    y = torch.sin(x)
    a, b, c, d = (torch.tensor(v, requires_grad=True) for v in {start})
    lr = 1e-6
    for t in range(n):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    return loss.item()
if len(sys.argv) > 1:
    fit(int(sys.argv[1]))
else:
    fit(20)
    for _ in range({repeats}):
        s = time.perf_counter(); fit({short}); m = time.perf_counter(); fit({long}); e = time.perf_counter()
        print((e - m) - (m - s))
"""

# Seed 000's while loop: a tiny x, so `y = y * 2` runs ~1,000 times.
def torch_program(repeats: int, short: int, long: int) -> str:
    return TORCH.format(repeats=repeats, short=short, long=long, start=tuple(START.values()))


SEED_LOOP = """import torch
x = torch.tensor([{x}], dtype=torch.float64, requires_grad=True)
y = x * 2
steps = 0
while y.data.norm() < 1000:
    y = y * 2
    steps += 1
"""


def numpy_fit(n: int) -> float:
    """The same loop by hand: forward, the four gradients of the squared-error sum, the updates."""
    x = np.linspace(-np.pi, np.pi, 2000, dtype=np.float32)
    y = np.sin(x)
    a, b, c, d = (np.float32(v) for v in START.values())
    lr = np.float32(1e-6)
    for _ in range(n):
        x2 = x * x
        x3 = x2 * x
        y_pred = a + b * x + c * x2 + d * x3
        r = y_pred - y
        loss = (r * r).sum()
        g = 2 * r
        a, b, c, d = a - lr * g.sum(), b - lr * (g * x).sum(), c - lr * (g * x2).sum(), d - lr * (g * x3).sum()
    return float(loss)


def script(text: str, directory: str, name: str) -> Path:
    path = Path(directory, name)
    path.write_text(text, encoding="utf-8")
    return path


def run_seconds(path: Path) -> float:
    settings = Settings(dtype="float32", max_steps=10_000_000, timeout=None)
    start = time.perf_counter()
    result = run_file(path, settings=settings)
    seconds = time.perf_counter() - start
    if result.status != "ok":
        raise SystemExit(f"{path}: {result.status} {result.error}")
    return seconds


def steady(short: float, long: float) -> float:
    """Seconds per iteration, with start-up and the first iterations cancelled out."""
    return (long - short) / (LONG - SHORT)


def process_seconds(cmd: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def profile_split(path: Path) -> list[tuple[str, float]]:
    """Own time (cProfile tottime) by part: engine, interpreter, other gradcli, NumPy's C calls, the rest."""
    profiler = cProfile.Profile()
    profiler.runcall(run_seconds, path)
    parts: dict[str, float] = {}
    top = []
    for (filename, line, func), (_, _, tottime, _, _) in pstats.Stats(profiler).stats.items():
        if "gradcli/engine" in filename:
            part = "engine (gradcli/engine)"
        elif "gradcli/lang" in filename:
            part = "interpreter (gradcli/lang)"
        elif "gradcli" in filename:
            part = "other gradcli"
        elif filename == "~":
            part = "C calls (NumPy kernels, builtins)"
        else:
            part = "other Python (numpy, stdlib)"
        parts[part] = parts.get(part, 0.0) + tottime
        top.append((tottime, f"{os.path.basename(filename)}:{line} {func}"))
    total = sum(parts.values())
    rows = [(part, seconds / total) for part, seconds in sorted(parts.items(), key=lambda kv: -kv[1])]
    rows += [(f"  top: {name}", seconds / total) for seconds, name in sorted(top, reverse=True)[:12]]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", help="a Python with torch installed, for the PyTorch column")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also profile the 2,000-iteration script")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        short = script(polynomial_fit(SHORT), tmp, "poly_short.grad")
        long = script(polynomial_fit(LONG), tmp, "poly_long.grad")
        run_seconds(short)  # warm-up: imports, caches
        numpy_fit(20)
        gradcli_it, numpy_it = [], []
        for _ in range(args.repeats):
            gradcli_it.append(steady(run_seconds(short), run_seconds(long)))
            s = time.perf_counter()
            numpy_fit(SHORT)
            m = time.perf_counter()
            numpy_fit(LONG)
            numpy_it.append(steady(m - s, time.perf_counter() - m))
        g_it, n_it = statistics.median(gradcli_it), statistics.median(numpy_it)
        rows.append(("poly fit per iteration, gradcli", f"{g_it * 1e3:.3f} ms", ""))
        rows.append(("poly fit per iteration, numpy", f"{n_it * 1e3:.3f} ms", ""))
        rows.append(("per iteration gradcli / numpy", f"{g_it / n_it:.2f}x", "target <= 1.5x"))
        if args.torch:
            out = subprocess.run([args.torch, "-c", torch_program(args.repeats, SHORT, LONG)],
                                 check=True, capture_output=True, text=True).stdout
            t_it = statistics.median(float(v) for v in out.split()) / (LONG - SHORT)
            rows.append(("poly fit per iteration, torch", f"{t_it * 1e3:.3f} ms", ""))
            rows.append(("per iteration gradcli / torch", f"{g_it / t_it:.2f}x", "target <= 1.0x"))
            rows.append(("per iteration torch / numpy", f"{t_it / n_it:.2f}x", "PyTorch's own distance from NumPy"))
            torch_file = script(torch_program(0, 0, 0), tmp, "poly_torch.py")
            g_proc = process_seconds([sys.executable, "-m", "gradcli", "run", str(long)], args.repeats)
            t_proc = process_seconds([args.torch, str(torch_file), str(LONG)], args.repeats)
            rows.append((f"whole process, {LONG} iterations", f"{g_proc / t_proc:.2f}x torch",
                         f"{g_proc:.2f} vs {t_proc:.2f} s; target <= 0.5x"))

        tiny = script(SEED_LOOP.format(x="1e-300"), tmp, "seed_tiny.grad")
        none = script(SEED_LOOP.format(x="1e6"), tmp, "seed_none.grad")
        steps = int(np.ceil(np.log2(1000 / 2e-300)))
        seeds, tapes = [], []
        for _ in range(args.repeats):  # in turns, so that a busy spell weighs on both
            seeds.append((run_seconds(tiny) - run_seconds(none)) / steps * 1e6)
            tapes.append(numpy_tape_us(1))
        seed, tape = statistics.median(seeds), statistics.median(tapes)
        at_reference = statistics.median(reference_us(s, t) for s, t in zip(seeds, tapes))
        rows.append(("seed 000 while loop, per iteration", f"{seed:.1f} µs", f"the NumPy tape: {tape:.2f} µs per op"))
        rows.append(("seed 000 loop, at the reference speed", f"{at_reference:.1f} µs", "target <= 10 µs"))

        width = max(len(r[0]) for r in rows)
        for name, value, note in rows:
            print(f"{name:<{width}}  {value:>14}  {note}")
        if args.profile:
            print("\nprofile of the 2,000-iteration script (share of own time):")
            for part, share in profile_split(long):
                print(f"  {part:<60} {share:6.1%}")


if __name__ == "__main__":
    main()
