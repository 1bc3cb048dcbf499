"""Integer and bool tensors meeting floats take PyTorch's float type, not NumPy's float64.

`(pred == y).sum() / len(y)`, `torch.arange(5) * 0.1` and `int_tensor * weights` are in every
tutorial: PyTorch computes them in the default dtype (or the float tensor's), where NumPy widens to
float64 and the printed tensor would grow `dtype=torch.float64`.
"""
from __future__ import annotations

import numpy as np
import pytest

from language_helpers import run, torch_printed

PRE = "import torch\na = torch.tensor([1, 2])\n"

PRINTS = [
    ("a + 1.5", "tensor([2.5000, 3.5000])"),
    ("1.5 * a", "tensor([1.5000, 3.0000])"),
    ("a / 2", "tensor([0.5000, 1.0000])"),
    ("3.0 / a", "tensor([3.0000, 1.5000])"),
    ("torch.tensor(3) / torch.tensor(2)", "tensor(1.5000)"),
    ("torch.arange(5) / 4", "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])"),
    ("a.exp()", "tensor([2.7183, 7.3891])"),
    ("torch.sin(a)", "tensor([0.8415, 0.9093])"),
    ("0.5 ** a", "tensor([0.5000, 0.2500])"),
    ("a ** 2", "tensor([1, 4])"),
    ("a * torch.tensor([0.5, 1.0])", "tensor([0.5000, 2.0000])"),
    ("a + torch.tensor(0.5, dtype=torch.float64)", "tensor([1.5000, 2.5000], dtype=torch.float64)"),
    ("a * torch.ones(2, dtype=torch.float64)", "tensor([1., 2.], dtype=torch.float64)"),
    ("torch.tensor([True, False]) + 0.5", "tensor([1.5000, 0.5000])"),
    ("torch.where(a > 1, a, 0.5)", "tensor([0.5000, 2.0000])"),
    ("torch.clamp(a, min=0.5)", "tensor([1., 2.])"),
    ("(torch.tensor([1, 0, 1]) == torch.tensor([1, 1, 1])).sum() / 3", "tensor(0.6667)"),
]


@pytest.mark.parametrize("expression, text", PRINTS, ids=[e for e, _ in PRINTS])
def test_integers_meet_floats_in_pytorchs_type(expression: str, text: str) -> None:
    assert run(PRE + f"print({expression})").printed == [text]


def test_float64_programs_keep_float64() -> None:
    ran = run(PRE + "r = a / 2\ns = a * 0.5\n", dtype="float64")
    assert ran["r"]._data.dtype == ran["s"]._data.dtype == np.float64


def test_the_gradient_through_an_integer_factor_is_the_weights_type() -> None:
    ran = run(PRE + "w = torch.tensor([0.5, 1.5], requires_grad=True)\n(w * a + a / 2).sum().backward()\n")
    assert ran["w"].grad._data.dtype == np.float32
    np.testing.assert_array_equal(ran["w"].grad._data, [1.0, 2.0])


def test_the_texts_are_pytorchs() -> None:
    assert torch_printed(PRE + "".join(f"print({e})\n" for e, _ in PRINTS)) == [text for _, text in PRINTS]
