"""What a program can iterate, and how many items that may build or cost (shared by the builtins,
the containers and the facades)."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.lang import arrays, dunders
from gradcli.lang.generators import ProgramGenerator
from gradcli.lang.library import DataLoader, Dataset, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from gradcli.lang.limits import Lazy, check_list
from gradcli.lang.objects import Instance

SEQUENCES = (list, tuple, range, str)
ENGINE_ITERABLES = (DataLoader, Dataset, ModuleList, ModuleDict, Sequential, ParameterList, ParameterDict)
"""torch objects a for loop and len() take."""
ITERATORS = (Lazy, ProgramGenerator)
"""Iterators that produce their items one at a time (each a step of the budget where it is made)."""


def iterate(value: Any) -> Iterator[Any]:
    """What `for v in value` visits: a sequence's items, a tensor's slices along its first dimension."""
    if isinstance(value, Instance):  # the program's own __iter__ or __getitem__ first (a Dataset subclass)
        found = dunders.iterate(value)
        if found is not None:
            return found
    if isinstance(value, (*SEQUENCES, *ENGINE_ITERABLES)):
        return iter(value)
    if hasattr(getattr(value, "pytype", None), "program_members"):  # a program's Enum: its members
        return value.pytype.program_members()
    if isinstance(value, ITERATORS):
        return value
    if isinstance(value, (dict, set)):
        return iter(list(value))  # a snapshot: the loop may change the dict
    if isinstance(value, Tensor):
        if value.ndim == 0:
            raise ArgumentError("iteration over a 0-d tensor", hint="a 0-d tensor is one number: use x.item()")
        return iter(value)
    if isinstance(value, np.ndarray):
        return arrays.rows(value)
    if not isinstance(value, Instance) and hasattr(type(value), "program_attributes") and \
            hasattr(type(value), "__iter__"):
        return iter(value)  # a facade's container (deque)
    raise ArgumentError(f"'{type_name(value)}' object is not iterable",
                        hint="iterate over a list, a tuple, range(n), zip(...), enumerate(...) or a tensor")


def visited(value: Any) -> Iterator[Any]:
    """`iterate(value)` with each item read a step (an iterator of the program's counts its own), for a
    facade that may drop what it reads (`Sifted`)."""
    found = iterate(value)
    return found if isinstance(found, ITERATORS) else Lazy(found)


def items(value: Any) -> list:
    """`list(value)`, refusing a list past the limit before it is built (or, for an iterator, as it grows)."""
    if isinstance(value, ITERATORS):
        out: list = []
        for item in value:
            check_list(len(out) + 1)
            out.append(item)
        return out
    if isinstance(value, (*SEQUENCES, Tensor, dict, set)) and not (isinstance(value, Tensor) and value.ndim == 0):
        check_list(len(value))
    return list(iterate(value))


def consume(value: Any) -> Iterator[Any]:
    """The items a builtin that reduces an iterable (sum, any, min...) visits: a range's count as steps,
    as an iterator's do where they are made, since nothing else bounds them (sum(range(10**12)))."""
    if isinstance(value, range):
        return Lazy(iter(value))
    return iterate(value)


def type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    return "NoneType" if value is None else type(value).__name__
