"""`Namespace`: a dotted prefix (`torch`, `np`, a standard-module facade) that resolves to named members only."""
from __future__ import annotations

from typing import Any, Callable


class Namespace:
    """`torch`, `np`, `torch.autograd`, `random`...: a dotted prefix that resolves to gradcli's own builtins.

    A namespace of the torch library (`torch.nn`, `torch.optim`, ...) is made empty with a `fill` that imports
    its package and adds its members the first time anything reads them: `torch.nn` is a name every program
    has, but only a program that reaches into it pays for loading the layers. `refusal` says why the members
    this namespace lacks are not there (a part of torch gradcli cannot run honestly)."""

    __slots__ = ("name", "_members", "_fill", "refusal")

    def __init__(self, name: str, members: dict, fill: Callable[[dict], None] | None = None,
                 refusal: str = "") -> None:
        self.name = name
        self._members = members
        self._fill = fill
        self.refusal = refusal

    @property
    def members(self) -> dict:
        if self._fill is not None:
            fill, self._fill = self._fill, None  # first, so that the fill may read this namespace
            try:
                fill(self._members)
            except BaseException:
                self._fill = fill
                raise
        return self._members

    def lookup(self, attr: str) -> Any:
        return self.members.get(attr)

    def __repr__(self) -> str:
        return f"Namespace({self.name!r})"
