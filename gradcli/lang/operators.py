"""What the language's operators do to the values a program holds: arithmetic, comparison, truth, indexing.

Python's own operators on numbers and tensors, with the checks a program needs: sequences grow only
within the limits, numbers too large for a float and division by zero are the user's errors, lists
compare element by element against a budget, and every operand a type does not take is named.
The interpreter's compiled closures call these, or skip them where a site's operands need no check.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.creation import resolve_dtype
from gradcli.engine.narrow import same
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, LimitError, ValueDomainError
from gradcli.lang import arrays, dunders
from gradcli.lang.library import (Dataset, Module, ModuleDict, ModuleList, Optimizer, ParameterDict, ParameterList,
                                  Sequential)
from gradcli.lang.namespace import Namespace
from gradcli.lang.objects import Instance
from gradcli.lang import formatting as T
from gradcli.lang import limits
from gradcli.lang import sets
from gradcli.lang.dict_views import VIEWS, ItemsView, KeysView
from gradcli.lang.exceptions import raise_python
from gradcli.lang.limits import MAX_LIST, check_list, check_string
from gradcli.lang.visits import shared
from gradcli.lang.user_functions import UserFunction

NUMBER = (int, float, bool, np.integer, np.floating, np.bool_)
NUMERIC = (Tensor, *NUMBER)
_OPERANDS = (Tensor, *NUMBER, list, tuple)
_TRUTHFUL = (*NUMBER, type(None), str, list, tuple, range, dict, set)
PLAIN = frozenset({int, float})
"""Python numbers that meet a tensor in arithmetic with no check to make."""
COMPARED = frozenset({Tensor, int, float, bool})
"""Types (exactly) whose ordering and equality are Python's own operators, as `compare` decides for NUMERIC."""
EXACT = frozenset({"+", "-", "*"})
"""Operators that cannot raise on two floats (they overflow to inf) and on two ints only past
`MAX_INT_BITS` (see `exact`); an int too large for a float can make a mixed pair raise, so those go
through `arithmetic`."""
MAX_INT_BITS = limits.MAX_INT_BITS


def exact(fn: Callable[[Any, Any], Any], left: Any, right: Any) -> Any:
    """Python's own + - * on two plain numbers, with ints kept under MAX_INT_BITS: an int squared in a
    loop doubles its length each pass, and soon takes longer to multiply than any limit can
    interrupt, or is too long for Python to print at all."""
    result = fn(left, right)
    if type(result) is int and result.bit_length() > MAX_INT_BITS:
        raise LimitError(f"an integer result past {MAX_INT_BITS} bits (about {int(MAX_INT_BITS * math.log10(2))} "
                         f"digits)", hint="compute with floats instead (e.g. float(x) * x), which overflow to inf "
                                          "as PyTorch's numbers do")
    return result

BINARY: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv), ast.Pow: ("**", operator.pow), ast.MatMult: ("@", operator.matmul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod),
    **sets.OPERATORS,
}
def contains(item: Any, container: Any) -> bool:
    """`item in container`: Python's on strings, dicts, sets and ranges; on lists and tuples element by
    element as `==` decides here (a tensor is found by identity or by a true comparison)."""
    if isinstance(container, str):
        if not isinstance(item, str):
            raise ArgumentError(f"'in <string>' requires string as left operand, not {type_name(item)}")
        return item in container
    if isinstance(container, (dict, set)):
        from gradcli.lang.containers import hashable
        return hashable(item) in container
    if isinstance(container, range):
        return item in container if isinstance(item, (int, float)) else False
    if isinstance(container, (list, tuple)):
        return position(container, item) is not None
    if isinstance(container, Tensor):
        return bool((container == item).any())
    if isinstance(container, np.ndarray):
        return bool(arrays.compare(operator.eq, container, item, "in").any())
    if isinstance(container, Instance):
        return dunders.contains(item, container, lambda a, b: truth(compare(_EQ, a, b)), truth)
    if isinstance(container, VIEWS):
        return _in_view(item, container)
    if isinstance(container, (ModuleDict, ParameterDict)):
        return isinstance(item, str) and item in container.keys()
    raise ArgumentError(f"argument of type '{type_name(container)}' is not iterable",
                        hint="'in' looks into strings, lists, tuples, dicts, sets, ranges and tensors")


def _in_view(item: Any, view: Any) -> bool:
    """`k in d.keys()` by hash, `v in d.values()` as in a list, `(k, v) in d.items()` by the key, then the value."""
    from gradcli.lang.containers import hashable
    if isinstance(view, KeysView):
        return hashable(item) in view.mapping
    if isinstance(view, ItemsView):
        if not isinstance(item, tuple) or len(item) != 2 or hashable(item[0]) not in view.mapping:
            return False
        return contains(item[1], [view.mapping[item[0]]])
    return contains(item, view.listed())


COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: contains, ast.NotIn: lambda item, container: not contains(item, container),
}
_EQ = ast.Eq()
SYMBOLS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def arithmetic(op: ast.operator, left: Any, right: Any) -> Any:
    """`left op right` for every pair of operand types, each refusal naming both types."""
    symbol, fn = BINARY[type(op)]
    if isinstance(left, Instance) or isinstance(right, Instance):
        return dunders.arithmetic(symbol, left, right)
    if (isinstance(left, np.ndarray) or isinstance(right, np.ndarray)) and not isinstance(left, str):
        return arrays.arithmetic(symbol, fn, left, right)
    if isinstance(left, str) or not isinstance(left, Tensor) and not isinstance(right, Tensor) and \
            (isinstance(left, (list, tuple)) or isinstance(right, (str, list, tuple))):
        return _sequence_arithmetic(symbol, left, right)
    if isinstance(left, Tensor) or isinstance(right, Tensor):
        if not all(isinstance(v, _OPERANDS) for v in (left, right)):
            raise ArgumentError(f"unsupported operand types for {symbol}: {type_name(left)} and "
                                f"{type_name(right)}")
        return fn(_tensor_operand(left), _tensor_operand(right))
    if isinstance(left, NUMBER) and isinstance(right, NUMBER):
        if symbol == "@":
            raise ArgumentError("operator '@' needs tensors, not numbers")
        try:
            if symbol == "**" and _huge_power(left, right):
                return float(left) ** float(right)
            return exact(fn, left, right) if symbol in EXACT else fn(left, right)
        except OverflowError:
            raise ValueDomainError(f"{left!r} {symbol} {right!r} is too large for a float (the largest is about "
                                   f"1.8e308)", hint="use smaller numbers, or torch.inf (float('inf')) for infinity") from None
        except ZeroDivisionError:
            raise ValueDomainError(f"{left!r} {symbol} {right!r}: division by zero",
                                   hint="divide tensors instead (they give inf or nan, as in PyTorch)") from None
    if sets.is_set(left) or isinstance(left, dict):
        return sets.combine(op, left, right)
    raise ArgumentError(f"unsupported operand types for {symbol}: {type_name(left)} and {type_name(right)}",
                        hint="arithmetic works on numbers and tensors; make a list a tensor with tensor([...])")


def _tensor_operand(value: Any) -> Any:
    """A list meets a tensor as a tensor; NumPy's scalar as the Python number it holds (PyTorch's dtype rules)."""
    if isinstance(value, (list, tuple)):
        return F.as_tensor(value)
    return value.item() if isinstance(value, np.generic) else value


def _sequence_arithmetic(symbol: str, left: Any, right: Any) -> Any:
    """`+` joins two strings, lists or tuples; `*` repeats one a number of times; `%` formats a string."""
    if symbol == "%" and isinstance(left, str):
        try:
            return T.percent_format(left, right)
        except ValueDomainError as exc:  # '%d' % nan: Python's own exception, which the program may catch
            raise_python("OverflowError" if "infinity" in exc.message else "ValueError", exc.message)
    if symbol == "+" and type(left) is type(right):
        size = len(left) + len(right)
        check_string(size) if isinstance(left, str) else check_list(size)
        return left + right
    if symbol == "*":
        sequence, count = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
        if isinstance(count, (int, np.integer)) and not isinstance(count, bool):
            size = len(sequence) * max(int(count), 0)
            check_string(size) if isinstance(sequence, str) else check_list(size)
            return sequence * int(count)
    if symbol in sets.SYMBOL_NAMES:
        return sets.combine(sets.SYMBOL_NAMES[symbol], left, right)  # Python's TypeError, or the refusal
    raise ArgumentError(f"unsupported operand types for {symbol}: {type_name(left)} and {type_name(right)}",
                        hint="arithmetic works on numbers and tensors; make a list a tensor with tensor([...]); "
                             "join strings with +, or use an f-string")


def _huge_power(base: Any, exponent: Any) -> bool:
    """Python ints would compute 10**10**10 exactly, forever; gradcli switches to floats past 2**64."""
    if not isinstance(base, (int, np.integer)) or not isinstance(exponent, (int, np.integer)):
        return False
    return exponent > 0 and abs(base) > 1 and exponent * math.log2(abs(base)) > 64


