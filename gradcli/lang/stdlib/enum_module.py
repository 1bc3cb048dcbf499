"""`enum`: `class Color(Enum): RED = 1`, each class attribute a member of the class (`Color.RED`, its
`name` and `value`, `Color(1)` by value, `for c in Color`), printed as Python prints them."""
from __future__ import annotations

import weakref
from typing import Any, Iterator

from gradcli.lang.classes import BaseClass
from gradcli.lang.exceptions import raise_python
from gradcli.lang.namespace import Namespace
from gradcli.lang.objects import Instance


_MEMBERS: "weakref.WeakKeyDictionary[type, dict[str, Any]]" = weakref.WeakKeyDictionary()
"""Each Enum's members by name, kept outside the class, where no program attribute reaches."""


class Auto:
    """`auto()`: the next integer value, as Python's Enum numbers them from 1."""


class EnumBase(Instance):
    """The Python side of a program's Enum: members are made once, when the class is (Python's own
    `__init_subclass__`, never the program's), and calling the class looks a member up by value."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        members: dict[str, EnumBase] = {}
        last = 0
        for name, value in list(vars(cls).items()):
            if name.startswith("_") or callable(value) or isinstance(value, (property, staticmethod, classmethod)):
                continue
            if isinstance(value, Auto):
                value = last + 1
            last = value if isinstance(value, int) else last
            member = object.__new__(cls)
            member.__dict__.update(name=name, value=value)
            members[name] = member
            setattr(cls, name, member)
        _MEMBERS[cls] = members

    def __new__(cls, value: Any = None) -> "EnumBase":
        for member in _MEMBERS.get(cls, {}).values():
            if member.value == value:
                return member
        raise_python("ValueError", f"{value!r} is not a valid {cls.__name__}")

    def __init__(self, *args: Any) -> None:
        """A member is made once, with its class; calling the class only finds it."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        from gradcli.lang.formatting import to_repr
        return f"<{type(self).__name__}.{self.name}: {to_repr(self.value)}>"

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    @classmethod
    def program_members(cls) -> Iterator["EnumBase"]:
        """`for c in Color`, `list(Color)`, `len(Color)`: the members in definition order."""
        return iter(list(_MEMBERS.get(cls, {}).values()))


ENUM = Namespace("enum", {"Enum": BaseClass("Enum", EnumBase, module="enum"), "auto": lambda: Auto()})
