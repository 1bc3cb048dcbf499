"""`run --check` on tutorial-sized training loops (issue 34's target: each within 20 s on the shared machine).

A script, not a test: for the two-layer net as an nn.Module (`two_layer_module.py`, 500 iterations, float32), an
MNIST-style CNN with StepLR (`mnist_cnn_steplr.py`), an LSTM then GRU (`lstm_gru_loop.py`, 200 iterations) and a
two-layer transformer encoder (`transformer_loop.py`, 200 iterations), it prints the wall and CPU time with and without `--check`,
their ratio, the exit codes and the load average (other processes share the machine: CPU time is what a busy
machine does not inflate). Run `python tests/bench/bench_tutorial_loops.py`.
"""
from __future__ import annotations

import os
from pathlib import Path

from bench_two_layer_net import timed

HERE = Path(__file__).resolve().parent
LOOPS = ("two_layer_module.py", "mnist_cnn_steplr.py", "lstm_gru_loop.py", "transformer_loop.py")


def main() -> None:
    for name in LOOPS:
        plain, plain_cpu, rc_plain = timed(HERE / name)
        checked, checked_cpu, rc_checked = timed(HERE / name, "--check")
        print(f"{name}, load {os.getloadavg()[0]:.1f}")
        print(f"  run          {plain:8.2f} s, CPU {plain_cpu:.2f} s (exit {rc_plain})")
        print(f"  run --check  {checked:8.2f} s, CPU {checked_cpu:.2f} s (exit {rc_checked}); "
              f"{checked_cpu / max(plain_cpu, 1e-9):.1f}x the plain run's CPU; "
              f"target 20 s: {'met' if checked <= 20 else 'NOT met'} (wall), {'met' if checked_cpu <= 20 else 'NOT met'} (CPU)")


if __name__ == "__main__":
    main()
