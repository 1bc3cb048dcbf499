"""Tables that never cut a name: laid out for the console's width when they are drawn.

rich shrinks a table that is too wide by narrowing its widest columns, below the longest word
in them if need be, and then ends what no longer fits with `…`: `weights_of_…`, `TanhBackward0`
as `Tan…`. A `Fitted` table gives every column at least its longest unbreakable piece (a word, or
a `Breakable` piece), taking the
room from the columns with the most to spare; when even that is wider than the console, each row
is shown as a block of `header  value` lines instead, so at 40 columns a row still reads whole.
"""
from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text


class Fitted:
    """`table`, drawn so that no cell is truncated at any width (see the module's doc)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        for column in table.columns:
            column.overflow = "fold"  # a last guard: a piece wider than its column is folded, never cut

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, Measurement.get(console, options, self._free()).maximum)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self._free()
        widths = self._widths(console, options, table)
        if widths is None:
            yield self._records(table, options.max_width)
            return
        for column, width in zip(table.columns, widths):
            column.width = width
        yield table

    def _free(self) -> Table:
        """The table with no width fixed: each drawing lays it out afresh for its own width."""
        for column in self.table.columns:
            column.width = None
        return self.table

    def _widths(self, console: Console, options: ConsoleOptions, table: Table) -> list[int] | None:
        """Each column's text width, none below its longest piece; None when those alone do not fit."""
        _, right, _, left = Padding.unpack(table.padding)
        pad = left + right
        room = options.max_width - _borders(table) - pad * len(table.columns)
        ranges = [_measure(console, options, column) for column in table.columns]
        lows = [low for low, _ in ranges]
        if sum(lows) > room:
            return None
        widths = [high for _, high in ranges]
        while sum(widths) > room and any(w > low for w, low in zip(widths, lows)):
            widest = max((i for i, w in enumerate(widths) if w > lows[i]), key=lambda i: widths[i])
            widths[widest] -= 1  # the widest column that can still give, one cell at a time
        return widths

    def _records(self, table: Table, width: int) -> RenderableType:
        """Each row as its own block: one `header  value` line (wrapped under itself) per column. A long
        header wraps (`worst (of` over `tolerance)`) rather than leave its values a narrow strip."""
        parts: list[RenderableType] = []
        if table.title is not None:
            parts.append(Text(table.title) if isinstance(table.title, str) else table.title)
        headers = [_plain(column.header) for column in table.columns]
        cells = [list(column.cells) for column in table.columns]
        words = max((len(word) for header in headers for word in header.split()), default=1)
        keys = max(words, min(max(map(len, headers), default=1), width // 4))
        for row in range(table.row_count):
            grid = Table.grid(padding=(0, 1))
            grid.add_column(style="bold", width=keys)
            grid.add_column(overflow="fold")
            for header, column in zip(headers, cells):
                grid.add_row(header or "", column[row])
            parts.append(grid if row == 0 else Group(Text(""), grid))
        if table.caption is not None:
            parts.append(Text(table.caption, style=table.caption_style or "") if isinstance(table.caption, str)
                         else table.caption)
        return Group(*parts)


def _measure(console: Console, options: ConsoleOptions, column: object) -> tuple[int, int]:
    """The narrowest and widest a column's text can be: its longest piece, its longest line."""
    lows, highs = [1], [1]
    for renderable in [column.header, *column.cells]:  # type: ignore[attr-defined]
        low, high = Measurement.get(console, options, renderable)
        lows.append(low)
        highs.append(high)
    if column.no_wrap:  # type: ignore[attr-defined]
        return max(highs), max(highs)  # it is never wrapped: anything narrower would cut it
    return max(lows), max(highs)


def _borders(table: Table) -> int:
    """Columns the box's vertical lines take."""
    if table.box is None:
        return 0
    return len(table.columns) - 1 + (2 if table.show_edge else 0)


def _plain(header: object) -> str:
    text = header.plain if isinstance(header, Text) else str(header)
    return " ".join(text.split())
