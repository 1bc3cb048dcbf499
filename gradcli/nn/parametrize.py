"""`torch.nn.utils.parametrize`: a module's tensor recomputed from its originals every time it is read.

PyTorch swaps the module's class for a subclass named `Parametrized<Class>` whose property for the tensor's name
runs `module.parametrizations[name]`, a `ParametrizationList` holding the parametrizations and the originals
(`original`, or `original0`, `original1`, ... when `right_inverse` gives several). The subclass is made per
module, as PyTorch makes it, so one module's parametrization never reaches another of the same class.
Registering keeps the original parameter object (its data replaced by `right_inverse`'s value), so an optimizer
made before still steps it.
"""
from __future__ import annotations

from typing import Any

from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.nn.layers import ModuleDict, ModuleList
from gradcli.nn.modules import Module, Parameter
from gradcli.engine.tensor_str import PARAMETERS


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and the original(s) they start from."""

    def __init__(self, modules: list[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(modules):
                inverse = getattr(module, "right_inverse", None)
                if inverse is not None:
                    new = inverse(new)
        if isinstance(new, Tensor):
            if new is not original:
                original._data = new._data.astype(original._data.dtype, copy=True)
            self._keep("original", original)
            self.is_tensor, self.ntensors = True, 1
        else:
            originals = tuple(new)
            for i, value in enumerate(originals):
                self._keep(f"original{i}", Parameter(value.detach(), original.requires_grad)
                           if PARAMETERS.has(original) else value.detach())
            self.is_tensor, self.ntensors = False, len(originals)
        if not unsafe:  # PyTorch runs the parametrization once to check it (a spectral norm's power step included)
            self._check(self(), shape, dtype)

    @staticmethod
    def _check(value: Any, shape: tuple, dtype: Any) -> None:
        if not isinstance(value, Tensor):
            raise ArgumentError(f"A parametrization must return a tensor. Got {type(value).__name__}.",
                                hint="forward(X) returns the tensor that stands for the original")
        if value.shape != shape or value.dtype != dtype:
            raise ArgumentError("Registering a parametrization may not change the shape or dtype of the tensor, "
                                f"unless the `unsafe` flag is enabled.\nunparametrized shape: {tuple(shape)}, "
                                f"dtype {dtype}\nparametrized shape: {tuple(value.shape)}, dtype {value.dtype}",
                                hint="return a tensor of the original's shape, or pass unsafe=True")

    def _keep(self, name: str, value: Tensor) -> None:
        if PARAMETERS.has(value):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def forward(self) -> Tensor:  # type: ignore[override]
        modules = list(self._modules.values())
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x

    def right_inverse(self, value: Any) -> None:
        """`module.weight = value`: the originals become what the parametrizations' inverses give."""
        with no_grad():
            for module in reversed(list(self._modules.values())):
                inverse = getattr(module, "right_inverse", None)
                if inverse is not None:
                    value = inverse(value)
            values = (value,) if self.is_tensor else tuple(value)
            names = ("original",) if self.is_tensor else tuple(f"original{i}" for i in range(self.ntensors))
            for name, v in zip(names, values):
                target = getattr(self, name)
                target._data = v._data.astype(target._data.dtype, copy=True)


def _property(name: str) -> property:
    def get(module: Module) -> Tensor:
        return module.parametrizations[name]()

    def set_(module: Module, value: Any) -> None:
        module.parametrizations[name].right_inverse(value)
    return property(get, set_)


def is_parametrized(module: Any, tensor_name: str | None = None) -> bool:
    found = isinstance(module, Module) and "parametrizations" in module.__dict__.get("_modules", {})
    return found and (tensor_name is None or tensor_name in module.parametrizations._modules)


def register_parametrization(module: Any, tensor_name: str, parametrization: Any, *, unsafe: bool = False) -> Any:
    if not isinstance(module, Module) or not isinstance(parametrization, Module):
        raise ArgumentError("register_parametrization(module, tensor_name, parametrization): the module and the "
                            "parametrization must be nn.Modules", hint="e.g. a class Symmetric(nn.Module) with forward(X)")
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    original = module._parameters.get(tensor_name, module._buffers.get(tensor_name))
    if original is None:
        raise ArgumentError(f"Module '{type(module).__name__}' has no parameter or buffer with name '{tensor_name}'",
                            hint="parametrize a registered tensor, e.g. 'weight'")
    parametrization.train(module.training)
    parametrizations = ParametrizationList([parametrization], original, unsafe)
    for table in ("_parameters", "_buffers"):
        module.__dict__[table].pop(tensor_name, None)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": "torch.nn.utils.parametrize"})
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _property(tensor_name))
    module.parametrizations[tensor_name] = parametrizations
    return module


NAMES = {"register_parametrization": register_parametrization, "is_parametrized": is_parametrized}
