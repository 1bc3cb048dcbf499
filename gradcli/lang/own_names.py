"""The `_names` gradcli's own classes keep their state and machinery under, which a program's subclass
may neither read nor take over.

A program's subclass of `nn.Module` (or `Optimizer`, `Dataset`, `autograd.Function`) may give its
objects `_names` of its own (`self._scale`, `def _init_weights`); what it must not reach is
`_parameters`, `_forward_hooks`, `_forget`: gradcli's. They are derived, not listed, so a name a
gradcli class starts to use is protected the day it is written: every `_name` the class defines,
and every `self._name` its package's source reads or writes (state a class sets in `__init__` or
lazily, on first use, is in no class dictionary). A tensor's `x._data` is not a module's, so a
program's `Dataset` may keep its own `self._data`.
"""
from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path


def reserved(pytype: type) -> frozenset[str]:
    """The `_names` of the gradcli classes in `pytype`'s MRO (the program's own classes excluded)."""
    names: set[str] = set()
    for base in pytype.__mro__:
        if base is object or "_gradcli_class" in vars(base) or not base.__module__.startswith("gradcli."):
            continue
        names.update(name for name in vars(base) if _private(name))
        names |= _written(base.__module__)
    return frozenset(names)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@functools.cache
def _written(module: str) -> frozenset[str]:
    """Every `self._name` in the module's package (its own file, for the engine and the language, whose
    other files are not the class's)."""
    path = Path(sys.modules[module].__file__ or "")
    files = [path] if path.parent.name in ("engine", "lang") else sorted(path.parent.glob("*.py"))
    names: set[str] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name) and \
                    node.value.id == "self":
                names.add(node.attr)
    return frozenset(names)
