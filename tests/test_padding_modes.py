"""F.pad's 'reflect', 'replicate' and 'circular' modes and nn.ReflectionPad1d/2d/3d, ReplicationPad*, CircularPad*:
values, gradients (to float32 rounding: PyTorch sums a repeated position's gradient in its own order), node names
and module text as torch 2.13 gives them; PyTorch's errors for a pad too large or of the wrong length."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.arange(12.).view(1, 3, 4).requires_grad_()
w = torch.linspace(-1, 1, 7)
values, names = [], []
for m in ("reflect", "replicate", "circular"):
    y = F.pad(x, (2, 1), mode=m)
    (y * w).sum().backward()
    z = F.pad(x.view(1, 1, 3, 4), (1, 2, 2, 1), mode=m)
    values += [y.tolist(), x.grad.tolist(), z.tolist()]
    x.grad = None
v = torch.arange(24.).view(1, 1, 2, 3, 4)
values.append(F.pad(v, (1, 1, 1, 0, 0, 1), mode="replicate").tolist())
values.append(F.pad(x, (-1, 2), mode="replicate").tolist())
texts = [str(nn.ReflectionPad2d(1)), str(nn.ReflectionPad2d((1, 0, 2, 1))), str(nn.ReplicationPad1d(2)),
         str(nn.CircularPad2d(1)), str(nn.ReplicationPad3d(1))]
names = [nn.ReflectionPad2d(1)(x.view(1, 1, 3, 4)).grad_fn.name(), nn.ReplicationPad1d((0, 2))(x).grad_fn.name(),
         F.pad(x.view(1, 1, 1, 3, 4), (1, 1, 1, 1, 0, 0), mode="reflect").grad_fn.name()]
"""


def test_values_gradients_names_and_text_are_pytorchs():
    mine, theirs = run(PROGRAM).env, oracle(PROGRAM)
    assert mine["texts"] == theirs["texts"]
    assert mine["names"] == theirs["names"] == ["ReflectionPad2DBackward0", "ReplicationPad1DBackward0",
                                                "ReflectionPad3DBackward0"]
    for a, b in zip(mine["values"], theirs["values"], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call, words", [
    ("F.pad(torch.ones(1, 3, 4), (4, 1), mode='reflect')",
     "Padding size should be less than the corresponding input dimension, but got: padding (4, 1) at dimension 2"),
    ("F.pad(torch.ones(12), (1, 1), mode='reflect')", "Padding size 2 is not supported for 1D input tensor."),
    ("F.pad(torch.ones(1, 2), (3, 0), mode='circular')", "Padding value causes wrapping around more than once."),
    ("F.pad(torch.ones(1, 2), (1, 0), mode='wrap')", "Unrecognised padding mode wrap"),
])
def test_wrong_pads_are_pytorchs_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn.functional as F\ny = {call}\n")
    assert words in info.value.message
