"""gradcli in Jupyter: `%load_ext gradcli`, then `%%gradcli [run's options]` runs a cell in gradcli,
and `%gradcli COMMAND ...` runs any command on one line (`%gradcli eval "y = x*2" x=1`).

The magics are the command line, not a second front end: a cell becomes a script file that
`gradcli run` runs with the options given on the `%%gradcli` line, and a line is split as a shell
splits it. Output goes through rich, which renders it as the notebook's own rich output. An error
or a failed check is shown, never raised into the kernel as a Python traceback. IPython is the
optional extra `gradcli[jupyter]`; nothing here imports it (IPython hands its shell over).
"""
from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

from gradcli.cli import app, normalise_argv


def load_ipython_extension(ipython: Any) -> None:
    """What `%load_ext gradcli` calls: register `%gradcli` (line) and `%%gradcli` (cell)."""
    def magic(line: str, cell: str | None = None) -> None:
        gradcli_magic(line, cell, getattr(getattr(ipython, "displayhook", None), "prompt_count", None))
    magic.__doc__ = gradcli_magic.__doc__
    ipython.register_magic_function(magic, magic_kind="line_cell", magic_name="gradcli")


def gradcli_magic(line: str, cell: str | None = None, count: int | None = None) -> None:
    """`%%gradcli --check` runs the cell as a script; `%gradcli eval ...` runs one command. What the
    command line would print is the cell's output; its exit code is not (a `0` under every cell).
    The cell is named as IPython names it in a traceback, `Cell In[3]` (its prompt's `count`, which
    IPython's displayhook keeps), never by the temporary file it runs from."""
    words = shlex.split(line)
    if cell is None:
        _invoke(words)
        return
    with tempfile.TemporaryDirectory(prefix="gradcli-cell-") as folder:
        path = Path(folder) / "cell.py"
        path.write_text(cell, encoding="utf-8")
        label = "cell" if count is None else f"Cell In[{count}]"
        _invoke(["run", *words, "--label", label, str(path)])


def _invoke(words: list[str]) -> int:
    try:
        code = app(args=normalise_argv(words), prog_name="gradcli", standalone_mode=False)
    except SystemExit as exc:  # --help, and typer's own usage errors
        return int(exc.code or 0)
    except Exception as exc:  # click's usage errors when not standalone: shown as the command line shows them
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        return int(getattr(exc, "exit_code", 2))
    return code if isinstance(code, int) else 0
