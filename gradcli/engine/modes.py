"""Gradient modes: `torch.no_grad()`, `enable_grad()`, `set_grad_enabled(b)`, `inference_mode()`.

Each is a context manager and a decorator, as in PyTorch. They switch `GradMode.enabled` (and
`inference_mode` also `InferenceMode.enabled`, under which new tensors are inference tensors); the
interpreter enters and leaves them (its `with` statement and decorated functions), always
restoring the previous mode, also when an error ends the block. Inside inference mode nothing is
recorded, whatever a nested gradient mode asks for, as in PyTorch.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from gradcli.engine.tensor import READS, GradMode, InferenceMode
from gradcli.errors import ArgumentError


def _taking_effect(enabled: bool) -> bool:
    """The mode a switch to `enabled` gives: none but inference inside inference mode; and inside a Function's
    forward recorded for `--check` (`tensor.READS`) recording goes on, as the forward's math does: PyTorch runs
    that forward with gradients off already, so a `no_grad` there changes nothing a derivative sees."""
    return (enabled or bool(READS)) and not InferenceMode.enabled


class GradModeContext:
    """One gradient-mode switch: the mode inside the block, and the mode to restore after it."""

    def __init__(self, name: str, enabled: bool) -> None:
        self.name = name
        self.enabled = enabled
        self._saved: list[bool] = []

    def __enter__(self) -> None:
        self._saved.append(GradMode.enabled)
        GradMode.enabled = _taking_effect(self.enabled)

    def __exit__(self, *exc: Any) -> None:
        GradMode.enabled = self._saved.pop()

    def fresh(self) -> "GradModeContext":
        """The same switch, entered anew by each call of a decorated function."""
        return GradModeContext(self.name, self.enabled)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`@torch.no_grad()` over a function: every call of it runs in this mode."""
        if not callable(fn):
            raise ArgumentError(f"{self.name}() decorates a function, not a {type(fn).__name__}",
                                hint=f"write @torch.{self.name}() on the line before 'def'")
        mode = self

        def decorated(*args: Any, **kwargs: Any) -> Any:
            with mode.fresh():
                return fn(*args, **kwargs)
        decorated.__name__ = getattr(fn, "__name__", "function")
        decorated.__wrapped__ = fn  # type: ignore[attr-defined]
        return decorated

    def __repr__(self) -> str:
        return f"<torch.autograd.grad_mode.{self.name} object>"


class _SetGradEnabled(GradModeContext):
    """`torch.set_grad_enabled(b)` switches at once when called; as a `with` it restores on exit."""

    def __init__(self, mode: bool) -> None:
        super().__init__("set_grad_enabled", bool(mode))
        self._before = GradMode.enabled
        GradMode.enabled = _taking_effect(self.enabled)

    def __enter__(self) -> None:
        self._saved.append(self._before)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        GradMode.enabled = self._before  # as a decorator it only applies inside the function
        return super().__call__(fn)


def no_grad(fn: Callable[..., Any] | None = None) -> Any:
    """`torch.no_grad()` (also `@torch.no_grad` without parentheses, as PyTorch 2 allows)."""
    mode = GradModeContext("no_grad", False)
    return mode if fn is None else mode(fn)


def enable_grad(fn: Callable[..., Any] | None = None) -> Any:
    mode = GradModeContext("enable_grad", True)
    return mode if fn is None else mode(fn)


class _InferenceMode(GradModeContext):
    """`torch.inference_mode(mode)`: with mode True, no graph and inference tensors; with False, a
    normal gradient mode again (recording on) inside an inference-mode block."""

    def __init__(self, inference: bool) -> None:
        super().__init__("inference_mode", not inference)
        self.inference = inference
        self._inference_saved: list[bool] = []

    def __enter__(self) -> None:
        self._saved.append(GradMode.enabled)
        self._inference_saved.append(InferenceMode.enabled)
        InferenceMode.enabled = self.inference
        GradMode.enabled = not self.inference

    def __exit__(self, *exc: Any) -> None:
        GradMode.enabled = self._saved.pop()
        InferenceMode.enabled = self._inference_saved.pop()

    def fresh(self) -> "_InferenceMode":
        return _InferenceMode(self.inference)


def inference_mode(mode: Any = True) -> Any:
    """`torch.inference_mode()`, `inference_mode(False)`, and `@torch.inference_mode` without parentheses."""
    if callable(mode):
        return _InferenceMode(True)(mode)
    return _InferenceMode(bool(mode))


def is_inference_mode_enabled() -> bool:
    return InferenceMode.enabled


def set_grad_enabled(mode: bool) -> GradModeContext:
    if not isinstance(mode, bool):
        raise ArgumentError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}",
                            hint="torch.set_grad_enabled(False) or torch.set_grad_enabled(True)")
    return _SetGradEnabled(mode)


def is_grad_enabled() -> bool:
    return GradMode.enabled


class Inside:
    """How many transforms (and how many vmaps among them) are running a function now: a custom
    autograd.Function called there must support them, as PyTorch requires (engine/function.py); torch.func enters it."""

    transforms = 0
    vmaps = 0


@contextlib.contextmanager
def inside(vmap: bool = False) -> Iterator[None]:
    Inside.transforms += 1
    Inside.vmaps += vmap
    try:
        yield
    finally:
        Inside.transforms -= 1
        Inside.vmaps -= vmap
