"""A tensor's memory as PyTorch reports it (element_size, data_ptr, stride), its resizes, and PyTorch's other
spellings the census found (select, type_as, subtract, multiply, isclose, is_tensor, torch.Size, x.name).

Each line is what torch 2.13 printed for the same program; `test_the_texts_are_torchs_own` reruns torch."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradcli.errors import ArgumentError
from language_helpers import fails, run, torch_printed

SOURCE = """import torch
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)
print(x.name, x.is_cuda, x.real is x, x.element_size(), x.double().element_size(), torch.ones(2, dtype=torch.bool).element_size())
print(x.stride(), x.t().stride(), x.stride(-1), x.data_ptr() == x.view(6).data_ptr(), x[1].data_ptr() - x.data_ptr())
y = x.resize(3, 2)
print(y)
(y * torch.arange(6.).view(3, 2)).sum().backward()
print(x.grad)
print(x.select(1, 2), x.select(0, -1).grad_fn.name())
print(x.type_as(torch.ones(1, dtype=torch.float64)).dtype, torch.multiply(x, 2.0), x.subtract(1.0, alpha=2))
print(torch.is_tensor(x), torch.is_tensor([1]), torch.numel(x), torch.Size([2, 3]))
print(torch.isclose(x, x + 1e-6), torch.isclose(torch.tensor([1.0, float('nan')]), torch.tensor([1.0, float('nan')]), equal_nan=True))
a = torch.arange(6.)
print(a.resize_(2, 2), a.shape)
a.resize_(2, 3)
print(a)
b = torch.arange(4.).resize_as_(torch.ones(2, 2))
print(b)
w = torch.ones(3, requires_grad=True)
v = torch.arange(3.)
s = (w * v).sum()
v.resize_(3)
s.backward()
print(w.grad)
for f in (lambda: x.resize_(6), lambda: (x * 2).resize_(2, 3), lambda: x.resize(2, 2), lambda: x.select(1, 5)):
    try:
        f()
    except (RuntimeError, IndexError) as e:
        print(type(e).__name__, str(e).strip())
"""

PRINTED = """None False True 4 8 1
(3, 1) (1, 3) 1 True 12
tensor([[ 0.5000, -1.0000],
        [ 2.0000,  1.5000],
        [ 0.3000, -0.7000]], grad_fn=<ResizeBackward>)
tensor([[0., 1., 2.],
        [3., 4., 5.]])
tensor([ 2.0000, -0.7000], grad_fn=<SelectBackward0>) SelectBackward0
torch.float64 tensor([[ 1.0000, -2.0000,  4.0000],
        [ 3.0000,  0.6000, -1.4000]], grad_fn=<MulBackward0>) tensor([[-1.5000, -3.0000,  0.0000],
        [-0.5000, -1.7000, -2.7000]], grad_fn=<SubBackward0>)
True False 6 torch.Size([2, 3])
tensor([[True, True, True],
        [True, True, True]]) tensor([True, True])
tensor([[0., 1.],
        [2., 3.]]) torch.Size([2, 2])
tensor([[0., 1., 2.],
        [3., 4., 5.]])
tensor([[0., 1.],
        [2., 3.]])
tensor([0., 1., 2.])
RuntimeError cannot resize variables that require grad
RuntimeError cannot resize variables that require grad
RuntimeError requested resize to 2x2 (4 elements in total), but the given tensor has a size of 2x3 (6 elements). autograd's resize can only change the shape of a given tensor, while preserving the number of elements.
IndexError select(): index 5 out of range for tensor of size [2, 3] at dimension 1""".splitlines()


def test_each_prints_what_torch_printed() -> None:
    assert "\n".join(run(SOURCE).printed).splitlines() == PRINTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == PRINTED


def test_a_grown_tensor_is_zeros_past_its_old_storage() -> None:
    """PyTorch leaves those elements uninitialised; gradcli's uninitialised memory is zeros, as torch.empty's."""
    assert run("import torch\na = torch.tensor([1.0, 2.0])\na.resize_(2, 2)\nprint(a.tolist())\n").printed == \
        ["[[1.0, 2.0], [0.0, 0.0]]"]


@pytest.mark.parametrize("source, words", [
    ("torch.ones(2).resize_(-1)", "negative dimension"),
    ("torch.ones(2, 3).select(1, 1.0)", "must be int, not float"),
    ("torch.ones(2).resize_as_([1, 2])", "must be Tensor"),
    ("torch.isclose(torch.ones(2), 1.0)", "argument 'other' must be Tensor"),
])
def test_misuse_is_named(source: str, words: str) -> None:
    assert words in str(fails("import torch\n" + source + "\n", ArgumentError))


def test_check_proves_resize_and_select(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "resize.py", "import torch\n"
                              "x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)\n"
                              "y = (x.resize(3, 2) ** 2).select(1, 0).sum() + x.select(0, 1).subtract(x[0]).exp().sum()\n"
                              "y.backward()\n")
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}



IN_PLACE_SHAPES = """import torch
z = torch.zeros(3)
v = z.view(3)
z.unsqueeze_(0)
print(z.shape, v.shape)
z[0, 1] = 5.0
print(v)
a = torch.ones(2, 1, 3)
print(a.squeeze_().shape, a.unsqueeze_(-1).shape, a.squeeze_(2).shape, a.squeeze_(0).shape)
x = torch.ones(2, 1, requires_grad=True)
try:
    x.squeeze_()
