"""Python's own builtins that tutorials use around tensors: zip, enumerate, sum, list, str, round...

Each takes only the values a program can hold (numbers, strings, lists, tuples, ranges, tensors)
and builds nothing past the list and string limits. `sum`, `max` and `min` of a tensor stay
torch's (`sum(x)` has always meant `torch.sum(x)` in gradcli); of a list they are Python's.
"""
from __future__ import annotations

import builtins as py
import math
from typing import Any, Callable, Iterator

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.data import DataLoader, Dataset
from gradcli.engine.layers import ModuleDict, ModuleList
from gradcli.engine.nn import Sequential
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ValueDomainError
from gradcli.lang.formatting import to_repr, to_str
from gradcli.lang.limits import check_list, check_string

_SEQUENCES = (list, tuple, range, str)
_ENGINE_ITERABLES = (DataLoader, Dataset, ModuleList, ModuleDict)  # torch objects a for loop and len() take


def iterate(value: Any) -> Iterator[Any]:
    """What `for v in value` visits: a sequence's items, a tensor's slices along its first dimension."""
    if isinstance(value, (*_SEQUENCES, *_ENGINE_ITERABLES)):
        return iter(value)
    if isinstance(value, Tensor):
        if value.ndim == 0:
            raise ArgumentError("iteration over a 0-d tensor", hint="a 0-d tensor is one number: use x.item()")
        return iter(value)
    raise ArgumentError(f"'{_type_name(value)}' object is not iterable",
                        hint="iterate over a list, a tuple, range(n), zip(...), enumerate(...) or a tensor")


def items(value: Any) -> list:
    """`list(value)`, refusing a list past the limit before it is built."""
    if isinstance(value, (*_SEQUENCES, Tensor)) and not (isinstance(value, Tensor) and value.ndim == 0):
        check_list(len(value))
    return list(iterate(value))


def zip_(*iterables: Any) -> list[tuple]:
    return list(py.zip(*(items(v) for v in iterables)))


def enumerate_(iterable: Any, start: int = 0) -> list[tuple[int, Any]]:
    return list(py.enumerate(items(iterable), start))


def list_(iterable: Any = ()) -> list:
    return items(iterable)


def tuple_(iterable: Any = ()) -> tuple:
    return tuple(items(iterable))


def str_(value: Any = "") -> str:
    text = to_str(value)
    check_string(len(text))
    return text


def repr_(value: Any) -> str:
    text = to_repr(value)
    check_string(len(text))
    return text


def bool_(value: Any = False) -> bool:
    return bool(value)


def reversed_(sequence: Any) -> list:
    return items(sequence)[::-1]


def _ordered(pick: Callable[..., Any], values: list, word: str, **options: Any) -> Any:
    """`pick(values)` over numbers, strings or one-element tensors, never nested lists (whose
    comparison can run for ever) nor numbers against strings."""
    numbers = (int, float, Tensor, np.integer, np.floating)
    if not (py.all(isinstance(v, numbers) for v in values) or py.all(isinstance(v, str) for v in values)):
        raise ArgumentError(f"{word}() compares numbers and tensors, or strings, not a mix or lists",
                            hint="e.g. sorted(x.tolist())")
    return pick(values, **options)


def sorted_(iterable: Any, reverse: bool = False) -> list:
    return _ordered(py.sorted, items(iterable), "sorted", reverse=reverse)


def any_(iterable: Any) -> bool:
    return py.any(bool(v) for v in iterate(iterable))


def all_(iterable: Any) -> bool:
    return py.all(bool(v) for v in iterate(iterable))


def range_(*args: Any) -> range:
    ints = [a.item() if isinstance(a, Tensor) else a for a in args]
    if not ints or len(ints) > 3 or not py.all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                                               for i in ints):
        raise ArgumentError("range() takes 1 to 3 integers", hint="e.g. range(10) or range(0, 10, 2)")
    if len(ints) == 3 and ints[2] == 0:
        raise ArgumentError("range() arg 3 must not be zero", hint="step by 1 or more: range(0, 10, 2)")
    return range(*(int(i) for i in ints))


def float_(x: Any = 0.0) -> float:
    """Python's float() of a number, a 1-element tensor, or a string such as '0.5', 'inf' or 'nan'."""
    if isinstance(x, (Tensor, int, float, bool, np.integer, np.floating)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            pass
    raise ArgumentError(f"could not convert {to_str(x)[:40]!r} to float",
                        hint="float works on numbers, 1-element tensors and strings such as '0.5' or 'inf'")


def int_(x: Any = 0) -> int:
    if isinstance(x, (Tensor, int, float, bool, np.integer, np.floating)):
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueDomainError(f"cannot convert float {x} to integer")
        return int(x)
    if isinstance(x, str):
        try:
            return int(x)
        except ValueError:
            pass
    raise ArgumentError(f"int() of {to_str(x)[:40]!r}", hint="int works on numbers, 1-element tensors and "
                                                             "strings of digits")


def len_(value: Any) -> int:
    if isinstance(value, (*_SEQUENCES, Tensor, Sequential, *_ENGINE_ITERABLES)):
        return len(value)
    raise ArgumentError(f"object of type '{_type_name(value)}' has no len()", hint="len works on tensors, lists "
                                                                                 "and strings")


def sum_(iterable: Any, *args: Any, **kwargs: Any) -> Any:
    """`sum(x)` of a tensor is torch.sum; of a list, Python's sum (start 0), which adds tensors too."""
    if isinstance(iterable, Tensor):
        return F.sum(iterable, *args, **kwargs)
    start = kwargs.pop("start", args[0] if args else 0)
    if kwargs or len(args) > 1:
        raise ArgumentError("sum() of a list takes the list and an optional start", hint="sum(losses) or sum(xs, 0.0)")
    if isinstance(iterable, str) or isinstance(start, str):
        raise ArgumentError("sum() can't sum strings", hint="join them: ''.join(parts)")
    total = start
    for value in iterate(iterable):
        if not isinstance(value, (Tensor, int, float, np.integer, np.floating)):
            raise ArgumentError(f"sum() adds numbers and tensors, not a {_type_name(value)}",
                                hint="make a tensor of the list first: torch.tensor(values).sum()")
        total = total + value
    return total


def _extreme(tensor_fn: Callable[..., Any], pick: Callable[..., Any], word: str) -> Callable[..., Any]:
    """`max(xs)`, `max(a, b)` of numbers as Python's; of a tensor as torch's."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and isinstance(args[0], (list, tuple, range)):
            if not args[0]:
                raise ArgumentError(f"{word}() arg is an empty sequence")
            return _ordered(pick, list(args[0]), word)
        if len(args) >= 2 and not kwargs and py.all(isinstance(a, (int, float)) for a in args):
            return pick(args)
        return tensor_fn(*args, **kwargs)
    call.__name__ = word
    call.__doc__ = tensor_fn.__doc__
    call.__wrapped__ = tensor_fn  # type: ignore[attr-defined]
    return call


max_ = _extreme(F.max, py.max, "max")
min_ = _extreme(F.min, py.min, "min")


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    return "NoneType" if value is None else type(value).__name__


# name -> callable: Python's builtins as a program sees them (looked up before torch's functions)
PYTHON: dict[str, Callable[..., Any]] = {
    "zip": zip_, "enumerate": enumerate_, "list": list_, "tuple": tuple_, "str": str_, "repr": repr_, "bool": bool_,
    "reversed": reversed_, "sorted": sorted_, "any": any_, "all": all_, "len": len_,
    "sum": sum_, "max": max_, "min": min_, "range": range_, "float": float_, "int": int_,
}
