"""`dataclasses`: `@dataclass` gives a program's class the `__init__`, `__repr__` and `__eq__` Python's would.

Python's own `dataclass` writes those methods as source text and compiles it; here they are plain
Python functions over the class's field list (the names its body annotates, in order, bases'
fields first), so no text is ever compiled. A method the class defines itself is kept, as Python
keeps it. Argument mistakes are the program's TypeError with Python's words, mutable defaults its
ValueError. `field(default=..., default_factory=...)` and `asdict` are the rest tutorials use.
"""
from __future__ import annotations

import ast
from typing import Any, Callable

from gradcli.lang.classes import UserClass
from gradcli.lang.exceptions import raise_python
from gradcli.lang.formatting import to_repr
from gradcli.lang.limits import MAX_LIST, MAX_STRING, check_string, over_visits
from gradcli.lang.visits import shared
from gradcli.lang.objects import Instance

MISSING: Any = object()
METHOD_ITEMS = 20
"""What one call of a written `__eq__` (or of `asdict`) costs in items of the running comparison's budget: a method dispatched
through Python costs about what twenty plain comparisons do, and the budget is meant to bound the time."""


class Field:
    """One field's default (a value or a factory called per object), read when the class is decorated."""

    program_attributes = frozenset({"name", "default", "default_factory"})

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, name: str = "") -> None:
        self.default, self.default_factory, self.name = default, default_factory, name

    def value(self) -> Any:
        return self.default_factory() if self.default_factory is not MISSING else self.default

    def __repr__(self) -> str:
        return f"Field(name={self.name!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, **_options: Any) -> Field:
    if default is not MISSING and default_factory is not MISSING:
        raise_python("ValueError", "cannot specify both default and default_factory")
    return Field(default, default_factory)


def dataclass(cls: Any = None, *, init: bool = True, repr: bool = True, eq: bool = True, **_options: Any) -> Any:
    """`@dataclass` or `@dataclass(...)` on a program's class."""
    if cls is None:
        return lambda decorated: _process(decorated, init, repr, eq)
    return _process(cls, init, repr, eq)


def _process(cls: Any, init: bool, repr_: bool, eq: bool) -> UserClass:
    if not isinstance(cls, UserClass):
        raise_python("TypeError", "dataclass() should be called on a class")
    pytype = cls.pytype
    fields: dict[str, Field] = {}
    for base in reversed(pytype.__mro__[1:]):
        fields.update(base.__dict__.get("_gradcli_fields", {}))
    for name in getattr(cls, "fields", ()):
        value = pytype.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(value)
        spec.name = name
        if type(spec.default) in (list, dict, set):
            raise_python("ValueError", f"mutable default <class '{type(spec.default).__name__}'> for field {name} "
                                       "is not allowed: use default_factory")
        if isinstance(value, Field):  # Python leaves the plain default as the class attribute, nothing else
            if spec.default is MISSING:
                delattr(pytype, name)
            else:
                setattr(pytype, name, spec.default)
        fields[name] = spec
    _check_order(fields)
    pytype._gradcli_fields = fields
    written: dict[str, Callable[..., Any]] = {}
    if init and "__init__" not in pytype.__dict__:
        written["__init__"] = _init(cls.name, fields)
    if repr_ and "__repr__" not in pytype.__dict__:
        written["__repr__"] = _repr(cls.name, list(fields))
    if eq and "__eq__" not in pytype.__dict__:
        written["__eq__"] = _eq(list(fields))
        pytype.__hash__ = None  # as Python's: an eq dataclass is unhashable
    for name, method in written.items():
        setattr(pytype, name, method)
    pytype._gradcli_names = pytype.__dict__["_gradcli_names"] | frozenset(written)
    cls.own = cls.own | frozenset(written)
    return cls


def _check_order(fields: dict[str, Field]) -> None:
    defaulted = False
    for name, spec in fields.items():
        has_default = spec.default is not MISSING or spec.default_factory is not MISSING
        if defaulted and not has_default:
            raise_python("TypeError", f"non-default argument '{name}' follows default argument")
        defaulted = defaulted or has_default


def _init(class_name: str, fields: dict[str, Field]) -> Callable[..., None]:
    names = list(fields)
    where = f"{class_name}.__init__()"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            required = sum(1 for n in names if fields[n].default is MISSING and fields[n].default_factory is MISSING)
            takes = f"from {required + 1} to {len(names) + 1}" if required < len(names) else f"{len(names) + 1}"
            raise_python("TypeError", f"{where} takes {takes} positional arguments but {len(args) + 1} were given")
        values = dict(zip(names, args))
        for word, value in kwargs.items():
            if word not in fields:
                raise_python("TypeError", f"{where} got an unexpected keyword argument '{word}'")
            if word in values:
                raise_python("TypeError", f"{where} got multiple values for argument '{word}'")
            values[word] = value
        missing = [n for n in names if n not in values and fields[n].default is MISSING and
                   fields[n].default_factory is MISSING]
        if missing:
            raise_python("TypeError", f"{where} missing {len(missing)} required positional argument"
                                      f"{'s' if len(missing) > 1 else ''}: {_listed(missing)}")
        for name in names:
            setattr(self, name, values[name] if name in values else fields[name].value())
    return __init__


def _listed(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _repr(class_name: str, names: list[str]) -> Callable[[Any], str]:
    """Its fields' reprs spend the characters of the repr running now (`visits.shared`): a dataclass nested in
    itself by doubling meets the string limit instead of writing 2**60 fields."""
    def __repr__(self: Any) -> str:
        parts = []
        with shared("repr", MAX_STRING) as budget:
            for n in names:
                parts.append(f"{n}={to_repr(getattr(self, n), budget)}")
                budget[0] -= len(parts[-1]) + 2
                if budget[0] < 0:
                    check_string(MAX_STRING + 1)
        return f"{class_name}(" + ", ".join(parts) + ")"
    return __repr__


def _eq(names: list[str]) -> Callable[[Any, Any], Any]:
    def __eq__(self: Any, other: Any) -> Any:
        from gradcli.lang.operators import compare
        if type(other) is not type(self):
            return NotImplemented
        with shared("equal", MAX_LIST) as budget:  # the fields' == spend it too
            budget[0] -= METHOD_ITEMS
            if budget[0] < 0:
                raise over_visits("comparing these values")
            return compare(ast.Eq(), tuple(getattr(self, n) for n in names), tuple(getattr(other, n) for n in names))
    return __eq__


def asdict(obj: Any) -> dict:
    """`asdict(obj)`: the fields as a dict, a field that is a dataclass object as its own dict; every value
    copied is an item of one budget, so a dataclass nested by doubling meets the list limit."""
    fields = getattr(type(obj), "_gradcli_fields", None)
    if not isinstance(obj, Instance) or fields is None:
        raise_python("TypeError", "asdict() should be called on dataclass instances")
    with shared("copy", MAX_LIST) as budget:
        budget[0] -= METHOD_ITEMS
        return {name: _plain(getattr(obj, name), budget) for name in fields}


def _plain(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise over_visits("asdict()")
    if isinstance(value, Instance) and hasattr(type(value), "_gradcli_fields"):
        return asdict(value)
    if type(value) in (list, tuple):
        return type(value)(_plain(v, budget) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v, budget) for k, v in value.items()}
    return value


MEMBERS = {"dataclass": dataclass, "field": field, "asdict": asdict, "MISSING": MISSING}
