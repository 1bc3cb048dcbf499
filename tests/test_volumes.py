"""The 3-D layers (Conv3d, MaxPool3d, AvgPool3d, BatchNorm3d, LazyConv3d), the lazy batch norms, adaptive max and
1-D average pooling, and nn.DataParallel as PyTorch's CPU build runs it.

Each line is what torch 2.13 printed for the same program (seeded draws, values, node names, module text);
`test_the_texts_are_torchs_own` reruns torch."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradcli.errors import ArgumentError, ShapeError
from language_helpers import fails, run, torch_printed

SOURCE = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
c = nn.Conv3d(2, 3, 3, stride=2, padding=1)
print(c, c.weight.shape, c.bias)
x = torch.randn(1, 2, 4, 4, 4, requires_grad=True)
y = c(x)
print(y.shape, y.grad_fn.name(), round(y.sum().item(), 3))
p = nn.MaxPool3d(2)
q = nn.AvgPool3d(2, stride=1)
print(p, q)
m = p(x)
a = q(x)
print(m.grad_fn.name(), a.grad_fn.name(), round(m.sum().item(), 3), round(a.sum().item(), 3))
bn = nn.BatchNorm3d(3)
print(bn)
z = bn(y)
print(z.grad_fn.name(), bn.running_mean)
(z.pow(2).sum() + m.sum() + a.sum()).backward()
print(round(x.grad.sum().item(), 2), x.grad[0, 0, 0])
lz = nn.LazyBatchNorm2d()
print(lz)
print(lz.weight, lz.running_mean)
out = lz(torch.randn(2, 3, 2, 2))
print(lz, type(lz).__name__)
print(lz.weight, lz.running_mean, lz.num_batches_tracked)
l1 = nn.LazyBatchNorm1d()
print(l1(torch.randn(4, 2)).shape, l1)
x2 = torch.randn(1, 2, 4, 4, requires_grad=True)
o, i = F.adaptive_max_pool2d(x2, 2, return_indices=True)
print(o.grad_fn.name(), i)
print(nn.AdaptiveMaxPool2d((2, 2)), nn.AdaptiveAvgPool1d(3))
x1 = torch.randn(1, 2, 6, requires_grad=True)
r = nn.AdaptiveAvgPool1d(3)(x1)
print(r, r.grad_fn.name(), r.grad_fn.next_functions[0][0].name())
print(nn.AdaptiveMaxPool2d(1)(x2).grad_fn.name(), F.max_pool3d(x, 2, return_indices=True)[1].shape)
lc = nn.LazyConv3d(4, 2)
print(lc(x).shape, lc)
model = nn.DataParallel(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)))
print(model)
print(model.device_ids, list(model.state_dict().keys()), type(model.module).__name__)
out = model(torch.ones(4, 2))
print(out.grad_fn.name(), out.sum())
out.sum().backward()
print(model.module[0].weight.grad)
"""


@pytest.fixture(scope="module")
def printed() -> list[str]:
    return "\n".join(run(SOURCE).printed).splitlines()


def test_each_prints_what_torch_printed(printed: list[str]) -> None:
    assert printed == EXPECTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == EXPECTED


@pytest.mark.parametrize("source, kind, words", [
    ("nn.BatchNorm3d(2)(torch.ones(2, 2, 3, 3))", ShapeError, "expected 5D input (got 4D input)"),
    ("nn.Conv3d(2, 1, 2)(torch.ones(1, 3, 2, 2, 2))", ShapeError, "to have 2 channels, but got 3 channels"),
    ("F.adaptive_max_pool2d(torch.ones(1, 1, 4, 4), 3)", ArgumentError, "does not divide the input size"),
    ("nn.DataParallel(5)", ArgumentError, "module must be an nn.Module"),
    ("nn.LazyBatchNorm2d()(torch.ones(2, 3))", ShapeError, "expected 4D input (got 2D input)"),
])
def test_misuse_is_named(source: str, kind: type, words: str) -> None:
    error = fails("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" + source + "\n", kind)
    assert words in str(error)


def test_check_proves_the_3d_layers(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "volumes.py", "import torch\nimport torch.nn.functional as F\n"
                              "torch.manual_seed(0)\n"
                              "x = torch.randn(1, 1, 3, 3, 3, requires_grad=True)\n"
                              "w = torch.randn(1, 1, 2, 2, 2, requires_grad=True)\n"
                              "y = F.conv3d(x, w, padding=1)\n"
                              "z = F.max_pool3d(y, 2) .sum() + F.avg_pool3d(y, 2, stride=1).pow(2).sum()\n"
                              "z = z + F.adaptive_max_pool2d(x[0], 1).sum() + F.adaptive_avg_pool1d(x[0, 0], 1).sum()\n"
                              "z.backward()\n")
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}


EXPECTED = """Conv3d(2, 3, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1)) torch.Size([3, 2, 3, 3, 3]) Parameter containing:
tensor([-0.1221, -0.1175, -0.0213], requires_grad=True)
torch.Size([1, 3, 2, 2, 2]) ConvolutionBackward0 -1.92
MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False) AvgPool3d(kernel_size=2, stride=1, padding=0)
MaxPool3DWithIndicesBackward0 AvgPool3DBackward0 23.644 5.139
BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
NativeBatchNormBackward0 tensor([-0.0158, -0.0294,  0.0212])
70.0 tensor([[0.1250, 0.2501, 0.2500, 0.1251],
        [0.2499, 1.5002, 0.4998, 0.2499],
        [0.2499, 0.4998, 0.5000, 0.2500],
        [1.1253, 0.2501, 0.2500, 0.1250]])
LazyBatchNorm2d(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
<UninitializedParameter> <UninitializedBuffer>
BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True) BatchNorm2d
Parameter containing:
tensor([1., 1., 1.], requires_grad=True) tensor([ 0.0054, -0.0634,  0.0292]) tensor(1)
torch.Size([4, 2]) BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
AdaptiveMaxPool2DBackward0 tensor([[[[ 4,  6],
          [13, 11]],

         [[ 1,  6],
          [ 8, 10]]]])
AdaptiveMaxPool2d(output_size=(2, 2)) AdaptiveAvgPool1d(output_size=3)
tensor([[[ 0.5388,  0.5726,  0.0588],
         [-0.7334, -0.2714,  0.4979]]], grad_fn=<SqueezeBackward1>) SqueezeBackward1 AdaptiveAvgPool2DBackward0
AdaptiveMaxPool2DBackward0 torch.Size([1, 2, 2, 2, 2])
torch.Size([1, 4, 3, 3, 3]) Conv3d(2, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1))
DataParallel(
  (module): Sequential(
    (0): Linear(in_features=2, out_features=3, bias=True)
    (1): ReLU()
    (2): Linear(in_features=3, out_features=1, bias=True)
  )
)
[] ['module.0.weight', 'module.0.bias', 'module.2.weight', 'module.2.bias'] Sequential
AddmmBackward0 tensor(0.8101, grad_fn=<SumBackward0>)
tensor([[-1.9022, -1.9022],
        [ 0.0000,  0.0000],
        [ 0.0000,  0.0000]])
""".splitlines()
