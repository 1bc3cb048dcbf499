"""Tensor.mode and torch.put / Tensor.put / put_: the same programs print what PyTorch prints (values, indices,
the node, the gradients to the picked element and to the written sources), and wrong calls are PyTorch's errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

MODE = """import torch
x = torch.tensor([[1., 2., 2., 3., 3.], [5., 4., 4., 5., 1.]], requires_grad=True)
m = x.mode()
print(m.values, m.indices)
m.values.sum().backward()
print(x.grad)
v, i = torch.mode(x, 0)
print(v, i)
v, i = x.mode(dim=0, keepdim=True)
print(v, i)
print(torch.tensor([3, 1, 1, 3, 2]).mode().indices)
print(torch.tensor(2.).mode().values)
y = torch.tensor([[[1., 1.], [2., 3.]], [[4., 4.], [4., 0.]]])
print(y.mode(1).values, y.mode(1).indices)
"""

PUT = """import torch
x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
s = torch.tensor([10., 20., 30.], requires_grad=True)
idx = torch.tensor([0, -1, 0])
y = x.put(idx, s)
print(y)
y2 = x.put(idx, s, accumulate=True)
print(y2)
(y * torch.arange(4.).view(2, 2) + y2 * 2).sum().backward()
print(x.grad, s.grad)
z = x.detach().clone()
z.put_(torch.tensor([[1]]), torch.tensor([7.]))
print(z)
print(torch.put(x, idx, s))
w = x * 1
w.put_(torch.tensor([3, 3]), torch.tensor([1., 2.]), accumulate=True)
print(w)
"""


@pytest.mark.parametrize("source", [MODE, PUT], ids=["mode", "put"])
def test_prints_what_pytorch_prints(source):
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


@pytest.mark.parametrize("call, words", [
    ("x.put(torch.tensor([4]), torch.tensor([1.]))", "out of range: tried to access index 4 on a tensor of 4 elements."),
    ("x.put(torch.tensor([1, 2]), torch.tensor([1.]))",
     "put_(): Expected source and index to have the same number of elements, but got source.numel() = 1, "
     "index.numel() = 2"),
    ("x.put(torch.tensor([1.]), torch.tensor([1.]))", "put_(): Expected a long tensor for index, but got Float"),
    ("x.put_(torch.tensor([1]), torch.tensor([1.]))", "a leaf Variable that requires grad is being used in an in-place"),
    ("torch.tensor([0.5, float('nan')]).mode()", "mode(): the input holds NaN"),
])
def test_wrong_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = {call}\n")
    assert words in info.value.message


def test_check_proves_put_and_mode(tmp_path):
    from gradcli.check import checker
    from gradcli.program.scripts import run_file
    path = tmp_path / "p.py"
    path.write_text("import torch\nx = torch.tensor([[1., 2., 0.5], [3., 4., 3.]], requires_grad=True)\n"
                    "s = torch.tensor([5., 6.], requires_grad=True)\n"
                    "y = x.put(torch.tensor([1, -1]), s * s).mode(1).values\n(y * y).sum().backward()\n")
    result = run_file(Path(path), checker("symbolic"))
    assert result.status == "ok" and result.checks_passed == 1
