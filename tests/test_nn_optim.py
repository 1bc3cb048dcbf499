"""`torch.nn` and `torch.optim`: modules, parameters, optimizer formulas, and two training loops that
reproduce PyTorch's losses step for step (numbers recorded from torch 2.13 in float64)."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli as g
from gradcli.nn import modules as nn
from gradcli.nn.losses import LAYERS as LOSSES
from gradcli.optim import optimizers as optim
from gradcli.errors import GradcliError


def _set(layer: nn.Linear, weight: list, bias: list) -> None:
    layer.weight.data = g.tensor(weight)
    layer.bias.data = g.tensor(bias)


def _losses(model: nn.Module, loss_fn: nn.Module, opt: optim.Optimizer, x: g.Tensor, target: g.Tensor,
            steps: int) -> list[float]:
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def test_sequential_with_sgd_momentum_matches_pytorch():
    x = g.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = g.tensor([[0.0], [1.0], [1.0], [0.0]])
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    _set(model[0], [[0.5, -0.4], [-0.3, 0.8], [0.7, 0.6]], [0.1, -0.2, 0.05])
    _set(model[2], [[0.6, -0.5, 0.4]], [0.0])
    losses = _losses(model, LOSSES["MSELoss"](), optim.SGD(model.parameters(), lr=0.2, momentum=0.9), x, y, 60)
    torch_losses = [0.41206584790151546, 0.3339827505058431, 0.30548063005754755, 0.23521406287211902,
                    0.04272157580217241, 0.00251657494908761]
    np.testing.assert_allclose([losses[i] for i in (0, 1, 2, 10, 30, 59)], torch_losses, rtol=1e-12)


def test_classifier_with_adam_matches_pytorch():
    x = g.tensor([[1.0, 0.5], [-0.5, 1.5], [0.2, -1.0], [-1.2, -0.3], [0.8, 0.9], [-0.7, 0.4]])
    classes = g.tensor([0, 1, 2, 2, 0, 1])
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 3))
    _set(model[0], [[0.3, -0.6], [0.8, 0.2], [-0.5, 0.7], [0.1, 0.9]], [0.05, -0.1, 0.2, 0.0])
    _set(model[2], [[0.4, -0.3, 0.6, 0.2], [-0.7, 0.5, 0.1, -0.2], [0.3, 0.8, -0.4, 0.5]], [0.0, 0.1, -0.1])
    losses = _losses(model, LOSSES["CrossEntropyLoss"](), optim.Adam(model.parameters(), lr=0.05), x, classes, 30)
    torch_losses = [1.3852270065246064, 1.241502917712525, 1.1190211672165389, 0.567456641572975,
                    0.18175626029144765, 0.07656308513127663]
    np.testing.assert_allclose([losses[i] for i in (0, 1, 2, 10, 20, 29)], torch_losses, rtol=1e-12)


def test_sgd_formulas_by_hand():
    w = g.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.5, dampening=0.2, weight_decay=0.1, nesterov=False)
    grads = [np.array([0.5, 0.5]), np.array([-1.0, 2.0])]
    want, buf = np.array([1.0, -2.0]), None
    for gr in grads:
        w.grad = g.tensor(gr)
        opt.step()
        d = gr + 0.1 * want
        buf = d if buf is None else 0.5 * buf + 0.8 * d
        want = want - 0.1 * buf
    np.testing.assert_allclose(w._data, want, rtol=1e-15)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_adam_first_step_moves_each_weight_by_lr():
    """With bias correction the first Adam step is lr·g/(|g| + eps/...): lr in the gradient's direction."""
    w = g.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.01)
    w.grad = g.tensor([0.3, -4.0, 1e-3])
    opt.step()
    np.testing.assert_allclose(w._data, [0.99, -1.99, 2.99], atol=1e-7)


def test_adamw_decays_the_weights_before_the_step():
    w = g.tensor([2.0], requires_grad=True)
    opt = optim.AdamW([w], lr=0.1)
    w.grad = g.tensor([0.0])
    opt.step()
    assert w.item() == pytest.approx(2.0 * (1 - 0.1 * 0.01))


