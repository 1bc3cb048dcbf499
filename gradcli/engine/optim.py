"""A minimal `torch.optim`: SGD, Adam and AdamW with PyTorch's update formulas and defaults.

`step()` updates each parameter's values in place, outside autograd (as PyTorch's step runs
under no_grad), so a parameter stays the same leaf and the next forward builds a fresh graph on
it. The arithmetic follows PyTorch's single-tensor CPU path operation by operation, in the
parameter's dtype, so losses match PyTorch's step for step.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.functions import _type_name, number_arg
from gradcli.engine.inplace import assign
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ValueDomainError


def _options(optimizer: str, **values: Any) -> dict[str, Any]:
    """The numeric options (lr, momentum, eps...), each a number or a one-element tensor, as plain numbers."""
    return {name: number_arg(value, optimizer, name) for name, value in values.items()}


def _betas(betas: Any, optimizer: str) -> tuple[float, float]:
    if not isinstance(betas, (list, tuple)) or len(betas) != 2:
        raise ArgumentError(f"{optimizer}(): argument 'betas' must be a pair of numbers, not {_type_name(betas)}",
                            hint="the decay rates of the two running averages, e.g. betas=(0.9, 0.999)")
    return tuple(number_arg(b, optimizer, f"betas[{i}]") for i, b in enumerate(betas))  # type: ignore[return-value]


def _invalid(condition: bool, message: str, hint: str) -> None:
    if condition:
        raise ValueDomainError(message, hint=hint)


class Optimizer:
    """One group of parameters with its options; per-parameter state by position."""

    defaults: dict[str, Any] = {}

    def __init__(self, params: Any, options: dict[str, Any]) -> None:
        if not isinstance(params, (list, tuple)):
            raise ArgumentError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                                f"but got {_type_name(params)}", hint="pass a list: optim.SGD([w, b], lr=0.1) or "
                                                                      "model.parameters()")
        params = list(params)
        if not params:
            raise ValueDomainError("optimizer got an empty parameter list",
                                   hint="pass the tensors to train, e.g. model.parameters() or [w, b]")
        for p in params:
            if not isinstance(p, Tensor):
                raise ArgumentError(f"optimizer can only optimize Tensors, but one of the params is "
                                    f"{type(p).__name__}", hint="pass a list of tensors")
            if p._node is not None:
                raise ValueDomainError("can't optimize a non-leaf Tensor",
                                       hint="optimize the tensors you created (with requires_grad=True), not results "
                                            "computed from them")
        self.params = params
        self.options = options
        self.state: list[dict[str, Any]] = [{} for _ in params]

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        return [dict(self.options, params=self.params)]

    def zero_grad(self, set_to_none: bool = True) -> None:
        from gradcli.engine.nn import _clear_grad
        for p in self.params:
            _clear_grad(p, set_to_none)

    def step(self) -> None:
        for p, state in zip(self.params, self.state):
            if p.grad is not None:
                assign(p, self._update(p._data, p.grad._data, state))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} (", "Parameter Group 0"]
        lines += [f"    {key}: {value}" for key, value in sorted(self.options.items())]
        return "\n".join(lines) + "\n)"


def _scalar(value: float, dtype: np.dtype) -> Any:
    """A Python number in a tensor op: PyTorch computes with it in the tensor's dtype."""
    return np.asarray(value, dtype=dtype)


class SGD(Optimizer):
    def __init__(self, params: Any, lr: float = 0.001, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False) -> None:
        options = _options(type(self).__name__, lr=lr, momentum=momentum, dampening=dampening,
                           weight_decay=weight_decay)
        lr, momentum, dampening, weight_decay = options.values()
        _invalid(lr < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=0.1")
        _invalid(momentum < 0, f"Invalid momentum value: {momentum}", "momentum must be >= 0, e.g. momentum=0.9")
        _invalid(weight_decay < 0, f"Invalid weight_decay value: {weight_decay}", "weight_decay must be >= 0")
        _invalid(nesterov and (momentum <= 0 or dampening != 0), "Nesterov momentum requires a momentum and zero "
                 "dampening", "e.g. optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)")
        super().__init__(params, dict(options, nesterov=nesterov, maximize=maximize))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        o, dt = self.options, param.dtype
        grad = -grad if o["maximize"] else grad
        if o["weight_decay"] != 0:
            grad = grad + param * _scalar(o["weight_decay"], dt)
        if o["momentum"] != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.copy()
            else:
                buf = buf * _scalar(o["momentum"], dt) + grad * _scalar(1 - o["dampening"], dt)
            state["momentum_buffer"] = buf
            grad = grad + buf * _scalar(o["momentum"], dt) if o["nesterov"] else buf
        return param + grad * _scalar(-o["lr"], dt)


class Adam(Optimizer):
    def __init__(self, params: Any, lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False) -> None:
        name = type(self).__name__
        options = _options(name, lr=lr, eps=eps, weight_decay=weight_decay)
        lr, eps, weight_decay = options.values()
        betas = _betas(betas, name)
        _invalid(lr < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=0.001")
        _invalid(eps < 0, f"Invalid epsilon value: {eps}", "eps must be >= 0, e.g. eps=1e-08")
        for i, beta in enumerate(betas):
            _invalid(not 0.0 <= beta < 1.0, f"Invalid beta parameter at index {i}: {beta}",
                     "each beta must be in [0, 1), e.g. betas=(0.9, 0.999)")
        _invalid(weight_decay < 0, f"Invalid weight_decay value: {weight_decay}", "weight_decay must be >= 0")
        super().__init__(params, dict(options, betas=betas, amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any]) -> np.ndarray:
        """PyTorch's `_single_tensor_adam`, one operation at a time."""
        o, dt = self.options, param.dtype
        lr, (beta1, beta2), eps, wd = o["lr"], o["betas"], o["eps"], o["weight_decay"]
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(param), exp_avg_sq=np.zeros_like(param))
            if o["amsgrad"]:
                state["max_exp_avg_sq"] = np.zeros_like(param)
        grad = -grad if o["maximize"] else grad
        state["step"] += 1
        if wd != 0:
            if o["decoupled_weight_decay"]:
                param = param * _scalar(1 - lr * wd, dt)
            else:
                grad = grad + param * _scalar(wd, dt)
        exp_avg = state["exp_avg"] = _lerp(state["exp_avg"], grad, 1 - beta1)
        exp_avg_sq = state["exp_avg_sq"] = state["exp_avg_sq"] * _scalar(beta2, dt) \
            + grad * grad * _scalar(1 - beta2, dt)
        step = state["step"]
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if o["amsgrad"]:
            exp_avg_sq = state["max_exp_avg_sq"] = np.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        denom = np.sqrt(exp_avg_sq) / _scalar(bias_correction2_sqrt, dt) + _scalar(eps, dt)
        return param + exp_avg / denom * _scalar(-step_size, dt)


class AdamW(Adam):
    """Adam with decoupled weight decay (PyTorch's default 0.01)."""

    def __init__(self, params: Any, lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, decoupled_weight_decay=True)


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """PyTorch's lerp: from the nearer end, so weight 1 lands exactly on `end`."""
    w = _scalar(weight, start.dtype)
    if weight < 0.5:
        return start + w * (end - start)
    return end - (end - start) * _scalar(1 - weight, start.dtype)


OPTIMIZERS: dict[str, type] = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}
"""Every optimizer a program can make, by its `torch.optim` name."""
