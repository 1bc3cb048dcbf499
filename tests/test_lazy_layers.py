"""Lazy layers (nn.LazyLinear, nn.LazyConv1d/2d), nn.CosineEmbeddingLoss and embedding's node name,
against numbers and text recorded from torch 2.13 and, where installed, torch itself."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import run

LAZY = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.LazyConv2d(4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(5), nn.LazyLinear(2, bias=False))
before = str(net)
weight = repr(net[3].weight)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
y = net(torch.randn(2, 3, 4, 4))
after = str(net)
shapes = [tuple(net[3].weight.shape), tuple(net[0].weight.shape)]
out = y.tolist()
y.sum().backward()
opt.step()
last = net[4].weight.tolist()
count = sum(p.numel() for p in net.parameters())
"""


def test_lazy_layers_learn_their_inputs_at_the_first_call():
    ran = run(LAZY)
    # recorded from torch 2.13 running the same program
    assert ran["before"].splitlines()[1:2] + ran["before"].splitlines()[4:6] == [
        "  (0): LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))",
        "  (3): LazyLinear(in_features=0, out_features=5, bias=True)",
        "  (4): LazyLinear(in_features=0, out_features=2, bias=False)"]
    assert ran["weight"] == "<UninitializedParameter>"
    assert ran["after"].splitlines()[1:2] + ran["after"].splitlines()[4:6] == [
        "  (0): Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))",
        "  (3): Linear(in_features=64, out_features=5, bias=True)",
        "  (4): Linear(in_features=5, out_features=2, bias=False)"]
    assert ran["shapes"] == [(5, 64), (4, 3, 3, 3)]
    # the draws are the full layers' (kaiming_uniform_ then the bias), after the input's randn
    assert np.allclose(ran["out"], [[-0.03802165389060974, 0.005008854903280735],
                                    [-0.053963642567396164, -0.1517593413591385]], atol=1e-6)
    # the optimizer made before the first call holds the same tensors, so it trains them
    assert np.allclose(ran["last"][0], [-0.38918742537498474, -0.3618628680706024, -0.049883682280778885,
                                        -0.08453011512756348, -0.27577537298202515], atol=1e-6)
    assert ran["count"] == 4 * 27 + 4 + 5 * 64 + 5 + 2 * 5


def test_lazy_conv1d_prints_as_pytorch():
    ran = run("import torch.nn as nn\na = str(nn.LazyConv1d(3, 2))\nb = nn.LazyLinear(3).in_features\n")
    assert (ran["a"], ran["b"]) == ("LazyConv1d(0, 3, kernel_size=(2,), stride=(1,))", 0)


@pytest.mark.parametrize("source, words", [
    ("nn.LazyLinear(-1)", "out_features must be a non-negative integer"),
    ("nn.LazyLinear(2)(torch.tensor(1.0))", "the input needs at least one dimension"),
    ("nn.LazyConv2d(4, 3)(torch.ones(3, 3))", "expected a 3D (unbatched) or 4D (batched) input"),
    ("nn.LazyConv2d(4, 3, groups=2)(torch.ones(1, 3, 5, 5))", "in_channels must be divisible by groups"),
])
def test_bad_lazy_layers_are_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\n{source}\n")
    assert words in info.value.message


