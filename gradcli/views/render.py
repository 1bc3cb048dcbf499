"""Rich renderables and JSON for what gradcli computed. Pure functions: nothing here computes a gradient.

Tables show row and column indices with shape and dtype in the title; tensors above 2-D become
one table per 2-D slice; large tensors are summarised the way NumPy does (edge items around an
ellipsis) unless `full`. User text is always escaped, so `x[0]` is never read as markup.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.markup import escape
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from gradcli.errors import GradcliError, ProgramAssertionError
from gradcli.program.graph import label
from gradcli.jsonable import number
from gradcli.source import operand, printable
from gradcli.engine.tensor import AccumulateGrad, Node, Tensor
from gradcli.views.fitted import Fitted

EDGE = 3
THRESHOLD = 1000
MAX_FRAMES = 10  # of a call stack shown: the outermost and innermost halves of a deep recursion
_ELLIPSIS = "…"


def cell_style(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and not math.isfinite(float(v)):
        return "bold red"
    return ""


def positions(n: int, full: bool) -> list[int | None]:
    """Indices to show along one axis; None marks the ellipsis."""
    if full or n <= 2 * EDGE:
        return list(range(n))
    return list(range(EDGE)) + [None] + list(range(n - EDGE, n))


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


@dataclass
class Matrix:
    """A 2-D block as a table with row and column labels.

    Laid out when the console's width is known: columns that would not fit are folded into an
    ellipsis (unless `full`), so a wide matrix stays readable instead of squeezed.
    """

    m: np.ndarray
    full: bool = False
    row_names: list[str] | None = None
    col_names: list[str] | None = None
    summarise: bool = True

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows, cols = self.m.shape
        row_names = self.row_names or [str(r) for r in range(rows)]
        col_names = self.col_names or [str(c) for c in range(cols)]
        show_all = self.full or not self.summarise
        row_pos = positions(rows, show_all)
        col_pos = self._fitting_columns(row_pos, row_names, col_names, options.max_width)
        table = Table(header_style="bold")
        table.add_column("", style="dim", justify="right")
        for c in col_pos:
            table.add_column(Text(_ELLIPSIS) if c is None else Breakable(col_names[c], LABEL_BREAKS), justify="right")
        for r in row_pos:
            if r is None:
                table.add_row(_ELLIPSIS, *[_ELLIPSIS for _ in col_pos])
                continue
            cells = [Text(_ELLIPSIS) if c is None else Text(number(self.m[r, c]), style=cell_style(self.m[r, c]))
                     for c in col_pos]
            table.add_row(Breakable(row_names[r], LABEL_BREAKS), *cells)
        yield table

    def _fitting_columns(self, row_pos: list[int | None], row_names: list[str], col_names: list[str],
                         width: int) -> list[int | None]:
        cols = len(col_names)
        shown_rows = [r for r in row_pos if r is not None]
        widths = [max([_longest_piece(col_names[c])] + [len(number(self.m[r, c])) for r in shown_rows]) + 3
                  for c in range(cols)]
        label = max((len(row_names[r]) for r in shown_rows), default=1) + 4
        if self.full or label + sum(widths) <= width:
            return positions(cols, self.full or not self.summarise or cols <= 2 * EDGE)
        edge = min(EDGE, cols // 2)
        while edge > 1 and label + 4 + sum(widths[:edge]) + sum(widths[cols - edge:]) > width:
            edge -= 1
        if 2 * edge >= cols:  # an ellipsis would stand for no column at all
            return list(range(cols))
        return list(range(edge)) + [None] + list(range(cols - edge, cols))


def array_view(title: str, value: Any, full: bool = False) -> RenderableType:
    """A tensor as tables: a 0-d value on one line, a vector as one row, a matrix, or 2-D slices."""
    arr = np.asarray(value._data if isinstance(value, Tensor) else value)
    head = f"{escape(title)}  [dim]shape {shape_text(arr.shape)} · {arr.dtype}[/dim]"
    if arr.ndim == 0:
        return Text.from_markup(f"{escape(title)} = ") + Text(number(arr[()]), style=cell_style(arr[()]) or "bold") + \
            Text.from_markup(f"  [dim]shape () · {arr.dtype}[/dim]")
    summarise = arr.size > THRESHOLD
    if arr.ndim == 1:
        return Group(Text.from_markup(head), Matrix(arr.reshape(1, -1), full, [""], summarise=summarise))
    if arr.ndim == 2:
        return Group(Text.from_markup(head), Matrix(arr, full, summarise=summarise))
    tables: list[RenderableType] = []
    lead = arr.shape[:-2]
    for index in _slice_indices(lead, full or not summarise):
        if index is None:
            tables.append(Text(_ELLIPSIS))
            continue
        tables.append(Text(f"{title}[{', '.join(map(str, index))}, :, :]"))
        tables.append(Matrix(arr[index], full, summarise=summarise))
    return Group(Text.from_markup(head), *tables)


def _slice_indices(lead: tuple[int, ...], full: bool) -> Iterable[tuple[int, ...] | None]:
    total = int(np.prod(lead))
    every = list(np.ndindex(*lead))
    if full or total <= 2 * EDGE:
        return every
    return every[:EDGE] + [None] + every[-EDGE:]


def result_view(result: Any, wrt: list[str] | None = None, full: bool = False) -> RenderableType:
    """The output's value and each input's gradient, as `gradcli eval` shows them."""
    parts: list[RenderableType] = [array_view(result.output_name, result.output, full)]
    if result.summed:
        parts.append(summed_note(result.output_name))
    for name, g in result.grads.items():
        if wrt and name not in wrt:
            continue
        if g is None:
            parts.append(Text(f"∂{operand(result.output_name)}/∂{name}: None (the output does not depend on {name})"))
        else:
            parts.append(array_view(f"∂{operand(result.output_name)}/∂{name}", g, full))
    parts.extend(_leaf_notes(result))
    parts.append(Text(f"seed {result.seed} · dtype {result.dtype}", style="dim"))
    warning = nonfinite_warning(result)
    if warning is not None:
        parts.append(warning)
    return Group(*parts)


def _leaf_notes(result: Any) -> list[Text]:
    """Where gradients came from when the program, not the command line, decided: leaves it made, and
    its own backward calls (eval then runs none: a second one would fail or double every gradient)."""
    notes = []
    if result.made:
        names = ", ".join(result.made)
        notes.append(Text(f"note: {names} {'is a leaf' if len(result.made) == 1 else 'are leaves'} the program made "
                          "(requires_grad=True), differentiated like the inputs", style="dim"))
    if result.own_backward:
        one = len(result.own_backward) == 1
        lines = ", ".join(str(line) for line in result.own_backward)
        calls = f"backward call at line {lines}" if one else f"backward calls at lines {lines} (they accumulate)"
        notes.append(Text(f"note: the gradients are what the program's own {calls} left in .grad; gradcli ran no "
                          "backward of its own", style="dim"))
    return notes


def summed_note(name: str) -> Text:
    """eval's answer for an output that is not one number: say which convention gave it, and PyTorch's way."""
    z = operand(name)
    return Text(f"note: gradients of {z}.sum() ({name} is not a scalar); in PyTorch: "
                f"{z}.backward(torch.ones_like({name}))", style="dim")


def nonfinite_warning(result: Any) -> Text | None:
    values = [np.asarray(result.output._data)] + [g for g in result.grads.values() if g is not None]
    if all(np.isfinite(v).all() for v in values if v.dtype.kind == "f"):
        return None
    where = f" first produced by {result.first_nonfinite.name}" if result.first_nonfinite is not None else ""
    return Text(f"warning: the result contains nan or inf{where}", style="bold yellow")


def graph_tree(output: Tensor, names: dict[str, Tensor], output_name: str) -> Tree:
    """The recorded graph as PyTorch names it, root first; shared nodes shown once, then referenced."""
    leaf_names = {id(t): n for n, t in names.items()}
    root = Tree(Text(f"{output_name}  {shape_text(tuple(output.shape))}", style="bold"))
    if output._node is None:
        root.add(_leaf_label(output, leaf_names))
        return root
    seen: set[int] = set()
    stack: list[tuple[Tree, Any]] = [(root, output._node)]
    while stack:
        parent, item = stack.pop()
        if isinstance(item, Node):
            if id(item) in seen:
                parent.add(Text(f"{item.name} (shown above)", style="dim"))
                continue
            seen.add(id(item))
            branch = parent.add(Text(f"{item.name}  {shape_text(item.shape)}", style="cyan"))
            for x in reversed(item.inputs):
                stack.append((branch, x))
        elif isinstance(item, Tensor):
            parent.add(_leaf_label(item, leaf_names))
        else:
            parent.add(Text(f"constant {number(item)}", style="dim"))
    return root


def _leaf_label(t: Tensor, leaf_names: dict[int, str]) -> Text:
    name = leaf_names.get(id(t))
    if t.requires_grad:
        return Text(f"leaf {name or 'tensor'}  {shape_text(tuple(t.shape))}  requires_grad", style="green")
    return Text(f"constant {shape_text(tuple(t.shape))}", style="dim")


def error_view(error: GradcliError | ProgramAssertionError, filename: str | None = None,
               label: str | None = None) -> RenderableType:
    """What went wrong, where (a caret under the span), and how to fix it. A program that is no file of
    the reader's, `label`led (a Jupyter cell), is located as IPython locates it: `Cell In[3], line 2`."""
    from gradcli.source import caret_lines
    kind, message = error.kind, error.to_dict()["message"]
    lines = [Text.assemble(("error", "bold red"), (f"[{kind}]", "red"), ": ", printable(message))]
    where = error.filename or filename
    if where is not None and where.startswith("<"):
        where = None  # "<program>": a command-line program, located by line and column alone
    if error.line is not None:
        frames: list[tuple[int, int, int] | None] = [*error.calls, (error.line, error.column or 1, error.length)]
        if error.calls:
            lines.append(Text("  the program's calls, innermost last:", style="dim"))
            if len(frames) > MAX_FRAMES:
                shown = MAX_FRAMES // 2
                frames = [*frames[:shown], None, *frames[len(frames) - shown:]]
        for frame in frames:
            if frame is None:
                lines.append(Text(f"  ... {len(error.calls) + 1 - 2 * (MAX_FRAMES // 2)} more calls ...", style="dim"))
                continue
            line, column, length = frame
            if label is not None:
                location = f"{label}, line {line}, column {column}"
            elif error.cell is not None:
                location = f"{where}, cell {error.cell}, line {line}, column {column}"
            else:
                location = f"{where}:{line}:{column}" if where else f"line {line}, column {column}"
            lines.append(Text(f"  --> {location}", style="blue"))
            if error.source is not None:
                for text in caret_lines(error.source, line, column, length):
                    lines.append(Text(f"   | {text}", no_wrap=True, overflow="crop"))
    if isinstance(error, ProgramAssertionError):
        for name, text in error.values:
            lines.append(Text(printable(f"   {name} = {_short(text)}")))
        if error.message is not None:
            lines.append(Text(printable(f"   message: {error.message}")))
    elif error.hint:
        lines.append(Text.assemble(("hint", "bold green"), ": ", printable(error.hint)))
    return Group(*lines)


