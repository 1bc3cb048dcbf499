"""Python's own builtins that tutorials use around tensors: zip, enumerate, sum, list, str, round...

Each takes only the values a program can hold (numbers, strings, lists, tuples, ranges, tensors)
and builds nothing past the list and string limits. `sum`, `max` and `min` of a tensor stay
torch's (`sum(x)` has always meant `torch.sum(x)` in gradcli); of a list they are Python's.
"""
from __future__ import annotations

import ast
import builtins as py
import math
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ValueDomainError
from gradcli.lang import arrays, containers, dunders
from gradcli.lang.library import Sequential
from gradcli.lang import type_tests
from gradcli.lang.dict_views import VIEWS
from gradcli.lang.exceptions import EXCEPTIONS, ProgramType, raise_python
from gradcli.lang.formatting import BUILTIN_NAMES, to_repr, to_str
from gradcli.lang.generators import ProgramGenerator
from gradcli.lang.iteration import ENGINE_ITERABLES, ITERATORS, SEQUENCES, consume, items, iterate, visited
from gradcli.lang.iteration import type_name as _type_name
from gradcli.lang.limits import Lazy, Sifted, check_list, check_string
from gradcli.lang.objects import Instance

_SEQUENCES, _ITERATORS = SEQUENCES, ITERATORS


def zip_(*iterables: Any) -> list[tuple] | Lazy:
    """A list of tuples, as gradcli has always given; lazy when one of them is an iterator (zip(count(), xs))."""
    if py.any(isinstance(v, _ITERATORS) for v in iterables):
        return Lazy(py.zip(*(iterate(v) for v in iterables)))
    return list(py.zip(*(items(v) for v in iterables)))


def enumerate_(iterable: Any, start: int = 0) -> list[tuple[int, Any]] | Lazy:
    if isinstance(iterable, _ITERATORS):
        return Lazy(py.enumerate(iterable, start))
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
    return dunders.truth(value) if isinstance(value, Instance) else bool(value)


def reversed_(sequence: Any) -> Lazy:
    return Lazy(iter(items(sequence)[::-1]))


def iter_(value: Any) -> Lazy | ProgramGenerator:
    return value if isinstance(value, _ITERATORS) else Lazy(iterate(value))


_NO_DEFAULT = object()


def next_(iterator: Any, default: Any = _NO_DEFAULT) -> Any:
    if not isinstance(iterator, _ITERATORS) and not (hasattr(type(iterator), "program_attributes") and
                                                     hasattr(type(iterator), "__next__")):
        raise_python("TypeError", f"'{_type_name(iterator)}' object is not an iterator")
    try:
        return next(iterator)
    except StopIteration:
        if default is _NO_DEFAULT:
            raise_python("StopIteration")
        return default


def map_(fn: Any, *iterables: Any) -> Lazy:
    if not iterables:
        raise ArgumentError("map() must have at least two arguments", hint="map(f, values)")
    return Lazy(py.map(fn, *(iterate(v) for v in iterables)))


def filter_(fn: Any, iterable: Any) -> Lazy:
    test = bool if fn is None else fn
    return Sifted(v for v in visited(iterable) if test(v))


def divmod_(a: Any, b: Any) -> tuple:
    if not py.all(isinstance(v, (int, float, np.integer, np.floating)) for v in (a, b)):
        raise ArgumentError("divmod() takes two numbers")
    if b == 0:
        raise_python("ZeroDivisionError", "integer division or modulo by zero")
    return py.divmod(a, b)


def chr_(code: Any) -> str:
    if not isinstance(code, (int, np.integer)) or not 0 <= code <= 0x10FFFF:
        raise_python("ValueError", "chr() arg not in range(0x110000)")
    return chr(int(code))


def ord_(text: Any) -> int:
    if not isinstance(text, str) or len(text) != 1:
        raise_python("TypeError", "ord() expected a character")
    return ord(text)


def _ordered(pick: Callable[..., Any], values: list, word: str, **options: Any) -> Any:
    """`pick(values)` over numbers, strings or one-element tensors, or tuples and lists of numbers and
    strings (Python's order, item by item: `sorted(pairs)`); never deeper lists (whose comparison can
    run for ever). Items Python cannot order against each other are its TypeError."""
    numbers = (int, float, Tensor, np.integer, np.floating)
    flat = (int, float, np.integer, np.floating, str)
    if not (py.all(isinstance(v, numbers) for v in values) or py.all(isinstance(v, str) for v in values) or
            py.all(type(v) in (tuple, list) and py.all(isinstance(e, flat) for e in v) for v in values)):
        raise ArgumentError(f"{word}() compares numbers and tensors, strings, or tuples of numbers and strings, "
                            "not a mix or nested lists", hint="e.g. sorted(x.tolist())")
    try:
        return pick(values, **options)
    except TypeError as exc:  # (1, 'a') against ('a', 1): Python's own refusal
        raise_python("TypeError", str(exc))


def _by_key(pick: Callable[..., Any], values: list, key: Any, word: str, **options: Any) -> Any:
    """`pick(values, key=key)`: the keys are computed once each and ordered under `_ordered`'s rules."""
    keys = [key(v) for v in values]
    _ordered(lambda ks: None, keys, word)
    chosen = pick(range(len(values)), key=keys.__getitem__, **options)
    return [values[k] for k in chosen] if isinstance(chosen, list) else values[chosen]


def sorted_(iterable: Any, key: Any = None, reverse: bool = False) -> list:
    if key is not None:
        return _by_key(py.sorted, items(iterable), key, "sorted", reverse=reverse)
    return _ordered(py.sorted, items(iterable), "sorted", reverse=reverse)


def any_(iterable: Any) -> bool:
    return py.any(bool(v) for v in consume(iterable))


