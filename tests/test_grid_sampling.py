"""F.affine_grid and F.grid_sample (bilinear and nearest; zeros, border and reflection padding; with and without
align_corners) against torch: the same seeded program's outputs, node names and the gradients to the input and to
θ through the grid; --check proves a bilinear sample; wrong calls are PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.check import checker
from gradcli.errors import GradcliError
from gradcli.program.scripts import run_file
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn.functional as F
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
x = torch.randn(2, 2, 3, 4, requires_grad=True)
theta = torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.2]], [[1.2, 0.1, 0.4], [-0.1, 0.8, 0.3]]], requires_grad=True)
values, names = [], []
for align in (False, True):
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            grid = F.affine_grid(theta, x.size(), align_corners=align)
            y = F.grid_sample(x, grid * 1.3, mode=mode, padding_mode=pad, align_corners=align)
            y.pow(2).sum().backward()
            names.append((grid.grad_fn.name(), y.grad_fn.name()))
            values += [grid.tolist(), y.tolist(), x.grad.tolist(), theta.grad.tolist()]
            x.grad = None
            theta.grad = None
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samples_and_gradients_are_pytorchs(dtype):
    source = PROGRAM.format(dtype=dtype)
    mine, theirs = run(source).env, oracle(source)
    assert mine["names"] == theirs["names"] == [("AffineGridGeneratorBackward0", "GridSampler2DBackward0")] * 12
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(mine["values"], theirs["values"], strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_check_proves_a_bilinear_sample(tmp_path):
    path = tmp_path / "g.py"
    path.write_text("import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
                    "x = torch.randn(1, 1, 2, 3, requires_grad=True)\n"
                    "theta = torch.tensor([[[0.8, -0.1, 0.05], [0.2, 0.9, -0.1]]], requires_grad=True)\n"
                    "y = F.grid_sample(x, F.affine_grid(theta, (1, 1, 2, 2), align_corners=False), "
                    "padding_mode='border', align_corners=False)\n(y * y).sum().backward()\n")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.checks_passed == 1


@pytest.mark.parametrize("call, words", [
    ("F.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), mode='cubic')", "expected mode to be"),
    ("F.grid_sample(torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), padding_mode='wrap')",
     "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
    ("F.affine_grid(torch.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)",
     "Expected a batch of 2D affine matrices of shape Nx2x3"),
])
def test_wrong_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn.functional as F\ny = {call}\n")
    assert words in info.value.message
