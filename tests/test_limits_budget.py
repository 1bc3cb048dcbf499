"""One budget per command (issue 35): long ops are estimated before they run, --timeout bounds the whole command,
--max-memory caps what it holds, and the `gradcli` process ends from outside what nothing inside can interrupt.

Limits are reached by estimates far past the time given, or by memory far past a small cap, so no assertion
depends on how fast the machine is."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gradcli.commands.common import memory_size
from gradcli.engine import budget, costs
from gradcli.engine.functions import matmul
from gradcli.engine.tensor import _wrap
from gradcli.errors import ArgumentError, LimitError

ROOT = Path(__file__).resolve().parents[1]


def error_of(result) -> dict:
    assert result.exit_code == 2, result.stdout + result.stderr
    return json.loads(result.stderr or result.stdout.splitlines()[0])["error"]


def test_an_einsum_that_cannot_finish_is_refused_with_its_estimate(cli):
    result = cli("eval", "out = torch.einsum('i,j,k->', x, x, x)", "x=ones(100000)", "--timeout", "5", "--json")
    error = error_of(result)
    assert error["message"].startswith("einsum would take about 100 s here, more than the ")
    assert error["message"].endswith(" left of the time limit")
    assert error["hint"] == "use smaller tensors, or raise the limit with --timeout SECONDS"


def test_einsum_estimates_are_numpys_own_counts():
    a = np.broadcast_to(np.empty(()), (100000,))
    assert costs.einsum(a, a, a, equation="i,j,k->") == pytest.approx(2e10 / budget.STEPS)
    m = np.broadcast_to(np.empty(()), (30, 40))
    assert costs.einsum(m, m.T, equation="ij,jk->ik") == pytest.approx(2 * 30 * 40 * 30 / budget.STEPS)


def test_a_matmul_is_refused_before_it_runs_when_it_cannot_finish():
    a = _wrap(np.broadcast_to(np.float64(1.0), (7000, 7000)))  # a view of one number: nothing to allocate or fill
    with budget.limited(10.0, None), pytest.raises(LimitError) as caught:
        matmul(a, a)
    assert caught.value.message.startswith("matmul would take about 17.1 s here, more than the ")
    assert caught.value.message.endswith(" s left of the time limit")


@pytest.mark.parametrize("program, what", [
    ("out = torch.linalg.inv(a.expand(4000, 4000)).sum()", "inverse"),
    ("out = torch.linalg.det(a.expand(4000, 4000))", "det"),
    ("out = a.expand(8000, 4000).sort()[0].sum()", "sorting"), ("out = a.expand(8000, 4000).median()", "median"),
])
def test_factorizations_and_sorts_are_estimated_too(cli, program, what):
    """The big operand is a view of one row, so the program reaches the operation at once however busy the
    machine is, and the estimate (3 s or more) is what stops it."""
    error = error_of(cli("eval", program, "a=ones(1,4000)", "--timeout", "2", "--json"))
    assert error["message"].startswith(f"{what} would take about ")


def test_matrix_power_to_a_huge_exponent_stops_at_the_deadline(cli):
    """Each squaring is estimated before it runs, so the command stops at whichever one the deadline cannot
    hold (how many ran depends on the machine's speed; that it stops cleanly does not)."""
    error = error_of(cli("eval", "out = torch.linalg.matrix_power(a, 2**62).sum()", "a=eye(1500)*0.5", "--timeout",
                         "1", "--json"))
    assert error["kind"] == "limit" and "--timeout SECONDS" in error["hint"] and error["line"] == 1


def test_a_convolution_is_estimated_from_its_output_positions():
    x, w = np.empty((8, 16, 64, 64)), np.empty((32, 16, 3, 3))
    seconds = costs.convolution(x, w, None, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    assert seconds == pytest.approx(8 * 32 * 64 * 64 * 16 * 9 / budget.FLOPS)


def test_printing_counts_in_the_commands_time(cli):
    """A million-element tensor printed in full takes the command past a deadline the program alone keeps."""
    result = cli("eval", "y = x * 2", "x=ones(3000000)", "--full", "--timeout", "2")
    assert result.exit_code == 2
    assert "took more than 2 seconds (the program, printing, drawing and checking together)" in \
        " ".join(result.stderr.split())


def test_a_large_allocation_is_refused_before_it_is_made(cli):
    error = error_of(cli("eval", "y = x.repeat(10000000); out = y.sum()", "x=[1.0, 2.0, 3.0, 4.0]",
                         "--max-memory", "50M", "--json"))
    assert error["message"].startswith("the result of repeat needs 305 MiB more, but only ")
    assert error["message"].endswith(" of the memory limit (50 MiB) is left")
    assert "--max-memory SIZE" in error["hint"]


def test_memory_held_in_strings_and_lists_meets_the_cap(cli, tmp_path):
    path = tmp_path / "strings.grad"
    # The timer reads memory every 0.1 s: the loop keeps allocating for up to 2 s (at most 1.8 GB), so the cap is met
    # on any machine, however fast, and whatever memory the process freed before (and may reuse) in other tests.
    path.write_text("import time\nxs = []\nstart = time.time()\nwhile len(xs) < 2000 and time.time() - start < 2:\n"
                    "    xs.append('x' * 900000 + str(len(xs)))\n", encoding="utf-8")
    result = cli("run", str(path), "--max-memory", "20M", "--json")
    error = json.loads(result.stdout.splitlines()[0])["error"]
    assert result.exit_code == 2
    assert error["message"].startswith("the program with its values holds ")
    assert error["message"].endswith(", over the memory limit of 20 MiB") and error["line"] in (4, 5)


@pytest.mark.parametrize("text, size", [("1.5G", 1536 * 2 ** 20), ("800M", 800 * 2 ** 20), ("4GiB", 4 * 2 ** 30),
                                        ("2097152", 2 ** 21), ("64mb", 64 * 2 ** 20)])
def test_memory_sizes_read_as_users_write_them(text, size):
    assert memory_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", "100K", "nanG", "infM", "1Q"])
def test_a_memory_size_that_is_no_size_is_a_usage_error(text, cli):
    with pytest.raises(ArgumentError):
        memory_size(text)
    result = cli("eval", "out = x.sum()", "x=[1.0]", "--max-memory", text)
    assert result.exit_code == 2 and "--max-memory" in result.stderr


def test_plot_takes_a_timeout(cli):
    error = error_of(cli("plot", "out = x * x", "--range", "-1:1", "--timeout", "1e-9", "--json"))
    assert "1e-09" in error["message"]
    assert cli("plot", "out = x * x", "--range", "-1:1", "--timeout", "0").exit_code == 2


def test_the_budget_is_put_back_after_a_command():
    with budget.limited(1000.0, 2 ** 30):
        assert budget.remaining() > 999
        with budget.limited(None, None):
            assert budget.remaining() == float("inf")
        assert budget.remaining() > 999
    assert budget.COMMAND.deadline == float("inf") and budget.COMMAND.max_memory is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the watchdog process needs fork")
def test_work_that_never_returns_to_python_is_ended_from_outside(tmp_path):
    """NumPy's argsort replaced by a C loop that never checks for signals: only the watching process can end it."""
    script = tmp_path / "sort.grad"
    script.write_text("import torch\nprint(torch.tensor([3.0, 1.0]).sort())\n", encoding="utf-8")
    driver = textwrap.dedent(f"""
        import sys, numpy
        numpy.argsort = lambda *a, **k: sum(range(10 ** 12))
        import time
        from gradcli.engine import budget
        budget.launched_at = time.monotonic  # the seconds are the program's: start-up has its own test
        from gradcli.cli import main
        sys.argv = ["gradcli", "run", "--timeout", "3", {str(script)!r}]
        main()
    """)
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    # 3 s, not less: the program must reach the sort before its deadline even on a loaded machine
    assert "error[limit]: the run took more than 3 seconds, in work that could not be interrupted" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_element_cap_counts_bytes_so_a_float32_tensor_may_have_twice_as_many(cli):
    program, inputs = "y = x.expand(3, 400); out = y.sum()", "x=ones(1, 400)"
    assert cli("eval", program, inputs, "--max-elements", "1000", "--dtype", "float32").exit_code == 0
    error = error_of(cli("eval", program, inputs, "--max-elements", "1000", "--json"))
    assert error["message"] == "the result of expand would have 1,200 elements (shape (3, 400)), over the limit of 1,000"
    error = error_of(cli("eval", program.replace("3, 400", "6, 400"), inputs, "--max-elements", "1000", "--dtype",
                         "float32", "--json"))
    assert error["message"] == ("the result of expand would have 2,400 elements (shape (6, 400)), over the limit of "
                                "2,000 float32 elements (--max-elements counts 8-byte ones)")


def test_per_example_gradients_stack_to_the_float32_cap_and_the_memory_cap_still_holds(cli):
    """The per-sample-gradients tutorial's case in small: a stacked gradient over the cap in float64 elements,
    within it in float32's; and a float32 tensor the element cap allows is still held to --max-memory."""
    program = ("g = torch.func.vmap(torch.func.grad(lambda w, x: (x @ w).tanh().sum()), in_dims=(None, 0))(w, xs); "
               "out = g.sum()")
    result = cli("eval", program, "w=ones(10, 10)", "xs=ones(15, 10)", "--max-elements", "1000", "--dtype", "float32")
    assert result.exit_code == 0
    error = error_of(cli("eval", program, "w=ones(10, 10)", "xs=ones(15, 10)", "--max-elements", "1000", "--json"))
    assert error["message"].startswith("the result of expand would have 1,500 elements (shape (15, 10, 10))")
    error = error_of(cli("eval", "y = x.repeat(20000000); out = y.sum()", "x=[1.0, 2.0, 3.0, 4.0]",
                         "--dtype", "float32", "--max-memory", "50M", "--json"))
    assert error["message"].startswith("the result of repeat needs 305 MiB more, but only ")


# -- backward is estimated before it starts, from the costs recorded at forward ---------------------------

def _graph_cost(node) -> float:
    seen, stack, total = set(), [node], 0.0
    while stack:
        n = stack.pop()
        if id(n) not in seen:
            seen.add(id(n))
            total += getattr(n, "cost", 0.0)
            stack.extend(x for x in n.inputs if type(x) is type(n))
    return total


def test_a_node_records_its_vjps_cost_one_forward_per_input_that_needs_grad():
    from gradcli.engine.creation import ones
    a, b = ones(30, 40, requires_grad=True), ones(40, 50)
    one_forward = costs.matmul(np.empty((30, 40)), np.empty((40, 50)))
    assert matmul(a, b)._node.cost == pytest.approx(one_forward)
    assert matmul(a, a.t())._node.cost == pytest.approx(2 * costs.matmul(np.empty((30, 40)), np.empty((40, 30))))
    assert not hasattr((a * 2)._node, "cost")  # an op that estimates nothing records nothing


def test_a_backward_past_the_time_left_is_refused_before_any_vjp_runs():
    from gradcli.engine.creation import ones
    with budget.limited(10.0, None):
        a = ones(4, 4, requires_grad=True)
        shared = matmul(a, a)
        y = (shared + shared).sum()  # the matmul reached twice: counted once
        budget.record_cost(shared._node, 60.0)
        with pytest.raises(LimitError) as caught:
            y.backward()
    assert caught.value.message.startswith("backward would take about 60 s here, more than the ")
    assert caught.value.message.endswith(" s left of the time limit")
    assert caught.value.hint == "use smaller tensors, or raise the limit with --timeout SECONDS"
    assert a.grad is None  # refused before it started: nothing accumulated


def test_create_graph_records_the_vjps_costs_so_a_double_backward_is_estimated_too():
    from gradcli.engine.autograd import grad
    from gradcli.engine.creation import ones
    with budget.limited(10.0, None):
        a = ones(4, 4, requires_grad=True)
        g, = grad(matmul(a, a).sum(), a, create_graph=True)
        assert _graph_cost(g._node) > 0  # the VJP's own matmuls were recorded with their estimates
        budget.record_cost(g._node, 30.0)
        with pytest.raises(LimitError) as caught:
            g.sum().backward()
    assert caught.value.message.startswith("backward would take about 30 s here")


def test_a_jacobians_backward_passes_are_estimated_together():
    from gradcli.engine.autograd import jacobian_of
    from gradcli.engine.creation import ones
    with budget.limited(10.0, None):
        a = ones(3, 3, requires_grad=True)
        y = matmul(a, a)
        budget.record_cost(y._node, 2.0)  # 9 passes of 2 s: past the time left, though one pass is not
        with pytest.raises(LimitError) as caught:
            jacobian_of(y, [a])
    assert caught.value.message.startswith("the Jacobian's 9 backward passes would take about 18 s here")


def test_a_backward_that_fits_runs_without_walking_the_graph_twice():
    from gradcli.engine.creation import ones
    with budget.limited(10.0, None):
        a = ones(4, 4, requires_grad=True)
        matmul(a, a).sum().backward()
        assert budget.COMMAND.recorded == pytest.approx(2 * costs.matmul(np.empty((4, 4)), np.empty((4, 4))))
    assert a.grad.tolist() == [[8.0] * 4] * 4


def test_the_timer_gives_the_hosts_alarm_back_less_the_time_the_command_took():
    """In-process (pytest, a kernel) the host may have its own SIGALRM alarm: it is not lost after a command."""
    import signal
    import time
    seen: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with budget.limited(10.0, None):
            assert signal.getitimer(signal.ITIMER_REAL)[1] == pytest.approx(budget.TICK)  # the budget's ticks
            time.sleep(0.05)
        left, interval = signal.getitimer(signal.ITIMER_REAL)
        assert 29.0 < left < 29.96 and interval == 0.0 and not seen
        assert signal.getsignal(signal.SIGALRM) is not budget._on_timer
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_programs_backward_is_refused_at_its_call_with_the_estimate(cli, tmp_path):
    """Each product estimated at 4 s fits the 6 s given; its backward, two products, does not: refused before it
    starts, under the program's `.backward()` call (the estimate is set by hand so nothing really runs for long)."""
    from gradcli.engine.ops.linalg import MATMUL
    path = tmp_path / "slow_backward.grad"
    path.write_text("a = torch.ones(3, 3, requires_grad=True)\ny = (a @ a).sum()\ny.backward()\nprint('after')\n",
                    encoding="utf-8")
    real = MATMUL.cost
    object.__setattr__(MATMUL, "cost", lambda a, b: 4.0)
    try:
        result = cli("run", str(path), "--timeout", "6")
    finally:
        object.__setattr__(MATMUL, "cost", real)
    text = " ".join(result.stderr.split() + result.stdout.split())
    assert result.exit_code == 2 and "after" not in result.stdout
    assert "error[limit]: backward would take about 8 s here, more than the " in text
    assert f"--> {path}:3:1" in result.stdout + result.stderr


def test_the_scripts_start_up_counts_in_its_first_commands_time_only():
    """`gradcli` notes when its process began; the first budget opened counts from then, the next from its own
    start (each file of `run` has its own), and a command run in-process never inherits a stale start."""
    import time
    assert budget.launched_at() <= time.monotonic()
    budget.LAUNCHED.append(time.monotonic() - 3.0)
    with budget.limited(5.0, None):
        assert 1.0 < budget.remaining() <= 2.0
    assert budget.LAUNCHED == []
    with budget.limited(5.0, None):
        assert 4.0 < budget.remaining() <= 5.0
