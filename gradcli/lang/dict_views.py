"""`d.keys()`, `d.values()`, `d.items()` as Python gives them: live views of the dict, not copies.

A view reads the dict each time it is used, so a key added after `k = d.keys()` is in `k`; it
prints as Python prints it (`dict_keys(['a', 'b'])`, within the string budget), and keys and
items views take the set operators (`lang.sets`). `in` on a view is `operators.contains`'s. Iterating one visits a snapshot, as a `for`
over the dict itself does here, so a loop that changes the dict cannot run for ever.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator

from gradcli.lang.formatting import to_repr
from gradcli.lang.iteration import items
from gradcli.lang.limits import check_list


class _View:
    program_attributes: frozenset[str] = frozenset()
    word = ""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def listed(self) -> list:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.mapping)

    def __iter__(self) -> Iterator[Any]:
        check_list(len(self.mapping))
        return iter(self.listed())

    def __bool__(self) -> bool:
        return bool(self.mapping)

    def __repr__(self) -> str:
        """`odict_keys([...])` for an OrderedDict (a state_dict's keys), as Python prints it."""
        kind = "odict" if isinstance(self.mapping, OrderedDict) else "dict"
        return f"{kind}_{self.word}({to_repr(self.listed())})"


class KeysView(_View):
    program_attributes = frozenset({"isdisjoint"})
    word = "keys"

    def listed(self) -> list:
        return list(self.mapping)

    def isdisjoint(self, other: Any) -> bool:
        return not any(key in self.mapping for key in items(other))


class ValuesView(_View):
    word = "values"

    def listed(self) -> list:
        return list(self.mapping.values())


class ItemsView(_View):
    program_attributes = frozenset({"isdisjoint"})
    word = "items"

    def listed(self) -> list:
        return list(self.mapping.items())

    def isdisjoint(self, other: Any) -> bool:
        pairs = set(self.mapping.items())  # pairs of hashable keys and values, as Python's own view needs
        return pairs.isdisjoint(items(other))


SET_LIKE_VIEWS = (KeysView, ItemsView)
VIEWS = (KeysView, ValuesView, ItemsView)
