"""Notebooks (issue 25, item 6): code cells in order as one program, shown as Jupyter shows them."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from gradcli.program.scripts import Output, run_file, script_files

FIXTURE = Path(__file__).parent / "fixtures" / "notebooks" / "tutorial.ipynb"


def _texts(result) -> list[str]:
    return [" ".join(str(v) for _, v in e.items) for e in result.events if isinstance(e, Output)]


def test_a_notebook_shows_each_cells_last_expression_prints_and_one_note_per_magic():
    result = run_file(FIXTURE)
    texts = _texts(result)
    assert texts[:3] == ["note: cell 2, line 1: skipped %matplotlib inline (IPython's syntax, not Python's)",
                         "note: cell 3, line 1: skipped !pip install torch (IPython's syntax, not Python's)",
                         "note: cell 6: skipped the cell magic %%timeit (IPython's syntax, not Python's)"]
    displays = [e for e in result.events if isinstance(e, Output) and e.kind == "display"]
    assert [e.items[0][0] for e in displays] == ["x.shape", "x.grad"]  # not 'steps' in the loop, not 'steps * 10;'
    assert displays[1].items[0][1].tolist() == [2.0, 4.0]
    assert "y is 5.0" in texts
    assert result.backward_calls == 1


def test_an_error_is_located_in_its_cell():
    result = run_file(FIXTURE)
    error = result.error
    assert error.message == "name 'factor' is not defined"
    assert error.filename == str(FIXTURE) and error.cell == 7
    assert (error.line, error.column) == (2, 16)
    assert error.calls == [(4, 5, 8)]
    assert error.source.split("\n")[1] == "    return t * factor"


def test_a_syntax_error_is_located_in_its_cell(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": "a = 1"},
                                          {"cell_type": "markdown", "source": "text"},
                                          {"cell_type": "code", "source": ["b = 2\n", "c = (b +\n"]}]}))
    error = run_file(path).error
    assert error.filename == str(path) and error.cell == 3 and error.line == 2


def test_an_unreadable_notebook_is_a_user_error(tmp_path):
    path = tmp_path / "x.ipynb"
    path.write_text("{not json")
    assert "is not a readable notebook" in run_file(path).error.message
    path.write_text("[]")
    assert "has no list of cells" in run_file(path).error.message


def test_directories_include_notebooks(tmp_path):
    (tmp_path / "a.grad").write_text("x = 1")
    (tmp_path / "b.ipynb").write_text(json.dumps({"cells": []}))
    (tmp_path / "c.txt").write_text("")
    assert [p.name for p in script_files([tmp_path])] == ["a.grad", "b.ipynb"]


def test_gradcli_run_a_notebook_from_the_command_line():
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    done = subprocess.run(["gradcli", "run", str(FIXTURE)], capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert "tutorial.ipynb, cell 7, line 2, column 16" in done.stderr and "return t * factor" in done.stderr
    assert "y is 5.0" in done.stdout and "Traceback" not in done.stderr


def test_an_error_is_located_by_cell_and_line_in_text_and_json(tmp_path, cli):
    import json as _json
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import torch\nx = torch.tensor(2.0, requires_grad=True)"},
        {"cell_type": "markdown", "metadata": {}, "source": "Then a typo."},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "y = x ** 3\nz = maen(y)\n"}]}
    path = tmp_path / "typo.ipynb"
    path.write_text(_json.dumps(notebook))
    done = cli("run", str(path))
    assert done.exit_code == 2
    assert f"--> {path}, cell 3, line 2, column 5" in done.stderr
    result = cli("run", "--json", str(path))
    error = _json.loads(result.stdout.splitlines()[0])["error"]
    assert result.exit_code == 2 and (error["cell"], error["line"], error["column"]) == (3, 2, 5)


def test_timing_magics_run_their_code_and_help_lines_are_skipped(tmp_path):
    cells = ["%%time\nv = 3\nv * 2", "%time w = v + 1\nw", "%%timeit\nlost = 1", "v?\n??w\nprint.__doc__?",
             "print(v, w)"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": text} for text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "magics.ipynb"
    path.write_text(json.dumps(notebook))
    result = run_file(path)
    assert result.error is None
    texts = _texts(result)
    assert texts[:6] == ["note: cell 1: ran the cell without %%time (IPython's own syntax)",
                         "note: cell 2, line 1: ran w = v + 1 without %time (IPython's own syntax)",
                         "note: cell 3: skipped the cell magic %%timeit (IPython's syntax, not Python's)",
                         "note: cell 4, line 1: skipped v? (IPython's syntax, not Python's)",
                         "note: cell 4, line 2: skipped ??w (IPython's syntax, not Python's)",
                         "note: cell 4, line 3: skipped print.__doc__? (IPython's syntax, not Python's)"]
    assert texts[6:] == ["6", "4", "3 4"]
