"""Runaway programs stop with a clear error (exit 2) that names the loop and the option raising the limit.

No assertion here depends on how fast the machine is: limits are reached by steps, by a time limit
far below what the program needs, or not at all; `tests/bench/bench_limits.py` measures how long
the defaults take.
"""
from __future__ import annotations

import time

import pytest

import gradcli
from gradcli.errors import LimitError
from gradcli.program.evaluation import Settings
from gradcli.program.scripts import run_file
from language_helpers import fails, run, same_as_cpython

pytest_plugins = ["pytester"]

# Seed 000's loop: with x = 0 the norm never reaches 1000.
RUNAWAY = "y = x * 2\nwhile y.data.norm() < 1000:\n    y = y * 2"


def test_seed000_runaway_loop_stops_with_defaults_on_the_command_line(cli):
    result = cli("eval", RUNAWAY, "x=zeros(3)", "--max-steps", "10000")
    assert result.exit_code == 2
    text = " ".join(result.stderr.split())
    assert "in the while loop at line 2" in text
    assert "--max-steps" in text or "--timeout" in text
    assert "   | while y.data.norm() < 1000:" in result.stderr


def test_seed000_runaway_loop_stops_at_the_step_cap_through_evaluate():
    with pytest.raises(LimitError) as caught:
        gradcli.evaluate(RUNAWAY, {"x": "zeros(3)"}, max_steps=10_000)
    assert caught.value.line == 2 and "in the while loop at line 2" in caught.value.message


def test_the_time_limit_names_the_loop_and_the_option(cli):
    result = cli("eval", RUNAWAY, "x=zeros(3)", "--max-steps", "100000000", "--timeout", "0.5", "--json")
    assert result.exit_code == 2
    error = __import__("json").loads(result.stderr)["error"]
    assert error["message"] == "the program ran for more than 0.5 seconds, in the while loop at line 2"
    assert error["hint"] == "check the loop's condition, or raise the limit with --timeout SECONDS"
    assert (error["line"], error["column"]) == (2, 1)


def test_the_time_limit_bounds_a_long_run_of_ops_without_loops():
    program = "y = x\n" + "y = y * 1.0001\n" * 3000
    with pytest.raises(LimitError) as caught:
        gradcli.evaluate(program, {"x": "[1.0]"}, timeout=1e-6)
    assert caught.value.message == "the program ran for more than 1e-06 seconds"
    assert caught.value.hint == "raise the limit with --timeout SECONDS"


def test_a_limit_names_the_innermost_loop_running():
    program = "y = x\nfor i in range(3):\n    while True:\n        y = y + 1\n    y = y * 2"
    with pytest.raises(LimitError) as caught:
        gradcli.evaluate(program, {"x": "[1.0]"}, max_steps=10_000)
    assert "in the while loop at line 3" in caught.value.message and caught.value.line == 3


def test_steps_count_across_loops_so_splitting_a_loop_does_not_outrun_the_limit():
    program = "y = x\nfor i in range(6000):\n    y = y + 1\nfor j in range(6000):\n    y = y + 1"
    with pytest.raises(LimitError) as caught:
        gradcli.evaluate(program, {"x": "[1.0]"}, max_steps=10_000)
    assert caught.value.message == "the program ran more than 10,000 loop iterations, in the for loop at line 4"
    assert gradcli.evaluate(program, {"x": "[1.0]"}, max_steps=12_000).grads["x"].tolist() == [1.0]


def test_the_default_step_limit_admits_a_2000_iteration_training_loop_with_room_to_spare():
    """The loop's cost against the time limit is measured by tests/bench/bench_limits.py."""
    program = "w = x\nfor step in range(2000):\n    for inner in range(4):\n        k = inner\nout = w.sum()"
    assert gradcli.evaluate(program, {"x": "[1.0]"}, timeout=None).grads["x"].tolist() == [1.0]


def test_time_spent_showing_output_counts_in_the_files_budget(tmp_path):
    """--timeout bounds the whole file: a print that takes long to show is not outside it (issue 35)."""
    path = tmp_path / "prints.grad"
    path.write_text("x = tensor([1.0])\nprint(x)\nprint(x)\nprint(x)\n", encoding="utf-8")
    result = run_file(path, settings=Settings(timeout=1.0), on_event=lambda event: time.sleep(0.5))
    assert result.status == "error"
    assert result.error.message == "the program ran for more than 1 second"  # one deadline: the prints' time in it
    assert run_file(path, settings=Settings(timeout=5.0), on_event=lambda event: time.sleep(0.5)).status == "ok"


def test_a_script_error_names_the_file_and_the_loop(cli, tmp_path):
    path = tmp_path / "runaway.grad"
    path.write_text("x = torch.zeros(3, requires_grad=True)\n" + RUNAWAY + "\n", encoding="utf-8")
    result = cli("run", str(path), "--timeout", "0.5", "--max-steps", "100000000")
    assert result.exit_code == 2
    assert f"--> {path}:3:1" in result.stderr
    assert "the program ran for more than 0.5 seconds, in the while loop at line 3" in " ".join(result.stderr.split())


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_the_timeout_must_be_a_positive_number(cli, value):
    result = cli("eval", "out = x.sum()", "x=[1.0]", "--timeout", value)
    assert result.exit_code == 2


