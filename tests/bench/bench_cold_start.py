"""Cold start of `gradcli eval` as a ratio to the imports it cannot avoid, and what it imports.

Usage: python tests/bench/bench_cold_start.py [--against PATH] [--repeats N]

Each run is a fresh process, started in the checkout it measures (so `-m gradcli` finds that one). The floor is `python -c "import numpy, rich, typer"` (what any gradcli
command loads), so the ratio eval/floor carries from machine to machine where milliseconds do not.
`--against PATH` runs the same command from another checkout (e.g. `git archive REF gradcli | tar -x
-C /tmp/before`) and prints this checkout's time as a ratio to it: a layout change must not make it
slower. Fails (exit 1) if `gradcli eval` without `--check` imports SymPy.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
EVAL = ["-m", "gradcli", "eval", "y = torch.sin(x) * x.exp(); out = y.sum()", "x=ones(2,2)"]
FLOOR = ["-c", "import numpy, rich, typer"]
PROBE = ("import sys; sys.argv=['gradcli','eval','out = (x.exp() * 2).sum()','x=ones(2,2)']\n"
         "from gradcli.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
         "mods = [m for m in sys.modules if m == 'gradcli' or m.startswith('gradcli.')]\n"
         "print(len(mods), int('sympy' in sys.modules))")


def median_seconds(runs: list[tuple[list[str], Path]], repeats: int) -> list[float]:
    """The median wall time of each (arguments, checkout), run in turn so that a busy machine's drift
    falls on all of them alike."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for k, (args, checkout) in enumerate(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, *args], env={**os.environ, "PYTHONPATH": str(checkout)}, cwd=checkout,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def imports(checkout: Path) -> tuple[int, bool]:
    """How many gradcli modules `gradcli eval` loads, and whether SymPy is among what it loads."""
    done = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, "PYTHONPATH": str(checkout)},
                          cwd=checkout, capture_output=True, text=True, check=True)
    count, sympy = done.stdout.split()[-2:]
    return int(count), sympy == "1"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--against", type=Path, help="another checkout to compare with")
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    runs = [(FLOOR, HERE), (EVAL, HERE)] + ([(EVAL, args.against)] if args.against else [])
    floor, here, *other = median_seconds(runs, args.repeats)
    count, sympy = imports(HERE)
    print(f"floor (numpy, rich, typer)  {floor * 1000:6.0f} ms")
    print(f"gradcli eval                {here * 1000:6.0f} ms   {here / floor:5.2f} x floor   "
          f"{count} gradcli modules, sympy {'IMPORTED' if sympy else 'not imported'}")
    if args.against:
        other_count, _ = imports(args.against)
        print(f"against {args.against}  {other[0] * 1000:6.0f} ms   {other[0] / floor:5.2f} x floor   "
              f"{other_count} gradcli modules")
        print(f"ratio this/against          {here / other[0]:5.2f}")
    if sympy:
        raise SystemExit("gradcli eval without --check imported SymPy")


if __name__ == "__main__":
    main()
