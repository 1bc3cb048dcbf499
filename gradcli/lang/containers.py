"""Dicts and sets as a program sees them: Python's own, with every way of growing one checked first.

A dict or set is a plain Python object (iteration order, `in`, equality are Python's; a tensor
key hashes by identity, as in PyTorch), but only the methods listed here can be reached, and
each checks the size it would reach against the list limit before it grows. A method that
Python would answer with a `KeyError` answers with the program's own `KeyError`, which `try`
can catch.
"""
from __future__ import annotations

from typing import Any, Callable

from gradcli.lang.dict_views import ItemsView, KeysView, ValuesView
from gradcli.lang.exceptions import raise_python
from gradcli.lang.iteration import items
from gradcli.errors import LimitError
from gradcli.lang.limits import MAX_KEY_PARTS, check_list
from gradcli.lang.objects import Instance


def hashable(key: Any) -> Any:
    """A key a dict or set can hold; a list, dict or set is the program's TypeError, as in Python.

    CPython hashes a tuple by hashing every part, again each time, with no clock read in between: a key of
    more than MAX_KEY_PARTS parts (a tuple built by doubling, `a = (a, a)` sixty times, has 2**61) is refused
    before Python hashes it, counted part by part as the hash would visit them."""
    parts, left = [key], MAX_KEY_PARTS
    while parts:
        part = parts.pop()
        if isinstance(part, (list, dict, set)):
            raise_python("TypeError", f"unhashable type: '{type(part).__name__}'")
        if isinstance(part, tuple):
            left -= len(part)
            if left < 0:
                raise LimitError(f"a dict key or set item would be hashed part by part through more than "
                                 f"{MAX_KEY_PARTS:,} parts", hint="a tuple built by doubling (a = (a, a)) holds "
                                 "far more parts than it shows; key by something smaller, such as a number")
            parts.extend(part)
        elif isinstance(part, Instance) and type(part).__hash__ is None:  # a class defining __eq__ alone
            raise_python("TypeError", f"unhashable type: '{type(part).__name__}'")
    return key


def pairs(values: Any) -> list[tuple[Any, Any]]:
    """The (key, value) pairs `dict(values)` and `d.update(values)` take: a mapping's items or 2-item sequences."""
    if isinstance(values, dict):
        return list(values.items())
    out = []
    for number, item in enumerate(items(values)):
        pair = items(item) if isinstance(item, (list, tuple)) else None
        if pair is None or len(pair) != 2:
            raise_python("ValueError" if pair is not None else "TypeError",
                         f"dictionary update sequence element #{number} has length "
                         f"{len(pair)}; 2 is required" if pair is not None else
                         f"cannot convert dictionary update sequence element #{number} to a sequence")
        out.append((hashable(pair[0]), pair[1]))
    return out


def dict_(values: Any = (), **kwargs: Any) -> dict:
    """`dict()`, `dict(mapping)`, `dict(pairs)`, `dict(a=1)`."""
    out = dict(pairs(values))
    check_list(len(out) + len(kwargs))
    out.update(kwargs)
    return out


def set_(values: Any = ()) -> set:
    return {hashable(v) for v in items(values)}


def grow(container: dict | set, more: int) -> None:
    check_list(len(container) + more)


def get_item(mapping: dict, key: Any) -> Any:
    try:
        return mapping[hashable(key)]
    except KeyError:
        raise_python("KeyError", key)


def set_item(mapping: dict, key: Any, value: Any) -> None:
    if hashable(key) not in mapping:
        grow(mapping, 1)
    mapping[key] = value


def delete_item(mapping: dict, key: Any) -> None:
    get_item(mapping, key)
    del mapping[key]


def update_from(mapping: dict, other: Any) -> None:
    """`{**other}` in a dict display."""
    if not isinstance(other, dict):
        raise_python("TypeError", f"'{type(other).__name__}' object is not a mapping")
    grow(mapping, sum(1 for k in other if k not in mapping))
    mapping.update(other)


def _get(mapping: dict, key: Any, default: Any = None) -> Any:
    return mapping.get(hashable(key), default)


def _setdefault(mapping: dict, key: Any, default: Any = None) -> Any:
    if hashable(key) not in mapping:
        set_item(mapping, key, default)
    return mapping[key]


def _update(mapping: dict, values: Any = (), **kwargs: Any) -> None:
    new = pairs(values) + list(kwargs.items())
    grow(mapping, sum(1 for k, _ in new if k not in mapping))
    mapping.update(new)


_MISSING = object()


def _pop(mapping: dict, key: Any, default: Any = _MISSING) -> Any:
    if hashable(key) in mapping:
        return mapping.pop(key)
    if default is _MISSING:
        raise_python("KeyError", key)
    return default


def _popitem(mapping: dict) -> tuple:
    if not mapping:
        raise_python("KeyError", "popitem(): dictionary is empty")
    return mapping.popitem()


def fromkeys(keys: Any, value: Any = None) -> dict:
    return {hashable(k): value for k in items(keys)}


def _add(values: set, value: Any) -> None:
    if hashable(value) not in values:
        grow(values, 1)
    values.add(value)


def _remove(values: set, value: Any) -> None:
    if hashable(value) not in values:
        raise_python("KeyError", value)
    values.remove(value)


def _set_update(values: set, *others: Any) -> None:
    added = set_().union(*(set_(o) for o in others))
    grow(values, len(added - values))
    values.update(added)


def _set_pop(values: set) -> Any:
    if not values:
        raise_python("KeyError", "pop from an empty set")
    return values.pop()


def _combined(method: Callable[..., set]) -> Callable[..., set]:
    def combine(values: set, *others: Any) -> set:
        return method(values, *(set_(o) for o in others))
    combine.__name__ = method.__name__
    return combine


def move_to_end(mapping: dict, key: Any, last: bool = True) -> None:
    """OrderedDict's, with the program's KeyError; listed with the type itself, since a state_dict() is
    one before any `import collections` (an allowlist read then is remembered)."""
    if hashable(key) not in mapping:
        raise_python("KeyError", key)
    value = mapping.pop(key)
    if last:
        mapping[key] = value
    else:
        rest = list(mapping.items())
        mapping.clear()
        mapping[key] = value
        mapping.update(rest)


DICT_METHODS: dict[str, Callable[..., Any]] = {
    "items": ItemsView, "keys": KeysView, "values": ValuesView,
    "get": _get, "setdefault": _setdefault, "update": _update, "pop": _pop, "popitem": _popitem,
    "copy": dict.copy, "clear": dict.clear, "fromkeys": lambda d, keys, value=None: fromkeys(keys, value),
}
SET_METHODS: dict[str, Callable[..., Any]] = {
    "add": _add, "remove": _remove, "discard": lambda s, v: s.discard(hashable(v)), "pop": _set_pop,
    "update": _set_update, "copy": set.copy, "clear": set.clear,
    "union": _combined(set.union), "intersection": _combined(set.intersection),
    "difference": _combined(set.difference), "symmetric_difference": _combined(set.symmetric_difference),
    "issubset": lambda s, o: s.issubset(set_(o)), "issuperset": lambda s, o: s.issuperset(set_(o)),
    "isdisjoint": lambda s, o: s.isdisjoint(set_(o)),
}
