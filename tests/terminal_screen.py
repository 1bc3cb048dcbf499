"""What a terminal shows after a stream of text and the escapes rich's live displays write.

Enough of a VT100 to replay a transient display: carriage return, line feed (as a tty sends it, to
column 0), erase in line, cursor up and cursor to column; colours, cursor visibility and any other
CSI sequence change nothing on the screen. Tests compare the final screen with what the output
must read once every transient display is gone.
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\r|\n|[^\x1b\r\n]+")


def screen(stream: str) -> list[str]:
    """The screen's lines, trailing spaces and trailing empty lines dropped."""
    lines: list[list[str]] = [[]]
    row = column = 0
    for found in _TOKEN.finditer(stream):
        text = found.group()
        if text == "\r":
            column = 0
        elif text == "\n":
            row, column = row + 1, 0
            while len(lines) <= row:
                lines.append([])
        elif found.group(2) is not None:
            argument, command = found.group(1), found.group(2)
            count = int(argument) if argument.isdigit() else 1
            if command == "A":
                row = max(0, row - count)
            elif command == "G":
                column = count - 1
            elif command == "K" and argument in ("2", ""):
                lines[row] = [] if argument == "2" else lines[row][:column]
        else:
            line = lines[row]
            line.extend(" " * (column - len(line)))
            line[column:column + len(text)] = list(text)
            column += len(text)
    shown = ["".join(line).rstrip() for line in lines]
    while shown and not shown[-1]:
        shown.pop()
    return shown
