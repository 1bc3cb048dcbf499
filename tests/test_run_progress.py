"""`gradcli run`'s progress line on a terminal: which file runs, how far the run is, and a check's bar;
drawn under the program's prints without cutting through them, gone when the run ends, and never in
a pipe, in JSON or under NO_COLOR. Terminals are rich consoles forced to be one, replayed by
tests/terminal_screen.py to what a reader sees."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from gradcli.views.progress import RunProgress
from terminal_screen import screen


def terminal(file: io.StringIO | None = None, **options) -> Console:
    """A colour terminal 80 columns wide, whatever TERM or NO_COLOR the test run has."""
    return Console(file=file or io.StringIO(), force_terminal=True, width=80, _environ={}, **options)


def plain(renderable) -> str:
    """The rows as text, each spinner's frame (which rich times from its first drawing) shown as `*`."""
    out = Console(file=io.StringIO(), width=80, color_system=None, _environ={})
    out.print(renderable)
    rows = out.file.getvalue().splitlines(keepends=True)
    assert all(row[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" for row in rows)
    return "".join(f"*{row[1:]}" for row in rows)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_names_the_file_the_files_and_a_long_checks_bar_golden():
    clock, console = Clock(), terminal()
    progress = RunProgress(console, console, files=3, after=1.0, clock=clock)
    progress.due = True  # as the timer would, a second into the run
    with progress.running("samples/two_layer_net.grad", 2):
        clock.now += 3.2
        with progress.checking() as update:
            update(1, 8)  # a check under a second old shows no bar
            assert plain(progress.bar.get_renderable()) == (
                "* file 2 of 3 · samples/two_layer_net.grad ━━━━━━━━━━━━━━━━━━━━ 0:00:03\n")
            clock.now += 1.5
            update(3, 8)
            assert plain(progress.bar.get_renderable()) == (
                "* file 2 of 3 · samples/two_layer_net.grad ━━━━━━━━━━━━━━━━━━━━ 0:00:04\n"
                "* checking                                 ━━━━━━━╸             0:00:00\n")
        assert plain(progress.bar.get_renderable()).count("\n") == 1  # the check's bar goes with the check
    progress.close()


def test_a_path_too_long_for_the_line_keeps_its_end_golden():
    clock, console = Clock(), terminal()
    progress = RunProgress(console, console, files=12, after=0, clock=clock)
    with progress.running("courses/deep-learning/week-03/exercises/backprop_by_hand.py", 7):
        assert plain(progress.bar.get_renderable()) == (
            "* file 7 of 12 · …/exercises/backprop_by_hand.py ━━━━━━━━━━━━━━━━━━━━ 0:00:00\n")
    progress.close()


def test_a_single_file_is_named_without_a_count():
    clock, console = Clock(), terminal()
    progress = RunProgress(console, console, files=1, after=0, clock=clock)
    with progress.running("prog.py", 1):
        assert plain(progress.bar.get_renderable()) == "* prog.py ━━━━━━━━━━━━━━━━━━━━ 0:00:00\n"
    progress.close()


def test_prints_stay_whole_and_the_line_leaves_nothing_behind():
    stream = io.StringIO()
    console = terminal(stream)
    progress = RunProgress(console, console, files=2, after=0)
    with progress.running("a.py", 1):
        for text in ("start\n", "step 0 ", "done\n", "loss 0.25\nloss 0.125\n", ".", ".", "end\n"):
            with progress.printing(leaves_line_open=not text.endswith("\n")):
                console.print(text, end="", soft_wrap=True, markup=False, highlight=False)
    with progress.running("b.py", 2):
        console.print("from b", markup=False, highlight=False)
    progress.close()
    drawn = stream.getvalue()
    assert "file 1 of 2 · a.py" in drawn and "file 2 of 2 · b.py" in drawn  # it was there while they ran
    assert screen(drawn) == ["start", "step 0 done", "loss 0.25", "loss 0.125", "..end", "from b"]


@pytest.mark.parametrize("out, err, host", [
    (dict(force_terminal=True), dict(force_terminal=True), "out"),  # one screen: drawn where the prints go
    (dict(force_terminal=False), dict(force_terminal=True), "err"),  # stdout piped: on the terminal's stderr
])
def test_the_line_is_drawn_beside_the_prints_or_on_stderr_when_stdout_is_a_pipe(out, err, host):
    consoles = {"out": Console(file=io.StringIO(), width=80, _environ={}, **out),
                "err": Console(file=io.StringIO(), width=80, _environ={}, **err)}
    progress = RunProgress(consoles["out"], consoles["err"], files=1, after=0)
    with progress.running("a.py", 1):
        with progress.printing(leaves_line_open=True):
            consoles["out"].print("half a line", end="")
        assert progress.shown == (host == "err")  # hidden under an open line only where it shares it
    progress.close()
    assert "a.py" in consoles[host].file.getvalue()
    assert "a.py" not in consoles["err" if host == "out" else "out"].file.getvalue()


@pytest.mark.parametrize("out, err", [
    (dict(force_terminal=False), dict(force_terminal=False)),  # both piped
    (dict(force_terminal=True, no_color=True), dict(force_terminal=True, no_color=True)),  # NO_COLOR
])
def test_never_in_a_pipe_or_under_no_color(out, err):
    consoles = [Console(file=io.StringIO(), width=80, _environ={}, **options) for options in (out, err)]
    progress = RunProgress(*consoles, files=1, after=0)
    with progress.running("a.py", 1), progress.checking() as update:
        update(1, 2)
    progress.close()
    assert progress.bar is None and all(c.file.getvalue() == "" for c in consoles)


SCRIPT = "import torch\nprint('start')\nfor i in range(3):\n    print('step', i, end=' ')\n    print('done')\n"


@pytest.fixture
def on_a_terminal(monkeypatch):
    """`gradcli run` with stdout and stderr one 80-column terminal, and the line shown from the start."""
    import gradcli.commands.run as run
    stream = io.StringIO()
    monkeypatch.setattr(run, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(run, "console", lambda stderr=False: terminal(stream))
    return stream


def test_gradcli_run_on_a_terminal_reads_as_in_a_pipe(cli, tmp_path, on_a_terminal):
    (tmp_path / "a.py").write_text(SCRIPT)
    (tmp_path / "b.py").write_text("print('from b')\n")
    result = cli("run", str(tmp_path / "a.py"), str(tmp_path / "b.py"))
    assert result.exit_code == 0
    drawn = on_a_terminal.getvalue()
    assert "file 1 of 2 · …" in drawn and "file 2 of 2 · …" in drawn  # long paths keep their file's name
    assert "_on_a_terminal0/a.py" in drawn
    shown = screen(drawn)
    first = shown.index("start")
    assert shown[first:first + 4] == ["start", "step 0 done", "step 1 done", "step 2 done"]
    heading = shown[shown.index("from b") - 2:shown.index("from b")]  # the path, on the rule's line or above it
    assert heading[-1].endswith("─") and "b.py" in "".join(heading)
    assert not any("file 1 of 2" in line or "file 2 of 2" in line for line in shown)


def test_gradcli_run_json_on_a_terminal_has_no_progress(cli, tmp_path, on_a_terminal):
    (tmp_path / "a.py").write_text(SCRIPT)
    result = cli("run", "--json", str(tmp_path / "a.py"))
    assert on_a_terminal.getvalue() == ""
    assert [json.loads(line).get("status") for line in result.stdout.splitlines()] == ["ok", None]