def _short(text: str) -> str:
    return text if len(text) <= 400 else text[:397] + "..."


def labels(name: str, shape: tuple[int, ...]) -> list[str]:
    """`x[0]`, `x[1,2]`: one label per element, row-major, for Jacobian rows and columns."""
    return [label(name, idx) for idx in np.ndindex(*shape)]


def display_view(title: str, value: Any, full: bool = False) -> RenderableType:
    """A top-level bare expression's value, as a notebook shows a cell's last one: a tensor as a titled
    table (its shape and dtype on top), anything else as Python's repr. (A `print` writes PyTorch's text.)"""
    if isinstance(value, Tensor):
        return array_view(title, value, full)
    if isinstance(value, (Node, AccumulateGrad)) or value is None:
        return Text(repr(value))
    if isinstance(value, (float, np.floating)):
        return Text(repr(float(value)))
    return Text(printable(str(value)))


PATH_BREAKS = re.compile(r"[^/]*/|[^/]+$")
"""A path's pieces: each folder with its `/`, then the file's name."""
CODE_BREAKS = re.compile(r"[^/(.\s=]*(?:[/(]|=(?!=)|\.(?=\w)|\s+)|[^/(.\s=]+$|.+$")
"""A call's or a formula's pieces: up to and with each `/`, `(`, `=` of a keyword, `.` before a name, or spaces."""


