"""torch.histc and torch.histogram (Tensor.histc, Tensor.histogram): the same programs print what PyTorch prints
(equal bins stepped as torch.linspace steps them, given edges, weights, density, the data's own range, a
thousand normal draws), and wrong calls are PyTorch's errors."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

PROGRAM = """
import torch
x = torch.tensor([1., 2., 1., 2.5, 4., -1.], requires_grad=True)
print(torch.histc(x, bins=4, min=0, max=3))
print(torch.histc(x, bins=3), x.histc(5))
print(torch.histc(torch.tensor([2., 2.]), bins=2))
h = torch.histogram(x.detach(), bins=4)
print(h.hist, h.bin_edges)
hist, edges = torch.histogram(x.detach(), bins=torch.tensor([0., 1., 2.5, 5.]))
print(hist, edges)
h = torch.histogram(x.detach(), 3, range=(0., 3.), weight=torch.ones(6) * 2, density=True)
print(h.hist, h.bin_edges)
print(torch.histogram(torch.tensor([2., 2.]), 2).bin_edges)
print(torch.histc(torch.tensor([0.1, 0.2, 0.3, 0.7, 1.0]), bins=10, min=0, max=1))
torch.manual_seed(0)
r = torch.randn(1000)
print(torch.histc(r, bins=7, min=-2, max=2), torch.histogram(r, 9).hist)
print(torch.histc(r.double(), bins=13))
"""


def test_prints_what_pytorch_prints():
    assert "\n".join(run(PROGRAM).printed).splitlines() == torch_printed(PROGRAM)


@pytest.mark.parametrize("call, words", [
    ("torch.histc(torch.ones(2), bins=2, min=3, max=1)", "torch.histc: max must be larger than min"),
    ("torch.histc(torch.tensor([1, 2]), bins=2)", "\"histogram_cpu\" not implemented for 'Long'"),
    ("torch.histc(torch.ones(2), bins=0)", "bins must be > 0, but got 0"),
    ("torch.histogram(torch.ones(2), 2, range=(3., 1.))", "min should not exceed max, but got min 3 max 1"),
])
def test_wrong_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\ny = {call}\n")
    assert words in info.value.message