def all_(iterable: Any) -> bool:
    return py.all(bool(v) for v in consume(iterable))


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
    if isinstance(x, np.ndarray):
        return arrays.number(x, float)
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
    if isinstance(x, np.ndarray):
        return arrays.number(x, int)
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
    if isinstance(value, Instance):
        return dunders.length(value)
    if isinstance(value, np.ndarray):
        return arrays.length(value)
    if hasattr(getattr(value, "pytype", None), "program_members"):  # a program's Enum: its members
        return len(list(value.pytype.program_members()))
    if isinstance(value, (*_SEQUENCES, Tensor, Sequential, dict, set, *ENGINE_ITERABLES)) or \
            hasattr(type(value), "program_attributes") and hasattr(type(value), "__len__"):
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
    if type(start) in (list, tuple):  # sum(lists, []): Python's concatenation, within the list limit
        for value in consume(iterable):
            if type(value) is not type(start):
                raise_python("TypeError", f'can only concatenate {type(start).__name__} (not '
                                          f'"{type(value).__name__}") to {type(start).__name__}')
            check_list(len(total) + len(value))
            total = total + value
        return total
    for value in consume(iterable):
        if isinstance(value, Instance) or isinstance(total, Instance):  # the program's own __add__ / __radd__
            total = dunders.arithmetic("+", total, value)
            continue
        if not isinstance(value, (Tensor, int, float, np.integer, np.floating)):
            raise ArgumentError(f"sum() adds numbers and tensors, not a {_type_name(value)}",
                                hint="make a tensor of the list first: torch.tensor(values).sum()")
        total = total + value
    return total


def _extreme(tensor_fn: Callable[..., Any], pick: Callable[..., Any], word: str) -> Callable[..., Any]:
    """`max(xs)`, `max(a, b)` of numbers as Python's; of a tensor as torch's."""
    def call(*args: Any, **kwargs: Any) -> Any:
        iterables = (list, tuple, range, str, dict, set, np.ndarray, *VIEWS, *_ITERATORS)
        key = kwargs.pop("key", None) if set(kwargs) <= {"key", "default"} and len(args) == 1 and \
            isinstance(args[0], iterables) else None
        if len(args) == 1 and set(kwargs) <= {"default"} and isinstance(args[0], iterables):
            values = list(consume(args[0])) if isinstance(args[0], (range, *_ITERATORS)) else \
                items(args[0]) if isinstance(args[0], np.ndarray) else list(args[0])
            if not values:
                if "default" in kwargs:
                    return kwargs["default"]
                raise_python("ValueError", f"{word}() arg is an empty sequence")
            return _by_key(pick, values, key, word) if key is not None else _ordered(pick, values, word)
        if len(args) >= 2 and not kwargs and py.all(isinstance(a, (int, float)) for a in args):
            return pick(args)
        return tensor_fn(*args, **kwargs)
    call.__name__ = word
    call.__doc__ = tensor_fn.__doc__
    call.__wrapped__ = tensor_fn  # type: ignore[attr-defined]
    return call


max_ = _extreme(F.max, py.max, "max")
min_ = _extreme(F.min, py.min, "min")




def pow_(base: Any, exponent: Any, mod: Any = None) -> Any:
    """`pow(a, b)` is `a ** b` (numbers as Python's, within the int bound; tensors as torch.pow);
    `pow(a, b, m)` Python's modular power of ints, which stays small."""
    if mod is None:
        from gradcli.lang.operators import arithmetic
        return arithmetic(ast.Pow(), base, exponent)
    if not py.all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (base, exponent, mod)):
        raise_python("TypeError", "pow() 3rd argument not allowed unless all arguments are integers")
    if mod == 0:
        raise_python("ValueError", "pow() 3rd argument cannot be 0")
    return py.pow(int(base), int(exponent), int(mod))


def vars_(value: Any) -> dict:
    """`vars(args)` of parsed arguments (an object that lists its own values); nothing else's insides."""
    if not hasattr(type(value), "program_vars"):
        raise_python("TypeError", "vars() argument must have __dict__ attribute")  # as gradcli lists no insides
    return value.program_vars()


# name -> callable: Python's builtins as a program sees them (looked up before torch's functions)
PYTHON: dict[str, Callable[..., Any]] = {
    "zip": zip_, "enumerate": enumerate_, "list": list_, "tuple": tuple_, "str": str_, "repr": repr_, "bool": bool_,
    "reversed": reversed_, "sorted": sorted_, "any": any_, "all": all_, "len": len_,
    "sum": sum_, "max": max_, "min": min_, "range": range_, "float": float_, "int": int_,
    "dict": containers.dict_, "set": containers.set_, "frozenset": containers.set_,
    "isinstance": type_tests.isinstance_, "issubclass": type_tests.issubclass_, "type": type_tests.type_,
    "callable": type_tests.callable_, "id": id, "iter": iter_, "next": next_, "map": map_, "filter": filter_,
    "divmod": divmod_, "chr": chr_, "ord": ord_, "vars": vars_, "pow": pow_, **EXCEPTIONS,
}
for _fn, _name, _types in [(int_, "int", (int, np.integer)), (float_, "float", (float, np.floating)),
                           (bool_, "bool", (bool, np.bool_)), (str_, "str", (str,)), (list_, "list", (list,)),
                           (tuple_, "tuple", (tuple,)), (range_, "range", (range,)), (containers.dict_, "dict", (dict,)),
                           (containers.set_, "set", (set,))]:
    type_tests.register(_fn, _name, _types)
for _name, _fn in PYTHON.items():
    if not isinstance(_fn, ProgramType):
        BUILTIN_NAMES[id(_fn)] = (_fn, _name)
