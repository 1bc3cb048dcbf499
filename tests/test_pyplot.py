"""`import matplotlib.pyplot as plt` runs: the facade records what a program draws, `gradcli run`
draws it in the terminal at `show()` (a notebook's figures after its cells), and `--plots DIR`
writes image files with real matplotlib. A program never chooses where a file goes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAD = "import torch\nimport matplotlib.pyplot as plt\n"


def run_json(cli, tmp_path: Path, body: str, *options: str, name: str = "prog.py") -> dict:
    path = tmp_path / name
    path.write_text(HEAD + body)
    result = cli("run", "--json", *options, str(path))
    return json.loads(result.stdout.splitlines()[0])


def figures(file: dict) -> list[dict]:
    return [e for e in file["events"] if e["kind"] == "figure"]


def test_plot_title_and_show_hand_over_the_data(cli, tmp_path):
    file = run_json(cli, tmp_path, "losses = [1.0, 0.5, 0.25]\nplt.plot(losses, label='train')\nplt.title('loss')\n"
                                   "plt.xlabel('epoch')\nplt.legend()\nplt.show()\nprint('plotted')\n")
    assert file["status"] == "ok"
    [shown] = figures(file)
    assert shown["name"] is None
    [axes] = shown["figure"]["axes"]
    assert (axes["title"], axes["xlabel"]) == ("loss", "epoch")
    assert axes["series"] == [{"kind": "line", "label": "train", "x": [0.0, 1.0, 2.0], "y": [1.0, 0.5, 0.25]}]
    assert [e["kind"] for e in file["events"]] == ["figure", "print"]


def test_the_terminal_draws_the_figure_at_show_in_the_programs_order(cli, tmp_path):
    path = tmp_path / "loss.py"
    path.write_text(HEAD + "print('before')\nplt.plot([3.0, 2.0, 1.0], label='train')\nplt.title('the loss')\n"
                           "plt.show()\nprint('after')\n")
    result = cli("run", str(path))
    assert result.exit_code == 0
    out = result.stdout
    assert out.index("before") < out.index("the loss") < out.index("⢕ train") < out.index("after")
    assert "3.0┤" in out and "\x1b" not in out


def test_the_fig_ax_api_and_a_grid_of_axes(cli, tmp_path):
    file = run_json(cli, tmp_path, "x = torch.linspace(0, 1, 3)\nfig, axes = plt.subplots(2, 2)\n"
                                   "axes[0, 1].scatter(x, x * 2)\naxes[1][0].hist(torch.tensor([0., 1., 1., 2.]), "
                                   "bins=2)\nfor ax in axes.flat:\n    ax.set_ylabel('y')\nfig.suptitle('grid')\n"
                                   "print(len(axes), axes.ndim, len(fig.axes))\nplt.show()\n")
    assert file["status"] == "ok", file["error"]
    [shown] = figures(file)
    assert shown["figure"]["grid"] == [2, 2] and shown["figure"]["title"] == "grid"
    by_place = {tuple(a["position"]): a for a in shown["figure"]["axes"]}
    assert by_place[(0, 1)]["series"][0] == {"kind": "scatter", "label": None, "x": [0.0, 0.5, 1.0],
                                             "y": [0.0, 1.0, 2.0]}
    assert by_place[(1, 0)]["series"][0] == {"kind": "hist", "label": None, "x": [0.0, 1.0, 2.0], "y": [1.0, 3.0]}
    assert all(a["ylabel"] == "y" for a in by_place.values())
    assert file["events"][0]["text"] == "2 2 4\n"


def test_plt_subplot_and_a_format_string(cli, tmp_path):
    file = run_json(cli, tmp_path, "plt.subplot(1, 2, 1)\nplt.plot([1, 2], [3, 4], 'ro')\nplt.subplot(122)\n"
                                   "plt.plot([5, 6], 'k--')\nplt.show()\n")
    [shown] = figures(file)
    assert [(a["position"], a["series"][0]["y"]) for a in shown["figure"]["axes"]] == [([0, 0], [3.0, 4.0]),
                                                                                      ([0, 1], [5.0, 6.0])]


@pytest.mark.parametrize("body, message", [
    ("x = torch.ones(3, requires_grad=True)\nplt.plot(x * 2)\n",
     "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    ("plt.plot([1, 2], [1, 2, 3])\n", "x and y must have same first dimension, but have shapes (2,) and (3,)"),
    ("plt.plot([1, 2], 'q')\n", "'q' is not a format string"),
    ("fig, axes = plt.subplots(2, 2)\naxes[2, 0]\n", "index 2 is out of bounds for the axes of shape (2, 2)"),
    ("plt.subplot(2, 2, 5)\n", "num must be an integer with 1 <= num <= 4, not 5"),
    ("plt.plot({'a': 1})\n", "plot takes numbers, lists of numbers, arrays or tensors, not dict"),
    ("plt.yscale('cubic')\n", "'cubic' is not a valid value for scale"),
    ("for i in range(101):\n    plt.figure()\n", "more than 100 figures are open"),
])
def test_mistakes_are_user_errors_with_matplotlibs_words(cli, tmp_path, body, message):
    file = run_json(cli, tmp_path, body)
    assert file["status"] == "error" and file["error"]["message"] == message


@pytest.mark.parametrize("body, name", [
    ("fig, ax = plt.subplots()\nfig.data\n", "data"), ("plt._STATE\n", "_STATE"),
    ("fig, ax = plt.subplots()\nax.data.series\n", "data"), ("plt.savefig.__globals__\n", "__globals__"),
])
def test_the_facade_shows_only_its_named_members(cli, tmp_path, body, name):
    file = run_json(cli, tmp_path, body)
    assert file["status"] == "error" and f"'{name}' is not available" in file["error"]["message"]


def test_savefig_without_plots_writes_nothing_and_says_how(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "save.py"
    path.write_text(HEAD + "plt.plot([1, 2])\nplt.savefig('loss.png')\nplt.show()\n")
    result = cli("run", str(path))
    assert result.exit_code == 0
    assert "savefig('loss.png'): not written; gradcli run --plots DIR writes figures" in result.stdout
    assert result.stdout.count("┌─") == 1  # show() of the figure savefig drew draws nothing new
    assert sorted(p.name for p in tmp_path.iterdir()) == ["save.py"]


def test_plots_writes_images_by_file_name_only(cli, tmp_path):
    pytest.importorskip("matplotlib")
    folder = tmp_path / "plots"
    file = run_json(cli, tmp_path, "plt.plot([1, 2])\nplt.savefig('../../elsewhere/loss.png')\nplt.show()\n"
                                   "plt.figure()\nplt.hist([1.0, 2.0])\nplt.show()\n", "--plots", str(folder),
                    name="train.py")
    assert file["plots"] == [str(folder / "loss.png"), str(folder / "train-figure1.png")]
    assert sorted(p.name for p in folder.iterdir()) == ["loss.png", "train-figure1.png"]
    assert (folder / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path.parent / "elsewhere").exists()


def test_plots_without_matplotlib_is_a_user_error_before_anything_runs(cli, tmp_path, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    path = tmp_path / "p.py"
    path.write_text("print('ran')\n")
    result = cli("run", "--plots", str(tmp_path / "out"), str(path))
    assert result.exit_code == 2 and "ran" not in result.stdout
    assert "--plots needs matplotlib, which is not installed" in result.stderr


def test_a_notebooks_figures_are_drawn_after_their_cell(cli, tmp_path):
    notebook = {"cells": [{"cell_type": "code", "source": ["import matplotlib.pyplot as plt\n", "plt.plot([1, 2])"]},
                          {"cell_type": "code", "source": ["print('done')"]}], "metadata": {}, "nbformat": 4,
                "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    file = json.loads(cli("run", "--json", str(path)).stdout.splitlines()[0])
    # the cell shows plot's lines, then its figure, before the next cell prints: as Jupyter's inline backend
    assert [e["kind"] for e in file["events"]] == ["display", "figure", "print"]


def test_a_script_that_never_shows_draws_nothing(cli, tmp_path):
    assert figures(run_json(cli, tmp_path, "plt.plot([1, 2])\n")) == []


def test_plotext_and_matplotlib_load_only_when_a_figure_is_drawn(tmp_path):
    path = tmp_path / "quiet.py"
    path.write_text(HEAD + "x = torch.ones(2)\n")
    code = ("import sys\nfrom gradcli.program.scripts import run_file\nrun_file(sys.argv[1])\n"
            "print(sorted(m for m in ('plotext', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert done.stdout.strip() == "[]", done.stderr


def test_a_figure_in_the_terminal_is_the_golden_text():
    """60 columns, no colour: the two series told apart by their markers, named under the plot."""
    import numpy as np

    from gradcli.lang.stdlib.pyplot_module import AxesData, FigureData, Series
    from gradcli.views.figures import figure_text, image_text
    figure = FigureData(1, axes=[AxesData((0, 0), [
        Series("line", np.arange(4.0), np.array([1.0, 0.5, 0.25, 0.125]), "train"),
        Series("scatter", np.arange(4.0), np.array([0.9, 0.6, 0.3, 0.2]), "val", line=False, marker="o")],
        title="loss", xlabel="epoch")])
    golden = Path(__file__).parent / "golden" / "figure_loss.txt"
    assert figure_text(figure, 60, False) + "\n" == golden.read_text(encoding="utf-8")
    assert image_text(np.arange(12.0).reshape(3, 4), 60).split("\n") == [
        "    ..::", "--==++**", "##%%@@@@", "image 3×4: ' .:-=+*#%@' from 0 to 11"]


def test_a_training_tutorials_plotting_runs_as_written(cli, tmp_path):
    file = run_json(cli, tmp_path, "losses = [0.9, 0.5, 0.3]\nplt.figure(figsize=(8, 4))\nplt.subplot(1, 2, 1)\n"
                                   "plt.plot(losses, label='train loss', color='tab:blue', linewidth=2)\n"
                                   "plt.xlabel('epoch'); plt.ylabel('loss'); plt.legend(); plt.grid(True)\n"
                                   "plt.subplot(1, 2, 2)\nplt.semilogy([1, 10, 100])\nplt.text(0, 1, 'note')\n"
                                   "plt.tight_layout()\nplt.show()\nfig, ax = plt.subplots()\n"
                                   "ax.set(title='t', xlabel='x', ylim=(0, 1))\nax.set(color='red')\n")
    [shown] = figures(file)
    left, right = shown["figure"]["axes"]
    assert (left["xlabel"], left["ylabel"], left["series"][0]["label"]) == ("epoch", "loss", "train loss")
    assert right["series"][0]["y"] == [1.0, 10.0, 100.0]
    assert file["error"]["message"] == "Axes.set() got an unexpected keyword argument 'color'"
    assert file["error"]["line"] == 15  # the two lines of HEAD, then the body's 13th


def test_json_figures_carry_the_line_of_show_and_savefig(cli, tmp_path):
    file = run_json(cli, tmp_path, "plt.plot([1.0, 0.5])\n\nplt.show()\ndef draw():\n    plt.plot([3, 2])\n"
                                   "    plt.savefig('b.png')\ndraw()\n")
    assert [(e["line"], e["name"]) for e in figures(file)] == [(5, None), (8, "b.png")]  # HEAD is two lines


def test_a_notebooks_events_are_placed_by_cell_and_line_in_json(cli, tmp_path):
    """As its errors are: a reader finds `cell 3, line 2`, not a line of the cells joined together."""
    notebook = {"cells": [{"cell_type": "code", "source": "import matplotlib.pyplot as plt\nprint('hi')"},
                          {"cell_type": "markdown", "source": "# a figure never shown"},
                          {"cell_type": "code", "source": "x = 1\nplt.plot([1, 2])\nplt.title('t')"},
                          {"cell_type": "code", "source": "plt.figure()\nplt.plot([2, 1])\n\nplt.show()"}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    file = json.loads(cli("run", "--json", str(path)).stdout.splitlines()[0])
    assert [(e["kind"], e["cell"], e["line"]) for e in file["events"]] == [
        ("print", 1, 2), ("figure", 3, 3), ("figure", 4, 4)]  # cell 3's figure is drawn when cell 3 ends


def test_a_notebooks_unshown_figure_is_placed_at_its_last_plot_call(cli, tmp_path):
    notebook = {"cells": [{"cell_type": "code", "source": "import matplotlib.pyplot as plt"},
                          {"cell_type": "code", "source": "plt.plot([1, 2])\nplt.xlabel('epoch');"}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    file = json.loads(cli("run", "--json", str(path)).stdout.splitlines()[0])
    assert [(e["kind"], e["cell"], e["line"]) for e in file["events"]] == [("figure", 2, 2)]


def test_a_notebook_cells_figure_is_drawn_when_that_cell_ends_and_closed(cli, tmp_path):
    """Jupyter's inline backend draws and closes a cell's figures after the cell: a later cell's plot is a new
    figure, and a later cell's error does not hide them."""
    notebook = {"cells": [{"cell_type": "code", "source": "import matplotlib.pyplot as plt\nplt.plot([1, 2]);"},
                          {"cell_type": "code", "source": "print('between')"},
                          {"cell_type": "code", "source": "plt.plot([5, 4, 3])\nplt.title('second');"},
                          {"cell_type": "code", "source": "1 / 0"}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    file = json.loads(cli("run", "--json", str(path)).stdout.splitlines()[0])
    events = [(e["kind"], e["cell"], e["line"]) for e in file["events"]]
    assert events == [("figure", 1, 2), ("print", 2, 1), ("figure", 3, 2)]
    first, second = figures(file)
    assert first["figure"]["axes"][0]["series"][0]["y"] == [1.0, 2.0]
    assert [s["y"] for s in second["figure"]["axes"][0]["series"]] == [[5.0, 4.0, 3.0]]
    assert second["figure"]["axes"][0]["title"] == "second"
    assert file["error"]["cell"] == 4
