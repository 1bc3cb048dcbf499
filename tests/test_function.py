"""torch.autograd.Function: values by hand and against PyTorch, and --check proving or failing the backward."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import BackwardError
from tests.language_helpers import fails, run

CUBE = '''
import torch

class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2
'''

TWO_OUTPUTS = '''
import torch

class SumAndProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a + b, a * b

    @staticmethod
    def backward(ctx, g_sum, g_prod):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g_sum + g_prod * b
        if ctx.needs_input_grad[1]:
            gb = g_sum + g_prod * a
        return ga, gb
'''


def test_a_cube_node_is_named_as_pytorch_and_its_gradients_are_3x2():
    ran = run(CUBE + "x = torch.tensor([1.0, -2.0], requires_grad=True)\ny = Cube.apply(x)\n"
                     "print(y.grad_fn.name(), y.requires_grad)\ny.sum().backward()\n")
    assert ran.printed == ["CubeBackward True"]
    assert ran["x"].grad.tolist() == [3.0, 12.0]


def test_two_outputs_needs_input_grad_and_an_unused_output():
    ran = run(TWO_OUTPUTS + "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = torch.tensor([3.0, 4.0])\n"
                            "s, p = SumAndProduct.apply(a, b)\n(2 * p).sum().backward()\n")
    # only the product is used: d(2ab)/da = 2b, and the sum's gradient arrives as zeros
    assert ran["a"].grad.tolist() == [6.0, 8.0]
    assert ran["b"].grad is None


def test_forward_runs_with_gradients_off_and_ctx_keeps_attributes():
    ran = run('''
import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        ctx.inside = torch.is_grad_enabled()
        return x * k
    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None
x = torch.ones(3, requires_grad=True)
y = Scale.apply(x, 5.0)
y.sum().backward()
print(x.grad.tolist(), y.grad_fn.name())
''')
    assert ran.printed == ["[5.0, 5.0, 5.0] ScaleBackward"]


def test_double_backward_through_a_differentiable_backward():
    ran = run(CUBE + '''
x = torch.tensor(2.0, requires_grad=True)
g, = torch.autograd.grad(Cube.apply(x), x, create_graph=True)
g.backward()
''')
    assert float(ran["g"]) == 12.0
    assert float(ran["x"].grad) == 12.0  # d(3x^2)/dx at 2


def test_setup_context_style_and_grad_fn_apply():
    ran = run('''
import torch
class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([3.0], requires_grad=True)
y = Square.apply(x)
direct = y.grad_fn.apply(torch.ones(1))
y.backward(torch.ones(1))
print(x.grad.item(), direct.item())
''')
    assert ran.printed == ["6.0 6.0"]


def test_a_wrong_number_of_gradients_is_pytorchs_error():
    caught = fails('''
import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b
    @staticmethod
    def backward(ctx, g):
        return g
a = torch.ones(2, requires_grad=True)
Bad.apply(a, a).sum().backward()
''', BackwardError)
    assert caught.message == "function BadBackward returned an incorrect number of gradients (expected 2, got 1)"


def test_a_gradient_of_the_wrong_shape_is_pytorchs_error():
    caught = fails('''
import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2
    @staticmethod
    def backward(ctx, g):
        return torch.ones(3)
a = torch.ones(2, requires_grad=True)
Bad.apply(a).sum().backward()
''', BackwardError)
    assert caught.message == "Function BadBackward returned an invalid gradient at index 0 - got [3] but expected " \
                             "shape compatible with [2]"


LEGENDRE = '''
import torch
import math

class LegendreP3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 1.5 * (5 * x ** 2 - 1)

x = torch.linspace(-math.pi, math.pi, 200, dtype=torch.float64)
y = torch.sin(x)
a = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
b = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
c = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
d = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
lr = 5e-6
for t in range(300):
    y_pred = a + b * LegendreP3.apply(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t == 0:
        first = loss.item()
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= lr * p.grad
            p.grad = None
final = loss.item()
'''


def test_a_legendre_polynomial_function_fitted_by_gradient_descent():
    ran = run(LEGENDRE, max_steps=100_000)
    assert ran["final"] < 0.6 * ran["first"]
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(LEGENDRE, "<oracle>", "exec"), namespace)
    assert np.isclose(ran["final"], namespace["final"], rtol=1e-9)


def _check(cli, tmp_path, source):
    path = tmp_path / "fn.py"
    path.write_text(source)
    return cli("run", str(path), "--check")


PROGRAMS = {
    "cube": (CUBE, "g * 3 * x ** 2", "g * x ** 2", "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                                   "Cube.apply(x).sum().backward()\n"),
    "product": ('''
import torch
class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a
''', "return g * b, g * a", "return g * a, g * b",
                "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = torch.tensor([3.0, 5.0], requires_grad=True)\n"
                "Mul.apply(a, b).sum().backward()\n"),
    "two outputs": (TWO_OUTPUTS, "ga = g_sum + g_prod * b", "ga = g_sum - g_prod * b",
                    "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = torch.tensor([3.0, 4.0], requires_grad=True)\n"
                    "s, p = SumAndProduct.apply(a, b)\n(s * p).sum().backward()\n"),
    "needs_input_grad": (TWO_OUTPUTS, "gb = g_sum + g_prod * a", "gb = g_sum + g_prod * b",
                         "a = torch.tensor([1.0, 2.0])\nb = torch.tensor([3.0, 4.0], requires_grad=True)\n"
                         "s, p = SumAndProduct.apply(a, b)\n(s + p).sum().backward()\n"),
    "backward calling a Function": (CUBE + '''
class Poly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 4
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 4 * Cube.apply(x)
''', "g * 4 * Cube.apply(x)", "g * 3 * Cube.apply(x)", "x = torch.tensor([1.5, -0.5], requires_grad=True)\n"
                                                       "Poly.apply(x).sum().backward()\n"),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_check_proves_a_correct_backward_and_fails_a_planted_wrong_one(cli, tmp_path, name):
    source, right, wrong, use = PROGRAMS[name]
    good = _check(cli, tmp_path, source + use)
    assert good.exit_code == 0, good.stdout + good.stderr
    assert "check (symbolic): all gradients agree" in good.stdout
    assert source.count(right) == 1
    bad = _check(cli, tmp_path, source.replace(right, wrong) + use)
    assert bad.exit_code == 1, bad.stdout + bad.stderr
    assert "MISMATCH" in bad.stdout and "expected" in bad.stdout and "got" in bad.stdout


@pytest.mark.parametrize("right, exit_code", [("return g * 3 * x ** 2", 0), ("return g * 2 * x ** 2", 1)])
def test_a_forward_outside_the_op_table_is_checked_by_finite_differences(cli, tmp_path, right, exit_code):
    source = '''
import torch
class NumpyCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.tensor(x.detach().tolist(), dtype=torch.float64) ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x ** 2
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
NumpyCube.apply(x).sum().backward()
'''.replace("return g * 3 * x ** 2", right)
    result = _check(cli, tmp_path, source)
    assert result.exit_code == exit_code, result.stdout + result.stderr
    assert "finite differences" in result.stdout


@pytest.mark.parametrize("right, exit_code", [("g * x.sum() + (g * x).sum()", 0), ("g * x.sum()", 1)])
def test_a_forward_that_reads_item_is_not_replayed_with_a_constant(cli, tmp_path, right, exit_code):
    """x·Σx built through .item(): its output is still on the graph, but the replay would hold Σx fixed
    (∂/∂xᵢ = Σx, not Σx + xᵢ·…); the check goes to finite differences of the forward and says so."""
    source = '''
import torch
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.sum().item()
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return RIGHT
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
Scale.apply(x).sum().backward()
assert allclose(x.grad, torch.tensor([GOT]))
'''.replace("RIGHT", right).replace("GOT", "6.0, 6.0" if exit_code == 0 else "3.0, 3.0")
    result = _check(cli, tmp_path, source)
    assert result.exit_code == exit_code, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert "reads values out of the graph (.item(), .tolist(), .numpy() or torch.tensor(t))" in text
    assert "checked by finite differences instead" in text
    assert ("MISMATCH" in text) == (exit_code == 1)


GRADCHECKED = CUBE + CUBE.replace("import torch\n", "").replace("Cube", "Wrong").replace("g * 3 *", "g * 2 *") + '''
x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
verdicts = [torch.autograd.gradcheck(Cube.apply, (x,)), torch.autograd.gradgradcheck(Cube.apply, (x,)),
            torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)]
'''


def test_gradcheck_and_gradgradcheck_agree_with_pytorchs_verdicts():
    ran = run(GRADCHECKED)
    assert ran["verdicts"] == [True, True, False]
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(GRADCHECKED, "<oracle>", "exec"), namespace)
    assert namespace["verdicts"] == ran["verdicts"]


def test_a_failing_gradcheck_names_the_jacobians_as_pytorch():
    caught = fails(GRADCHECKED + "torch.autograd.gradcheck(Wrong.apply, (x,))\n", BackwardError)
    assert caught.message.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    assert "analytical:" in caught.message


def test_a_functions_forward_may_read_its_inputs_as_numpy_and_their_device_as_in_pytorch() -> None:
    ran = run("import torch\nimport numpy as np\nclass F(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(x):\n        return torch.tensor(np.array(x), device=x.device) * 2, x.numpy().sum()\n"
              "    @staticmethod\n    def setup_context(ctx, inputs, output):\n        pass\n    @staticmethod\n"
              "    def backward(ctx, g, _):\n        return g * 2\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "y, s = F.apply(x)\ny.sum().backward()\nwhere = str(x.device)\n")
    assert ran["y"].tolist() == [2.0, 4.0] and float(ran["s"]) == 3.0 and ran["where"] == "cpu"
    assert ran["x"].grad.tolist() == [2.0, 2.0]  # PyTorch: the same (numpy() is allowed with gradients off)
    assert "Can't call numpy() on Tensor that requires grad" in fails(
        "import torch\nx = torch.ones(2, requires_grad=True)\na = x.numpy()\n").message


def test_a_failing_custom_backward_is_named_with_its_line(cli, tmp_path):
    source = CUBE.replace("g * 3 * x ** 2", "g * 2 * x ** 2") + ("x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                                               "Cube.apply(x).sum().backward()\n")
    result = _check(cli, tmp_path, source)
    text = " ".join(result.stdout.split())
    assert result.exit_code == 1 and "x[1]: got 8, expected 12" in text
    assert "note (x): through the program's own Cube.backward at line 11" in text


SEEN_THROUGH = '''
import torch
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        FORWARD
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return BACKWARD
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
Square.apply(x).sum().backward()
'''


@pytest.mark.parametrize("forward", [
    "return x.detach() * x",
    "return x.detach() * x.data",
    "with torch.no_grad():\n            y = x * x\n        return y",
    "torch.set_grad_enabled(False)\n        y = x.data * x.detach()\n        torch.set_grad_enabled(True)\n        return y",
], ids=["detach", "detach and data", "no_grad", "set_grad_enabled"])
@pytest.mark.parametrize("backward, exit_code", [("g * 2 * x", 0), ("g * x", 1)], ids=["right", "wrong"])
def test_detach_data_and_no_grad_in_a_forward_are_identities_for_its_math(cli, tmp_path, forward, backward, exit_code):
    """PyTorch runs a forward with gradients off: x.detach() * x there is x², whose derivative 2x SymPy proves."""
    result = _check(cli, tmp_path, SEEN_THROUGH.replace("FORWARD", forward).replace("BACKWARD", backward))
    text = " ".join(result.stdout.split())
    assert result.exit_code == exit_code, result.stdout + result.stderr
    assert "│ SymPy" in result.stdout and "finite differences instead" not in text and "nested" not in text
    assert ("MISMATCH" in text) == (exit_code == 1)
    if exit_code:
        assert "x[2]: got 3, expected 6" in text


@pytest.mark.parametrize("forward, backward, witness", [
    ("return x", "g * 1.0", "SymPy"),
    ("return torch.zeros_like(x) + x.detach() * 0.0 + 2.0", "g * 0.0", "SymPy"),
    ("return torch.tensor(x.numpy()) ** 2", "g * 2 * x", "finite diff"),
    ("return torch.tensor(x) ** 2", "g * 2 * x", "finite diff"),
], ids=["input returned", "constant", "numpy", "torch.tensor of a tensor"])
def test_forwards_made_by_no_primitive_or_through_numpy_are_checked_truthfully(cli, tmp_path, forward, backward,
                                                                                witness):
    source = SEEN_THROUGH.replace("FORWARD", forward).replace("BACKWARD", backward)
    result = _check(cli, tmp_path, source)
    text = " ".join(result.stdout.split())
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"│ {witness}" in result.stdout and "nested" not in text
    if witness == "finite diff":
        assert "reads values out of the graph" in text
    wrong = _check(cli, tmp_path, source.replace(f"return {backward}", f"return {backward} + g"))
    assert wrong.exit_code == 1 and "MISMATCH" in wrong.stdout