COSINE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
a = torch.randn(4, 5, requires_grad=True)
b = torch.randn(4, 5, requires_grad=True)
y = torch.tensor([1, -1, 1, -1])
loss = nn.CosineEmbeddingLoss(margin=-0.5)(a, b, y)
loss.backward()
value, name = loss.item(), loss.grad_fn.name()
ga = a.grad[0].tolist()
single = F.cosine_embedding_loss(a[0], b[1], torch.tensor(-1), reduction="none").item()
none = F.cosine_embedding_loss(a, b, y, reduction="none").grad_fn.name()
text = str(nn.CosineEmbeddingLoss(0.3))
"""


def test_cosine_embedding_loss_is_pytorchs():
    ran = run(COSINE)
    # recorded from torch 2.13
    assert np.isclose(ran["value"], 0.9233208298683167, rtol=1e-6)
    assert np.allclose(ran["ga"], [-0.021147508174180984, 0.029391761869192123, -0.0867750495672226,
                                   -0.04922037944197655, -0.05517079681158066], rtol=1e-5)
    assert np.isclose(ran["single"], 0.582960307598114, rtol=1e-6)
    assert (ran["name"], ran["none"], ran["text"]) == ("MeanBackward0", "AddBackward0", "CosineEmbeddingLoss()")


@pytest.mark.parametrize("call, words", [
    ("F.cosine_embedding_loss(a, b, torch.ones(3, 1))", "0D or 1D target tensor expected, multi-target not supported"),
    ("F.cosine_embedding_loss(a, b, torch.tensor(1.))",
     "0D target tensor expects 1D input tensors, but found inputs with sizes [3, 4] and [3, 4]."),
    ("F.cosine_embedding_loss(a, b, torch.ones(3), reduction='avg')", "avg is not a valid value for reduction"),
])
def test_bad_cosine_embedding_loss_arguments(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn.functional as F\na = torch.ones(3, 4)\nb = torch.ones(3, 4)\n{call}\n")
    assert words in info.value.message


def test_embedding_node_is_pytorchs():
    ran = run("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\ne = nn.Embedding(4, 2)\n"
              "y = e(torch.tensor([[1, 3], [1, 0]]))\nname = y.grad_fn.name()\ny.sum().backward()\n"
              "g = e.weight.grad.tolist()\n")
    assert ran["name"] == "EmbeddingBackward0"
    assert ran["g"] == [[1.0, 1.0], [2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]


def test_type_and_integer_casts_as_the_tutorials_count_correct_guesses():
    ran = run("import torch\nx = torch.tensor([1.5, 2.0, -0.5])\ncorrect = (x > 1).type(torch.float).sum().item()\n"
              "names = [x.type(), x.long().type(), x.int().type(), x.bool().type()]\nvalues = x.long().tolist()\n"
              "same = x.type(torch.float32) is x\n")
    # recorded from torch 2.13
    assert ran["correct"] == 2.0
    assert ran["names"] == ["torch.FloatTensor", "torch.LongTensor", "torch.IntTensor", "torch.BoolTensor"]
    assert ran["values"] == [1, 2, 0] and ran["same"] is True
    with pytest.raises(GradcliError) as info:
        run("import torch\ntorch.ones(2).type('complex')\n")
    assert "unknown dtype 'complex'" in info.value.message


def test_a_loop_over_a_lazy_sequential_prints_each_shape_as_d2l():
    ran = run("import torch\nfrom torch import nn\nnet = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), "
              "nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(), nn.LazyLinear(10))\n"
              "X = torch.randn(1, 1, 28, 28)\nshapes = []\nfor layer in net:\n    X = layer(X)\n"
              "    shapes.append(tuple(X.shape))\n")
    assert ran["shapes"] == [(1, 6, 28, 28), (1, 6, 28, 28), (1, 6, 14, 14), (1, 1176), (1, 10)]


PARAMETER_TYPES = """
import torch
import torch.nn as nn
m = nn.LazyLinear(3)
print(type(m.weight), isinstance(m.weight, nn.Parameter), m.weight)
try:
    print(m.weight.shape)
except RuntimeError as e:
    print("RuntimeError", e)
try:
    print(sum(p.numel() for p in m.parameters()))
except ValueError as e:
    print("ValueError", e)
print(m.weight.requires_grad, m.weight.dtype)
m(torch.ones(2, 4))
print(m, m.weight.shape, type(m.weight))
torch.manual_seed(0)
p = nn.Linear(2, 1).weight
print(type(p), type(p) is nn.Parameter, type(p).__name__, isinstance(p, torch.Tensor))
print(p)
print([p], f"{p * 2}")
print(type(p.data), isinstance(p.data, nn.Parameter), nn.Parameter(torch.ones(2), requires_grad=False))
"""


def test_parameter_types_and_an_uninitialized_parameter_print_what_torch_printed():
    # printed by torch 2.13 running PARAMETER_TYPES
    uses = ("This error happens when you are using a `LazyModule` or explicitly manipulating "
            "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call `forward` with a dummy "
            "batch to initialize the parameters before calling torch functions")
    assert "\n".join(run(PARAMETER_TYPES).printed).split("\n") == [
        "<class 'torch.nn.parameter.UninitializedParameter'> True <UninitializedParameter>",
        "RuntimeError Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
        "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` to "
        "initialize the parameters before accessing their attributes.",
        "ValueError Attempted to use an uninitialized parameter in <method 'numel' of 'torch._C.TensorBase' objects>. "
        + uses,
        "True torch.float32",
        "Linear(in_features=4, out_features=3, bias=True) torch.Size([3, 4]) <class 'torch.nn.parameter.Parameter'>",
        "<class 'torch.nn.parameter.Parameter'> True Parameter True",
        "Parameter containing:",
        "tensor([[-0.0053,  0.3793]], requires_grad=True)",
        "[Parameter containing:",
        "tensor([[-0.0053,  0.3793]], requires_grad=True)] tensor([[-0.0106,  0.7586]], grad_fn=<MulBackward0>)",
        "<class 'torch.Tensor'> False Parameter containing:",
        "tensor([1., 1.])"]


def test_parameter_types_against_torch():
    pytest.importorskip("torch")
    import subprocess
    import sys
    want = subprocess.run([sys.executable, "-c", PARAMETER_TYPES], capture_output=True, text=True, timeout=120)
    assert want.returncode == 0, want.stderr
    assert "\n".join(run(PARAMETER_TYPES).printed) + "\n" == want.stdout
