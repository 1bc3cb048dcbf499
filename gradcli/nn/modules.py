"""A minimal `torch.nn`: the layers, activations and losses of tutorial training scripts.

A module is a callable holding parameters (leaf tensors that require grad) and sub-modules;
`model(x)` runs its `forward` through the functional ops, so the graph is the one the ops build.
A parameter is a plain Tensor: the engine's hot path tells tensors by exact type, and a
`Parameter` subclass would need a check on every op for nothing but its repr (which a registry
of parameters gives instead).
"""
from __future__ import annotations

import collections

import inspect
import math
from typing import Any, Callable, Iterator

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import kinds
from gradcli.engine import narrow
from gradcli.nn import init as I
from gradcli.nn import functional as NF
from gradcli.engine.hooks import RemovableHandle
from gradcli.engine.module_hooks import BackwardHook, register
from gradcli.engine.tensor import Tensor, _wrap, check_elements
from gradcli.engine.tensor_str import PARAMETERS, UNINITIALIZED
from gradcli.errors import ArgumentError, ShapeError


def Parameter(data: Any = None, requires_grad: bool = True) -> Tensor:
    """`nn.Parameter(t)`: a leaf sharing t's data, requiring grad."""
    if data is None:
        data = F.as_tensor([])
    t = _wrap(F.as_tensor(data)._data)
    PARAMETERS.add(t)
    return t.requires_grad_(bool(requires_grad))


def UninitializedParameter(requires_grad: bool = True, device: Any = None, dtype: Any = None) -> Tensor:
    """A lazy layer's parameter before its first call: no elements yet, printed and typed as PyTorch's
    `UninitializedParameter`; its shape is an error until the layer has seen its input."""
    from gradcli.engine.creation import resolve_dtype
    p = Parameter(_wrap(np.empty((0,), dtype=resolve_dtype(dtype) or _default_dtype())), requires_grad)
    UNINITIALIZED.add(p)
    return p


