"""`run --check` on a residual block, LayerNorm → Linear → GELU → Linear on a (2, 3, 6) input (issue 34).

Target: at most 5 s of CPU time under `--check` (18 s before: SymPy's replay ran outside its
budget). A script, not a test: it runs `residual_block.py` (beside this script) with and without
`--check` and prints the CPU time of each (what a busy machine does not inflate), the wall time and
the load average. Run `python tests/bench/bench_residual_block.py`.
"""
from __future__ import annotations

import os
from pathlib import Path

from bench_two_layer_net import timed

HERE = Path(__file__).resolve().parent


def main() -> None:
    script = HERE / "residual_block.py"
    plain, plain_cpu, rc_plain = timed(script)
    checked, checked_cpu, rc_checked = timed(script, "--check")
    print(f"residual block (2, 3, 6), load {os.getloadavg()[0]:.1f}")
    print(f"  run          {plain:8.2f} s, CPU {plain_cpu:.2f} s (exit {rc_plain})")
    print(f"  run --check  {checked:8.2f} s, CPU {checked_cpu:.2f} s (exit {rc_checked}); "
          f"target 5 s of CPU: {'met' if checked_cpu <= 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
