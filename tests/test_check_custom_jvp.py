"""Issue 34: a program's own `autograd.Function.jvp` is judged against SymPy's derivative of its forward.

The tangent a custom jvp returns (through `torch.func.jvp`, or dual numbers and `unpack_dual`) is
compared with d/ds of the forward's recorded primitives replayed on x + s·v; the program's forward
is not run again, so nothing it prints, draws or counts happens twice under `--check`.
"""
import io
import json

import pytest

from gradcli.check import checker
from gradcli.program.scripts import Output, run_file
from language_helpers import torch_printed

FUNCTION = """import torch
from torch.func import jvp
import torch.autograd.forward_ad as fwAD

class Op(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return {forward}

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return {jvp}

x = torch.tensor([1.5, -2.0, 0.5], dtype=torch.float64)
v = torch.tensor([1.0, 0.5, -2.0], dtype=torch.float64)
"""
JVP_LINE = 15
THROUGH_FUNC = "y, t = jvp(Op.apply, (x,), (v,))\nprint(t)\n"
THROUGH_DUALS = ("with fwAD.dual_level():\n    y = Op.apply(fwAD.make_dual(x, v)) * 2\n"
                 "    t = fwAD.unpack_dual(y).tangent\nprint(t)\n")
CALL_LINE = 21

CASES = {  # name: (forward, jvp, right)
    "cube": ("x ** 3", "3 * x ** 2 * t", True),
    "cube 2x too big": ("x ** 3", "6 * x ** 2 * t", False),
    "branches": ("torch.where(x > 0, x ** 2, -3 * x)", "torch.where(x > 0, 2 * x * t, -3 * t)", True),
    "wrong sign on one branch": ("torch.where(x > 0, x ** 2, -3 * x)", "torch.where(x > 0, 2 * x * t, 3 * t)", False),
    "sin": ("torch.sin(x) * x", "(torch.cos(x) * x + torch.sin(x)) * t", True),
    "sin, a term missing": ("torch.sin(x) * x", "torch.cos(x) * x * t", False),
    "exp": ("torch.exp(x).sum() * x", "torch.exp(x).sum() * t + (torch.exp(x) * t).sum() * x", True),
    "exp, the sum's tangent missing": ("torch.exp(x).sum() * x", "torch.exp(x).sum() * t", False),
    "off by 1e-4": ("x ** 3", "3 * x ** 2 * t * 1.0001", False),
}


def _run(cli, tmp_path, source, *options):
    path = tmp_path / "prog.py"
    path.write_text(source)
    return cli("run", str(path), *options)


def _check(result):
    events = json.loads(result.stdout.splitlines()[0])["events"]
    return next(e for e in events if e["kind"] == "check")


@pytest.mark.parametrize("call", [THROUGH_FUNC, THROUGH_DUALS], ids=["func.jvp", "dual numbers"])
@pytest.mark.parametrize("case", CASES)
def test_a_custom_jvp_is_judged_against_the_forward(cli, tmp_path, case, call):
    forward, jvp, right = CASES[case]
    result = _run(cli, tmp_path, FUNCTION.format(forward=forward, jvp=jvp) + call, "--check", "--json")
    assert result.exit_code == (0 if right else 1), result.stdout
    check = _check(result)
    assert check["line"] == (CALL_LINE if call is THROUGH_FUNC else CALL_LINE + 2)  # jvp(...) or unpack_dual(...)
    report = check["check"]
    direction = report["inputs"]["direction"]
    assert report["status"] == ("pass" if right else "fail")
    assert direction["method"] == "symbolic" and direction["checked"] == 3
    if not right:
        assert f"through the program's own Op.jvp at line {JVP_LINE}" in direction["note"]


def test_the_failure_names_its_witness_and_numbers(cli, tmp_path):
    result = _run(cli, tmp_path, FUNCTION.format(forward="x ** 3", jvp="6 * x ** 2 * t") + THROUGH_FUNC, "--check")
    assert result.exit_code == 1
    text = " ".join((result.stdout + result.stderr).split())
    assert "jvp(Op.apply, …) at line 21 check (jacobian): MISMATCH" in text
    assert "direction: worst ∂Op.apply[0]/∂direction: expected 6.75, got 13.5" in text  # 3·1.5²·1 against 6·1.5²·1
    assert "note (direction): through the program's own Op.jvp at line 15" in text


SEVERAL = """import torch
from torch.func import jvp

class Mix(torch.autograd.Function):
    @staticmethod
    def forward(x, y):
        return x * y, x + y ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*inputs)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return tx * y + x * ty, tx + {dy} * y * ty

x = torch.tensor([1.0, 2.0], dtype=torch.float64)
y = torch.tensor([3.0, -1.0], dtype=torch.float64)
(a, b), (ta, tb) = jvp(Mix.apply, (x, y), (torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
print(ta, tb)
"""