LABEL_BREAKS = re.compile(r"[^\[]+(?=\[)|\[[^,\]]*,|[^,\]]*,|[^,\]]*\]|.+$")
"""An element's label's pieces: its name, then each index with its comma (`x`, `[1,`, `2]`)."""


def _longest_piece(label: str) -> int:
    return max((len(p) for p in LABEL_BREAKS.findall(label) if p), default=len(label))


class Breakable:
    """A table cell that wraps only between the pieces `breaks` finds, never inside a name (a piece
    longer than the whole column is the one thing folded): `tests/fixtures/` over `quickstart.py`,
    `x.log_softmax(` over `dim=None)`, not `x.log_softmax(d` over `im=None)`."""

    def __init__(self, text: str, breaks: re.Pattern[str], style: str = "") -> None:
        self.parts = [p for p in breaks.findall(text) if p] or [text]
        self.style = style

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(max(cell_len(p) for p in self.parts), sum(cell_len(p) for p in self.parts))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = [""]
        for part in self.parts:
            if lines[-1] and cell_len(lines[-1]) + cell_len(part.rstrip()) > options.max_width:
                lines[-1] = lines[-1].rstrip()
                lines.append("")
            lines[-1] += part
        yield Text("\n".join(line.rstrip() for line in lines), style=self.style, overflow="fold")


