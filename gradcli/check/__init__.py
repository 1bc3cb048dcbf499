"""`--check`: prove autograd's gradients against SymPy, with finite differences as a third witness.

The checker never reuses a VJP. It replays the recorded graph's forward meaning in SymPy and lets
SymPy's own derivative rules speak (`symbolic`), or re-runs the forward on nudged inputs
(`numeric`), or both (`all`). It reads only the graph's structure, which survives backward, so
it may run before or after the backward call it verifies; it uses the leaves' current values, so
it must run before they are updated. It never prints: `progress` lets a caller draw a bar.

SymPy is imported only when a symbolic witness is asked for. The parts, NumPy-only first:
`graph` (the trace, sampling, gradients as float64), `kinks` (where a derivative does not exist),
`numeric` (finite differences), `report` (verdicts and their comparison); then SymPy's:
`meaning` (each op's forward as SymPy, the namespace `S`), `replay` (graph to expressions),
`calculus` (pruned differentiation, float64 evaluation), `formula` (the derivative as text),
`symbolic` (gradient, Jacobian and Hessian checks). Over both: `rounding` (the tolerance model),
`checks` (each check by the witnesses of a mode), `policy` (which witness checks which call of a
script: one SymPy proof per graph structure), `sweep` (plot's batched replays).
"""
from __future__ import annotations

from typing import Any

from gradcli.check.checks import BUDGET, MODES, SECONDS, check_gradients, hessian_check, jacobian_check
from gradcli.check.custom import replay_forward
from gradcli.check.graph import Progress
from gradcli.check.report import FAIL, PASS, UNDEFINED, CheckReport, Element, InputCheck

__all__ = ["BUDGET", "CheckReport", "Element", "FAIL", "InputCheck", "MODES", "PASS", "Progress", "SECONDS",
           "UNDEFINED", "check_gradients", "checker", "hessian_check", "jacobian_check"]


def checker(mode: str = "symbolic", *, rtol: float | None = None, atol: float | None = None,
            seed: int = 0) -> Any:
    """What a script runner is given to check one file's gradients: a fresh `policy.LoopPolicy` in `mode`."""
    from gradcli.check.policy import LoopPolicy
    return LoopPolicy(mode, rtol=rtol, atol=atol, seed=seed)

from gradcli.engine import function as _function  # noqa: E402

_function.SYMBOLIC[:] = [replay_forward]  # the meaning of a program's Function, for the replay (see check/custom.py)
