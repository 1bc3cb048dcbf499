"""More activations (PReLU, GLU, the shrinks, Threshold), RMSNorm and the distance modules against torch itself:
values at and around each kink, gradients, printed modules, in float32 and float64."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
x = torch.tensor([[-1.0, -0.5, 0.0, 0.5, 1.0, 2.0], [0.3, -0.3, 0.0, 0.1, -2.0, 0.7]], requires_grad=True)
mods = [nn.PReLU(), nn.GLU(), nn.Hardshrink(), nn.Softshrink(0.5), nn.Tanhshrink(), nn.Threshold(0.1, 20.0), nn.RMSNorm(6), nn.RMSNorm([2, 6], eps=1e-3)]
outs = [m(x) for m in mods]
outs.append(F.prelu(x.view(2, 2, 3), torch.tensor([0.1, 0.2])))
outs.append(nn.CosineSimilarity(dim=0)(x, x.flip(0)))
outs.append(nn.PairwiseDistance(p=1.0)(x, x * 2))
sum(o.pow(2).sum() for o in outs).backward()
values = [o.tolist() for o in outs] + [x.grad.tolist(), mods[0].weight.grad.tolist()]
texts = [str(m) for m in mods] + [str(nn.PReLU(3, init=0.1)), str(nn.Threshold(0.1, 20)), str(nn.CosineSimilarity()), str(nn.PairwiseDistance())]
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations_match_torch(dtype):
    source = PROGRAM.format(dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-6 if dtype == "float32" else 1e-12
    for a, b in zip(mine["values"], torch_["values"]):
        assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=tol, rtol=tol)
    if dtype == "float32":  # PyTorch's float32 softshrink kernel returns x·0 in the middle: -0.0 for x < 0
        assert np.array_equal(np.signbit(np.asarray(mine["values"][3])), np.signbit(np.asarray(torch_["values"][3])))
    assert mine["texts"] == torch_["texts"]


@pytest.mark.parametrize("source, words", [
    ("F.glu(torch.ones(2, 3))", "Halving dimension must be even, but dimension 1 is size 3"),
    ("F.prelu(torch.ones(2, 3), torch.ones(2))", "Mismatch of parameter numbers and input channel size"),
    ("F.softshrink(torch.ones(2), -1.0)", "lambda must be greater or equal to 0"),
    ("nn.RMSNorm(3)(torch.ones(2, 4))", "Given normalized_shape=[3], expected input with shape [*, 3]"),
])
def test_bad_activation_calls_are_pytorch_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {source}\n")
    assert words in info.value.message
