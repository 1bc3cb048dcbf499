"""`collections`: OrderedDict, defaultdict, Counter, deque and namedtuple, each growing within the list limit.

The dict kinds are dicts (so everything a program does with a dict works on them) with their own
few methods added to the dict allowlist; `namedtuple` builds its record type without Python's
code generation (no text is ever compiled): a tuple subclass whose fields are read by name.
"""
from __future__ import annotations

import collections
import keyword
from typing import Any, Callable

from gradcli.errors import ArgumentError
from gradcli.lang import builtins as B
from gradcli.lang.namespace import Namespace
from gradcli.lang.type_tests import register, stand_in_name
from gradcli.lang.containers import DICT_METHODS, grow, hashable, pairs
from gradcli.lang.exceptions import ProgramType, raise_python
from gradcli.lang.formatting import to_repr
from gradcli.lang.limits import check_list
from gradcli.lang.iteration import items, iterate


OrderedDict = collections.OrderedDict  # Python's own, as a module's state_dict() is; formatting writes its repr


def _ordered(values: Any = (), **kwargs: Any) -> OrderedDict:
    out = OrderedDict(pairs(values))
    out.update(kwargs)
    return out


class DefaultDict(dict):
    """`defaultdict(factory)`: a missing key gets factory() (the program's function or a builtin)."""

    def __init__(self, factory: Any, values: dict) -> None:
        super().__init__(values)
        self.factory = factory

    def __missing__(self, key: Any) -> Any:
        if self.factory is None:
            raise_python("KeyError", key)
        grow(self, 1)
        value = self[key] = self.factory()
        return value

    def __repr__(self) -> str:
        kind = stand_in_name(self.factory)
        factory = f"<class '{kind}'>" if kind is not None else to_repr(self.factory)
        return f"defaultdict({factory}, {to_repr(dict(self))})"

    def emptied(self) -> "DefaultDict":
        """A new empty one with the same factory (what `copy.deepcopy` fills)."""
        return DefaultDict(self.factory, {})


def _defaultdict(factory: Any = None, values: Any = ()) -> DefaultDict:
    if factory is not None and not callable(factory):
        raise_python("TypeError", "first argument must be callable or None")
    return DefaultDict(factory, dict(pairs(values)))


class Counter(dict):
    def __missing__(self, key: Any) -> int:
        return 0

    def emptied(self) -> "Counter":
        return Counter()

    def __repr__(self) -> str:
        if not self:
            return "Counter()"
        return "Counter({" + ", ".join(f"{to_repr(k)}: {to_repr(v)}" for k, v in _most_common(self)) + "})"


def _count_into(counter: Counter, values: Any = (), **kwargs: Any) -> None:
    if isinstance(values, dict):
        for key, value in values.items():
            counter[key] = counter.get(key, 0) + value
    else:
        for value in iterate(values):
            if hashable(value) not in counter:
                grow(counter, 1)
            counter[value] = counter.get(value, 0) + 1
    for key, value in kwargs.items():
        counter[key] = counter.get(key, 0) + value


def _counter(values: Any = (), **kwargs: Any) -> Counter:
    out = Counter()
    _count_into(out, values, **kwargs)
    return out


def _most_common(counter: Counter, n: int | None = None) -> list:
    ordered = sorted(counter.items(), key=lambda pair: pair[1], reverse=True)
    return ordered if n is None else ordered[:n]


def _subtract(counter: Counter, values: Any = ()) -> None:
    other = _counter(values)
    for key, value in other.items():
        counter[key] = counter.get(key, 0) - value


def _elements(counter: Counter) -> list:
    check_list(sum(max(v, 0) for v in counter.values() if isinstance(v, int)))
    return [key for key, value in counter.items() for _ in range(max(value, 0))]


