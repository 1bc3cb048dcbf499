"""A minimal `torch.optim`: SGD, Adam and AdamW with PyTorch's update formulas and defaults.

`step()` updates each parameter's values in place, outside autograd (as PyTorch's step runs
under no_grad), so a parameter stays the same leaf and the next forward builds a fresh graph on
it. The arithmetic follows PyTorch's single-tensor CPU path operation by operation, in the
parameter's dtype, so losses match PyTorch's step for step.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from gradcli.engine import kinds
from gradcli.engine import narrow
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


def _flags(optimizer: str, order: str, **flags: Any) -> dict[str, Any]:
    """PyTorch's implementation switches, kept in the groups (and printed) as PyTorch keeps them: `foreach`
    and `capturable` choose how the same update is computed, so gradcli, which runs the single-tensor
    formulas, takes any value; `differentiable=True` and `fused=True` it cannot honour."""
    if flags.get("differentiable"):
        raise ArgumentError(f"{optimizer}(differentiable=True) is not supported by gradcli: its updates are not "
                            f"recorded on the graph", hint="leave differentiable out (False)")
    if flags.get("fused"):
        raise ArgumentError(f"{optimizer}(fused=True) is not supported by gradcli", hint="leave fused out (None): "
                            "gradcli runs PyTorch's single-tensor formulas")
    return {name: flags[name] for name in order.split()}


def _invalid(condition: bool, message: str, hint: str) -> None:
    if condition:
        raise ValueDomainError(message, hint=hint)


class Optimizer(kinds.Optimizer):
    """Groups of parameters, each with its own options (PyTorch's `param_groups`), and per-parameter state."""

    defaults: dict[str, Any] = {}

    def __init__(self, params: Any, options: dict[str, Any]) -> None:
        if isinstance(params, (Tensor, str, dict)) or not hasattr(params, "__iter__"):  # a generator is PyTorch's too
            raise ArgumentError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                                f"but got {_type_name(params)}", hint="pass a list: optim.SGD([w, b], lr=0.1) or "
                                                                      "model.parameters()")
        params = list(params)
        if not params:
            raise ValueDomainError("optimizer got an empty parameter list",
                                   hint="pass the tensors to train, e.g. model.parameters() or [w, b]")
        self.options = self.defaults = options
        self.param_groups: list[dict[str, Any]] = []
        self.state: defaultdict = defaultdict(dict)  # PyTorch's: per parameter (by identity), made on first use
        for group in params if all(isinstance(g, dict) for g in params) else [{"params": params}]:
            self.add_param_group(group)

    def add_param_group(self, param_group: Any) -> None:
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise ArgumentError("param group must be a dict with a 'params' key", hint="e.g. {'params': [w], 'lr': 0.1}")
        unknown = sorted(set(param_group) - set(self.options) - {"params"})
        if unknown:
            raise ArgumentError(f"param group has unknown option(s): {', '.join(unknown)}",
                                hint=f"options of {type(self).__name__}: {', '.join(sorted(self.options))}")
        group_params = param_group["params"]
        group_params = [group_params] if isinstance(group_params, Tensor) else list(group_params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in group_params:
            if not isinstance(p, Tensor):
                raise ArgumentError(f"optimizer can only optimize Tensors, but one of the params is "
                                    f"{type(p).__name__}", hint="pass a list of tensors")
            if p._node is not None:
                raise ValueDomainError("can't optimize a non-leaf Tensor",
                                       hint="optimize the tensors you created (with requires_grad=True), not results "
                                            "computed from them")
            if id(p) in seen:
                raise ValueDomainError("some parameters appear in more than one parameter group",
                                       hint="give each tensor to one group only")
        group: dict[str, Any] = {}  # PyTorch's order: the group's own keys (params first), then the defaults
        for key, value in param_group.items():
            group[key] = group_params if key == "params" else number_arg(value, type(self).__name__, key) if \
                isinstance(self.options.get(key), (int, float)) and not isinstance(self.options.get(key), bool) else value
        for key, value in self.options.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    @property
    def params(self) -> list[Tensor]:
        return [p for g in self.param_groups for p in g["params"]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        from gradcli.nn.modules import _clear_grad
        for p in self.params:
            _clear_grad(p, set_to_none)

    def step(self, closure: Any = None) -> Any:
        """One update of every parameter with a gradient; with a closure, its loss (computed first)."""
        loss = None
        if closure is not None:
            from gradcli.engine.modes import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    state = self.state[p]
                    assign(p, self._update(p._data, p.grad._data, state, group))
        return loss

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: per-parameter state by index, and each group's options with its parameters' indices."""
        from gradcli.engine.tensor import _wrap
        index = {id(p): i for i, p in enumerate(self.params)}
        state = {index[id(p)]: {k: _wrap(np.asarray(v)) if isinstance(v, np.ndarray) else v for k, v in s.items()}
                 for p, s in self.state.items() if s and id(p) in index}
        groups = [dict({k: v for k, v in g.items() if k != "params"}, params=[index[id(p)] for p in g["params"]])
                  for g in self.param_groups]
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: Any) -> None:
        """Resume from `state_dict()`: each saved group's options onto the group at its position, and the
        per-parameter state by index (copied, so the checkpoint stays as it was), as PyTorch's."""
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            raise ArgumentError("optimizer.load_state_dict() takes what optimizer.state_dict() returned",
                                hint="a dict with 'state' and 'param_groups', e.g. checkpoint['optimizer']")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueDomainError("loaded state dict has a different number of parameter groups",
                                   hint="load it into an optimizer built with the same parameter groups")
        if any(len(old["params"]) != len(group["params"]) for old, group in zip(saved, self.param_groups)):
            raise ValueDomainError("loaded state dict contains a parameter group that doesn't match the size of "
                                   "optimizer's group", hint="build the optimizer over the same parameters, in order")
        by_index = {i: p for old, group in zip(saved, self.param_groups) for i, p in zip(old["params"], group["params"])}
        for old, group in zip(saved, self.param_groups):
            group.update({k: v for k, v in old.items() if k != "params"})
        self.state = defaultdict(dict)
        for i, values in state_dict["state"].items():
            self.state[by_index[i]] = {k: v._data.copy() if isinstance(v, Tensor) else v for k, v in values.items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {value}" for key, value in sorted(group.items()) if key != "params"]
        return "\n".join(lines) + "\n)"


def _scalar(value: float, dtype: np.dtype) -> Any:
    """A Python number in a tensor op: PyTorch computes with it in the tensor's dtype."""
    return narrow.astype(np.asarray(value, dtype=np.float64), dtype)  # bfloat16 too: rounded to it


class SGD(Optimizer):
    def __init__(self, params: Any, lr: float = 0.001, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach: Any = None,
                 differentiable: bool = False, fused: Any = None) -> None:
        options = _options(type(self).__name__, lr=lr, momentum=momentum, dampening=dampening,
                           weight_decay=weight_decay)
        lr, momentum, dampening, weight_decay = options.values()
        _invalid(lr < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=0.1")
        _invalid(momentum < 0, f"Invalid momentum value: {momentum}", "momentum must be >= 0, e.g. momentum=0.9")
        _invalid(weight_decay < 0, f"Invalid weight_decay value: {weight_decay}", "weight_decay must be >= 0")
        _invalid(nesterov and (momentum <= 0 or dampening != 0), "Nesterov momentum requires a momentum and zero "
                 "dampening", "e.g. optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)")
        super().__init__(params, dict(options, nesterov=nesterov, maximize=maximize, **_flags(
            "SGD", "foreach differentiable fused", foreach=foreach, differentiable=differentiable, fused=fused)))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        dt = param.dtype
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
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: Any = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused: Any = None,
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
        options = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                   "maximize": maximize}
        super().__init__(params, dict(options, **_flags(
            name, "foreach capturable differentiable fused", foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused), decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        """PyTorch's `_single_tensor_adam`, one operation at a time."""
        dt = param.dtype
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
        exp_avg_sq = state["exp_avg_sq"] = narrow.fused(  # mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            lambda s, g, v: s + g * g * v, state["exp_avg_sq"] * _scalar(beta2, dt), grad, _scalar(1 - beta2, dt))
        step = state["step"]
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if o["amsgrad"]:
            exp_avg_sq = state["max_exp_avg_sq"] = np.maximum(state["max_exp_avg_sq"], exp_avg_sq)
        denom = np.sqrt(exp_avg_sq) / _scalar(bias_correction2_sqrt, dt) + _scalar(eps, dt)
        return narrow.fused(lambda p, a, d, v: p + a / d * v, param, exp_avg, denom, _scalar(-step_size, dt))


class AdamW(Adam):
    """Adam with decoupled weight decay (PyTorch's default 0.01)."""

    def __init__(self, params: Any, lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08,
                 weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False, foreach: Any = None,
                 capturable: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> np.ndarray:
    """PyTorch's lerp: from the nearer end, so weight 1 lands exactly on `end`."""
    w = _scalar(weight, start.dtype)
    if weight < 0.5:
        return narrow.fused(lambda s, e, w: s + w * (e - s), start, end, w)  # one kernel, one rounding
    return narrow.fused(lambda s, e, w: e - (e - s) * w, start, end, _scalar(1 - weight, start.dtype))


OPTIMIZERS: dict[str, type] = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}
"""Every optimizer a program can make, by its `torch.optim` name."""


class RMSprop(Optimizer):
    def __init__(self, params: Any, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-08, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        options = _options("RMSprop", lr=lr, momentum=momentum, alpha=alpha, eps=eps, weight_decay=weight_decay)
        _invalid(options["lr"] < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=0.01")
        _invalid(options["alpha"] < 0, f"Invalid alpha value: {alpha}", "alpha must be >= 0, e.g. alpha=0.99")
        _invalid(options["eps"] < 0, f"Invalid epsilon value: {eps}", "eps must be >= 0")
        flags = _flags("RMSprop", "capturable foreach", capturable=capturable, foreach=foreach,
                       differentiable=differentiable)
        super().__init__(params, {"lr": options["lr"], "momentum": options["momentum"], "alpha": options["alpha"],
                                  "eps": options["eps"], "centered": centered, "weight_decay": options["weight_decay"],
                                  **flags, "maximize": maximize, "differentiable": differentiable})

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        """PyTorch's `_single_tensor_rmsprop`."""
        dt = param.dtype
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param))
            if o["momentum"] > 0:
                state["momentum_buffer"] = np.zeros_like(param)
            if o["centered"]:
                state["grad_avg"] = np.zeros_like(param)
        grad = -grad if o["maximize"] else grad
        state["step"] += 1
        if o["weight_decay"] != 0:
            grad = grad + param * _scalar(o["weight_decay"], dt)
        alpha = o["alpha"]
        sq = state["square_avg"] = state["square_avg"] * _scalar(alpha, dt) + _scalar(1 - alpha, dt) * grad * grad
        if o["centered"]:
            ga = state["grad_avg"] = _lerp(state["grad_avg"], grad, 1 - alpha)
            avg = np.sqrt(sq - ga * ga) + _scalar(o["eps"], dt)
        else:
            avg = np.sqrt(sq) + _scalar(o["eps"], dt)
        if o["momentum"] > 0:
            buf = state["momentum_buffer"] = state["momentum_buffer"] * _scalar(o["momentum"], dt) + grad / avg
            return param + buf * _scalar(-o["lr"], dt)
        return param + _scalar(-o["lr"], dt) * grad / avg


class Adagrad(Optimizer):
    def __init__(self, params: Any, lr: float = 0.01, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: Any = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        options = _options("Adagrad", lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                           initial_accumulator_value=initial_accumulator_value)
        _invalid(options["lr"] < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=0.01")
        _invalid(options["lr_decay"] < 0, f"Invalid lr_decay value: {lr_decay}", "lr_decay must be >= 0")
        super().__init__(params, dict(options, **_flags("Adagrad", "foreach maximize differentiable fused",
                                                        foreach=foreach, maximize=maximize,
                                                        differentiable=differentiable, fused=fused)))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        """PyTorch's `_single_tensor_adagrad`."""
        dt = param.dtype
        if not state:
            state.update(step=0, sum=np.full_like(param, o["initial_accumulator_value"]))
        grad = -grad if o["maximize"] else grad
        state["step"] += 1
        if o["weight_decay"] != 0:
            grad = grad + param * _scalar(o["weight_decay"], dt)
        clr = o["lr"] / (1 + (state["step"] - 1) * o["lr_decay"])
        total = state["sum"] = state["sum"] + grad * grad
        return param + _scalar(-clr, dt) * grad / (np.sqrt(total) + _scalar(o["eps"], dt))


class Adadelta(Optimizer):
    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-06, weight_decay: float = 0,
                 foreach: Any = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        options = _options("Adadelta", lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        _invalid(options["lr"] < 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=1.0")
        _invalid(not 0.0 <= options["rho"] <= 1.0, f"Invalid rho value: {rho}", "rho must be in [0, 1]")
        super().__init__(params, dict(options, maximize=maximize, **_flags(
            "Adadelta", "capturable foreach differentiable", capturable=capturable, foreach=foreach,
            differentiable=differentiable)))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], o: dict[str, Any]) -> np.ndarray:
        """PyTorch's `_single_tensor_adadelta`."""
        dt = param.dtype
        if not state:
            state.update(step=0, square_avg=np.zeros_like(param), acc_delta=np.zeros_like(param))
        grad = -grad if o["maximize"] else grad
        state["step"] += 1
        if o["weight_decay"] != 0:
            grad = grad + param * _scalar(o["weight_decay"], dt)
        rho, eps = _scalar(o["rho"], dt), _scalar(o["eps"], dt)
        sq = state["square_avg"] = state["square_avg"] * rho + _scalar(1 - o["rho"], dt) * grad * grad
        delta = np.sqrt(state["acc_delta"] + eps) / np.sqrt(sq + eps) * grad
        state["acc_delta"] = state["acc_delta"] * rho + _scalar(1 - o["rho"], dt) * delta * delta
        return param + delta * _scalar(-o["lr"], dt)


OPTIMIZERS.update({"RMSprop": RMSprop, "Adagrad": Adagrad, "Adadelta": Adadelta})
