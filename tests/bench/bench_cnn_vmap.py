"""`run --check` on per-sample gradients of a small CNN (`cnn_vmap.py`, beside this script).

Issue 23: a check answers in seconds. Each of the 8 examples differs from the others only in its
data and its index arrays (max-pool's argmax, the target), so SymPy proves the first and finite
differences check the other seven; before that each example was a new structure and the run took
327 s. Prints the wall and CPU time with and without `--check` and the load average.
Run `python tests/bench/bench_cnn_vmap.py`.
"""
from __future__ import annotations

import os
from pathlib import Path

from bench_two_layer_net import timed

HERE = Path(__file__).resolve().parent
TARGET = 15.0
"""Seconds on an idle machine."""


def main() -> None:
    script = HERE / "cnn_vmap.py"
    plain, plain_cpu, rc_plain = timed(script)
    checked, checked_cpu, rc_checked = timed(script, "--check")
    print(f"CNN per-sample gradients (vmap over 8), load {os.getloadavg()[0]:.1f}")
    print(f"  run          {plain:8.2f} s, CPU {plain_cpu:.2f} s (exit {rc_plain})")
    print(f"  run --check  {checked:8.2f} s, CPU {checked_cpu:.2f} s (exit {rc_checked}); "
          f"target {TARGET:g} s: {'met' if checked <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