def compare(op: ast.cmpop, left: Any, right: Any) -> Any:
    """One comparison: `is` for None checks, ordering for numbers and tensors, equality for those and lists."""
    fn = COMPARE[type(op)]
    if isinstance(op, (ast.Is, ast.IsNot)) and _dtype_identity(left, right):
        return _same_dtype(left, right) == isinstance(op, ast.Is)
    if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
        return fn(left, right)
    if isinstance(left, NUMERIC) and isinstance(right, NUMERIC):
        return fn(left, right)
    if isinstance(left, Instance) or isinstance(right, Instance):
        return dunders.compare(SYMBOLS[type(op)], left, right, truth)
    if isinstance(op, (ast.Eq, ast.NotEq)) and (isinstance(left, np.dtype) or isinstance(right, np.dtype) or
                                               isinstance(left, T.DtypeName) and isinstance(right, T.DtypeName)):
        return _same_dtype(left, right) == isinstance(op, ast.Eq)  # x.dtype == torch.float64 (a dtype's name)
    if sets.is_set(left) and sets.is_set(right):  # subset order; a view equals the set of its items
        left, right = sets.plain(left), sets.plain(right)
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return _equal_containers(left, right) == isinstance(op, ast.Eq)
        return fn(left, right)
    plain = (*NUMBER, type(None), str, list, tuple)
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, plain) and isinstance(right, plain):
        with shared("equal", MAX_LIST) as budget:
            return _equal(left, right, budget) == isinstance(op, ast.Eq)
    if isinstance(op, (ast.Eq, ast.NotEq)) and (isinstance(left, np.ndarray) or isinstance(right, np.ndarray)):
        return arrays.compare(fn, left, right, SYMBOLS[type(op)])
    if isinstance(op, (ast.Eq, ast.NotEq)):
        if isinstance(left, (dict, set)) and type(left) is type(right):
            return _equal_containers(left, right) == isinstance(op, ast.Eq)
        if getattr(left, "program_equality", False):  # a library value compared as PyTorch compares it
            return bool(left == right) == isinstance(op, ast.Eq)
        if not isinstance(left, (Tensor, *plain)) or not isinstance(right, (Tensor, *plain)):
            return (left is right) == isinstance(op, ast.Eq)  # functions, types: equal only to themselves
    symbol = SYMBOLS[type(op)]
    if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
        return arrays.compare(fn, left, right, symbol)
    raise ArgumentError(f"cannot compare a {type_name(left)} with a {type_name(right)} using '{symbol}'",
                        hint="compare numbers or tensors; use 'is None' to test for None")


def _same_dtype(left: Any, right: Any) -> bool:
    try:
        return same(_dtype(left), _dtype(right)) if isinstance(left, (np.dtype, str)) and \
            isinstance(right, (np.dtype, str)) else False
    except TypeError:  # a string that names no dtype
        return False


def _dtype(value: Any) -> np.dtype:
    """torch.float is float32, where NumPy's 'float' is float64."""
    return np.dtype(resolve_dtype(value)) if isinstance(value, T.DtypeName) else np.dtype(value)


def _dtype_identity(left: Any, right: Any) -> bool:
    """PyTorch's dtypes are singletons, so `x.dtype is torch.float32` holds as `==` does."""
    return isinstance(left, T.DtypeName) and isinstance(right, (np.dtype, T.DtypeName)) or \
        isinstance(right, T.DtypeName) and isinstance(left, np.dtype)


def position(values: list | tuple, item: Any, start: int = 0, stop: int | None = None) -> int | None:
    """Where `item` first is in `values` (`in`, `index`, `remove`), by identity or `==`: all the comparisons
    share one budget of items, so neither a long list nor items built by doubling run for ever."""
    with shared("equal", MAX_LIST):
        for k in range(start, len(values) if stop is None else min(stop, len(values))):
            if values[k] is item or truth(compare(_EQ, values[k], item)):
                return k
    return None


def count(values: list | tuple, item: Any) -> int:
    """`values.count(item)`, by identity or `==`, within one budget of items as `position`'s."""
    with shared("equal", MAX_LIST):
        return sum(1 for v in values if v is item or truth(compare(_EQ, v, item)))


def _equal(left: Any, right: Any, budget: list[int]) -> bool:
    """Python's == on lists and tuples, element by element against a budget shared with every `==` nested
    in this one (`visits.shared`): nested lists built by doubling would make Python's own comparison run
    for ever."""
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        if isinstance(left, list) != isinstance(right, list) or len(left) != len(right):
            return False
        for a, b in zip(left, right):
            budget[0] -= 1
            if budget[0] < 0:
                raise limits.over_visits("comparing these values")
            if a is not b and not _equal(a, b, budget):
                return False
        return True
    return bool(left == right)


def _equal_containers(left: dict | set, right: dict | set) -> bool:
    if len(left) != len(right):
        return False
    with shared("equal", MAX_LIST) as budget:
        budget[0] -= len(left)
        if budget[0] < 0:
            raise limits.over_visits("comparing these values")
        return _equal_items(left, right)


def _equal_items(left: dict | set, right: dict | set) -> bool:
    if isinstance(left, (set, frozenset)):
        return all(k in right for k in left)
    return all(k in right and (left[k] is right[k] or truth(compare(_EQ, left[k], right[k]))) for k in left)