def test_zero_grad_sets_to_none_as_pytorch_2():
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    model(g.ones(1, 2)).sum().backward()
    assert model.weight.grad is not None
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None
    model(g.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert model.weight.grad.tolist() == [[0.0, 0.0]]


def test_parameters_and_names():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2, bias=False), nn.LayerNorm(2))
    names = [name for name, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.weight", "3.weight", "3.bias"]
    shapes = [tuple(p.shape) for p in model.parameters()]
    assert shapes == [(4, 3), (4,), (2, 4), (2,), (2,)]
    assert all(p.is_leaf and p.requires_grad for p in model.parameters())
    assert len(model) == 4 and model[-1] is model[3]


@pytest.fixture
def default_dtype():
    """Set the default dtype for one test (PyTorch's draws depend on it) and restore it after."""
    previous = g.get_default_dtype()
    yield g.set_default_dtype
    g.set_default_dtype(previous)


def test_linear_initialisation_is_pytorchs_bit_for_bit(default_dtype):
    """torch.manual_seed(0); nn.Linear(3, 2) in float32, and seed 1, Linear(2, 2) in float64 (torch 2.13)."""
    default_dtype("float32")
    g.manual_seed(0)
    layer = nn.Linear(3, 2)
    assert layer.weight.dtype == np.float32 and layer.weight.is_leaf and layer.weight.requires_grad
    assert layer.weight.tolist() == [[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646],
                                     [-0.4248946011066437, -0.2223689705133438, 0.15482072532176971]]
    assert layer.bias.tolist() == [-0.011439144611358643, 0.45777493715286255]
    default_dtype("float64")
    g.manual_seed(1)
    layer = nn.Linear(2, 2)
    assert layer.weight.tolist() == [[-0.6207644120507653, -0.389538752506578],
                                     [-0.375823698945763, -0.45665065184413406]]
    assert layer.bias.tolist() == [0.07929220542180432, -0.5523297990289765]


def test_dropout_mask_is_pytorchs(default_dtype):
    default_dtype("float64")
    g.manual_seed(2)
    kept = [0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 0, 1]
    assert nn.Dropout(0.25)(g.ones(20)).tolist() == [k / 0.75 for k in kept]


def test_repr_is_pytorchs():
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 2), nn.LeakyReLU(0.2), nn.Softmax(dim=1))
    assert repr(model) == ("Sequential(\n"
                           "  (0): Flatten(start_dim=1, end_dim=-1)\n"
                           "  (1): Linear(in_features=4, out_features=2, bias=True)\n"
                           "  (2): LeakyReLU(negative_slope=0.2)\n"
                           "  (3): Softmax(dim=1)\n"
                           ")")
    assert repr(LOSSES["MSELoss"]()) == "MSELoss()"
    weight = nn.Linear(2, 1).weight
    assert repr(weight).startswith("Parameter containing:\ntensor([[") and repr(weight).endswith("requires_grad=True)")
    assert repr(weight * 2).startswith("tensor(") and repr(weight.detach()).startswith("tensor(")


def test_modules_run_their_functionals():
    x = g.tensor([[[1.0, -2.0], [3.0, -4.0]]], requires_grad=True)
    flat = nn.Flatten()(x)
    assert flat.shape == (1, 4)
    out = nn.Sequential(nn.Flatten(), nn.Hardtanh(-1.5, 2.0), nn.Softplus(beta=2.0))(x)
    assert out.grad_fn.name == "SoftplusBackward0"
    dropout = nn.Dropout(0.5)
    assert dropout.eval()(x) is x
    loss = LOSSES["BCEWithLogitsLoss"](pos_weight=g.tensor([2.0]))(g.tensor([0.3]), g.tensor([1.0]))
    assert loss.item() == pytest.approx(2 * np.log1p(np.exp(-0.3)))