NODE_BREAKS = re.compile(r"[A-Z][^A-Z]*|[^A-Z]+")
"""A node name's words (`Binary`, `Cross`, ... `Backward0`): a long one wraps between them at 80 columns."""
_WHOLE_NODES = 24
"""Node names up to this long are kept on one line (`LogSoftmaxBackward0`); longer ones
(`BinaryCrossEntropyWithLogitsBackward0`) wrap between their words."""


def ops_view(rows: list, text: str | None, namespaces: dict[str, str]) -> RenderableType:
    """The `gradcli ops` table, then where else the functions are reachable; the filter text is the user's."""
    table = Table(header_style="bold", title=Text(f"{len(rows)} entries" + (f" matching '{text}'" if text else "")),
                  title_justify="left")
    table.add_column("call")
    table.add_column("kind", style="dim")
    table.add_column("node")
    table.add_column("derivative rule")
    table.add_column("--check", justify="center", no_wrap=True)
    for e in rows:
        if e.op is None:
            table.add_row(Breakable(e.call, CODE_BREAKS), e.kind, Text("—", style="dim"),
                          Text("not differentiated", style="dim"), "")
        else:
            node = e.op.node if len(e.op.node) <= _WHOLE_NODES else Breakable(e.op.node, NODE_BREAKS)
            table.add_row(Breakable(e.call, CODE_BREAKS, "cyan"), e.kind, node,
                          Breakable(e.op.rule, CODE_BREAKS),
                          "yes" if e.op.sym is not None else Text("no", style="yellow"))
    lines = [Text(f"{module}.NAME: {names}", style="dim") for module, names in namespaces.items()]
    return Group(Fitted(table), Text("also reachable as", style="dim"), *lines)


def block_view(title: str, row_name: str, row_shape: tuple[int, ...], col_name: str, col_shape: tuple[int, ...],
               block: np.ndarray, full: bool = False) -> RenderableType:
    """A block flattened to rows (elements of `row_name`) by columns (elements of `col_name`)."""
    rows, cols = labels(row_name, row_shape), labels(col_name, col_shape)
    matrix = block.reshape(len(rows), len(cols))
    head = Text(f"{title}  ")
    head.append(f"shape {shape_text(block.shape)} · {block.dtype} · rows {row_name}, columns {col_name}", style="dim")
    return Group(head, Matrix(matrix, full, rows, cols, summarise=matrix.size > THRESHOLD))
