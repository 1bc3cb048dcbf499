"""Max pooling's choices (ties, nan, padding, ceil_mode, return_indices), max unpooling, and the
conv/pool arithmetic's dtypes and memory: each against numbers recorded from torch 2.13, and
against torch itself where it is installed."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import run

# recorded from torch 2.13: F.max_pool2d(x, kernel, ..., return_indices=True)[1].tolist()
PICKS = [
    ("[[[[float('nan'), 1., float('nan'), 0.]]]]", "(1, 4)", "", [[[[2]]]]),  # the last nan
    ("[[[[1., float('nan'), float('nan'), 0.]]]]", "(1, 4)", "", [[[[2]]]]),
    ("[[[[2., 2., 1., 0.]]]]", "(1, 4)", "", [[[[0]]]]),  # the first of tied maxima
    ("[[[[float('-inf'), float('-inf'), float('-inf'), 1.]]]]", "2", ", padding=1", [[[[0, 1, 3]]]]),  # never padding
]


@pytest.mark.parametrize("x, kernel, extra, want", PICKS)
def test_max_pool_picks_the_index_pytorch_picks(x, kernel, extra, want):
    ran = run(f"import torch\nimport torch.nn.functional as F\nx = torch.tensor({x}, requires_grad=True)\n"
              f"y, i = F.max_pool2d(x, {kernel}{extra}, return_indices=True)\ni = i.tolist()\n"
              "y.sum().backward()\ng = x.grad.reshape(-1).tolist()\n")
    assert ran["i"] == want
    flat = [0.0] * 4
    for k in np.ravel(want):
        flat[k] += 1.0
    assert ran["g"] == flat  # the gradient goes to the picked element only


CEIL = """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.arange(50.0).reshape(1, 2, 5, 5).requires_grad_()
y, i = F.max_pool2d(x * torch.tensor([1.0, -1.0]).reshape(1, 2, 1, 1), 2, ceil_mode=True, return_indices=True)
shape = tuple(y.shape)
idx = i.tolist()
z = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)(x)
zshape = tuple(z.shape)
one = F.max_pool1d(torch.arange(7.0).reshape(1, 1, 7), 2, ceil_mode=True, return_indices=True)[1].tolist()
"""


def test_ceil_mode_keeps_the_last_partial_window_as_pytorch():
    ran = run(CEIL)
    # recorded from torch 2.13
    assert ran["shape"] == (1, 2, 3, 3) and ran["zshape"] == (1, 2, 3, 3)
    assert ran["idx"] == [[[[6, 8, 9], [16, 18, 19], [21, 23, 24]], [[0, 2, 4], [10, 12, 14], [20, 22, 24]]]]
    assert ran["one"] == [[[1, 3, 5, 6]]]


UNPOOL = """
import torch
import torch.nn as nn
x = torch.tensor([[[[1., 5., 2., 0.], [3., 4., 8., 7.], [6., 0., 1., 2.], [9., 3., 4., 5.]]]], requires_grad=True)
pool = nn.MaxPool2d(2, stride=2, return_indices=True)
unpool = nn.MaxUnpool2d(2, stride=2)
out, ind = pool(x)
u = unpool(out, ind, output_size=x.size())
name = u.grad_fn.name()
values = u.tolist()
(u * torch.arange(16.0).reshape(1, 1, 4, 4)).sum().backward()
g = x.grad.tolist()
text = repr(unpool)
"""


def test_max_unpool_puts_each_value_back_at_its_index():
    ran = run(UNPOOL)
    assert ran["values"] == [[[[0., 5., 0., 0.], [0., 0., 8., 0.], [0., 0., 0., 0.], [9., 0., 0., 5.]]]]
    # each kept value's gradient is the weight at its own place (1, 6, 12, 15)
    assert ran["g"] == [[[[0., 1., 0., 0.], [0., 0., 6., 0.], [0., 0., 0., 0.], [12., 0., 0., 15.]]]]
    # recorded from torch 2.13
    assert ran["name"] == "MaxUnpool2DBackward0"
    assert ran["text"] == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"


@pytest.mark.parametrize("source, words", [
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2), 2)",
     "elements in indices should be type int64 but got: Float"),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 1, dtype=torch.long), 2)",
     "Expected shape of indices to be same as that of the input tensor ([1, 1, 2, 2]) but got indices tensor with "
     "shape: [1, 1, 2, 1]"),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.tensor([[[[0, 16], [2, 3]]]]), 2)",
     "Found an invalid max index: 16 (output volumes are of size 4x4)"),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.tensor([[[[0, -1], [2, 3]]]]), 2)",
     "Found an invalid max index: -1 (output volumes are of size 4x4)"),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2, dtype=torch.long), 2, output_size=(9, 9))",
     'invalid output_size "(9, 9)" (dim 0 must be between 2 and 6)'),
    ("F.max_unpool2d(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 2, 2, dtype=torch.long), 2, output_size=(1, 2, 3))",
     "output_size should be a sequence containing 2 or 4 elements, but it has a length of '3'"),
    ("F.avg_pool2d(torch.ones(1, 1, 5, 5), 2, divisor_override=0)", "divisor must be not zero"),
    ("F.max_unpool2d(*F.max_pool2d(torch.eye(4).reshape(1, 1, 4, 4), 3, stride=1, return_indices=True), 3, stride=1)",
     "two inputs of one plane have the same index"),
])
def test_bad_unpool_and_pool_arguments_are_pytorchs_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn.functional as F\n{source}\n")
    assert words in info.value.message


def test_unfold_with_a_one_by_one_kernel_is_a_new_writable_tensor():
    ran = run("import torch\nimport torch.nn.functional as F\nx = torch.ones(1, 2, 2, 2)\nu = F.unfold(x, 1)\n"
              "u += 1\ns = x.sum().item()\nt = u.sum().item()\n")
    assert (ran["s"], ran["t"]) == (8.0, 16.0)


def test_conv_and_pool_gradients_keep_float32():
    ran = run("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
              "net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8, 1))\n"
              "net(torch.randn(2, 1, 6, 6)).sum().backward()\nd = [p.grad.dtype for p in net.parameters()]\n"
              "c = net[0](torch.randn(2, 1, 6, 6)).is_contiguous()\n")
    assert set(map(str, ran["d"])) == {"float32"}
    assert ran["c"] is True  # PyTorch's conv output is contiguous: a .view() of it must work


@pytest.mark.parametrize("shape, kernel, options", [
    ((2, 3, 7, 6), 2, {}),
    ((2, 3, 7, 6), 3, {"stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 9, 9), 2, {"stride": 1, "dilation": 2}),
    ((1, 2, 8, 5), (3, 2), {"stride": (2, 1), "padding": (1, 0), "ceil_mode": True}),
])
def test_max_pool_values_indices_and_gradients_against_torch(shape, kernel, options):
    torch = pytest.importorskip("torch")
    import gradcli.nn.conv as C
    from gradcli.engine.tensor import Tensor
    x = np.random.default_rng(0).integers(-3, 4, size=shape).astype(np.float32)  # many ties
    x.reshape(-1)[::7] = np.nan
    tx, gx = torch.tensor(x, requires_grad=True), Tensor(x, requires_grad=True)
    want, want_i = torch.nn.functional.max_pool2d(tx, kernel, return_indices=True, **options)
    got, got_i = C.max_pool2d(gx, kernel, return_indices=True, **options)
    assert got.shape == tuple(want.shape)
    assert got_i.tolist() == want_i.tolist()
    np.testing.assert_array_equal(got._data, want.detach().numpy())
    g = np.random.default_rng(1).standard_normal(got.shape).astype(np.float32)
    (got * Tensor(g)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(gx.grad._data, tx.grad.numpy(), rtol=1e-5, atol=1e-6)  # overlaps add in another order
    if not options:  # windows that overlap give repeated indices, refused (see above)
        unpooled = torch.nn.functional.max_unpool2d(want.detach(), want_i, kernel, output_size=shape[2:])
        mine = C.max_unpool2d(Tensor(got._data), got_i, kernel, output_size=shape[2:])
        np.testing.assert_array_equal(mine._data, unpooled.numpy())


AVERAGES = """
import torch
import torch.nn as nn
import torch.nn.functional as F
x = torch.arange(25.0).reshape(1, 1, 5, 5)
print(F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False).tolist())
print(F.avg_pool2d(x, 3, 2, 1, ceil_mode=True).tolist())
print(nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)(x).tolist())
print(F.avg_pool2d(x, 2, 3, 1, divisor_override=3).tolist())
t = torch.arange(6.0).reshape(1, 1, 6).requires_grad_()
print(F.avg_pool1d(t, 4, 3, 1, ceil_mode=True).tolist(), F.avg_pool1d(t, 2).grad_fn.name())
print(F.max_pool1d(t, 2).grad_fn.name(), nn.MaxPool1d(2)(t).grad_fn.next_functions[0][0].name())
"""


def test_average_pooling_ceil_mode_and_divisors_print_what_torch_printed():
    # printed by torch 2.13 running AVERAGES
    assert run(AVERAGES).printed == [
        "[[[[3.0, 5.0, 6.5], [13.0, 15.0, 16.5], [20.5, 22.5, 24.0]]]]",
        "[[[[1.3333333730697632, 3.0, 2.6666667461395264], [7.0, 12.0, 9.0], [8.0, 13.0, 9.333333015441895]]]]",
        "[[[[3.0, 4.5, 6.0], [10.5, 12.0, 13.5], [18.0, 19.5, 21.0]]]]",
        "[[[[0.0, 1.6666666269302368], [8.333333015441895, 20.0]]]]",
        "[[[0.75, 3.5, 2.5]]] SqueezeBackward1",
        "SqueezeBackward1 MaxPool2DWithIndicesBackward0"]


@pytest.mark.parametrize("shape, kernel, stride, padding", [
    ((2, 2, 5, 7), 3, 2, 1), ((1, 1, 6, 6), 2, 2, 0), ((1, 2, 5, 5), 3, 3, 1), ((2, 1, 7, 4), (3, 2), (2, 3), (1, 0)),
    ((1, 1, 4, 4), 3, 2, 0), ((2, 3, 7), 3, 2, 1), ((3, 9), 2, 2, 1)])
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_average_pooling_values_gradients_and_nodes_against_torch(shape, kernel, stride, padding, ceil_mode,
                                                                   count_include_pad):
    torch = pytest.importorskip("torch")
    import gradcli.nn.conv as C
    from gradcli.engine.tensor import _wrap
    one_d = len(shape) < 4
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    tx, gx = torch.tensor(x, requires_grad=True), _wrap(x.copy()).requires_grad_(True)
    theirs, mine = (torch.nn.functional.avg_pool1d, C.avg_pool1d) if one_d else (torch.nn.functional.avg_pool2d,
                                                                               C.avg_pool2d)
    want = theirs(tx, kernel, stride, padding, ceil_mode, count_include_pad)
    got = mine(gx, kernel, stride, padding, ceil_mode, count_include_pad)
    assert got.shape == tuple(want.shape) and got.grad_fn.name == want.grad_fn.name()
    np.testing.assert_allclose(got._data, want.detach().numpy(), rtol=1e-6, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(got.shape).astype(np.float32)
    (got * _wrap(g)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(gx.grad._data, tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_average_pooling_with_uneven_divisors_passes_the_check_and_a_wrong_vjp_fails(patched):
    import gradcli as g
    import gradcli.nn.conv as C
    from gradcli.check import check_gradients
    from gradcli.engine import ops as O

    def report():
        x = g.tensor(np.random.default_rng(2).standard_normal((1, 2, 5, 5)), requires_grad=True)
        out = C.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)
        weights = g.tensor(np.random.default_rng(3).standard_normal(out.shape))
        out.backward(weights)
        return check_gradients(out, {"x": x}, weights, {"x": x.grad._data})

    assert report().status == "pass"
    right = O.AVG_POOL.vjps[0]
    patched(O.AVG_POOL, (lambda *a, **k: right(*a, **k) * 1.1,))
    assert report().status == "fail"
