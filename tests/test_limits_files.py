"""Files are size-checked before they are read, and the notebook reader is linear and bounded (issue 35)."""
from __future__ import annotations

import ast
import json

import numpy as np

from gradcli.lang.limits import MAX_SCRIPT_BYTES
from gradcli.program.notebooks import MAX_CELLS, read_notebook
from gradcli.program.scripts import run_file


def error_line(result) -> str:
    return " ".join((result.stdout + result.stderr).split())


def test_a_script_past_the_size_limit_is_refused_unread(cli, tmp_path):
    path = tmp_path / "big.grad"
    path.write_text("x = 1\n" * (MAX_SCRIPT_BYTES // 6 + 1), encoding="utf-8")
    result = cli("run", str(path))
    assert result.exit_code == 2
    assert f"a script of {path.stat().st_size:,} bytes is over the limit of 4,194,304 bytes" in error_line(result)


def test_a_data_file_is_held_to_the_memory_left(cli, tmp_path):
    np.save(tmp_path / "w.npy", np.zeros(4_000_000))
    result = cli("eval", "out = w.sum()", f"w=@{tmp_path / 'w.npy'}", "--max-memory", "8M")
    assert result.exit_code == 2
    assert "reading" in error_line(result) and "of the memory limit (8 MiB) is left" in error_line(result)


def notebook(tmp_path, text: str):
    path = tmp_path / "n.ipynb"
    path.write_text(text, encoding="utf-8")
    return run_file(path)


def test_deeply_nested_json_is_a_clean_notebook_error(tmp_path):
    result = notebook(tmp_path, '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert result.status == "error" and result.error.message.endswith("is not a readable notebook: its JSON nests "
                                                                      "too deeply")


def test_a_number_past_pythons_digit_limit_is_a_clean_notebook_error(tmp_path):
    result = notebook(tmp_path, '{"cells": [], "n": ' + "9" * 5001 + "}")
    assert result.status == "error" and "is not a readable notebook" in result.error.message


def test_too_many_cells_are_refused(tmp_path):
    cells = [{"cell_type": "code", "source": "x = 1"}] * (MAX_CELLS + 1)
    result = notebook(tmp_path, json.dumps({"cells": cells}))
    assert result.status == "error" and result.error.message.endswith("has 10,001 cells, over the limit of 10,000")


def test_the_notebook_reader_is_linear_in_the_cells(tmp_path):
    """10,000 one-line cells, each shown (a bare expression): the display pass walks cells and statements once."""
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": f"x{i} = {i}\nx{i}"}
                                          for i in range(MAX_CELLS)]}), encoding="utf-8")
    book = read_notebook(path)
    assert len(book.displayed(ast.parse(book.source))) == MAX_CELLS


def test_a_long_dotted_line_ending_in_a_question_mark_is_matched_in_one_pass(tmp_path):
    from gradcli.program.notebooks import _HELP
    line = "a" + ".a" * 50_000 + "(?x"
    assert _HELP.match(line) is None
    assert _HELP.match("torch.ones(2).sum??") and _HELP.match("?x") and _HELP.match("np.linalg.norm?")
