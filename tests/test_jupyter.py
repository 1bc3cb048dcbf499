"""`%load_ext gradcli` in a real Jupyter kernel: a notebook with `%%gradcli` cells and a `%gradcli`
line is executed by nbclient in ipykernel, as a learner's notebook runs (skipped where they are
not installed: they come with `pip install "gradcli[jupyter]"` plus nbclient)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]

CELLS = [
    "%load_ext gradcli",
    "%%gradcli --check\nimport torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n(x ** 3).sum().backward()\n"
    "print('grad', x.grad)",
    "%gradcli eval 'y = x ** 2' x=3 --json",
    "%%gradcli\nimport torch\nassert torch.tensor(1.0) > 2, 'too small'",
    "%gradcli eval 'y = (x' x=1",
    "%%gradcli --check bogus\nprint('never')",
    "print('the kernel is still alive')",
]


def text_of(cell: dict) -> str:
    """Everything a cell showed: streams, and the plain text of rich displays."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
        elif output["output_type"] == "error":
            parts.append("ERROR " + output["ename"])
    return "".join(parts)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "NO_COLOR")}
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + saved["PYTHONPATH"] if saved["PYTHONPATH"] else "")
    os.environ["NO_COLOR"] = "1"  # the kernel inherits both; the rest of the session gets them back below
    try:
        nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}}).execute()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return [text_of(cell) for cell in notebook.cells]


def test_a_cell_runs_in_gradcli_with_run_options(executed):
    shown = executed[1]
    assert "grad tensor([ 3., 12.])" in shown and "ERROR" not in shown and "\x1b" not in shown  # NO_COLOR
    assert "all gradients agree" in shown and "1 file: 1 ok" in shown


def test_a_line_runs_one_command(executed):
    assert executed[2] == ('{"output": {"name": "y", "shape": [], "dtype": "float64", "value": 9.0}, '
                           '"grads": {"x": {"shape": [], "value": 6.0}}, "seed": 0}\n')


def test_a_cell_is_named_as_ipython_names_it_never_by_its_temporary_file(executed):
    """Cells run as In[1], In[2], ...: the %%gradcli cells are the second and the fourth."""
    assert "Cell In[2] ─" in executed[1] and "│ Cell In[2] │ ok" in executed[1]
    assert "  --> Cell In[4], line 2, column 1\n" in executed[3]
    assert not any("gradcli-cell-" in shown or "cell.py" in shown for shown in executed)


def test_failures_and_errors_are_shown_not_raised(executed):
    assert "error[assertion]: assertion failed: torch.tensor(1.0) > 2" in executed[3]
    assert "message: too small" in executed[3] and "ERROR" not in executed[3]
    assert "error[syntax]: '(' was never closed" in executed[4] and "ERROR" not in executed[4]
    assert "--check 'bogus' is not a check mode" in executed[5] and "never" not in executed[5]
    assert executed[6] == "the kernel is still alive\n"
