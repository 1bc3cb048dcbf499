"""`torch.optim.lr_scheduler`: learning-rate schedules that write each group's `lr`, as PyTorch's do.

PyTorch computes most schedules step by step from the current `lr` (its "chainable" form: an
ExponentialLR multiplies by gamma each step rather than computing base·gammaᵗ), and the two differ
in the last bits of a float; each `_next` below follows PyTorch's own form so the rates, and the
losses they lead to, are the same numbers. Construction makes the first step (epoch 0), as in PyTorch.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Callable

from gradcli.engine import kinds
from gradcli.engine.functions import number_arg
from gradcli.optim.optimizers import Optimizer
from gradcli.errors import ArgumentError, ValueDomainError


class LRScheduler(kinds.LRScheduler):
    """The base of the schedulers, and of a program's own (`class Warmup(LRScheduler)` with a `get_lr`): as in
    PyTorch, each `step()` (the first in `__init__`) counts the epoch and sets every group's lr to `get_lr()`."""

    computes_first = False
    """Whether epoch 0 has a rate of its own (OneCycleLR starts at max_lr/div_factor); the others keep lr."""

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise ArgumentError(f"{type(optimizer).__name__} is not an Optimizer",
                                hint="pass the optimizer: StepLR(optimizer, step_size=10)")
        if last_epoch != -1:
            raise ArgumentError("resuming a scheduler at last_epoch is not supported by gradcli",
                                hint="leave last_epoch=-1; load_state_dict is how PyTorch resumes too")
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = -1
        self.step()

    def step(self, epoch: Any = None) -> None:
        if epoch is not None:
            raise ArgumentError("scheduler.step(epoch) is deprecated and not supported by gradcli",
                                hint="call scheduler.step() once per epoch, after optimizer.step()")
        self.last_epoch += 1
        lrs = self.get_lr()
        if not isinstance(lrs, (list, tuple)) or len(lrs) != len(self.optimizer.param_groups):
            raise ArgumentError(f"get_lr() must give one learning rate per parameter group "
                                f"({len(self.optimizer.param_groups)}), got {lrs!r}",
                                hint="return [base_lr * factor for base_lr in self.base_lrs]")
        for group, lr in zip(self.optimizer.param_groups, lrs):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_lr(self) -> list[float]:
        """The rates for `last_epoch`: a program's scheduler defines its own; gradcli's are by `_next`."""
        if type(self)._next is LRScheduler._next:
            raise ArgumentError("LRScheduler.get_lr() is not implemented: the base class computes no rate",
                                hint="subclass it and define get_lr(self), or use a scheduler such as StepLR")
        return self._lrs() if self.last_epoch == 0 and not self.computes_first else self._next()

    def _next(self) -> list[float]:
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        return list(self._last_lr)

    def _lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


def _number(value: Any, scheduler: str, name: str, integer: bool = False) -> Any:
    return number_arg(value, scheduler, name, integer=integer)


class StepLR(LRScheduler):
    def __init__(self, optimizer: Any, step_size: int, gamma: float = 0.1) -> None:
        self.step_size = _number(step_size, "StepLR", "step_size", integer=True)
        if self.step_size <= 0:
            raise ValueDomainError("StepLR: step_size must be a positive integer", hint="e.g. step_size=30")
        self.gamma = _number(gamma, "StepLR", "gamma")
        super().__init__(optimizer)

    def _next(self) -> list[float]:
        if self.last_epoch % self.step_size:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer: Any, milestones: Any, gamma: float = 0.1) -> None:
        self.milestones = Counter(_number(m, "MultiStepLR", "milestones", integer=True) for m in list(milestones))
        self.gamma = _number(gamma, "MultiStepLR", "gamma")
        super().__init__(optimizer)

    def _next(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._lrs()]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer: Any, gamma: float) -> None:
        self.gamma = _number(gamma, "ExponentialLR", "gamma")
        super().__init__(optimizer)

    def _next(self) -> list[float]:
        return [lr * self.gamma for lr in self._lrs()]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer: Any, T_max: int, eta_min: float = 0.0) -> None:
        self.T_max = _number(T_max, "CosineAnnealingLR", "T_max", integer=True)
        if self.T_max <= 0:
            raise ValueDomainError("CosineAnnealingLR: T_max must be a positive integer", hint="e.g. T_max=100")
        self.eta_min = _number(eta_min, "CosineAnnealingLR", "eta_min")
        super().__init__(optimizer)

    def _next(self) -> list[float]:
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2 for lr, base in zip(self._lrs(), self.base_lrs)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T)) * (lr - low) + low
                for lr in self._lrs()]