def test_the_pytest_plugin_takes_a_timeout_option_and_ini_value(pytester: pytest.Pytester):
    pytester.makefile(".grad", slow="x = tensor([1.0])\nfor i in range(5000):\n    x = x + 1\n")
    quiet = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    pytester.runpytest(*quiet).assert_outcomes(passed=1)
    failed = pytester.runpytest(*quiet, "--gradcli-timeout", "1e-6")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*the program ran for more than 1e-06 seconds*",
                                 "under pytest: --gradcli-timeout SECONDS, or gradcli_timeout = SECONDS in the ini file"])
    pytester.makeini("[pytest]\ngradcli_timeout = 1e-6\n")
    pytester.runpytest(*quiet).assert_outcomes(failed=1)
    pytester.runpytest(*quiet, "--gradcli-timeout", "60").assert_outcomes(passed=1)


@pytest.mark.parametrize("line", ["    n = n * n", "    n *= n", "    n = n + n * n"])
def test_an_integer_squared_in_a_loop_stops_at_the_size_limit(cli, tmp_path, line):
    """Python would build the number exactly until multiplying it outlasts any time limit."""
    path = tmp_path / "ints.grad"
    path.write_text("n = 2\nfor i in range(40):\n" + line + "\nprint(n)\n", encoding="utf-8")
    result = cli("run", str(path), "--json")
    assert result.exit_code == 2
    error = __import__("json").loads(result.stdout.splitlines()[0])["error"]
    assert error["message"] == "an integer result past 4096 bits (about 1233 digits)" and error["line"] == 3
    small = gradcli.evaluate("f = 1\nfor i in range(1, 101):\n    f = f * i\ny = x * (f % 1000003)", {"x": "[1.0]"})
    assert small.output.tolist() == [float(__import__("math").factorial(100) % 1000003)]


# -- every item a comprehension or a facade visits is a step, kept or filtered out (issue 35) ---------

STEPPED = {
    "a filtered-out list comprehension": "a = [0 for i in range(10**5) for j in range(10**5) if False]",
    "a set comprehension": "a = {i for i in range(10**9) if i < 0}",
    "a dict comprehension": "a = {i: 1 for i in range(10**9) if False}",
    "a generator expression": "a = sum(1 for i in range(10**9) if False)",
    "filter in a facade": "a = next(filter(lambda v: v < 0, range(10**18)))",
    "filter(None, ...)": "a = list(filter(None, [0] * 10**6))",
    "islice skipping 10**17": "import itertools\na = list(itertools.islice(range(10**18), 10**17, 10**17 + 1))",
    "islice of count()": "import itertools\na = next(itertools.islice(itertools.count(), 10**17, None))",
    "dropwhile": "import itertools\na = next(itertools.dropwhile(lambda v: True, range(10**18)))",
    "filterfalse": "import itertools\na = next(itertools.filterfalse(lambda v: True, range(10**18)))",
    "compress": "import itertools\na = next(itertools.compress(range(10**18), itertools.repeat(0)))",
    "groupby's skipped group": "import itertools\na = [k for k, g in itertools.groupby(itertools.repeat(1))]",
}


@pytest.mark.parametrize("source", STEPPED.values(), ids=list(STEPPED))
def test_items_a_program_never_keeps_still_count_as_steps(source):
    with pytest.raises(LimitError) as caught:
        gradcli.evaluate(source + "\nout = x.sum()", {"x": "[1.0]"}, max_steps=1000)
    assert caught.value.message == "the program ran more than 1,000 loop iterations"
    assert caught.value.hint == "raise the limit with --max-steps N"


def test_a_comprehension_pays_one_step_per_item_visited_at_every_level():
    source = "a = [0 for i in range(30) for j in range(30) if False]\nout = x.sum()"
    assert gradcli.evaluate(source, {"x": "[1.0]"}, max_steps=30 + 30 * 30).grads["x"].tolist() == [1.0]
    with pytest.raises(LimitError):
        gradcli.evaluate(source, {"x": "[1.0]"}, max_steps=30 + 30 * 30 - 1)


def test_sifting_facades_keep_cpythons_values_and_count_each_item_read_once():
    same_as_cpython("import itertools\n"
                    "print(list(itertools.islice(range(10), 2, 8, 2)), list(filter(None, [0, 1, 2, 0])))\n"
                    "print(list(itertools.dropwhile(lambda v: v < 3, range(6))), list(itertools.filterfalse(None, [0, 1])))\n"
                    "print(list(itertools.compress('abcd', [1, 0, 1, 0])))\n"
                    "print([(k, len(list(g))) for k, g in itertools.groupby('aabccc')])")
    source = "import itertools\nb = list(itertools.islice(range(100), 90, None))"  # 100 items read, none twice
    assert run(source, max_steps=100)["b"] == list(range(90, 100))
    fails(source, LimitError, max_steps=99)


def test_a_program_started_past_the_commands_deadline_stops_at_once():
    """Each program a command runs (a plot's points) reads the command's one deadline, not a clock of its own."""
    from gradcli.engine import budget
    with budget.limited(1e-9, None), pytest.raises(LimitError) as caught:
        time.sleep(0.01)
        gradcli.evaluate("out = x * x", {"x": "[1.0]"})
    assert caught.value.message == "the program ran for more than 1e-09 seconds"
