"""The bounds of what a program can grow that the engine does not see: calls, lists, strings, formats.

Each is checked where the thing grows, before it is built, and fails as a `LimitError` that the
program cannot catch (the language has no `try`).
"""
from __future__ import annotations

from gradcli.errors import LimitError

MAX_CALL_DEPTH = 200
MAX_LIST = 1_000_000
MAX_STRING = 1_000_000
MAX_FORMAT_WIDTH = 1_000


def check_list(length: int) -> None:
    if length > MAX_LIST:
        raise LimitError(f"a list would have {length:,} items, over the limit of {MAX_LIST:,}",
                         hint="keep lists small; use a tensor (torch.zeros(n)) for many numbers")


def check_string(length: int) -> None:
    if length > MAX_STRING:
        raise LimitError(f"a string would have {length:,} characters, over the limit of {MAX_STRING:,}",
                         hint="print less, or print in pieces")


def check_width(number: int, what: str) -> None:
    if number > MAX_FORMAT_WIDTH:
        raise LimitError(f"format {what} {number:,} is over the limit of {MAX_FORMAT_WIDTH:,}",
                         hint="use a smaller width or precision, such as {x:10.4f}")