@pytest.mark.parametrize("call, message", [
    (lambda: optim.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda: optim.SGD([g.ones(2, requires_grad=True)], lr=-1), "Invalid learning rate: -1"),
    (lambda: optim.SGD([g.ones(2, requires_grad=True)], lr=0.1, nesterov=True),
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda: optim.Adam([g.ones(2, requires_grad=True)], betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda: optim.SGD([g.ones(2, requires_grad=True) * 2], lr=0.1), "can't optimize a non-leaf Tensor"),
    (lambda: nn.Sequential(nn.Linear(2, 2), 3), "Sequential(): argument 1 is a int, not a module"),
    (lambda: nn.Softmax(1, 2), "Softmax() takes at most 1 positional arguments"),
])
def test_misuse_is_explained(call, message):
    with pytest.raises(GradcliError) as info:
        call()
    assert info.value.message.startswith(message)


SCRIPT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

model = nn.Sequential(nn.Linear(2, 2), nn.Sigmoid())
w, b = model[0].weight, model[0].bias
w.data = torch.tensor([[0.5, -0.5], [0.25, 0.75]])
b.data = torch.tensor([0.0, 0.1])
optimizer = optim.SGD(model.parameters(), lr=0.5)
x = torch.tensor([[1.0, 2.0]])
loss = F.mse_loss(model(x), torch.tensor([[1.0, 0.0]]))
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(model)
print(w.is_leaf, w.grad_fn, len(model))
"""


def test_a_training_step_runs_as_a_program(cli, tmp_path):
    path = tmp_path / "train.grad"
    path.write_text(SCRIPT)
    result = cli("run", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "(0): Linear(in_features=2, out_features=2, bias=True)" in result.stdout
    assert "(1): Sigmoid()" in result.stdout
    assert "True None 2" in result.stdout


def test_a_class_outside_the_base_list_is_refused_by_name(cli):
    result = cli("eval", "class Net(int):\n    pass")
    assert result.exit_code == 2
    assert "cannot subclass 'int'" in result.stderr
    assert "nn.Module" in result.stderr


@pytest.mark.parametrize("program, message, hint", [
    ("F.hardtanh(x, 's')", "hardtanh(): argument 'min_val' must be a number, not str", "pass a number"),
    ("F.pad(x, 2.5)", "pad(): argument 'pad' must be tuple of ints, not float", "e.g. (1, 1)"),
    ("F.layer_norm(x, [[2]])", "layer_norm(): argument 'normalized_shape' must be tuple of ints, but found element "
                               "of type list at pos 0", "every entry of 'normalized_shape' is a whole number"),
    ("nn.LayerNorm(None)", "LayerNorm(): argument 'normalized_shape' must be tuple of ints, not NoneType", "e.g."),
    ("nn.Dropout('s')", "Dropout(): argument 'p' must be a number, not str", "pass a number"),
    ("nn.Dropout(1.5)", "dropout probability has to be between 0 and 1, but got 1.5", "probability of zeroing"),
    ("F.cross_entropy(x, torch.tensor([0, 1]), torch.ones(2, 2))",
     "weight tensor should be defined either for all 2 classes or no classes but got weight tensor of shape: [2, 2]",
     "a tensor of shape (2,)"),
    ("torch.optim.SGD(2.5)", "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                             "got float", "pass a list"),
    ("torch.optim.SGD([w], lr='s')", "SGD(): argument 'lr' must be a number, not str", "pass a number"),
    ("torch.optim.AdamW([w], betas=0.9)", "AdamW(): argument 'betas' must be a pair of numbers, not float",
     "betas=(0.9, 0.999)"),
    ("torch.optim.Adam([w], betas=(0.9, None))", "Adam(): argument 'betas[1]' must be a number, not NoneType",
     "pass a number"),
])
def test_wrong_argument_types_are_named_with_a_hint(cli, program, message, hint):
    setup = "import torch.nn as nn; import torch.nn.functional as F; w = torch.ones(2, requires_grad=True)"
    result = cli("eval", f"{setup}; out = {program}", "x=[[1.0, -2.0], [0.5, 3.0]]")
    assert result.exit_code == 2
    stderr = " ".join(result.stderr.split())
    assert message in stderr
    assert hint in stderr.split("hint:", 1)[1]


def test_optimizer_options_take_one_element_tensors_as_numbers():
    w = g.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=g.tensor(0.5))
    (w * 3).sum().backward()
    opt.step()
    assert w.tolist() == [-0.5, -0.5]
    assert optim.Adam([w], betas=[g.tensor(0.5), 0.25]).options["betas"] == (0.5, 0.25)


def test_layer_norm_module_sizes_are_bounded_like_any_tensor():
    with pytest.raises(GradcliError) as info:
        nn.LayerNorm(-7)
    assert info.value.message == "negative dimension in shape (-7,)"
    with pytest.raises(GradcliError):
        nn.LayerNorm(10**30)


# -- nn.Sequential built from an OrderedDict, sliced and appended to (the official tutorials' forms) ------
SEQUENTIAL = """import torch
from torch import nn
from collections import OrderedDict
torch.manual_seed(0)
net = nn.Sequential(OrderedDict([("fc1", nn.Linear(2, 3)), ("act", nn.ReLU()), ("fc2", nn.Linear(3, 1))]))
print(net)
print(net[:2])
print(net.state_dict().keys())
net.append(nn.Sigmoid())
print(len(net), net[-1], net.fc1.out_features)
y = net(torch.ones(4, 2))
print(y.shape, y.grad_fn.name())
"""
SEQUENTIAL_TEXT = """Sequential(
  (fc1): Linear(in_features=2, out_features=3, bias=True)
  (act): ReLU()
  (fc2): Linear(in_features=3, out_features=1, bias=True)
)
Sequential(
  (fc1): Linear(in_features=2, out_features=3, bias=True)
  (act): ReLU()
)
odict_keys(['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'])
4 Sigmoid() 3
torch.Size([4, 1]) SigmoidBackward0"""


def test_sequential_of_an_ordered_dict_names_its_layers() -> None:
    from language_helpers import run
    assert "\n".join(run(SEQUENTIAL).printed) == SEQUENTIAL_TEXT


def test_sequential_forms_print_as_pytorchs() -> None:
    import subprocess
    import sys
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", SEQUENTIAL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == SEQUENTIAL_TEXT


def test_sequential_refuses_what_is_not_a_named_module() -> None:
    from language_helpers import fails
    err = fails("from torch import nn\nfrom collections import OrderedDict\n"
                "net = nn.Sequential(OrderedDict([(1, nn.ReLU())]))\n")
    assert err.message == "Sequential(): module name should be a string. Got int" and err.hint
    err = fails("from torch import nn\nnet = nn.Sequential(nn.ReLU())\nnet.append(3)\n")
    assert err.message == "Sequential.append() takes a module, not int"


def test_implementation_switches_are_kept_or_refused_by_name() -> None:
    w = g.tensor([1.0], requires_grad=True)
    assert optim.SGD([w], lr=0.1, foreach=True).param_groups[0]["foreach"] is True
    assert optim.Adam([w], capturable=True).param_groups[0]["capturable"] is True
    for make, name in ((lambda: optim.SGD([w], lr=0.1, differentiable=True), "differentiable"),
                       (lambda: optim.Adam([w], fused=True), "fused")):
        with pytest.raises(GradcliError) as caught:
            make()
        assert f"{name}=True) is not supported" in caught.value.message and caught.value.hint