@pytest.mark.parametrize("dy, right", [("2", True), ("3", False)])
def test_several_inputs_and_outputs_each_output_judged(cli, tmp_path, dy, right):
    result = _run(cli, tmp_path, SEVERAL.format(dy=dy), "--check", "--json")
    assert result.exit_code == (0 if right else 1), result.stdout
    events = json.loads(result.stdout.splitlines()[0])["events"]
    checks = [e for e in events if e["kind"] == "check"]
    assert [c["check"]["status"] for c in checks] == ["pass", "pass" if right else "fail"]  # x·y is right either way
    assert [c["line"] for c in checks] == [20, 20]


SIDE_EFFECTS = """import torch
from torch.func import jvp
import torch.autograd.forward_ad as fwAD

calls = []

class Noisy(torch.autograd.Function):
    @staticmethod
    def forward(x):
        calls.append(len(calls))
        print("forward", len(calls))
        noise = torch.rand(3, dtype=torch.float64)
        return x ** 2 + noise

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
        ctx.seen = output.requires_grad

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        print("jvp", ctx.seen)
        return 2 * x * t

torch.manual_seed(0)
x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
y, t = jvp(Noisy.apply, (x,), (torch.ones(3, dtype=torch.float64),))
with fwAD.dual_level():
    z = Noisy.apply(fwAD.make_dual(x, torch.ones(3, dtype=torch.float64)))
    print(fwAD.unpack_dual(z).tangent, z.requires_grad)
print(calls, y.requires_grad, t)
print(torch.rand(2, dtype=torch.float64))
"""


def _printed(result):
    return [e.text for e in result.events if isinstance(e, Output)]


def test_checking_a_custom_jvp_runs_no_forward_twice(tmp_path):
    """The forward prints, counts its calls and draws random numbers: a checked run prints the same, and the
    random stream after it is where a plain run (and PyTorch) leaves it."""
    path = tmp_path / "prog.py"
    path.write_text(SIDE_EFFECTS)
    plain, checked = run_file(path), run_file(path, checker())
    assert plain.status == checked.status == "ok"
    assert _printed(plain) == _printed(checked)
    summary = {s.what: s for s in checked.sites}
    assert summary["jvp(Noisy.apply, …)"].calls == 1 and summary["jvp(Noisy.apply, …)"].failed == 0
    assert summary["unpack_dual(z).tangent"].failed == 0 and summary["unpack_dual(z).tangent"].unchecked == 0
    assert "".join(_printed(checked)).splitlines() == torch_printed(SIDE_EFFECTS)


READS_OUT = FUNCTION.format(forward="x ** 3 * x.sum().item()", jvp="6 * x ** 2 * t") + THROUGH_FUNC


def test_a_forward_that_reads_values_out_is_not_checked_and_says_so(cli, tmp_path):
    """Its recorded primitives treat `.item()` as a constant, so they are not its meaning: no verdict, exit 0."""
    result = _run(cli, tmp_path, READS_OUT, "--check")
    assert result.exit_code == 0, result.stdout
    text = " ".join(result.stdout.split())
    assert "jvp(Op.apply, …) at line 21 check (not checked): nothing verified" in text
    assert "1 of 1 calls of jvp(Op.apply, …) were not checked" in text


JACFWD = """import torch
from torch.func import jacfwd

class Cube(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return {jvp}

x = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64)
print(jacfwd(Cube.apply)(x))
"""


@pytest.mark.parametrize("jvp, right", [("3 * x ** 2 * t", True), ("6 * x ** 2 * t", False), ("-3 * x ** 2 * t", False)])
def test_jacfwd_through_a_custom_jvp_is_judged_as_a_jacobian(cli, tmp_path, jvp, right):
    result = _run(cli, tmp_path, JACFWD.format(jvp=jvp), "--check", "--json")
    assert result.exit_code == (0 if right else 1), result.stdout
    check = _check(result)
    assert check["line"] == 21 and check["check"]["status"] == ("pass" if right else "fail")
    x = check["check"]["inputs"]["x"]
    assert x["method"] == "symbolic" and x["checked"] == 9
    if not right:
        assert x["worst"]["expected"] == 12.0  # ∂(x³)/∂x at x = 2
        assert "through the program's own Cube.jvp at line 16" in x["note"]  # as func.jvp's failure says


def test_a_float64_jacobian_failure_reads_as_tolerances_over_and_its_relative_error(tmp_path):
    """float64's tolerance is 1e-7·|expected|: a 2× error is ten million tolerances, said as such, not
    `999167356.1%`; the relative error beside it says how wrong the number is."""
    from rich.console import Console
    from gradcli.views.script_view import sites_view
    path = tmp_path / "prog.py"
    path.write_text(JACFWD.format(jvp="6 * x ** 2 * t"))
    result = run_file(path, checker())
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(sites_view(result))
    row = next(line for line in console.export_text().splitlines() if "jacfwd(Cube.apply)(…)" in line)
    assert "│ 1.0e+07× tolerance (rel err 100.0%) at call 1, ∂Cube.apply[1]/∂x[1] │" in row
