"""A minimal `torch.nn`: the layers, activations and losses of tutorial training scripts.

A module is a callable holding parameters (leaf tensors that require grad) and sub-modules;
`model(x)` runs its `forward` through the functional ops, so the graph is the one the ops build.
A parameter is a plain Tensor: the engine's hot path tells tensors by exact type, and a
`Parameter` subclass would need a check on every op for nothing but its repr (which a registry
of parameters gives instead).
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Iterator

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import init as I
from gradcli.engine import nn_functional as NF
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.engine.tensor_str import PARAMETERS
from gradcli.errors import ArgumentError, ShapeError


def Parameter(data: Any = None, requires_grad: bool = True) -> Tensor:
    """`nn.Parameter(t)`: a leaf sharing t's data, requiring grad."""
    if data is None:
        data = F.as_tensor([])
    t = _wrap(F.as_tensor(data)._data)
    PARAMETERS.add(t)
    return t.requires_grad_(bool(requires_grad))


class Module:
    """Parameters and sub-modules by name, in the order they were set, as PyTorch keeps them."""

    functional: Callable[..., Any] | None = None
    """The function of `torch.nn.functional` the module applies (for `gradcli ops`), if one."""

    def __init__(self) -> None:
        self._parameters: dict[str, Tensor | None] = {}
        self._modules: dict[str, Module] = {}
        self.training = True

    def forward(self, *inputs: Any) -> Any:
        raise NotImplementedError

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.forward(*inputs, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """Parameters and sub-modules read as attributes (`model.weight`), as in PyTorch."""
        for table in ("_parameters", "_modules"):
            members = self.__dict__.get(table, {})
            if name in members:
                return members[name]
        raise AttributeError(name)

    def named_parameters(self, prefix: str = "") -> list[tuple[str, Tensor]]:
        found: list[tuple[str, Tensor]] = []
        seen: set[int] = set()
        for name, p in self._walk(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                found.append((name, p))
        return found

    def _walk(self, prefix: str) -> Iterator[tuple[str, Tensor]]:
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, m in self._modules.items():
            yield from m._walk(prefix + name + ".")

    def parameters(self) -> list[Tensor]:
        """A list (PyTorch returns a generator): pass it to an optimizer, or loop over it."""
        return [p for _, p in self.named_parameters()]

    def children(self) -> list["Module"]:
        return list(self._modules.values())

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            _clear_grad(p, set_to_none)

    def train(self, mode: bool = True) -> "Module":
        self.training = bool(mode)
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        """PyTorch's layout: `Name(extra)`, or one indented `(name): child` line per sub-module."""
        name = type(self).__name__
        if not self._modules:
            return f"{name}({self.extra_repr()})"
        lines = [f"  ({key}): " + repr(m).replace("\n", "\n  ") for key, m in self._modules.items()]
        extra = self.extra_repr()
        return f"{name}(\n" + (f"  {extra}\n" if extra else "") + "\n".join(lines) + "\n)"


def _clear_grad(p: Tensor, set_to_none: bool) -> None:
    """PyTorch 2's zero_grad: drop the gradient (set_to_none=True), or zero it in place."""
    if set_to_none or p.grad is None:
        p.grad = None
    else:
        p.grad = p.grad.detach().zero_()


def _default_dtype() -> Any:
    from gradcli.engine.creation import get_default_dtype
    return get_default_dtype()


def _empty(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return Parameter(_wrap(np.empty(shape, dtype=dtype)))


class Linear(Module):
    """y = x·Wᵀ + b, W of shape (out_features, in_features), initialised as PyTorch does."""

    functional = staticmethod(NF.linear)

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None) -> None:
        super().__init__()
        for what, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
                raise ArgumentError(f"Linear(): {what} must be a non-negative integer, got {n!r}",
                                    hint="e.g. nn.Linear(3, 1): 3 inputs, 1 output")
        self.in_features, self.out_features = int(in_features), int(out_features)
        from gradcli.engine.creation import resolve_dtype
        dt = resolve_dtype(dtype) or _default_dtype()
        self._parameters["weight"] = _empty((self.out_features, self.in_features), dt)
        self._parameters["bias"] = _empty((self.out_features,), dt) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's draws in PyTorch's order: kaiming_uniform_(a=√5) for the weight, then U(±1/√fan_in)."""
        I.kaiming_uniform_(self._parameters["weight"], a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            I.uniform_(self._parameters["bias"], -bound, bound)

    def forward(self, input: Any) -> Tensor:
        return NF.linear(input, self._parameters["weight"], self._parameters["bias"])

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self._parameters['bias'] is not None}"


class Sequential(Module):
    """Modules applied one after the other; `model[i]` is the i-th, named "0", "1", ..."""

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise ArgumentError(f"Sequential(): argument {i} is a {type(m).__name__}, not a module",
                                    hint="e.g. nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))")
            self._modules[str(i)] = m

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, index: int) -> Module:
        items = list(self._modules.values())
        if not isinstance(index, (int, np.integer)) or not -len(items) <= index < len(items):
            raise ArgumentError(f"index {index} is out of range", hint=f"this Sequential has {len(items)} modules")
        return items[index]

    def __len__(self) -> int:
        return len(self._modules)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Any) -> Tensor:
        x = F._tensor_arg(input, "flatten")
        if x.ndim == 0:
            return F.reshape(x, 1)
        start, end = F._dim(self.start_dim, x.ndim), F._dim(self.end_dim, x.ndim)
        if start > end:
            raise ShapeError("flatten() has invalid args: start_dim cannot come after end_dim",
                             hint="e.g. nn.Flatten() flattens every dimension after the first")
        if start == end:
            return x
        merged = int(np.prod(x.shape[start:end + 1], dtype=np.int64))
        return F.reshape(x, x.shape[:start] + (merged,) + x.shape[end + 1:])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class LayerNorm(Module):
    functional = staticmethod(NF.layer_norm)

    def __init__(self, normalized_shape: Any, eps: float = 1e-05, elementwise_affine: bool = True,
                 bias: bool = True) -> None:
        super().__init__()
        from gradcli.engine.creation import ones, zeros
        self.normalized_shape = F.ints_arg(normalized_shape, "LayerNorm", "normalized_shape", single=True)
        self.eps, self.elementwise_affine = F.number_arg(eps, "LayerNorm", "eps"), elementwise_affine
        if elementwise_affine:
            self._parameters["weight"] = Parameter(ones(self.normalized_shape))
            self._parameters["bias"] = Parameter(zeros(self.normalized_shape)) if bias else None

    def forward(self, input: Any) -> Tensor:
        return NF.layer_norm(input, self.normalized_shape, self._parameters.get("weight"),
                             self._parameters.get("bias"), self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Dropout(Module):
    """Zeroes with probability p while training (`model.train()`); the identity after `model.eval()`."""

    functional = staticmethod(NF.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = NF._probability(p, "Dropout"), inplace

    def forward(self, input: Any) -> Tensor:
        return NF.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


def _module(name: str, fn: Callable[..., Tensor], options: dict[str, Any], positional: tuple[str, ...] = (),
            shown: tuple[str, ...] = ()) -> type:
    """A module class around one functional: its options become keyword arguments of every call.

    `positional` names the options the constructor also takes positionally (`nn.Softmax(1)`),
    `shown` those its repr lists, as PyTorch's `extra_repr`. `inplace` is accepted and ignored:
    inside a model the input a module would overwrite is an intermediate result.
    """
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        if len(args) > len(positional):
            raise ArgumentError(f"{name}() takes at most {len(positional)} positional arguments",
                                hint=f"options: {', '.join(options) or 'none'}")
        values = dict(options, **dict(zip(positional, args)))
        for key, value in kwargs.items():
            if key not in values and key != "inplace":
                raise ArgumentError(f"{name}() got an unexpected keyword argument '{key}'",
                                    hint=f"options: {', '.join(options) or 'none'}")
            values[key] = value
        values.pop("inplace", None)
        self.options = values

    def forward(self: Module, *inputs: Any) -> Tensor:
        return fn(*inputs, **self.options)

    def extra_repr(self: Module) -> str:
        return ", ".join(f"{k}={self.options[k]!r}" for k in shown)

    kinds = [(k, inspect.Parameter.POSITIONAL_OR_KEYWORD if k in positional else inspect.Parameter.KEYWORD_ONLY)
             for k in sorted(options, key=lambda k: k not in positional)]
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, kind, default=options[k]) for k, kind in kinds])
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "functional": staticmethod(fn),
                                  "__doc__": f"`nn.{name}`: `{fn.__name__}` as a module."})


_INPLACE = {"inplace": False}
ReLU = _module("ReLU", F.relu, _INPLACE)
ReLU6 = _module("ReLU6", NF.relu6, {})
Sigmoid = _module("Sigmoid", F.sigmoid, {})
Tanh = _module("Tanh", F.tanh, {})
Softmax = _module("Softmax", F.softmax, {"dim": None}, ("dim",), ("dim",))
LogSoftmax = _module("LogSoftmax", F.log_softmax, {"dim": None}, ("dim",), ("dim",))
Softmin = _module("Softmin", NF.softmin, {"dim": None}, ("dim",), ("dim",))
LeakyReLU = _module("LeakyReLU", NF.leaky_relu, {"negative_slope": 0.01}, ("negative_slope",), ("negative_slope",))
ELU = _module("ELU", NF.elu, {"alpha": 1.0}, ("alpha",), ("alpha",))
SELU = _module("SELU", NF.selu, {})
CELU = _module("CELU", NF.celu, {"alpha": 1.0}, ("alpha",), ("alpha",))
GELU = _module("GELU", NF.gelu, {"approximate": "none"}, ("approximate",), ("approximate",))
SiLU = _module("SiLU", NF.silu, {})
Mish = _module("Mish", NF.mish, {})
Softplus = _module("Softplus", NF.softplus, {"beta": 1.0, "threshold": 20.0}, ("beta", "threshold"),
                   ("beta", "threshold"))
Softsign = _module("Softsign", NF.softsign, {})
Hardtanh = _module("Hardtanh", NF.hardtanh, {"min_val": -1.0, "max_val": 1.0}, ("min_val", "max_val"),
                   ("min_val", "max_val"))
Hardsigmoid = _module("Hardsigmoid", NF.hardsigmoid, {})
Hardswish = _module("Hardswish", NF.hardswish, {})
LogSigmoid = _module("LogSigmoid", NF.logsigmoid, {})

MSELoss = _module("MSELoss", NF.mse_loss, {"reduction": "mean"})
L1Loss = _module("L1Loss", NF.l1_loss, {"reduction": "mean"})
SmoothL1Loss = _module("SmoothL1Loss", NF.smooth_l1_loss, {"reduction": "mean", "beta": 1.0})
HuberLoss = _module("HuberLoss", NF.huber_loss, {"reduction": "mean", "delta": 1.0})
CrossEntropyLoss = _module("CrossEntropyLoss", NF.cross_entropy, {"weight": None, "ignore_index": -100,
                                                                  "reduction": "mean", "label_smoothing": 0.0},
                           ("weight",))
NLLLoss = _module("NLLLoss", NF.nll_loss, {"weight": None, "ignore_index": -100, "reduction": "mean"}, ("weight",))
BCELoss = _module("BCELoss", NF.binary_cross_entropy, {"weight": None, "reduction": "mean"}, ("weight",))
BCEWithLogitsLoss = _module("BCEWithLogitsLoss", NF.binary_cross_entropy_with_logits,
                            {"weight": None, "reduction": "mean", "pos_weight": None}, ("weight",))
KLDivLoss = _module("KLDivLoss", NF.kl_div, {"reduction": "mean", "log_target": False})

MODULES: dict[str, type] = {cls.__name__: cls for cls in (
    Linear, Sequential, Flatten, Identity, LayerNorm, Dropout, ReLU, ReLU6, Sigmoid, Tanh, Softmax, LogSoftmax,
    Softmin, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus, Softsign, Hardtanh, Hardsigmoid, Hardswish,
    LogSigmoid, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss,
    KLDivLoss)}
"""Every module class a program can make, by its `torch.nn` name."""
