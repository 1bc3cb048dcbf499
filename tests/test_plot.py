"""`gradcli plot`: samples against hand-derived derivatives, the pictures, and the errors a user can make."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.check.sweep import parse_range, sweep
from gradcli.views.plot import heat_map, line_plot

GOLDEN = Path(__file__).parent / "golden"
RELU_RULE = "ReluBackward0 is at a kink: ∂relu(x)/∂x = [x>0] (0 at 0)"


def arrays(payload: dict, *keys: str) -> list[np.ndarray]:
    return [np.asarray(payload[k], dtype=float) for k in keys]


def test_sin_times_x_against_its_derivative(cli):
    out = cli.json("plot", "out = sin(x) * x", "--range", "-3:3", "--points", "41", "--order", "2")
    x, value, d1, d2 = arrays(out, "x", "value", "derivative", "second_derivative")
    np.testing.assert_allclose(x, np.linspace(-3, 3, 41))
    np.testing.assert_allclose(value, np.sin(x) * x, rtol=1e-12)
    np.testing.assert_allclose(d1, np.sin(x) + x * np.cos(x), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(d2, 2 * np.cos(x) - x * np.sin(x), rtol=1e-12, atol=1e-15)
    assert out["batched"] is True and out["undefined"] == [] and out["inputs"] == {"x": "x"}


def test_relu_marks_its_kink_at_zero_with_pytorch_value(cli):
    out = cli.json("plot", "out = relu(x)", "--range", "-1:1", "--points", "40")
    x, value, d1 = arrays(out, "x", "value", "derivative")
    assert len(x) == 41 and 0.0 in x
    np.testing.assert_array_equal(value, np.maximum(x, 0))
    np.testing.assert_array_equal(d1, (x > 0).astype(float))
    k = int(np.flatnonzero(x == 0)[0])
    assert out["undefined"] == [{"index": k, "x": 0.0, "reason": RELU_RULE}]


def test_a_program_that_sums_runs_point_by_point(cli):
    out = cli.json("plot", "v = stack([x, 2*x])\nout = (x * v).sum()", "--range", "-2:2", "--points", "9",
                   "--order", "2")
    x, value, d1, d2 = arrays(out, "x", "value", "derivative", "second_derivative")
    np.testing.assert_allclose(value, 3 * x ** 2)
    np.testing.assert_allclose(d1, 6 * x)
    np.testing.assert_allclose(d2, np.full(9, 6.0))
    assert out["batched"] is False


def test_fixed_inputs_and_a_named_range(cli):
    out = cli.json("plot", "out = (w * x ** 2).sum()", "w=[1., 2.]", "--range", "x=-1:1", "--points", "5")
    x, d1 = arrays(out, "x", "derivative")
    np.testing.assert_allclose(d1, 6 * x)
    batched = cli.json("plot", "out = w * x ** 2", "w=3.0", "--range", "x=-1:1", "--points", "5")
    np.testing.assert_allclose(arrays(batched, "derivative")[0], 6 * x)
    assert batched["batched"] is True


def test_a_batch_that_reads_its_shape_is_not_trusted():
    """`x.numel()` is 1 per point but n in a batch: the spot checks must reject the batch."""
    result = sweep("out = x * x.numel()", {}, [parse_range("-1:1")], points=7)
    assert result.batched is False
    np.testing.assert_allclose(result.value, result.grid[0])


def test_abs_kink_and_nan_born_in_the_forward_pass():
    result = sweep("out = abs(x).sum() + sqrt(x + 1).sum()", {"x": "[0.]"}, [parse_range("-2:1")], points=4)
    reasons = {float(result.grid[0][u.index]): u.reason for u in result.undefined}
    assert reasons == {-2.0: "the output is nan here, first produced by SqrtBackward0",
                       -1.0: "SqrtBackward0 is at a kink: ∂√x/∂x = 1/(2√x)",
                       0.0: "AbsBackward0 is at a kink: ∂|x|/∂x = sign(x) (0 at 0)"}


def test_two_inputs_gradient_field(cli):
    out = cli.json("plot", "out = sin(x) * y", "--range", "x=-1:1", "--range", "y=0:2", "--points", "25")
    x, y, value = arrays(out, "x", "y", "value")
    assert len(x) == 25 and out["inputs"] == {"x": "x", "y": "y"}
    np.testing.assert_allclose(value, np.sin(x) * y)
    np.testing.assert_allclose(out["derivative"]["x"], y * np.cos(x))
    np.testing.assert_allclose(out["derivative"]["y"], np.sin(x))
    shown = cli("plot", "out = sin(x) * y", "--range", "x=-1:1", "--range", "y=0:2", "--points", "25")
    assert shown.exit_code == 0
    assert "out: ' .:-=+*#%@' from -1.68294 to 1.68294" in shown.stdout
    assert "↑" in shown.stdout and "out and its gradient at five points" in shown.stdout
    checked = cli.json("plot", "out = sin(x) * y", "--range", "x=-1:1", "--range", "y=0:2", "--points", "9", "--check")
    assert checked["formulas"] == {"x": "∂out/∂x = y*cos(x)", "y": "∂out/∂y = sin(x)"}


def test_golden_terminal_plot():
    result = sweep("out = relu(x) - x * x / 4", {}, [parse_range("-2:2")], points=81)
    assert line_plot(result, 64, 16, colour=False) + "\n" == (GOLDEN / "plot_relu.txt").read_text()


def test_colour_only_when_asked():
    result = sweep("out = x * x", {}, [parse_range("-1:1")], points=21)
    assert "\x1b[" in line_plot(result, 40, 10, colour=True)
    assert "\x1b[" not in line_plot(result, 40, 10, colour=False)


def test_a_pole_does_not_flatten_the_curves():
    result = sweep("out = 1/x", {}, [parse_range("-1:1")], points=200)
    text = line_plot(result, 60, 14, colour=False)
    assert "(y cut to " in text.splitlines()[-1]
    assert [u.reason for u in result.undefined] == ["the output is inf here, first produced by MulBackward0"]


@pytest.mark.parametrize("program, arrows", [("out = 2 * y + 0 * x", {"↑"}), ("out = -x + 0 * y", {"←"}),
                                             ("out = x + y", {"↗"}), ("out = x - y", {"↘"})])
def test_heat_map_arrows_point_along_the_gradient(program, arrows):
    result = sweep(program, {}, [parse_range("x=-1:1"), parse_range("y=-1:1")], points=100)
    rows = [line.split("│", 1)[1] for line in heat_map(result, 80).plain.splitlines() if "│" in line]
    assert len(rows) == 11
    drawn = {ch for row in rows for ch in row if ch in "→↗↑↖←↙↓↘·"}
    assert drawn == arrows


def test_cli_plot_fills_the_console_width_and_lists_undefined_points(cli):
    result = cli("plot", "out = relu(x)", "--range", "-1:1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) == 100 and "\x1b[" not in result.stdout
    assert "undefined derivative at 1 point (gradcli shows PyTorch's value there):" in result.stdout
    assert f"  x=0: {RELU_RULE}" in result.stdout


def test_check_puts_sympy_formula_in_the_legend(cli):
    result = cli("plot", "out = sin(x) * x", "--range", "-3:3", "--check")
    assert result.exit_code == 0 and "∂out/∂x = x*cos(x) + sin(x)" in result.stdout
    payload = cli.json("plot", "out = relu(x)", "--range", "-1:1", "--check")
    assert payload["formulas"] == {"x": "∂out/∂x = Heaviside(x)"} and payload["check"]["status"] == "pass"


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_out_writes_a_file(cli, tmp_path, monkeypatch, suffix, magic):
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    result = cli("plot", "out = relu(x)", "--range", "-1:1", "--out", f"plot{suffix}", "--points", "50")
    assert result.exit_code == 0 and (tmp_path / f"plot{suffix}").read_bytes().startswith(magic)
    assert result.output == f"wrote plot{suffix}\n"
    assert cli("plot", "out = x * y", "--range", "x=-1:1", "--range", "y=-1:1", "--out", f"field{suffix}").exit_code == 0
    assert (tmp_path / f"field{suffix}").read_bytes().startswith(magic)


@pytest.fixture
def fake_matplotlib(monkeypatch):
    """A stand-in for matplotlib whose figures write the file name they are saved to, so what
    `--out` prints is tested where matplotlib (an optional extra) is not installed."""
    import importlib.machinery
    import types
    from unittest import mock

    def saved(name, **_):
        Path(name).write_text("figure")

    package = types.ModuleType("matplotlib")
    package.__spec__ = importlib.machinery.ModuleSpec("matplotlib", None)
    figures = types.ModuleType("matplotlib.figure")
    figures.Figure = lambda **_: mock.MagicMock(savefig=mock.MagicMock(side_effect=saved))
    monkeypatch.setitem(sys.modules, "matplotlib", package)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", figures)


@pytest.mark.parametrize("ranges", [["-1:1"], ["x=-1:1", "--range", "y=-1:1"]])
def test_out_alone_writes_the_file_and_says_so_in_one_line(cli, tmp_path, monkeypatch, fake_matplotlib, ranges):
    monkeypatch.chdir(tmp_path)
    result = cli("plot", "out = relu(x) * 2" if len(ranges) == 1 else "out = x * y", "--range", *ranges,
                 "--out", "plot.png", "--points", "25")
    assert result.exit_code == 0
    assert result.output == "wrote plot.png\n"
    assert (tmp_path / "plot.png").read_text() == "figure"


def test_out_with_show_also_draws_the_terminal_plot(cli, tmp_path, monkeypatch, fake_matplotlib):
    monkeypatch.chdir(tmp_path)
    shown = cli("plot", "out = relu(x)", "--range", "-1:1", "--out", "plot.png", "--show", "--points", "25")
    alone = cli("plot", "out = relu(x)", "--range", "-1:1", "--points", "25")
    assert shown.exit_code == 0 and shown.stdout == alone.stdout
    assert "undefined derivative at 1 point" in shown.stdout
    assert shown.stderr == "wrote plot.png\n"


def test_out_with_json_keeps_stdout_json(cli, tmp_path, monkeypatch, fake_matplotlib):
    monkeypatch.chdir(tmp_path)
    result = cli("plot", "out = x * x", "--range", "-1:1", "--points", "5", "--out", "plot.svg", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["value"] == [1.0, 0.25, 0.0, 0.25, 1.0]
    assert result.stderr == "wrote plot.svg\n"


def test_out_without_matplotlib_says_how_to_install_it(cli, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = cli("plot", "out = x", "--range", "0:1", "--out", str(tmp_path / "p.png"))
    assert result.exit_code == 2
    assert "--out needs matplotlib, which is not installed" in result.stderr
    assert 'pip install "gradcli[plot]"' in result.stderr


@pytest.mark.parametrize("args, message", [
    (["out = sin(x)", "--range", "3"], "--range 3: '3' is not a:b"),
    (["out = sin(x)", "--range", "x=a:b"], "--range x=a:b: 'a:b' is not a:b"),
    (["out = sin(x)", "--range", "3:1"], "--range 3:1: the start 3 is not below the end 1"),
    (["out = x.sum()", "x=ones(3)", "--range", "0:1"], "input 'x' has shape (3,), but --range sweeps one number"),
    (["out = x * ones(3)", "--range", "0:1"], "the output 'out' has shape (3,), but a plot draws one number per point"),
    (["out = sin(x)", "--range", "z=0:1"], "--range z=...: the program has no input named 'z'"),
    (["out = x * y", "--range", "0:1"], "--range: which input does it sweep?"),
    (["out = sin(x)", "--range", "0:1", "--points", "100000"], "--points 100000: a plot takes 2 to 10,000 points"),
    (["out = sin(x)", "--range", "0:1", "--order", "3"], "--order 3: use 1 (the derivative) or 2"),
    (["out = x * y", "--range", "x=0:1", "--range", "y=0:1", "--order", "2"],
     "--order 2 draws the second derivative of one input"),
    (["out = sin(x)", "--range", "0:1", "--out", "plot.txt"], "--out plot.txt: gradcli writes plots as .png, .svg, .pdf"),
    (["out = sin(x)", "--range", "0:1", "--check", "numeric"], "--check numeric: a plot's --check shows SymPy's formula"),
])
def test_user_errors_exit_2(cli, args, message):
    result = cli("plot", *args)
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_eval_never_imports_plotext_or_matplotlib():
    code = ("import sys; from gradcli.cli import main; sys.argv = ['gradcli', 'eval', 'z = (x+2)**2+3', 'x=[2]'];\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint(json.dumps([m in sys.modules for m in "
            "('plotext', 'matplotlib', 'sympy')]))")
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, False, False]


def test_a_named_input_the_program_reassigns():
    result = sweep("x = x * 2\nout = sin(x)", {}, [parse_range("x=0:1")], points=5)
    xs = result.grid[0]
    np.testing.assert_allclose(result.derivative["x"], 2 * np.cos(2 * xs))


def test_the_builtin_range_is_no_input(cli):
    out = cli.json("plot", "y = x\nfor i in range(2):\n    y = y * x", "--range", "-1:1", "--points", "3")
    assert out["inputs"] == {"x": "x"}
    np.testing.assert_allclose(arrays(out, "derivative")[0], [3.0, 0.0, 3.0])  # d(x³)/dx = 3x²


def test_a_point_by_point_sweep_reports_progress_and_a_batched_one_needs_none():
    from gradcli.check.sweep import Axis
    heard: list[tuple[int, int]] = []
    looped = sweep("y = x\nwhile y.abs() < 100:\n    y = y * 2", {}, [Axis("x", 1.0, 2.0)], points=5,
                   progress=lambda done, total: heard.append((done, total)))
    assert looped.batched is False and heard == [(1, 5), (2, 5), (3, 5), (4, 5)]
    heard.clear()
    assert sweep("y = x * x", {}, [Axis("x", 1.0, 2.0)], points=5, progress=lambda *a: heard.append(a)).batched
    assert heard == []


def test_progress_shows_on_a_terminal_only_and_is_cleared():
    import io

    from rich.console import Console

    from gradcli.views.progress import progress_reporter
    for terminal, shown in ((True, True), (False, False)):
        screen = io.StringIO()
        with progress_reporter(Console(file=screen, force_terminal=terminal, width=80, no_color=False), after=0,
                               what="sampling") as progress:
            progress(3, 10)
        assert ("sampling" in screen.getvalue()) is shown
    quick = io.StringIO()
    with progress_reporter(Console(file=quick, force_terminal=True), after=60) as progress:
        progress(3, 10)
    assert quick.getvalue() == ""  # work that ends before `after` shows no bar at all


def test_plot_json_has_no_progress():
    from gradcli.commands.plot import _progress
    with _progress(as_json=True) as progress:
        assert progress is None


def test_a_spinner_shows_only_for_work_over_its_delay_on_a_terminal():
    import io
    import time

    from rich.console import Console

    from gradcli.views.progress import busy
    slow = io.StringIO()
    with busy(Console(file=slow, force_terminal=True, width=80, no_color=False), "running the program", after=0.05):
        time.sleep(0.5)
    assert "running the program" in slow.getvalue()
    for terminal, delay in ((True, 30.0), (False, 0.0)):
        quiet = io.StringIO()
        with busy(Console(file=quiet, force_terminal=terminal, width=80), "running the program", after=delay):
            time.sleep(0.2)
        assert quiet.getvalue() == ""
