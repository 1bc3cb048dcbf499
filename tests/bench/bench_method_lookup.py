"""What a Tensor method pays for finding its function through `T.F.<name>` (two module attribute reads at
call time, because engine/tensor_methods.py is imported before the functional API exists) against a method
bound to its function once (`functions/declared.py`'s `delegate`), as ratios from one run.

Usage: python tests/bench/bench_method_lookup.py [--number N]
Reports ns per call for: the lookup alone (T.F.clamp read, nothing called), a method through T.F against a
bound one around a function that does nothing, and a whole `x.clamp(0, 1)` and `x.sum()` on a 4-element
tensor, so the lookup's share of a real call is read directly.
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

from gradcli.engine import tensor as T
from gradcli.engine.functions.declared import delegate
from gradcli.engine.tensor import Tensor


def _nothing(x: object, *args: object) -> object:
    return x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=200_000)
    n = ap.parse_args().number
    T.F._bench_nothing = _nothing  # type: ignore[attr-defined]  (a function of the namespace, as clamp is)

    def through_lookup(self: Tensor, a: object) -> object:
        return T.F._bench_nothing(self, a)

    bound = delegate(_nothing, "nothing")
    x = Tensor(np.array([0.5, -1.0, 2.0, 0.25]))

    def ns(stmt: object) -> float:
        return min(timeit.repeat(stmt, number=n, repeat=5)) / n * 1e9

    lookup = ns(lambda: T.F.clamp)
    via_t = ns(lambda: through_lookup(x, 1))
    via_bound = ns(lambda: bound(x, 1))
    empty = ns(lambda: None)
    clamp = ns(lambda: x.clamp(0, 1))
    total = ns(lambda: x.sum())
    print(f"empty lambda                 {empty:7.0f} ns (subtracted below)")
    print(f"T.F.clamp read               {lookup - empty:7.0f} ns")
    print(f"method through T.F           {via_t - empty:7.0f} ns")
    print(f"method bound once            {via_bound - empty:7.0f} ns   ratio {(via_bound - empty) / (via_t - empty):.2f}")
    print(f"x.clamp(0, 1), 4 elements    {clamp - empty:7.0f} ns   lookup share {(lookup - empty) / (clamp - empty):.1%}")
    print(f"x.sum() (bound), 4 elements  {total - empty:7.0f} ns   lookup would be {(lookup - empty) / (total - empty):.1%}")


if __name__ == "__main__":
    main()
