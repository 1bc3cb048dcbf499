"""How a check report looks: a verdict table and the derivatives themselves.

Rendering only; the verdicts come from `gradcli.check` (its progress bar: `views/progress.py`).
"""
from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from gradcli.jsonable import number
from gradcli.views.fitted import Fitted

_STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "undefined": "bold yellow"}
WITNESS = {"symbolic": "SymPy", "numeric": "finite diff", "directional": "directions", "jacobian": "SymPy",
           "hessian": "SymPy"}
"""A witness's name in tables: "directions" are `numeric.directional_check`'s random directions."""


def _err(v: float) -> str:
    return "0" if v == 0 else f"{v:.2e}"


def check_view(report: Any) -> RenderableType:
    """The check table after the gradients, then each input's derivative and any undefined points."""
    title = f"check ({report.witness}): {report.headline}"
    if not report.inputs:  # a call no witness covers: the title says so, and there is nothing to tabulate
        return Text(title)
    failing = report.status == "fail"
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in ("input", "status", "witness", "abs err", "rel err", "checked") + (("worst",) if failing else ()):
        table.add_column(column, justify="right" if "err" in column else "left", no_wrap=column != "worst")
    lines: list[RenderableType] = []
    sampled = [entry.coverage for entry in report.inputs.values() if entry.sampled]
    for name, entry in report.inputs.items():
        for row_name, item in ((name, entry), (f"{name} (numeric)", entry.numeric),
                               (f"{name} (direction)", entry.through)):
            if item is None:
                continue
            worst = item.worst
            worst_text = "" if worst is None else f"{worst.label}: got {number(worst.got)}, " \
                                                  f"expected {number(worst.expected)}"
            cells = [row_name, Text(item.status, style=_STATUS_STYLE.get(item.status, "")),
                     WITNESS.get(item.method, item.method), _err(item.max_abs_err), _err(item.max_rel_err),
                     f"{item.checked} direction{'s' if item.checked != 1 else ''}" if item.method == "directional" else
                     f"{item.checked:,}/{item.total:,}"]
            table.add_row(*cells, *((worst_text if item.status == "fail" else "",) if failing else ()))
        for formula in entry.formulas or ((entry.derivative,) if entry.derivative else ()):
            lines.append(_indented(formula))
        for element in entry.undefined:
            whose = "the program's backward gives" if ".forward is at a kink" in element.reason else \
                "gradcli (like PyTorch) uses"  # a kink inside a Function's forward: its own backward's convention
            lines.append(_indented(f"{element.label}: {element.reason}; {whose} {number(element.got)}", "yellow"))
        if entry.undefined_count > len(entry.undefined):
            lines.append(_indented(f"… and {entry.undefined_count - len(entry.undefined)} more undefined points",
                                   "yellow"))
        if entry.note:
            lines.append(_indented(f"note ({name}): {entry.note}", "dim"))
    if sampled:
        lines.append(_indented("sampled: " + "; ".join(sampled), "dim"))
    if report.mode == "jacobian":
        lines.append(_indented("layout: rows are output elements, columns input elements (PyTorch's); SymPy's "
                               "derive_by_array gives the transpose", "dim"))
    return Group(Fitted(table), *lines)


def _indented(text: str, style: str = "") -> RenderableType:
    """A line under the table, indented, its wrapped continuation too (not from the margin)."""
    return Padding(Text(text, style=style), (0, 0, 0, 2))