def truth(value: Any) -> bool:
    """`if value:` as Python answers it: a function (`if self.transform:`) and a gradcli object are true,
    a container by its length; a module facade, which a condition never means, is refused."""
    if value is True or value is False:
        return value
    if isinstance(value, Tensor):
        return bool(value)
    if isinstance(value, Instance):
        return dunders.truth(value)
    if isinstance(value, _TRUTHFUL) or hasattr(type(value), "program_attributes") and \
            hasattr(type(value), "__len__"):
        return bool(value)
    if isinstance(value, np.ndarray):
        return arrays.truth(value)
    if callable(value) or isinstance(value, (Module, Optimizer)):
        return bool(value)  # Sequential and ModuleList by their length, as in PyTorch
    raise ArgumentError(f"a {type_name(value)} has no truth value")


_ENGINE_INDEXABLES = (Dataset, ModuleList, ModuleDict, ParameterList, ParameterDict)


def sequence_key(key: Any) -> Any:
    """A list's index as Python takes one (`operator.index`): NumPy's integer (`words[np.argmax(w)]`) and an
    integer tensor of one element (`words[t.argmax()]`) as ints; a float tensor is PyTorch's error, never
    truncated to an int."""
    if isinstance(key, Tensor):
        if key._data.dtype.kind not in "iub" or key._data.size != 1:
            raise ArgumentError("only integer tensors of a single element can be converted to an index",
                                hint="index with an int, or t.long().item()")
        return int(key._data.reshape(()))
    if isinstance(key, np.integer):
        return int(key)
    return key


def index(value: Any, key: Any) -> Any:
    """`value[key]` on tensors, sequences and `nn.Sequential`, an index out of range as the user's error."""
    if isinstance(value, Tensor):
        if type(key) is slice or type(key) is tuple:
            _positive_steps(key)
        return value[key]
    if isinstance(value, np.ndarray):
        return arrays.index(value, key)
    if isinstance(value, dict):
        from gradcli.lang.containers import get_item
        return get_item(value, key)
    if isinstance(value, (list, tuple, range, str, Sequential)):
        key = sequence_key(key)
        if not isinstance(key, (int, slice)) or isinstance(key, bool):
            raise ArgumentError("list indices must be integers or slices")
        try:
            return value[key]
        except IndexError:
            raise_python("IndexError", f"{type_name(value)} index out of range")
    if isinstance(value, _ENGINE_INDEXABLES):  # datasets and module containers check their own keys
        return value[sequence_key(key)]
    by_facade = getattr(type(value), "program_index", None)  # a facade's object that defines indexing
    if by_facade is not None:
        return by_facade(value, key)
    raise ArgumentError(f"a {type_name(value)} cannot be indexed")


def _positive_steps(key: slice | tuple) -> None:
    """PyTorch slices a tensor forward only (a list may be reversed with [::-1], a tensor not)."""
    for part in key if isinstance(key, tuple) else (key,):
        if isinstance(part, slice) and part.step is not None and part.step <= 0:
            raise ValueDomainError("step must be greater than zero", hint="reverse a tensor with torch.flip(x, [0])")


def set_item(container: Any, key: Any, value: Any) -> None:
    """`container[key] = value`: into tensors (PyTorch's in-place rules) and lists only."""
    if isinstance(container, Tensor):
        if type(key) is slice or type(key) is tuple:
            _positive_steps(key)
        container[key] = value
    elif isinstance(container, np.ndarray):
        arrays.set_item(container, key, value)
    elif isinstance(container, Sequential):
        container[sequence_key(key)] = value
    elif isinstance(container, dict):
        from gradcli.lang.containers import set_item as set_entry
        set_entry(container, key, value)
    elif isinstance(container, list):
        key = sequence_key(key)
        if not isinstance(key, int) or isinstance(key, bool):
            raise ArgumentError("list indices must be integers", hint="xs[0] = value")
        if not -len(container) <= key < len(container):
            raise ArgumentError("list assignment index out of range")
        container[key] = value
    elif hasattr(type(container), "program_set_item"):  # a program's object with __setitem__
        container.program_set_item(key, value)
    else:
        raise ArgumentError(f"a {type_name(container)} does not support item assignment",
                            hint="assign into a tensor (x[0] = 1.0) or a list")


def type_name(value: Any) -> str:
    """A value's type as an error names it, in the words of the language, not Python's class names."""
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, Namespace):
        return f"module '{value.name}'"
    if value is None:
        return "None"
    if isinstance(value, UserFunction) or callable(value):
        return "function"
    return {bool: "bool", int: "number", float: "number", str: "string", list: "list", tuple: "tuple",
            range: "range", dict: "dict", set: "set"}.get(type(value), type(value).__name__)
