"""`--check` cost: the seed's matrix example, growth with the number of elements, and loops.

A script, not a test: timings depend on the machine and its load. It prints the SymPy import
and the check itself apart (issue 4's target: the matrix example end to end, cold, under 1 s;
the check alone was once asserted under 2 s in tests/test_check.py), then symbolic and
finite-difference check times for 10 to 20,000 elements of three program
shapes, with how many elements each check covered (sampling starts above `BUDGET` elements per
input).

Then the loop policy (issue 13's target: PyTorch's polynomial fit, 2,000 points and 2,000
iterations, under `run --check` in at most 60 s, float32 and float64): the script is run with and
without `--check`, and the difference is the checking; the table shows how it grows with
iterations (one SymPy proof, then one finite-difference check per call) and with points. The
load average is printed beside, since other processes share the machine.
Run `python tests/bench/bench_check.py` (`--loops` for the loop table alone, `--loops --target`
for the 2,000 × 2,000 fit alone).
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
start = time.perf_counter()
import gradcli as g  # noqa: E402
from gradcli.check import BUDGET, check_gradients  # noqa: E402
from polynomial import polynomial_fit  # noqa: E402  (tests/bench/, beside this script)

Program = Callable[[int], tuple[dict, g.Tensor]]


def matrix(_: int) -> tuple[dict, g.Tensor]:
    r = np.random.default_rng(3)
    x, y, w = (g.tensor(r.standard_normal(s), requires_grad=True) for s in ((10, 20), (10, 5), (20, 5)))
    return {"x": x, "y": y, "w": w}, g.mean(y - g.matmul(x, w))


def elementwise(n: int) -> tuple[dict, g.Tensor]:
    x = g.tensor(np.linspace(-1, 1, n), requires_grad=True)
    return {"x": x}, (x * x * 3 + x.sin()).sum()


def dense_tanh(n: int) -> tuple[dict, g.Tensor]:
    cols = max(1, int(np.sqrt(n / 2)))
    r = np.random.default_rng(0)
    x = g.tensor(r.standard_normal((max(1, n // cols), cols)), requires_grad=True)
    w = g.tensor(r.standard_normal((cols, 5)), requires_grad=True)
    return {"x": x, "w": w}, (x @ w).tanh().mean()


def softmax_rows(n: int) -> tuple[dict, g.Tensor]:
    x = g.tensor(np.random.default_rng(0).standard_normal((max(1, n // 10), 10)), requires_grad=True)
    return {"x": x}, g.log_softmax(x, dim=1)[:, 0].sum()


def timed(program: Program, n: int, mode: str) -> tuple[float, str]:
    leaves, out = program(n)
    out.backward()
    computed = {k: t.grad._data for k, t in leaves.items()}
    t0 = time.perf_counter()
    report = check_gradients(out, leaves, None, computed, mode=mode)
    elapsed = time.perf_counter() - t0
    assert report.status == "pass", report.to_json()
    return elapsed, ", ".join(f"{k}: {c.coverage}" + (f" ({c.note})" if c.note else "")
                              for k, c in report.inputs.items())


def polynomial(points: int, iterations: int, dtype: str, check: str | None) -> tuple[float, float, str]:
    """Wall and CPU seconds to run the polynomial fit (with `check`), and the witnesses its one site used."""
    import tempfile

    from gradcli.check import checker
    from gradcli.program.scripts import run_file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "polynomial.grad"
        path.write_text(polynomial_fit(iterations, points, dtype))
        t0, c0 = time.perf_counter(), time.process_time()
        result = run_file(path, checker(check) if check else None)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert result.status == "ok", result.to_json()
    witnesses = ", ".join(f"{k} {v}" for k, v in result.sites[0].witnesses.items()) if result.sites else "-"
    return elapsed, cpu, witnesses


def loops() -> None:
    import os
    print("\npolynomial fit under run --check (one site; SymPy proves the first call); wall (CPU) seconds")
    print(" dtype    points  iterations   plain             --check             check CPU/call  witnesses"
          "              load")
    sizes = [(2000, 2000)] if "--target" in sys.argv else [(2000, 10), (2000, 200), (2000, 2000), (500, 2000),
                                                            (8000, 200)]
    for dtype in ("float32", "float64"):
        for points, iterations in sizes:
            plain, plain_cpu, _ = polynomial(points, iterations, dtype, None)
            checked, cpu, witnesses = polynomial(points, iterations, dtype, "symbolic")
            per_call = (cpu - plain_cpu) / iterations
            print(f"{dtype:>7} {points:>7,} {iterations:>11,} {plain:7.2f} ({plain_cpu:6.2f}) s "
                  f"{checked:8.2f} ({cpu:6.2f}) s {per_call * 1e3:9.1f} ms   {witnesses:<22} "
                  f"{os.getloadavg()[0]:.1f}")


def main() -> None:
    if "--loops" in sys.argv:
        loops()
        return
    engine = time.perf_counter() - start
    t0 = time.perf_counter()
    import sympy  # noqa: F401
    sympy_import = time.perf_counter() - t0
    check, _ = timed(matrix, 0, "symbolic")
    print(f"seed matrix example (10x20, 10x5, 20x5): import gradcli {engine:.3f} s, import sympy "
          f"{sympy_import:.3f} s, check {check:.3f} s")
    print(f"\nelements (sampling above {BUDGET} per input)    symbolic   numeric   covered")
    for program in (elementwise, dense_tanh, softmax_rows):
        for n in (10, 100, 1_000, 10_000, 20_000):
            sym, covered = timed(program, n, "symbolic")
            num, _ = timed(program, n, "numeric")
            print(f"{program.__name__:>13} {n:>7,}                  {sym:7.3f} s {num:7.3f} s   {covered}")
    loops()


if __name__ == "__main__":
    main()