except RuntimeError as e:
    print(e)
with torch.no_grad():
    b = torch.ones(1, 2)
    b.squeeze_(0)
    print(b)
with torch.no_grad():
    x.squeeze_()
print(x.shape, x.requires_grad)
"""


def test_squeeze_and_unsqueeze_in_place_print_what_torch_printed() -> None:
    """The shape changes in the tensor's own memory: a view made before sees the writes made after."""
    assert run(IN_PLACE_SHAPES).printed == """torch.Size([1, 3]) torch.Size([3])
tensor([0., 5., 0.])
torch.Size([2, 3]) torch.Size([2, 3, 1]) torch.Size([2, 3]) torch.Size([2, 3])
a leaf Variable that requires grad is being used in an in-place operation.
tensor([1., 1.])
torch.Size([2]) True
""".splitlines()
    assert torch_printed(IN_PLACE_SHAPES) == """torch.Size([1, 3]) torch.Size([3])
tensor([0., 5., 0.])
torch.Size([2, 3]) torch.Size([2, 3, 1]) torch.Size([2, 3]) torch.Size([2, 3])
a leaf Variable that requires grad is being used in an in-place operation.
tensor([1., 1.])
torch.Size([2]) True
""".splitlines()


IN_PLACE_VIEWS_ON_THE_GRAPH = """import torch
x = torch.arange(6.0).reshape(2, 1, 3).requires_grad_()
for name in ["squeeze_", "squeeze_1", "squeeze_01", "unsqueeze_", "transpose_", "swapaxes_"]:
    y = x * 2
    if name == "squeeze_":
        y.squeeze_()
    elif name == "squeeze_1":
        y.squeeze_(1)
    elif name == "squeeze_01":
        y.squeeze_((0, 1))
    elif name == "unsqueeze_":
        y.unsqueeze_(0)
    elif name == "transpose_":
        y.transpose_(0, 2)
    else:
        y.swapaxes_(0, 2)
    print(name, y.grad_fn.name(), tuple(y.shape), y.grad_fn.next_functions[0][0].name())
    (y * torch.arange(6.0).reshape(y.shape)).sum().backward()
    print(x.grad.flatten().tolist())
    x.grad = None
m = torch.ones(2, 3, requires_grad=True)
y = m.exp()
y.t_()
print(y.grad_fn.name(), y.shape)
try:
    y.sum().backward()
except RuntimeError as e:
    print(str(e)[:140])
b = torch.ones(2, 3, 4, requires_grad=True)
print(b.mT.shape, b.mT.grad_fn.name(), b.mH.shape, m.H.grad_fn.name(), m.T.grad_fn.name(), m.mT.grad_fn.name())
for bad in [torch.ones(3), b]:
    try:
        bad.H
    except RuntimeError as e:
        print(e)
try:
    torch.ones(3).mT
except RuntimeError as e:
    print(e)
s = torch.tensor(2.0, requires_grad=True)
print(s.mT is s, s.mT.grad_fn)
"""


def test_in_place_views_on_the_graph_are_recorded_as_pytorch_records_them() -> None:
    """squeeze_/unsqueeze_/t_/transpose_ of a non-leaf: its node becomes the in-place view's (SqueezeBackward3,
    TBackward1...), its gradient flows back reshaped, and a node that saved it refuses backward."""
    printed = run(IN_PLACE_VIEWS_ON_THE_GRAPH).printed
    assert printed[:4] == ["squeeze_ SqueezeBackward3 (2, 3) MulBackward0", "[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]",
                           "squeeze_1 SqueezeBackward4 (2, 3) MulBackward0", "[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]"]
    assert printed[9] == "[0.0, 4.0, 8.0, 2.0, 6.0, 10.0]"  # y[k, 0, i] = 2·x[i, 0, k] meets weight 2k + i
    assert printed[13].startswith("one of the variables needed for gradient computation has been modified")
    assert printed == torch_printed(IN_PLACE_VIEWS_ON_THE_GRAPH)


def test_an_in_place_view_of_a_view_in_a_graph_is_refused_by_name() -> None:
    error = fails("import torch\nx = torch.ones(2, 1, requires_grad=True)\ny = (x * 2)[0:1]\ny.squeeze_()\n",
                  ArgumentError)
    assert "squeeze_ of a view in a graph" in str(error) and "y.squeeze(" in error.hint
