"""Where in the user's text something is: spans of checked `ast` nodes and the caret lines under them.

The language attaches spans to its errors and the views draw carets from them; both read this
one module, so a caret always lands where the parser measured.
"""
from __future__ import annotations

import ast
import re
import unicodedata
from bisect import bisect_right

TAB_WIDTH = 4
_ATOMS = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant)
SHOWN_CELLS = 120
BOM = "\ufeff"
_NEWLINE = re.compile(r"\r\n|\r|\n")  # exactly the line breaks Python's tokenizer counts


def operand(text: str) -> str:
    """The user's expression as it reads after ∂ or before `.sum()`: a name, attribute, index or call
    (`out`, `x.grad`, `y[0]`, `f(x)`) as it is, an expression with an operator in parentheses, so
    `∂(sin(x) * x ** 2)/∂x` never reads as `∂sin(x)` times the rest. Only parsed, never evaluated."""
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return f"({text})"
    return text if isinstance(node, _ATOMS) else f"({text})"


def split_lines(text: str) -> list[str]:
    return _NEWLINE.split(text)


def position_of(text: str, index: int) -> tuple[int, int]:
    before = split_lines(text[:index])
    return len(before), len(before[-1]) + 1


def span(node: ast.AST, user_lines: list[str] | None) -> tuple[int, int, int]:
    line, start = node.lineno, node.col_offset
    if node.end_lineno == line and node.end_col_offset is not None:
        length = node.end_col_offset - start
    elif user_lines is not None and 1 <= line <= len(user_lines):
        length = len(user_lines[line - 1]) - start
    else:
        length = 1
    return line, start + 1, max(length, 1)


def node_span(node: ast.AST, source: str | None = None) -> tuple[int, int, int]:
    """(line, 1-based column, length) of a node of a tree from `parse_program`, for errors.

    A node spanning several lines is underlined to the end of its first line, which needs the
    source; without it the span is one character.
    """
    return span(node, split_lines(source.removeprefix(BOM)) if source is not None else None)


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on rather than shows (ESC starts OSC 52 clipboard writes and OSC 8 links; a
carriage return overwrites a line; bidirectional overrides reorder it), newline and tab aside."""


def printable(text: str) -> str:
    """`text` with each control character escaped as Python writes it in a repr (`\\x1b`, `\\r`, `\\u202e`), so
    that a program's strings, and gradcli's messages quoting them, never reach the terminal raw."""
    return _CONTROLS.sub(lambda found: repr(found.group())[1:-1], text) if _CONTROLS.search(text) else text


def caret_lines(source: str, line: int, column: int, length: int = 1) -> list[str]:
    """The user's line and a caret line under `length` characters from 1-based `column`.

    Tabs are shown as spaces and wide (CJK) characters count two cells, so the carets land under
    the right characters in a terminal; invisible characters are shown as '?' so a caret never
    points at nothing; a very long line is cut to a window around the caret. A line that does not
    exist gives no lines.
    """
    lines = split_lines(source.removeprefix(BOM))
    if not 1 <= line <= len(lines):
        return []
    text = lines[line - 1]
    start = min(max(column, 1) - 1, len(text))
    end = min(start + max(length, 1), len(text))
    shown, cells = [], [0]
    for ch in text:
        if ch == "\t":
            piece = " " * (TAB_WIDTH - cells[-1] % TAB_WIDTH)
        elif not ch.isprintable():
            piece = "?"
        else:
            piece = ch
        shown.append(piece)
        cells.append(cells[-1] + sum(cell_width(c) for c in piece))
    first, last = 0, len(text)
    if cells[-1] > SHOWN_CELLS:
        context = SHOWN_CELLS // 3  # cells kept before the caret
        first = bisect_right(cells, cells[start] - context) - 1 if cells[start] > context else 0
        last = bisect_right(cells, cells[first] + SHOWN_CELLS) - 1
    before = "..." if first else ""
    after = "..." if last < len(text) else ""
    indent = len(before) + cells[start] - cells[first]
    width = max(cells[min(end, last)] - cells[start], 1)
    return [before + "".join(shown[first:last]) + after, " " * indent + "^" * width]


def cell_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
