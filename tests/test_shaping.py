"""Padding, pixel (un)shuffle, nearest upsampling and the unfold/fold/avg_pool1d modules against torch itself:
values, gradients and printed modules; bad calls are errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1, 8, 2, 3, requires_grad=True)
mods = [nn.ZeroPad1d(1), nn.ZeroPad2d((1, 0, 2, 0)), nn.ConstantPad2d((1, 2, 0, 1), 1.5), nn.ConstantPad1d((2, 1), -1.0), nn.PixelShuffle(2), nn.Upsample(scale_factor=2), nn.Upsample(size=(4, 9))]
outs = [m(x) for m in mods]
outs.append(nn.PixelUnshuffle(2)(torch.randn(1, 2, 4, 6)))
outs.append(F.interpolate(x[:, :, 0], scale_factor=3))
outs.append(nn.AvgPool1d(3, 2, 1)(x[:, :, 0]))
outs.append(nn.Fold((3, 4), 2)(nn.Unfold(2)(x[:, :4, :, :] .reshape(1, 4, 3, 2).transpose(2, 3).reshape(1, 4, 2, 3).expand(1, 4, 2, 3).reshape(1, 4, 2, 3).repeat(1, 1, 2, 2)[:, :, :3, :4])))
s = sum((o * torch.arange(o.numel()).reshape(o.shape).float().sin()).sum() for o in outs)
s.backward()
values = [o.tolist() for o in outs] + [x.grad.tolist()]
texts = [str(m) for m in mods + [nn.PixelUnshuffle(2), nn.AvgPool1d(3, 2, 1), nn.Unfold(2), nn.Fold((4, 4), 2)]]
"""


def test_shaping_layers_match_torch():
    mine, torch_ = run(PROGRAM), oracle(PROGRAM)
    for a, b in zip(mine["values"], torch_["values"]):
        assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), atol=1e-6)
    assert mine["texts"] == torch_["texts"]


@pytest.mark.parametrize("source, words", [
    ("nn.PixelShuffle(3)(torch.ones(1, 4, 2, 2))", "is not divisible by 9"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=2, mode='box')", "mode='box' is not supported"),
    ("F.interpolate(torch.ones(1, 1, 2, 2))", "only one of size or scale_factor should be defined"),
])
def test_bad_shaping_calls_are_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {source}\n")
    assert words in info.value.message
