"""torch.vdot and Tensor.vdot of real vectors: the dot product under PyTorch's node (VdotBackward0), its gradient,
and dot's errors."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

PROGRAM = """import torch
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.])
y = torch.vdot(a, b)
print(y, a.vdot(b), torch.vdot(b, b))
y.backward()
print(a.grad)
print(y.grad_fn)
"""


def test_prints_what_pytorch_prints():
    assert "\n".join(run(PROGRAM).printed).splitlines()[:-1] == torch_printed(PROGRAM)[:-1]
    assert run(PROGRAM).printed[-1] == "<VdotBackward0>"


@pytest.mark.parametrize("call, words", [
    ("torch.vdot(torch.ones(2, 2), torch.ones(2, 2))", "1D tensors expected, but got 2D and 2D tensors"),
    ("torch.vdot(torch.ones(2), torch.ones(3))", "inconsistent tensor size, expected tensor [2] and src [3]"),
])
def test_wrong_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\ny = {call}\n")
    assert words in info.value.message
