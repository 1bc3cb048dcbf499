"""Jacobian and Hessian cost: gradcli against the same NumPy work written by hand.

A script, not a test: timings depend on the machine and its load, so it reports numbers for a
person to read (issue 6's target: the Jacobian of tanh(W @ x), W 50x50, within 2x the time of 50
hand-written backward computations; the Hessian time for 20 inputs is reported, not judged).
Run `python tests/bench/bench_jacobian.py`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
from bench_engine import median_seconds  # noqa: E402  (the sibling script: one timing rule for all benches)

from gradcli.program.evaluation import Settings, engine_settings, run_program  # noqa: E402
from gradcli.engine.autograd import hessian_of, jacobian_of  # noqa: E402

TARGET = 2.0


def by_hand(W: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One backward per output element of y = tanh(W @ x): what a person would write without autograd."""
    n = W.shape[0]
    h = np.tanh(W @ x)
    local = 1.0 - h * h
    jw, jx = np.zeros((n,) + W.shape), np.zeros((n,) + x.shape)
    for k in range(n):
        g = np.zeros(n)
        g[k] = 1.0
        gz = g * local
        jw[k] = np.outer(gz, x)
        jx[k] = W.T @ gz
    return jw, jx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50, help="W is size x size (default 50)")
    parser.add_argument("--hessian-inputs", type=int, default=20, help="elements of x for the Hessian (default 20)")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    n, m = args.size, args.hessian_inputs
    W, x = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n)
    V, v = rng.standard_normal((m, m)) / np.sqrt(m), rng.standard_normal(m)

    with engine_settings(Settings()):
        prog = run_program("y = tanh(W @ x)", {"W": W, "x": x})
        leaves = [prog.leaves["W"], prog.leaves["x"]]
        ours = jacobian_of(prog.output, leaves)
        for got, want in zip(ours, by_hand(W, x)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        timed = median_seconds({"ours": lambda: jacobian_of(prog.output, leaves), "hand": lambda: by_hand(W, x)},
                               args.repeats)
        t_ours, t_hand = timed["ours"], timed["hand"]

        scalar = run_program("out = (tanh(V @ v) ** 2).sum()", {"V": V, "v": v})
        both = [scalar.leaves["V"], scalar.leaves["v"]]
        timed = median_seconds({"v": lambda: hessian_of(scalar.output, [scalar.leaves["v"]]),
                                "both": lambda: hessian_of(scalar.output, both)}, 3)
        t_hessian, t_hessian_all = timed["v"], timed["both"]

    ratio = t_ours / t_hand
    print(f"Jacobian of tanh(W @ x), W {n}x{n}, wrt W and x ({n} backward passes)")
    print(f"  gradcli jacobian_of : {t_ours * 1e3:8.3f} ms  ({t_ours / n * 1e6:.1f} µs per output element)")
    print(f"  NumPy by hand       : {t_hand * 1e3:8.3f} ms  ({t_hand / n * 1e6:.1f} µs per output element)")
    print(f"  ratio               : {ratio:8.2f}x  (target <= {TARGET:g}x: {'met' if ratio <= TARGET else 'NOT met'})")
    print(f"Hessian of sum(tanh(V @ v)**2), v of {m} elements: {t_hessian * 1e3:.1f} ms "
          f"(wrt V and v, {m * m + m} inputs: {t_hessian_all * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
