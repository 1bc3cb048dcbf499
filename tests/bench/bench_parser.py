"""The parser's refusals are fast: pathological nesting, an oversized program, a long flat one.

A script, not a test: timings depend on the machine and its load. Each line is one parse, with
the target it was once asserted against in tests/test_parser.py (under 2 s for any pathological
nesting, 0.5 s to refuse a 200,000-line program, 5 s to accept 20,000 flat statements) and the
time as a fraction of that target. Run `python tests/bench/bench_parser.py`.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
from gradcli.errors import LimitError  # noqa: E402
from gradcli.lang.parser import parse_program  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_parser import PATHOLOGICAL  # noqa: E402

CASES = [(f"nesting: {name}", source, 2.0) for name, source in PATHOLOGICAL.items()] + [
    ("refuse 200,000 lines", "x = 1\n" * 200_000, 0.5),
    ("accept 20,000 flat statements", "y = x * 2 + 1\n" * 20_000, 5.0),
]


def main() -> None:
    print(f"{'case':<40} {'seconds':>8} {'of target':>10}")
    for name, source, target in CASES:
        start = time.perf_counter()
        try:
            parse_program(source)
        except LimitError:
            pass
        elapsed = time.perf_counter() - start
        print(f"{name:<40} {elapsed:8.3f} {elapsed / target:10.2f}")


if __name__ == "__main__":
    main()
