"""PyTorch's own argument names and options for the binary ops: `torch.add(x, other=2)`, `alpha=`,
`div(..., rounding_mode=)`, `functools.partial(torch.add, other=3)`, and `x[range(n), target]`;
what PyTorch prints, hand-derived."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import ArgumentError, BackwardError
from language_helpers import fails, run, torch_printed

PRE = "import torch\nimport functools\nx = torch.tensor([1.5, -2.5], requires_grad=True)\n"

PRINTS = [
    ("torch.add(x, other=2)", "tensor([ 3.5000, -0.5000], grad_fn=<AddBackward0>)"),
    ("torch.add(input=x, other=2)", "tensor([ 3.5000, -0.5000], grad_fn=<AddBackward0>)"),
    ("torch.add(x, x, alpha=3)", "tensor([  6., -10.], grad_fn=<AddBackward0>)"),
    ("torch.sub(x, 1, alpha=2)", "tensor([-0.5000, -4.5000], grad_fn=<SubBackward0>)"),
    ("x.add(1, alpha=2)", "tensor([ 3.5000, -0.5000], grad_fn=<AddBackward0>)"),
    ("x.mul(other=2)", "tensor([ 3., -5.], grad_fn=<MulBackward0>)"),
    ("torch.pow(x, exponent=2)", "tensor([2.2500, 6.2500], grad_fn=<PowBackward0>)"),
    ("torch.matmul(x, other=x)", "tensor(8.5000, grad_fn=<DotBackward0>)"),
    ("torch.maximum(x, other=torch.zeros(2))", "tensor([1.5000, 0.0000], grad_fn=<MaximumBackward0>)"),
    ("torch.div(x, 2, rounding_mode='floor')", "tensor([ 0., -2.], grad_fn=<DivBackward2>)"),
    ("x.div(2, rounding_mode='trunc')", "tensor([ 0., -1.], grad_fn=<DivBackward2>)"),
    ("torch.tensor([7, -7]).div(2, rounding_mode='floor')", "tensor([ 3, -4])"),
    ("torch.tensor([7, -7]).div(2, rounding_mode='trunc')", "tensor([ 3, -3])"),
    ("torch.add(torch.tensor([1, 2]), torch.tensor([1, 1]), alpha=2)", "tensor([3, 4])"),
    ("torch.add(torch.tensor([1, 2]), 1.5, alpha=2)", "tensor([4., 5.])"),
    ("torch.tensor([7, -7]) // 2", "tensor([ 3, -4])"),
    ("7 // torch.tensor([2, -2])", "tensor([ 3, -4])"),
    ("torch.floor_divide(torch.tensor([7.5, -7.5]), 2)", "tensor([ 3., -4.])"),
    ("torch.true_divide(torch.tensor([1, 2]), 2)", "tensor([0.5000, 1.0000])"),
    ("torch.tensor([1, 2]).sum(dtype=torch.float32)", "tensor(3.)"),
    ("torch.sum(torch.tensor([1, 2]), 0, dtype=torch.float32)", "tensor(3.)"),
    ("x.sum(dtype=torch.float64)", "tensor(-1., dtype=torch.float64, grad_fn=<SumBackward0>)"),
    ("torch.tensor([1, 2]).mean(dtype=torch.float64)", "tensor(1.5000, dtype=torch.float64)"),
    ("torch.tensor([[1., 2.], [3., 4.]])[range(2), torch.tensor([1, 0])]", "tensor([2., 3.])"),
    ("functools.partial(torch.add, other=3)(x)", "tensor([4.5000, 0.5000], grad_fn=<AddBackward0>)"),
]


@pytest.mark.parametrize("expression, text", PRINTS, ids=[e for e, _ in PRINTS])
def test_pytorchs_keywords_give_pytorchs_values(expression: str, text: str) -> None:
    assert run(PRE + f"print({expression})").printed == [text]


def test_alpha_scales_the_gradient_of_the_second_operand() -> None:
    ran = run(PRE + "y = torch.tensor([1.0, 1.0], requires_grad=True)\n"
                    "torch.sub(x, y, alpha=2.5).sum().backward()\n")
    np.testing.assert_array_equal(ran["x"].grad._data, [1.0, 1.0])
    np.testing.assert_array_equal(ran["y"].grad._data, [-2.5, -2.5])


def test_alpha_is_the_nodes_saved_alpha() -> None:
    ran = run(PRE + "z = torch.add(x, x * 2, alpha=3)\nw = x.sub(x, alpha=0.5)\n"
                    "a, b, c = z.grad_fn._saved_alpha, w.grad_fn._saved_alpha, (x + x).grad_fn._saved_alpha\n"
                    "names = [f[0].name() for f in z.grad_fn.next_functions]\n")
    assert (ran["a"], ran["b"], ran["c"]) == (3, 0.5, 1)
    assert ran["names"] == ["torch::autograd::AccumulateGrad", "MulBackward0"]


def test_a_rounded_division_has_a_zero_gradient_as_in_pytorch() -> None:
    ran = run(PRE + "y = torch.tensor([2.0, 3.0], requires_grad=True)\n"
                    "(torch.div(x, y, rounding_mode='floor') * y).sum().backward()\n")
    np.testing.assert_array_equal(ran["x"].grad._data, [0.0, 0.0])
    np.testing.assert_array_equal(ran["y"].grad._data, [0.0, -1.0])  # floor(1.5/2), floor(-2.5/3): the factor's


BAD = [
    ("torch.div(x, 2, rounding_mode='round')",
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    ("x.add(x, alpha=x)", "add(): argument 'alpha' must be Number, not Tensor"),
    ("torch.sub(x, 1, alpha='2')", "sub(): argument 'alpha' must be Number, not str"),
    ("torch.add(torch.tensor([1, 2]), 1, alpha=2.0)",
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("torch.add(x, othr=2)", "torch.add(): missing a required argument: 'other'"),
    ("functools.partial(torch.add, other=3)(x, 4, 5)", "functools.partial(torch.add, other=3)(): too many"),
]


@pytest.mark.parametrize("expression, message", BAD, ids=[e for e, _ in BAD])
def test_wrong_options_are_pytorchs_errors(expression: str, message: str) -> None:
    err = fails(PRE + f"y = {expression}\n", ArgumentError)
    assert err.message.startswith(message) and err.hint


def test_the_texts_are_pytorchs() -> None:
    assert torch_printed(PRE + "".join(f"print({e})\n" for e, _ in PRINTS)) == [text for _, text in PRINTS]


def test_floor_division_of_a_tensor_that_requires_grad_is_pytorchs_error() -> None:
    err = fails(PRE + "y = x // 2\n", BackwardError)
    assert err.message == "the derivative for 'floor_divide' is not implemented."
    assert "rounding_mode='floor'" in err.hint
    assert run(PRE + "with torch.no_grad():\n    y = x // 2\n")["y"].tolist() == [0.0, -2.0]
