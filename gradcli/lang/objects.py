"""What every object of a program's class is, on the Python side (`classes` builds the classes).

A module of its own, below `classes` and `formatting`, so that printing an object needs no class
machinery and imports run one way.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from gradcli.errors import ArgumentError


class Instance:
    """Every object a program's class makes is one (mixed into the Python type behind the class).

    `program_attributes` marks it for the builtins' protocols (`len`, `for`, truth: Python's own
    special methods, which the class's wrappers give); `program_index` and `program_set_item` are
    what `obj[k]` and `obj[k] = v` call. What a program reads on it is `attribute`'s decision."""

    program_attributes: frozenset[str] = frozenset()

    def program_index(self, key: Any) -> Any:
        if not hasattr(type(self), "__getitem__"):
            raise ArgumentError(f"'{type(self).__name__}' object is not subscriptable",
                                hint="define __getitem__(self, index) in the class")
        return self[key]  # type: ignore[index]

    def program_set_item(self, key: Any, value: Any) -> None:
        if not hasattr(type(self), "__setitem__"):
            raise ArgumentError(f"'{type(self).__name__}' object does not support item assignment",
                                hint="define __setitem__(self, index, value) in the class")
        self[key] = value  # type: ignore[index]


def text(value: Instance, convert: Callable[[Any], str]) -> str:
    """`str(obj)` / `repr(obj)` by the class's own __str__ / __repr__ (a program call, budgeted)."""
    try:
        return without_address(convert(value))
    except TypeError as exc:
        raise ArgumentError(f"{exc}", hint="__str__ and __repr__ must return a string") from None


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_address(text: str) -> str:
    """Python's `<__main__.A object at 0x7f...>` without the address: nothing of the machine's memory is shown."""
    return _ADDRESS.sub("", text) if " at 0x" in text else text
