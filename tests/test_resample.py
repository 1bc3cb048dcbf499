"""Interpolating upsampling (linear, bilinear, bicubic, trilinear) against torch itself: values and
gradients in float32 and float64 over both align_corners settings, size= and scale_factor= (fractional,
with and without recompute_scale_factor), node names and printed modules; bad calls are errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

CASES = [
    ("bilinear", "(1, 2, 3, 4)", "scale_factor=2"),
    ("bilinear", "(2, 1, 4, 3)", "size=(7, 5)"),
    ("bilinear", "(1, 1, 5, 6)", "size=(3, 2)"),
    ("bilinear", "(1, 1, 3, 4)", "scale_factor=1.7"),
    ("bilinear", "(1, 1, 3, 4)", "scale_factor=(1.7, 2.3), recompute_scale_factor=True"),
    ("bilinear", "(1, 1, 1, 4)", "size=(3, 1)"),
    ("linear", "(2, 3, 5)", "scale_factor=2.5"),
    ("linear", "(1, 2, 6)", "size=4"),
    ("bicubic", "(1, 2, 3, 4)", "scale_factor=2"),
    ("bicubic", "(1, 1, 5, 4)", "size=(3, 9)"),
    ("bicubic", "(1, 1, 2, 3)", "scale_factor=1.5, recompute_scale_factor=True"),
    ("trilinear", "(1, 2, 2, 3, 2)", "scale_factor=2"),
    ("trilinear", "(1, 1, 3, 2, 4)", "size=(4, 5, 3)"),
]


def program(mode: str, shape: str, how: str, corners: str, dtype: str) -> str:
    return f"""import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn{shape}.to(torch.{dtype}).requires_grad_()
y = F.interpolate(x, {how}, mode='{mode}', align_corners={corners})
(y * torch.arange(y.numel()).reshape(y.shape).to(y.dtype).cos()).sum().backward()
values, grad, node, kind = y.tolist(), x.grad.tolist(), y.grad_fn.name(), str(y.dtype)
"""


@pytest.mark.parametrize("corners", ["False", "True"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode, shape, how", CASES)
def test_interpolation_matches_torch(mode, shape, how, corners, dtype):
    source = program(mode, shape, how, corners, dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert np.asarray(mine["values"]).shape == np.asarray(torch_["values"]).shape
    assert np.allclose(mine["values"], torch_["values"], atol=tol, rtol=tol)
    assert np.allclose(mine["grad"], torch_["grad"], atol=tol * 10, rtol=tol)
    assert (mine["node"], mine["kind"]) == (torch_["node"], torch_["kind"])


NEAREST = [("(1, 2, 5)", "scale_factor=1.5"), ("(1, 2, 5)", "size=3"), ("(2, 1, 3, 4)", "scale_factor=(2.5, 0.7)"),
           ("(1, 1, 3, 4)", "size=(6, 8)"), ("(1, 1, 7, 5)", "scale_factor=0.6, recompute_scale_factor=True"),
           ("(1, 1, 2, 3, 4)", "scale_factor=(1.5, 2, 0.5)"), ("(1, 1, 3, 4)", "scale_factor=3")]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, how", NEAREST)
def test_nearest_resampling_matches_torch(shape, how, dtype, mode):
    """Fractional factors and downsampling pick PyTorch's positions; the gradient sums each pick's uses."""
    source = program(mode, shape, how, "None", dtype).replace(", align_corners=None", "")
    mine, torch_ = run(source), oracle(source)
    assert np.asarray(mine["values"]).shape == np.asarray(torch_["values"]).shape
    assert mine["values"] == torch_["values"]
    assert np.allclose(mine["grad"], torch_["grad"], atol=1e-5)
    assert (mine["node"], mine["kind"]) == (torch_["node"], torch_["kind"])


AREA = [("(1, 2, 7)", "size=3"), ("(2, 1, 5, 7)", "scale_factor=0.6"), ("(1, 1, 4, 6)", "size=(4, 3)"),
        ("(1, 1, 3, 5, 7)", "size=(2, 3, 4)"), ("(1, 1, 3, 4)", "size=(5, 6)")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, how", AREA)
def test_area_resampling_matches_torch(shape, how, dtype):
    """Uneven, overlapping windows of PyTorch's adaptive average pooling, up and down, 1-D to 3-D."""
    source = program("area", shape, how, "None", dtype).replace(", align_corners=None", "")
    mine, torch_ = run(source), oracle(source)
    tol = 1e-6 if dtype == "float32" else 1e-13
    assert np.asarray(mine["values"]).shape == np.asarray(torch_["values"]).shape
    assert np.allclose(mine["values"], torch_["values"], atol=tol, rtol=tol)
    assert np.allclose(mine["grad"], torch_["grad"], atol=tol, rtol=tol)
    assert (mine["node"], mine["kind"]) == (torch_["node"], torch_["kind"])


MODULES = """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.randn(1, 2, 3, 3, requires_grad=True)
mods = [nn.UpsamplingBilinear2d(scale_factor=2), nn.UpsamplingBilinear2d(size=(4, 5)), nn.UpsamplingNearest2d(scale_factor=2), nn.Upsample(scale_factor=1.5, mode='bicubic'), nn.Upsample(size=(5, 4), mode='bilinear', align_corners=False)]
outs = [m(x) for m in mods]
sum((o * o.cos()).sum() for o in outs).backward()
values = [o.tolist() for o in outs] + [x.grad.tolist()]
texts = [str(m) for m in mods]
"""


def test_upsampling_modules_match_torch():
    mine, torch_ = run(MODULES), oracle(MODULES)
    for a, b in zip(mine["values"], torch_["values"]):
        assert np.allclose(a, b, atol=1e-5)
    assert mine["texts"] == torch_["texts"]


def test_bilinear_by_hand():
    """align_corners=True on a 2×2 corner grid to 3×3: the centre is the mean of the four corners."""
    ran = run("import torch\nimport torch.nn.functional as F\n"
              "y = F.interpolate(torch.tensor([[[[0., 2.], [4., 10.]]]]), size=(3, 3), mode='bilinear', "
              "align_corners=True)\n")
    assert ran["y"].tolist() == [[[[0., 1., 2.], [2., 4., 6.], [4., 7., 10.]]]]


@pytest.mark.parametrize("source, words", [
    ("F.interpolate(torch.ones(1, 1, 2), scale_factor=2, mode='bilinear')", "Got 3D input, but bilinear mode needs 4D"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=2, mode='trilinear')", "trilinear mode needs 5D"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=2, mode='lanczos')", "mode='lanczos' is not supported"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=2, align_corners=True)", "align_corners option can only"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=(2, 2, 2), mode='bilinear')", "same number of spatial"),
    ("F.interpolate(torch.ones(1, 1, 2, 2), scale_factor=0.2, mode='bilinear')", "greater than 0"),
    ("F.interpolate(torch.ones(1, 1, 4, 4), scale_factor=0.5, mode='bilinear', antialias=True)", "antialias=True"),
    ("F.interpolate(torch.tensor([[[[1.0, float('inf')], [2.0, 3.0]]]]), scale_factor=2, mode='bilinear')",
     "holding inf or nan"),
    ("F.interpolate(torch.ones(1, 1, 2, 2, dtype=torch.int64), scale_factor=2, mode='bilinear')", "not implemented"),
])
def test_bad_interpolation_calls_are_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {source}\n")
    assert words in info.value.message
