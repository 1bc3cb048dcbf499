"""`gradcli plot`'s sweep: one batch against one run per point, as a ratio from one run.

A script, not a test: timings depend on the machine and its load. The same function is swept
written elementwise (`sin(x)*x`, one batch) and written with a reduction (`(sin(x)*x).sum()` on a
one-element x, one run per point), at 100 to 5,000 points. Run `python tests/bench/bench_plot.py`.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
from gradcli.check.sweep import parse_range, sweep  # noqa: E402

BATCHED = ("out = sin(x) * x", {})
POINTWISE = ("out = (sin(x) * x).sum()", {"x": "[0.]"})


def seconds(program: str, inputs: dict, points: int) -> tuple[float, bool]:
    start = time.perf_counter()
    result = sweep(program, inputs, [parse_range("-3:3")], points=points)
    return time.perf_counter() - start, result.batched


def main() -> None:
    print(f"{'points':>7} {'batched':>10} {'per point':>10} {'ratio':>7}")
    for points in (100, 1_000, 5_000):
        fast, batched = seconds(*BATCHED, points)
        slow, pointwise = seconds(*POINTWISE, points)
        assert batched and not pointwise, "the two programs did not take the two paths"
        print(f"{points:>7,} {fast * 1000:>8.0f}ms {slow * 1000:>8.0f}ms {slow / fast:>6.0f}x")


if __name__ == "__main__":
    main()
