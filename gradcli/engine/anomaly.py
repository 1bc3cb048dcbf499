"""AnomalyMode detection: `torch.autograd.set_detect_anomaly(True)` and `with torch.autograd.detect_anomaly():`.

Learners switch it on to find where a nan is born. With it on (and `check_nan`), backward stops
at the first node whose gradient for an input holds a nan, with PyTorch's error naming the node
and the input (`Function 'DivBackward0' returned nan values in its 0th output.`). PyTorch also
prints the forward call's traceback as a warning; gradcli's own error already points at the
backward call, and its nan watch names the op that first produced a nan in the forward pass.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine.tensor import Node, Tensor
from gradcli.errors import ArgumentError, BackwardError


class AnomalyMode:
    enabled = False
    check_nan = True


def set_detect_anomaly(mode: Any, check_nan: bool = True) -> "Switch":
    """Switches at once when called; as a `with` it restores the mode before it on exit."""
    return Switch(mode, check_nan)


def detect_anomaly(check_nan: bool = True) -> "Switch":
    return Switch(True, check_nan, now=False)


def is_anomaly_enabled() -> bool:
    return AnomalyMode.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return AnomalyMode.check_nan


class Switch:
    """One switch: `set_detect_anomaly` switches when called, `detect_anomaly` when its block starts;
    either, as a `with`, restores the mode before it when the block ends."""

    def __init__(self, mode: Any, check_nan: Any, now: bool = True) -> None:
        if not isinstance(mode, bool) or not isinstance(check_nan, bool):
            raise ArgumentError("set_detect_anomaly(mode, check_nan): both are booleans",
                                hint="torch.autograd.set_detect_anomaly(True)")
        self.mode, self.check_nan, self.now = mode, check_nan, now
        self.before = (AnomalyMode.enabled, AnomalyMode.check_nan)
        self.saved: list[tuple[bool, bool]] = []
        if now:
            AnomalyMode.enabled, AnomalyMode.check_nan = mode, check_nan

    def __enter__(self) -> None:
        self.saved.append(self.before if self.now else (AnomalyMode.enabled, AnomalyMode.check_nan))
        AnomalyMode.enabled, AnomalyMode.check_nan = self.mode, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        AnomalyMode.enabled, AnomalyMode.check_nan = self.saved.pop()

    def __repr__(self) -> str:
        return "<torch.autograd.anomaly_mode.set_detect_anomaly object>"


def watched(trace: Callable[[Node, Any, tuple, tuple], None] | None) -> Callable[[Node, Any, tuple, tuple], None]:
    """A backward trace that raises PyTorch's error at the first nan a node passes an input (then `trace`)."""
    def watch(node: Node, g: Any, passed: tuple, summed: tuple) -> None:
        for i, gi in enumerate(passed):
            if gi is not None and np.isnan(gi._data if isinstance(gi, Tensor) else np.asarray(gi)).any():
                raise BackwardError(f"Function '{node.name}' returned nan values in its {i}th output.",
                                    hint="the gradient of this op is nan at these values (a 0/0, log of 0, sqrt "
                                         "below 0...); print the inputs of the op the node names")
        if trace is not None:
            trace(node, g, passed, summed)
    return watch
