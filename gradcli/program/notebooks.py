"""Jupyter notebooks as programs: the code cells in order, as one program, shown as Jupyter shows them.

The `.ipynb` file is read as JSON with the standard library (`json`, no new dependency; nbformat
would only validate what is read here). Code cells are joined into one source, each cell on its
own lines, so the program is parsed and run once with one namespace, as a kernel keeps one.
Markdown and raw cells are ignored. IPython's own syntax is not Python: a line magic (`%matplotlib
inline`), a shell line (`!pip install torch`) and a help line (`x?`) become blank lines and a
cell magic (`%%timeit`, `%%writefile`) blanks its whole cell, each with one note, so line numbers
never move; `%%time`, `%%capture` and `%time code` run their code, without the timing.
Only each cell's last statement, if it is a bare expression not ended by `;`, is displayed.
Errors are placed in their cell: `tutorial.ipynb, cell 7` and the line within that cell.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcli.errors import GradcliError, LimitError, ParseError, ProgramAssertionError
from gradcli.lang.limits import check_file_size

_MAGIC = ("%", "!")
_TIMING = frozenset({"time", "capture"})
"""Magics whose Python runs in the notebook's namespace (`%%timeit` runs its own, which keeps nothing):
here it runs once, and only IPython's timing or capture is left out."""
_HELP = re.compile(r"^\?*[A-Za-z_][\w.]*(\([^'\"#()]*\)(\.[A-Za-z_]\w*)*)?\?*$")
"""IPython's help lines, `x?`, `?x`, `torch.ones(2).sum??` (one `?` at least: `x` alone is Python). No two parts
can match the same text, so a long line is matched in one pass (never backtracking over its dots)."""
MAX_NOTEBOOK_BYTES = 32 * 2 ** 20
MAX_CELLS = 10_000


@dataclass
class Cell:
    number: int  # 1-based position among all the notebook's cells, as a reader counts them
    first: int  # the program line of its first line
    lines: list[str]


@dataclass
class Notebook:
    path: Path
    source: str
    cells: list[Cell]
    notes: list[tuple[int, str]] = field(default_factory=list)
    """(program line, text): one per skipped magic or shell line."""

    def last_statements(self, tree: ast.Module) -> dict[int, ast.stmt]:
        """Each cell's last top-level statement, by cell position: where Jupyter shows a value and draws figures."""
        lasts: dict[int, ast.stmt] = {}
        at = 0
        for statement in tree.body:
            while at < len(self.cells) and statement.lineno >= self.cells[at].first + len(self.cells[at].lines):
                at += 1
            if at < len(self.cells) and statement.lineno >= self.cells[at].first:
                lasts[at] = statement
        return lasts

    def displayed(self, tree: ast.Module) -> set[int]:
        """The program lines of each cell's last statement when it is a bare expression, as Jupyter shows it."""
        shown: set[int] = set()
        for at, end in self.last_statements(tree).items():
            cell = self.cells[at]
            if isinstance(end, ast.Expr):
                text = cell.lines[end.end_lineno - cell.first] if end.end_lineno is not None else ""
                if not text[end.end_col_offset or 0:].split("#")[0].strip().startswith(";"):
                    shown.add(end.lineno)
        return shown

    def cell_ends(self, tree: ast.Module) -> set[int]:
        """The program lines of each cell's last statement: after it, the inline backend draws the cell's figures."""
        return {statement.lineno for statement in self.last_statements(tree).values()}

    def cell_of(self, line: int) -> Cell | None:
        for cell in self.cells:
            if cell.first <= line < cell.first + max(len(cell.lines), 1):
                return cell
        return None

    def site(self, line: int) -> str:
        """A program line as a reader finds it in the notebook: `cell 3, line 2`."""
        cell = self.cell_of(line)
        return f"line {line}" if cell is None else f"cell {cell.number}, line {line - cell.first + 1}"

    def located(self, line: int) -> dict:
        """A program line in JSON as errors give it: the cell's own line, and the cell."""
        cell = self.cell_of(line)
        return {"line": line} if cell is None else {"line": line - cell.first + 1, "cell": cell.number}

    def place(self, error: GradcliError | ProgramAssertionError) -> None:
        """Put an error in its cell: the file named with the cell, lines and source the cell's own."""
        cell = self.cell_of(error.line) if error.line is not None else None
        if cell is None:
            error.filename = str(self.path)
            return
        error.filename, error.cell = str(self.path), cell.number
        error.line = error.line - cell.first + 1
        error.source = "\n".join(cell.lines)
        end = cell.first + len(cell.lines)
        error.calls = [(line - cell.first + 1, column, length) for line, column, length in error.calls
                       if cell.first <= line < end]


def read_notebook(path: Path) -> Notebook:
    """The notebook's code cells as one program, read in time linear in its size, within bounds of its own."""
    check_file_size(path, MAX_NOTEBOOK_BYTES, "a notebook")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ParseError(f"'{path}' is not a readable notebook: its JSON nests too deeply",
                         hint="a notebook is the JSON file Jupyter saves (.ipynb)", filename=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: bad JSON, or a number past Python's digits
        raise ParseError(f"'{path}' is not a readable notebook: {exc}",
                         hint="a notebook is the JSON file Jupyter saves (.ipynb)", filename=str(path)) from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise ParseError(f"'{path}' has no list of cells", hint="a notebook is the JSON file Jupyter saves (.ipynb)",
                         filename=str(path))
    if len(cells) > MAX_CELLS:
        raise LimitError(f"'{path}' has {len(cells):,} cells, over the limit of {MAX_CELLS:,}",
                         hint="split the notebook, or run its code as a .py script", filename=str(path))
    lines: list[str] = []
    notebook = Notebook(path, "", [])
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _text(cell.get("source", ""))
        first = len(lines) + 1
        own = text.split("\n")
        magic = own[0].strip() if own and own[0].lstrip().startswith("%%") else None
        if magic is not None and magic[2:].split(" ")[0] in _TIMING:
            notebook.notes.append((first, f"cell {number}: ran the cell without {magic} (IPython's "
                                          "own syntax)"))
            own[0] = ""
        elif magic is not None:
            notebook.notes.append((first, f"cell {number}: skipped the cell magic {magic} "
                                          "(IPython's syntax, not Python's)"))
            own = [""] * len(own)
        for k, line in enumerate(own):
            stripped = line.strip()
            word = stripped[1:].split(" ")[0] if stripped.startswith("%") else None
            if word in _TIMING and stripped[len(word) + 1:].strip():  # %time y = f(x): IPython runs the code
                code = stripped[len(word) + 1:].strip()
                notebook.notes.append((first + k, f"cell {number}, line {k + 1}: ran {code} without "
                                                  f"%{word} (IPython's own syntax)"))
                own[k] = line[:len(line) - len(line.lstrip())] + code
            elif stripped.startswith(_MAGIC) or "?" in stripped and _HELP.match(stripped):
                notebook.notes.append((first + k, f"cell {number}, line {k + 1}: skipped {stripped} "
                                                  "(IPython's syntax, not Python's)"))
                own[k] = ""
        notebook.cells.append(Cell(number, first, own))
        lines.extend(own)
    notebook.source = "\n".join(lines)
    return notebook


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str)).rstrip("\n")
    return source.rstrip("\n") if isinstance(source, str) else ""
