"""The torch library (`gradcli/nn`, `optim`, `data`, `func`, `distributions`) as the language reaches it without
loading it: its classes tested against, its base classes named, its functions listed before their package is
imported.

`gradcli eval "z = (x+2)**2"` must not pay for layers, optimizers and distributions it never touches. A value
can only be an instance of a library class once that class's module is imported, so a test against it needs
no import (`engine/kinds.py`); and a function named in a table every program has (`torch.selu`, `torch.vmap`)
imports its package when it is first called.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, Callable

from gradcli.engine import kinds


def loaded(module: str) -> ModuleType | None:
    """The library module if some part of the run has imported it, else None (and nothing is imported)."""
    return sys.modules.get(module)


class LibraryType:
    """A library class a program may subclass (`class Net(nn.Module)`), named before its module is imported:
    `load()` imports it; `isinstance` against it never does (False while the module is not loaded)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def load(self) -> type:
        return getattr(importlib.import_module(self.module), self.name)

    def __instancecheck__(self, value: Any) -> bool:
        module = sys.modules.get(self.module)
        return module is not None and isinstance(value, getattr(module, self.name))

    def __repr__(self) -> str:
        return f"LibraryType({self.module}.{self.name})"


class Deferred:
    """A library function named in a table every program has (`torch.selu`, `torch.vmap`) before its package is
    loaded: calling it, or asking its signature (a wrong call's usage, `axis=` read as `dim=`), loads the package
    through `resolve`, which also puts the function itself in the tables in its place. It prints as the function
    does, and its `__module__` is the function's (so `device=` is accepted as by gradcli's own functions)."""

    def __init__(self, module: str, name: str, resolve: Callable[[], Callable[..., Any]]) -> None:
        self.__module__ = module
        self.__name__ = self.__qualname__ = name
        self._resolve = resolve

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)

    @property
    def __signature__(self) -> Any:
        import inspect
        return inspect.signature(self._resolve())

    def __repr__(self) -> str:
        return f"<built-in function {self.__name__}>"


Deferred.__name__ = Deferred.__qualname__ = "function"  # what a program's errors call it (`type() of a function`)


def deferred(module: str, name: str) -> Deferred:
    """`module.name`, imported when first called or inspected."""
    return Deferred(module, name, lambda: getattr(importlib.import_module(module), name))


# The library's classes as the language tests values against them (`isinstance(v, library.Module)`): the kinds
# the engine declares and the library's classes derive from, so a test costs no import and no Python call.
Module, Sequential, ModuleList, ModuleDict = kinds.Module, kinds.Sequential, kinds.ModuleList, kinds.ModuleDict
ParameterList, ParameterDict = kinds.ParameterList, kinds.ParameterDict
Optimizer, LRScheduler = kinds.Optimizer, kinds.LRScheduler
Dataset, IterableDataset, DataLoader = kinds.Dataset, kinds.IterableDataset, kinds.DataLoader


def registered(module: Any, attr: str) -> bool:
    """Whether `attr` is one of a Module's parameters, buffers or sub-modules (`module` is a Module, so
    `gradcli.nn` is loaded already)."""
    from gradcli.nn.modules import registered as registered_on
    return registered_on(module, attr)
