"""`isinstance`, `issubclass`, `type` and `callable` over the names a program has for types.

A program never holds a Python class: `int`, `list`, `torch.Tensor`, `nn.Linear` are gradcli's
callables that stand in for them, and `Exception` and its kind are `ProgramType`s (as a user's
class will be). `isinstance(v, T)` asks a `ProgramType` itself, and maps a stand-in to the Python
types it means; `type(v)` gives back the stand-in, so `type(x) is int` and `type(e).__name__` read
as in Python.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

import numpy as np

from gradcli.errors import ArgumentError
from gradcli.lang.exceptions import ExceptionValue, ProgramType
from gradcli.lang.formatting import CLASS_TEXTS


_STAND_INS: dict[int, tuple[str, tuple[type, ...], Any]] = {}
"""id(stand-in) -> (Python's name, the Python types it covers, the stand-in); filled by the modules that
define the stand-ins (python_builtins: int, list...; builtins: torch.Tensor, nn's layers)."""


_TESTS: dict[int, Callable[[Any], bool]] = {}
"""id(stand-in) -> the test of a type no Python class tells (`nn.Parameter`: a plain Tensor `nn.Parameter`
made), most specific first: `type(v)` is the first whose test passes."""


def register(stand_in: Any, name: str, types: tuple[type, ...], module: str = "",
             test: Callable[[Any], bool] | None = None) -> None:
    """`module` is where PyTorch (or Python, for builtins: none) defines the class, for its printed text;
    `test`, when given, decides membership in place of `types` (which still say what it is a kind of)."""
    _STAND_INS[id(stand_in)] = (name, types, stand_in)
    if test is not None:
        _TESTS[id(stand_in)] = test
    CLASS_TEXTS[id(stand_in)] = (stand_in, f"<class '{module + '.' if module else ''}{name}'>")


def _stand_ins() -> dict[int, tuple[str, tuple[type, ...], Any]]:
    return _STAND_INS


def stand_in_name(value: Any) -> str | None:
    known = _stand_ins().get(id(value))
    return None if known is None else known[0]


def _covers(kind: Any, value: Any) -> bool:
    if isinstance(kind, ProgramType):
        return kind.covers(value)
    known = _stand_ins().get(id(kind))
    if known is None:
        raise ArgumentError("isinstance() arg 2 must be a type, a tuple of types, or a union",
                            hint="e.g. isinstance(x, torch.Tensor) or isinstance(n, (int, float))")
    if known[0] == "int" and isinstance(value, (bool, np.bool_)):
        return True
    test = _TESTS.get(id(kind))
    return isinstance(value, known[1]) if test is None else test(value)


def isinstance_(value: Any, kinds: Any) -> bool:
    return any(_covers(kind, value) for kind in (kinds if isinstance(kinds, tuple) else (kinds,)))


def issubclass_(kind: Any, kinds: Any) -> bool:
    if not isinstance(kind, ProgramType) and id(kind) not in _stand_ins():
        raise ArgumentError("issubclass() arg 1 must be a class")
    for other in kinds if isinstance(kinds, tuple) else (kinds,):
        if isinstance(other, ProgramType) and isinstance(kind, ProgramType):
            if other.includes(kind):
                return True
        elif other is kind:
            return True
        elif id(other) in _stand_ins() and id(kind) in _stand_ins():
            if issubclass(_stand_ins()[id(kind)][1][0], _stand_ins()[id(other)][1]):
                return True
    return False


def type_(value: Any) -> Any:
    """`type(value)`: the program's own name for its type."""
    if isinstance(value, ExceptionValue):
        return value.type
    program_class = getattr(type(value), "_gradcli_class", None)  # an object of the program's class
    if program_class is not None:
        return program_class
    if type(value).__module__ == "collections":  # a state_dict() is an OrderedDict before any `import collections`
        import_module("gradcli.lang.stdlib.collections_module")  # whose facade registers the stand-in
    for key, test in _TESTS.items():
        if test(value):
            return _STAND_INS[key][2]
    best = None
    for name, types, fn in _stand_ins().values():
        if id(fn) in _TESTS:
            continue
        if type(value) in types or isinstance(value, types) and (best is None or issubclass(types[0], best[1][0])):
            if type(value) in types:
                return fn
            best = (name, types, fn)
    if best is not None:
        return best[2]
    raise ArgumentError(f"type() of a {type(value).__name__} is not available",
                        hint="test types with isinstance(x, torch.Tensor), isinstance(n, int)")


def callable_(value: Any) -> bool:
    from gradcli.engine.tensor import Tensor
    from gradcli.lang.namespace import Namespace
    return callable(value) and not isinstance(value, (Tensor, Namespace))
