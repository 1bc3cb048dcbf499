"""The torch library (`gradcli/nn`, `optim`, `data`, `func`, `distributions`) as the language reaches it without
loading it: its classes tested against and its functions named before their package is imported.

`gradcli eval "z = (x+2)**2"` must not pay for layers, optimizers and distributions it never touches. A value
can only be an instance of a library class once that class's module is imported, so a test against a module
not yet loaded is simply False; and a function named in a table every program has (`torch.selu`, `torch.vmap`)
imports its package when it is first called.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, Callable


def loaded(module: str) -> ModuleType | None:
    """The library module if some part of the run has imported it, else None (and nothing is imported)."""
    return sys.modules.get(module)


class LibraryType:
    """A library class for `isinstance` and `issubclass` (`isinstance(v, LibraryType("gradcli.nn.modules",
    "Module"))`), which never imports its module: False while the module is not loaded."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def load(self) -> type:
        """The class itself, importing its module (for subclassing it, or reading its attributes)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __instancecheck__(self, value: Any) -> bool:
        module = sys.modules.get(self.module)
        return module is not None and isinstance(value, getattr(module, self.name))

    def __subclasscheck__(self, cls: type) -> bool:
        module = sys.modules.get(self.module)
        return module is not None and issubclass(cls, getattr(module, self.name))

    def __repr__(self) -> str:
        return f"LibraryType({self.module}.{self.name})"


def deferred(module: str, name: str) -> Callable[..., Any]:
    """`module.name` as a function that imports its module when first called; it stands in a table until the
    library is loaded, when the table takes the function itself (`Namespace` fills replace it)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__module__ = module
    return call


Module = LibraryType("gradcli.nn.modules", "Module")
Sequential = LibraryType("gradcli.nn.modules", "Sequential")
ModuleList = LibraryType("gradcli.nn.layers", "ModuleList")
ModuleDict = LibraryType("gradcli.nn.layers", "ModuleDict")
ParameterList = LibraryType("gradcli.nn.layers", "ParameterList")
ParameterDict = LibraryType("gradcli.nn.layers", "ParameterDict")
Optimizer = LibraryType("gradcli.optim.optimizers", "Optimizer")
LRScheduler = LibraryType("gradcli.optim.lr_scheduler", "LRScheduler")
Dataset = LibraryType("gradcli.data.loading", "Dataset")
IterableDataset = LibraryType("gradcli.data.loading", "IterableDataset")
DataLoader = LibraryType("gradcli.data.loading", "DataLoader")


def registered(module: Any, attr: str) -> bool:
    """Whether `attr` is one of a Module's parameters, buffers or sub-modules (`module` is a Module, so
    `gradcli.nn` is loaded already)."""
    from gradcli.nn.modules import registered as registered_on
    return registered_on(module, attr)
