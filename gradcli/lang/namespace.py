"""`Namespace`: a dotted prefix (`torch`, `np`, a standard-module facade) that resolves to named members only."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Namespace:
    """`torch`, `np`, `torch.autograd`, `random`...: a dotted prefix that resolves to gradcli's own builtins."""

    name: str
    members: dict
    refusal: str = ""
    """Why the members this namespace lacks are not there (a part of torch gradcli cannot run honestly)."""

    def lookup(self, attr: str) -> Any:
        return self.members.get(attr)