class Deque:
    """`deque(iterable, maxlen)`: appends and pops at both ends; held within the list limit."""

    program_attributes = frozenset({"append", "appendleft", "pop", "popleft", "extend", "extendleft", "rotate",
                                    "clear", "maxlen", "count", "index", "reverse", "copy", "remove"})

    def __init__(self, values: Any = (), maxlen: int | None = None) -> None:
        if maxlen is not None and (not isinstance(maxlen, int) or maxlen < 0):
            raise ArgumentError("maxlen must be a non-negative integer")
        self.items = collections.deque(items(values), maxlen)
        self.maxlen = maxlen

    def _grow(self, more: int) -> None:
        check_list(len(self.items) + more)

    def append(self, value: Any) -> None:
        self._grow(1)
        self.items.append(value)

    def appendleft(self, value: Any) -> None:
        self._grow(1)
        self.items.appendleft(value)

    def pop(self) -> Any:
        if not self.items:
            raise_python("IndexError", "pop from an empty deque")
        return self.items.pop()

    def popleft(self) -> Any:
        if not self.items:
            raise_python("IndexError", "pop from an empty deque")
        return self.items.popleft()

    def extend(self, values: Any) -> None:
        more = items(values)
        self._grow(len(more))
        self.items.extend(more)

    def extendleft(self, values: Any) -> None:
        more = items(values)
        self._grow(len(more))
        self.items.extendleft(more)

    def rotate(self, n: int = 1) -> None:
        self.items.rotate(n)

    def clear(self) -> None:
        self.items.clear()

    def count(self, value: Any) -> int:
        return self.items.count(value)

    def index(self, value: Any) -> int:
        return list(self.items).index(value)

    def reverse(self) -> None:
        self.items.reverse()

    def remove(self, value: Any) -> None:
        self.items.remove(value)

    def copy(self) -> "Deque":
        return Deque(list(self.items), self.maxlen)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        return iter(list(self.items))

    def __getitem__(self, where: int) -> Any:
        return self.items[where]

    def __bool__(self) -> bool:
        return bool(self.items)

    def __repr__(self) -> str:
        inner = to_repr(list(self.items))
        return f"deque({inner})" if self.maxlen is None else f"deque({inner}, maxlen={self.maxlen})"


class RecordType(ProgramType):
    """What `namedtuple('Point', ['x', 'y'])` returns: callable to make records, a type for isinstance."""

    module = "__main__."

    def __init__(self, name: str, fields: list[str], defaults: tuple) -> None:
        self.name = self.__name__ = name
        self.fields = fields
        self.defaults = defaults
        self.record = type(name, (Record,), {"program_attributes": frozenset(fields), "_fields": tuple(fields),
                                             "__slots__": ()})

    def __call__(self, *args: Any, **kwargs: Any) -> "Record":
        values = list(args)
        given = dict(kwargs)
        if len(values) > len(self.fields):
            raise ArgumentError(f"{self.name}() takes {len(self.fields)} positional arguments but {len(values)} "
                                "were given")
        first_default = len(self.fields) - len(self.defaults)
        for position, field in enumerate(self.fields[len(values):], len(values)):
            if field in given:
                values.append(given.pop(field))
            elif position >= first_default:
                values.append(self.defaults[position - first_default])
            else:
                raise ArgumentError(f"{self.name}() missing required argument: '{field}'")
        if given:
            raise ArgumentError(f"{self.name}() got an unexpected keyword argument '{next(iter(given))}'")
        return self.record(values)

    def covers(self, value: Any) -> bool:
        return isinstance(value, self.record)


class Record(tuple):
    """A namedtuple's record: a tuple whose items are also read as its fields."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        fields = type(self).__dict__.get("_fields", ())
        if name in fields:
            return self[fields.index(name)]
        raise AttributeError(name)


def namedtuple(typename: str, field_names: Any, *, defaults: Any = None, rename: bool = False) -> RecordType:
    fields = field_names.replace(",", " ").split() if isinstance(field_names, str) else items(field_names)
    for name in [typename, *fields]:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ArgumentError(f"namedtuple names must be identifiers not starting with '_': {name!r}")
    if len(set(fields)) != len(fields):
        raise ArgumentError("namedtuple field names must be different")
    check_list(len(fields))
    return RecordType(typename, list(fields), tuple(items(defaults)) if defaults is not None else ())


def _bound_methods() -> None:
    """The dict kinds' own methods join the dict allowlist (`B.SEQUENCE_METHODS`), per kind."""
    B.SEQUENCE_METHODS[DefaultDict] = {**DICT_METHODS}
    B.SEQUENCE_METHODS[Counter] = {**DICT_METHODS, "most_common": _most_common, "update": _count_into,
                                   "subtract": _subtract, "elements": _elements,
                                   "total": lambda counter: sum(counter.values())}


_bound_methods()


def _named(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    fn.__name__ = name
    return fn


COLLECTIONS = Namespace("collections", {
    "OrderedDict": _named(_ordered, "OrderedDict"), "defaultdict": _named(_defaultdict, "defaultdict"),
    "Counter": _named(_counter, "Counter"), "deque": _named(lambda values=(), maxlen=None: Deque(values, maxlen),
                                                          "deque"),
    "namedtuple": namedtuple,
})
for _name, _kind in (("OrderedDict", OrderedDict), ("defaultdict", DefaultDict), ("Counter", Counter), ("deque", Deque)):
    register(COLLECTIONS.members[_name], _name, (_kind,), "collections")  # type(model.state_dict()) as Python's