class LambdaLR(LRScheduler):
    def __init__(self, optimizer: Any, lr_lambda: Callable[[int], float] | list) -> None:
        groups = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 1
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(self.lr_lambdas) != groups:
            raise ArgumentError(f"Expected {groups} lr_lambdas, but got {len(self.lr_lambdas)}",
                                hint="one function per parameter group, or a single one for all")
        super().__init__(optimizer)

    def _next(self) -> list[float]:
        return [base * _number(fn(self.last_epoch), "LambdaLR", "lr_lambda's value")
                for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class OneCycleLR(LRScheduler):
    """Up from max_lr/div_factor to max_lr over pct_start of the steps, then down to initial/final_div_factor;
    momentum (or Adam's beta1) cycles the other way, between base_momentum and max_momentum."""

    computes_first = True

    def __init__(self, optimizer: Any, max_lr: Any, total_steps: Any = None, epochs: Any = None,
                 steps_per_epoch: Any = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float = 0.85, max_momentum: float = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueDomainError("You must define either total_steps OR (epochs AND steps_per_epoch)",
                                       hint="e.g. OneCycleLR(opt, max_lr=0.1, total_steps=100)")
            total_steps = epochs * steps_per_epoch
        self.total_steps = _number(total_steps, "OneCycleLR", "total_steps", integer=True)
        if self.total_steps <= 0:
            raise ValueDomainError(f"Expected positive integer total_steps, but got {total_steps}",
                                   hint="the number of scheduler.step() calls in the whole run")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueDomainError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}",
                                   hint="anneal_strategy='cos'")
        self.anneal = anneal_strategy
        n = self.total_steps
        if three_phase:
            ends = [float(pct_start * n) - 1, float(2 * pct_start * n) - 2, n - 1]
            lrs = [("initial_lr", "max_lr"), ("max_lr", "initial_lr"), ("initial_lr", "min_lr")]
            moms = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum"),
                    ("max_momentum", "max_momentum")]
        else:
            ends = [float(pct_start * n) - 1, n - 1]
            lrs = [("initial_lr", "max_lr"), ("max_lr", "min_lr")]
            moms = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum")]
        self.phases = list(zip(ends, lrs, moms))
        groups = optimizer.param_groups if isinstance(optimizer, Optimizer) else []
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr] * len(groups)
        self.cycle_momentum = cycle_momentum
        self.use_beta1 = bool(groups) and "betas" in groups[0]
        if cycle_momentum and groups and "momentum" not in groups[0] and not self.use_beta1:
            raise ValueDomainError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
                                   hint="use SGD or Adam, or pass cycle_momentum=False")
        for group, top in zip(groups, max_lrs):
            group["initial_lr"] = top / div_factor
            group["max_lr"] = top
            group["min_lr"] = group["initial_lr"] / final_div_factor
            if cycle_momentum:
                self._set_momentum(group, max_momentum)
                group["max_momentum"], group["base_momentum"] = max_momentum, base_momentum
        super().__init__(optimizer)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _interpolate(self, start: float, end: float, pct: float) -> float:
        if self.anneal == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def step(self, epoch: Any = None) -> None:
        if self.last_epoch + 1 > self.total_steps:
            raise ValueDomainError(f"Tried to step {self.last_epoch + 1} times. The specified number of total steps "
                                   f"is {self.total_steps}", hint="total_steps counts every scheduler.step()")
        super().step(epoch)

    def _next(self) -> list[float]:
        return [self._group_lr(group) for group in self.optimizer.param_groups]

    def _group_lr(self, group: dict) -> float:
        step, start = self.last_epoch, 0.0
        for i, (end, (lr_from, lr_to), (m_from, m_to)) in enumerate(self.phases):
            if step <= end or i == len(self.phases) - 1:
                pct = (step - start) / (end - start)
                if self.cycle_momentum:
                    self._set_momentum(group, self._interpolate(group[m_from], group[m_to], pct))
                return self._interpolate(group[lr_from], group[lr_to], pct)
            start = end
        raise AssertionError("unreachable: the last phase always answers")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by `factor` once the metric passed to step() stopped improving for `patience` epochs."""

    def __init__(self, optimizer: Any, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr: Any = 0,
                 eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueDomainError("Factor should be < 1.0.", hint="e.g. factor=0.1")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueDomainError(f"mode {mode} / threshold_mode {threshold_mode} is unknown!",
                                   hint="mode='min' or 'max'; threshold_mode='rel' or 'abs'")
        if not isinstance(optimizer, Optimizer):
            raise ArgumentError(f"{type(optimizer).__name__} is not an Optimizer", hint="pass the optimizer")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience, self.threshold = mode, factor, patience, threshold
        self.threshold_mode, self.cooldown, self.eps = threshold_mode, cooldown, eps
        groups = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * groups
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = self._lrs()

    def _better(self, a: float) -> bool:
        if self.mode == "min":
            return a < (self.best * (1.0 - self.threshold) if self.threshold_mode == "rel" else self.best - self.threshold)
        return a > (self.best * (self.threshold + 1.0) if self.threshold_mode == "rel" else self.best + self.threshold)

    def step(self, metrics: Any = None, epoch: Any = None) -> None:  # type: ignore[override]
        if metrics is None:
            raise ArgumentError("ReduceLROnPlateau.step() needs the metric", hint="scheduler.step(val_loss)")
        current = float(_number(metrics, "ReduceLROnPlateau.step", "metrics"))
        self.last_epoch += 1
        if self._better(current):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, low in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, low)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._lrs()


SCHEDULERS: dict[str, type] = {cls.__name__: cls for cls in (
    StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR, OneCycleLR, ReduceLROnPlateau)}
"""Every scheduler a program can make, by its `torch.optim.lr_scheduler` name."""
