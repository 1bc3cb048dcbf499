"""Transposed convolutions, group norm and instance norm against torch itself: the same seeded program run by both
(parameters, values, gradients, running statistics, printed text), and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

PROGRAM = HEAD + """
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
ct = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)
x = torch.randn(2, 4, 3, 5, requires_grad=True)
y = ct(x)
c1 = nn.ConvTranspose1d(2, 3, 4, stride=3, bias=False)
u = torch.randn(1, 2, 5, requires_grad=True)
y1 = c1(u, output_size=[17])
y2 = F.conv_transpose2d(x[:, :2], torch.ones(2, 1, 2, 2), padding=1, stride=(1, 2))
gn = nn.GroupNorm(2, 4)
z = torch.randn(2, 4, 3, requires_grad=True)
g = gn(z)
inn = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
w = torch.randn(2, 3, 2, 2, requires_grad=True)
o = inn(w)
inn.eval()
o2 = inn(w)
i1 = nn.InstanceNorm1d(3)(torch.randn(3, 4))
(y.pow(2).sum() + y1.sum() + y2.pow(2).sum() + g.pow(3).sum() + o.pow(3).sum() + o2.pow(2).sum()).backward()
values = [y.tolist(), y1.tolist(), y2.tolist(), g.tolist(), o.tolist(), o2.tolist(), i1.tolist(), x.grad.tolist(),
          u.grad.tolist(), ct.weight.grad.tolist(), ct.bias.grad.tolist(), z.grad.tolist(), gn.weight.grad.tolist(),
          w.grad.tolist(), inn.running_mean.tolist(), inn.running_var.tolist()]
texts = [str(ct), str(c1), str(gn), str(inn), str(nn.GroupNorm(1, 2, affine=False))]
nodes = [y.grad_fn.name(), y1.grad_fn.name()]
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_convolutions_and_norms_match_torch(dtype):
    source = PROGRAM.format(dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(mine["values"], torch_["values"]):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert a.shape == b.shape
        assert np.allclose(a, b, atol=tol, rtol=tol)
    assert mine["texts"] == torch_["texts"]
    assert mine["nodes"] == torch_["nodes"] == ["ConvolutionBackward0", "ConvolutionBackward0"]


@pytest.mark.parametrize("source, words", [
    ("nn.ConvTranspose2d(2, 2, 3, stride=2, output_padding=2)(torch.ones(1, 2, 3, 3))", "output padding must be smaller than either stride"),
    ("nn.ConvTranspose2d(2, 2, 3)(torch.ones(1, 3, 4, 4))", "expected input[1, 3, 4, 4] to have 2 channels"),
    ("nn.ConvTranspose1d(2, 2, 3, stride=2)(torch.ones(1, 2, 4), output_size=[20])",
     "requested an output size of [20], but valid sizes range from [9] to [10]"),
    ("nn.GroupNorm(3, 4)", "num_channels must be divisible by num_groups"),
    ("F.group_norm(torch.ones(2, 3, 4), 2)", "Expected number of channels in input to be divisible by num_groups"),
    ("nn.InstanceNorm1d(3)(torch.ones(2, 3, 4, 5))", "expected 2D or 3D input (got 4D input)"),
    ("nn.InstanceNorm1d(3, affine=True)(torch.ones(2, 4, 5))", "to match num_features (3), but got: 4."),
    ("nn.InstanceNorm1d(3)(torch.ones(2, 3, 1))", "Expected more than 1 spatial element when training"),
])
def test_bad_calls_are_pytorch_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(HEAD + f"y = {source}\n")
    assert words in info.value.message


VOLUME = HEAD + """
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
ct = nn.ConvTranspose3d(4, 6, (2, 3, 2), stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), groups=2,
                        dilation=(1, 2, 1))
x = torch.randn(2, 4, 3, 2, 3, requires_grad=True)
y = ct(x)
plain = nn.ConvTranspose3d(2, 3, 2, bias=False)
u = torch.randn(2, 2, 3, 2, requires_grad=True)
y1 = plain(u, output_size=[3, 4, 3])
y2 = F.conv_transpose3d(x[:, :2], torch.ones(2, 1, 2, 1, 2), stride=2, padding=(0, 1, 1))
(y.pow(2).sum() + y1.sin().sum() + y2.pow(2).sum()).backward()
values = [y.tolist(), y1.tolist(), y2.tolist(), x.grad.tolist(), u.grad.tolist(), ct.weight.grad.tolist(),
          ct.bias.grad.tolist(), plain.weight.grad.tolist(), ct.weight.tolist()]
texts = [str(ct), str(plain), str(type(ct))]
nodes = [y.grad_fn.name(), y1.grad_fn.name(), y2.grad_fn.name()]
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_3d_convolution_matches_torch(dtype):
    """Strides, padding, output padding, groups, dilation, an unbatched input with output_size=, the functional."""
    source = VOLUME.format(dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for a, b in zip(mine["values"], torch_["values"]):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert a.shape == b.shape
        assert np.allclose(a, b, atol=tol, rtol=tol)
    assert mine["texts"] == torch_["texts"]
    assert mine["nodes"] == torch_["nodes"]