class Module(kinds.Module):
    """Parameters, buffers and sub-modules by name, in the order they were set, as PyTorch keeps them.

    Assigning a parameter or a module to an attribute registers it (`__setattr__`), so a program's
    `self.fc = nn.Linear(2, 3)` is found by `parameters()`, `state_dict()` and `print(model)` with
    PyTorch's dotted names; `model(x)` runs the forward pre-hooks, `forward` and the forward hooks.
    """

    functional: Callable[..., Any] | None = None
    """The function of `torch.nn.functional` the module applies (for `gradcli ops`), if one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise ArgumentError(f"Module.__init__() takes no arguments, got {len(args) + len(kwargs)}",
                                hint="call super().__init__() without arguments")
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])
        self.training = True

    def forward(self, *inputs: Any) -> Any:
        raise ArgumentError(f'Module [{type(self).__name__}] is missing the required "forward" function',
                            hint="define forward(self, x) in the class")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        hooks = self.__dict__.get("_forward_pre_hooks")
        if hooks:
            for hook in list(hooks):
                changed = hook(self, inputs)
                if changed is not None:
                    inputs = changed if isinstance(changed, tuple) else (changed,)
        backward = self.__dict__.get("_backward_hooks") or self.__dict__.get("_backward_pre_hooks")
        if backward:
            backward = BackwardHook(self, self.__dict__.get("_backward_hooks", ()),
                                    self.__dict__.get("_backward_pre_hooks", ()))
            inputs = backward.setup_inputs(inputs)
        output = self.forward(*inputs, **kwargs)
        hooks = self.__dict__.get("_forward_hooks")
        if hooks:
            for hook in list(hooks):
                changed = hook(self, inputs, output)
                if changed is not None:
                    output = changed
        legacy = self.__dict__.get("_legacy_backward_hooks")
        if legacy and isinstance(output, Tensor) and output.grad_fn is not None:
            for hook in list(legacy):  # the deprecated kind: a hook on the node that made the output
                output.grad_fn.register_hook(lambda grad_input, grad_output, hook=hook: hook(self, grad_input,
                                                                                          grad_output))
        return backward.setup_outputs(output) if backward else output

    def __getattr__(self, name: str) -> Any:
        """Parameters, buffers and sub-modules read as attributes (`model.weight`), as in PyTorch."""
        for table in ("_parameters", "_buffers", "_modules"):
            members = self.__dict__.get(table, {})
            if name in members:
                return members[name]
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        params, modules = self.__dict__.get("_parameters"), self.__dict__.get("_modules")
        if isinstance(value, Tensor) and PARAMETERS.has(value):
            if params is None:
                raise ArgumentError("cannot assign parameters before Module.__init__() call",
                                    hint="call super().__init__() first in __init__")
            self._forget(name)
            params[name] = value
        elif isinstance(value, Module):
            if modules is None:
                raise ArgumentError("cannot assign module before Module.__init__() call",
                                    hint="call super().__init__() first in __init__")
            self._forget(name)
            modules[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise ArgumentError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                    "(torch.nn.Parameter or None expected)", hint="wrap it: nn.Parameter(t)")
            params[name] = None
        elif modules is not None and name in modules:
            if value is not None:
                raise ArgumentError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
            modules[name] = None
        elif name in self.__dict__.get("_buffers", {}):
            if value is not None and not isinstance(value, Tensor):
                raise ArgumentError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                    "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__[table].pop(name, None)

    # -- registration -------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Tensor | None) -> None:
        _check_name(self, name, "parameter")
        if param is not None and not (isinstance(param, Tensor) and PARAMETERS.has(param)):
            raise ArgumentError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                                "(torch.nn.Parameter or None required)", hint="wrap it: nn.Parameter(t)")
        self._forget(name)
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ArgumentError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                                "(torch Tensor or None required)")
        self._forget(name)
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        _check_name(self, name, "module")
        if module is not None and not isinstance(module, Module):
            raise ArgumentError(f"{_type_name(module)} is not a Module subclass")
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    def register_forward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        return _handle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        return _handle(self._forward_pre_hooks, hook)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) once the gradients of this call's tensor inputs are known."""
        return register(self.__dict__.setdefault("_backward_hooks", []), hook, prepend, "register_full_backward_hook")

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in PyTorch, still in tutorials: hook(module, grad_input, grad_output) on the node that made
        the module's output, so grad_input is that last node's input gradients (for nn.Linear, addmm's: the
        bias's, the input's and the transposed weight's), as PyTorch gives them."""
        return register(self.__dict__.setdefault("_legacy_backward_hooks", []), hook, False, "register_backward_hook")

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) once the gradients of this call's outputs are known."""
        return register(self.__dict__.setdefault("_backward_pre_hooks", []), hook, prepend,
                        "register_full_backward_pre_hook")

    # -- walks --------------------------------------------------------------------------------
    def named_modules(self, memo: Any = None, prefix: str = "", remove_duplicate: bool = True
                      ) -> list[tuple[str, "Module"]]:
        found: list[tuple[str, Module]] = []
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if remove_duplicate and id(m) in seen:
                continue
            seen.add(id(m))
            found.append((name, m))
            children = [(name + ("." if name else "") + key, c) for key, c in m._modules.items() if c is not None]
            stack.extend(reversed(children))
        return found

    def modules(self) -> list["Module"]:
        return [m for _, m in self.named_modules()]

    def named_children(self) -> list[tuple[str, "Module"]]:
        seen: set[int] = set()
        out = []
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                out.append((name, m))
        return out

    def children(self) -> list["Module"]:
        return [m for _, m in self.named_children()]

    def _named(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool = True) -> list[tuple[str, Any]]:
        found: list[tuple[str, Any]] = []
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, m in modules:
            for name, value in m.__dict__[table].items():
                if value is None or remove_duplicate and id(value) in seen:
                    continue
                seen.add(id(value))
                found.append((module_prefix + ("." if module_prefix else "") + name, value))
        return found

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
        return self._named("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> "Generated":
        """A generator, as PyTorch's: `next(model.parameters())`, an optimizer's params, a loop."""
        return Generated([p for _, p in self.named_parameters(recurse=recurse)], "Module.parameters")

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> list[tuple[str, Tensor]]:
        return self._named("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> list[Tensor]:
        return [b for _, b in self.named_buffers(recurse=recurse)]

    # -- state ----------------------------------------------------------------------------------
    def state_dict(self, prefix: str = "", keep_vars: bool = False) -> dict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, each module's own before its children's, in
        an OrderedDict as PyTorch's (so `print(model.state_dict())` reads as PyTorch's)."""
        out: dict[str, Tensor] = collections.OrderedDict()
        for module_prefix, m in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            lead = module_prefix + "." if module_prefix else ""
            skipped = m.__dict__.get("_non_persistent", set())
            for table in ("_parameters", "_buffers"):
                for name, value in m.__dict__[table].items():
                    if value is not None and name not in skipped:
                        out[lead + name] = value if keep_vars else value.detach()
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> "IncompatibleKeys":
        if not isinstance(state_dict, dict):
            raise ArgumentError(f"Expected state_dict to be dict-like, got {_type_name(state_dict)}.",
                                hint="pass what model.state_dict() returned")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        for key, target in own.items():
            if key in state_dict:
                value = state_dict[key]
                if not isinstance(value, Tensor) or value.shape != target.shape:
                    shape = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                    problems.append(f"size mismatch for {key}: copying a param with shape torch.Size("
                                    f"{list(shape) if isinstance(shape, tuple) else shape}) from checkpoint, the "
                                    f"shape in current model is torch.Size({list(target.shape)}).")
        if strict:
            if unexpected:
                problems.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected)
                                + ". ")
            if missing:
                problems.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if problems:
            raise ShapeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                                + "\n\t".join(problems), hint="load a state_dict saved from the same model, or "
                                                              "pass strict=False")
        for key, target in own.items():
            if key in state_dict:
                target._data[...] = state_dict[key]._data.astype(target.dtype)
        return IncompatibleKeys(missing if not strict else [], unexpected if not strict else [])

    # -- modes and conversions -------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            _clear_grad(p, set_to_none)

    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ArgumentError("training mode is expected to be boolean")
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def apply(self, fn: Callable[["Module"], Any]) -> "Module":
        """`fn` on every sub-module, children first, then on this module (PyTorch's order)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _cast(self, dtype: Any) -> "Module":
        for m in self.modules():
            for table in ("_parameters", "_buffers"):
                for value in m.__dict__[table].values():
                    if value is not None and value.dtype.kind == "f":
                        value._data = narrow.astype(value._data, dtype)
                        if value.grad is not None:
                            value.grad._data = narrow.astype(value.grad._data, dtype)
        return self

    def double(self) -> "Module":
        return self._cast(np.float64)

    def float(self) -> "Module":
        return self._cast(np.float32)

    def half(self) -> "Module":
        return self._cast(np.float16)

    def bfloat16(self) -> "Module":
        return self._cast(narrow.BFLOAT16)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """`model.to(device)`, `model.to(torch.float64)`: the CPU is the only device; a dtype casts."""
        from gradcli.engine.creation import resolve_dtype
        from gradcli.engine.devices import check_device
        for value in [*args, *kwargs.values()]:
            if isinstance(value, str) and value in _DTYPES:
                self._cast(resolve_dtype(value))
            elif value is not None and not isinstance(value, bool):
                check_device(value)
        return self

    def cpu(self) -> "Module":
        return self

    # -- text -------------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        """PyTorch's layout: `Name(extra)`, or the extra lines and one `(name): child` line per sub-module."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _indent(repr(m)) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        if not lines:
            return f"{type(self).__name__}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{type(self).__name__}({extra_lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class IncompatibleKeys:
    """What load_state_dict returns, shown as PyTorch shows it."""

    program_attributes = frozenset({"missing_keys", "unexpected_keys"})

    def __init__(self, missing: list[str], unexpected: list[str]) -> None:
        self.missing_keys, self.unexpected_keys = missing, unexpected

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


_DTYPES = frozenset({"float32", "float64", "float", "double", "float16", "half", "bfloat16"})


def registered(module: Module, name: str) -> bool:
    """Whether `name` is one of the module's parameters, buffers or sub-modules."""
    return any(name in module.__dict__.get(table, {}) for table in ("_parameters", "_buffers", "_modules"))


def weight_of(module: Module, name: str = "weight") -> Any:
    """A layer's own parameter, or what stands in its place once spectral or weight normalisation (or a
    parametrization) has replaced it: their pre-hook's tensor, or the parametrization's property."""
    params = module.__dict__["_parameters"]
    return params[name] if name in params else getattr(module, name)


def _check_name(module: Module, name: Any, what: str) -> None:
    if "_parameters" not in module.__dict__:
        raise ArgumentError(f"cannot assign {what} before Module.__init__() call",
                            hint="call super().__init__() first in __init__")
    if not isinstance(name, str):
        raise ArgumentError(f"{what} name should be a string. Got {_type_name(name)}")
    if "." in name or not name:
        raise ArgumentError(f'{what} name can\'t contain "."' if name else f'{what} name can\'t be empty string ""')
    if name in module.__dict__ and not registered(module, name) or hasattr(type(module), name):
        raise ArgumentError(f"attribute '{name}' already exists")


def _handle(table: list, hook: Callable[..., Any]) -> RemovableHandle:
    table.append(hook)
    return RemovableHandle(table, hook)


def _indent(text: str) -> str:
    return text.replace("\n", "\n  ")


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return "torch.FloatTensor" if value.dtype == np.float32 else "torch.DoubleTensor" \
            if value.dtype == np.float64 else "Tensor"
    return type(value).__name__


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
    """A layer's parameter before its init fills it: held to the element cap like any tensor, so a layer too big
    for the run is refused at once instead of being filled number by number."""
    check_elements(tuple(shape), "a parameter", dtype)
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
        return NF.linear(input, weight_of(self), self._parameters["bias"])

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={self._parameters['bias'] is not None}"


class Generated:
    """What a PyTorch method returns as a generator (`model.parameters()`): iterated once, `next()` takes
    the next item, and it has no length, as a generator has none."""

    program_attributes: frozenset = frozenset()

    def __init__(self, items: list, name: str) -> None:
        self._items, self._name = iter(items), name

    def __iter__(self) -> "Generated":
        return self

    def __next__(self) -> Any:
        return next(self._items)

    def __repr__(self) -> str:
        return f"<generator object {self._name}>"  # Python's text, the address aside (as every repr here)


Generated.__name__ = "generator"  # errors name its type as Python names a generator's


class Sequential(Module, kinds.Sequential):
    """Modules applied one after the other; `model[i]` is the i-th, named "0", "1", ..."""

    def __init__(self, *modules: Any) -> None:
        """Modules in order, or one (ordered) dict naming them, as the official tutorials build nets."""
        super().__init__()
        named = modules[0].items() if len(modules) == 1 and isinstance(modules[0], dict) else \
            ((str(i), m) for i, m in enumerate(modules))
        for i, (key, m) in enumerate(named):
            if not isinstance(key, str):
                raise ArgumentError(f"Sequential(): module name should be a string. Got {type(key).__name__}",
                                    hint="name the layers with strings: OrderedDict([('fc1', nn.Linear(2, 4))])")
            if not isinstance(m, Module):
                raise ArgumentError(f"Sequential(): argument {key if modules and isinstance(modules[0], dict) else i}"
                                    f" is a {type(m).__name__}, not a module",
                                    hint="e.g. nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))")
            self._modules[key] = m

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, index: Any) -> Module:
        """A position, or a slice: a Sequential of those modules under their own names, as PyTorch's."""
        if isinstance(index, slice):
            return Sequential(dict(list(self._modules.items())[index]))
        items = list(self._modules.values())
        if not isinstance(index, (int, np.integer)) or not -len(items) <= index < len(items):
            raise ArgumentError(f"index {index} is out of range", hint=f"this Sequential has {len(items)} modules")
        return items[index]

    def __setitem__(self, index: Any, module: Any) -> None:
        """`model[2] = nn.Linear(...)`: the module at that position replaced, under its name."""
        keys = list(self._modules)
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool) or not -len(keys) <= index < len(keys):
            raise ArgumentError(f"index {index} is out of range", hint=f"this Sequential has {len(keys)} modules")
        if not isinstance(module, Module):
            raise ArgumentError(f"{_type_name(module)} is not a Module subclass")
        self._modules[keys[index]] = module

    def append(self, module: Any) -> "Sequential":
        if not isinstance(module, Module):
            raise ArgumentError(f"Sequential.append() takes a module, not {type(module).__name__}",
                                hint="e.g. net.append(nn.ReLU())")
        self._modules[str(len(self._modules))] = module
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        """`for layer in net:` (d2l prints each layer's output shape so)."""
        return iter(list(self._modules.values()))


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
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, " \
               f"bias={self._parameters.get('bias') is not None}"


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
        legacy = {key: kwargs.pop(key) for key in ("size_average", "reduce") if key in kwargs and "reduction" in options}
        if any(value is not None for value in legacy.values()):  # PyTorch's deprecated pair decides the reduction
            values["reduction"] = NF.legacy_reduction(legacy.get("size_average"), legacy.get("reduce"))
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

MODULES: dict[str, type] = {cls.__name__: cls for cls in (
    Linear, Sequential, Flatten, Identity, LayerNorm, Dropout, ReLU, ReLU6, Sigmoid, Tanh, Softmax, LogSoftmax,
    Softmin, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus, Softsign, Hardtanh, Hardsigmoid, Hardswish,
    LogSigmoid)}
"""The module classes of this file, by their `torch.nn` name (the losses are declared in `nn/losses.py`)."""
