"""The training library (issue 20): DataLoader order, conv nets, layers, schedulers, optimizers,
clipping, print options, generators.

Each area has a recorded fixture (numbers printed by torch 2.13 for the same program, so the key
values are checked without torch) and, where torch is installed, an oracle test against it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import run

LOADER = """
import torch
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)
X = torch.arange(10.0)
loader = DataLoader(TensorDataset(X), batch_size=4, shuffle=True)
print([b[0].tolist() for b in loader])
print([b[0].tolist() for b in loader])
print(torch.rand(2).tolist())
g = torch.Generator().manual_seed(5)
print([b[0].tolist() for b in DataLoader(TensorDataset(X), batch_size=3, shuffle=True, generator=g, drop_last=True)])
"""


def test_dataloader_shuffles_in_pytorchs_order_and_moves_the_global_generator_as_it_does():
    printed = run(LOADER).printed
    # recorded from torch 2.13 running the same program
    assert printed == ["[[6.0, 7.0, 1.0, 4.0], [2.0, 0.0, 9.0, 8.0], [3.0, 5.0]]",
                       "[[2.0, 4.0, 7.0, 0.0], [8.0, 9.0, 5.0, 3.0], [6.0, 1.0]]",
                       "[0.455627977848053, 0.6323062777519226]",
                       "[[7.0, 4.0, 8.0], [1.0, 2.0, 3.0], [6.0, 5.0, 9.0]]"]


def test_dataloader_order_against_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader, TensorDataset
    for seed, n, size, drop in ((3, 17, 5, False), (11, 8, 3, True)):
        torch.manual_seed(seed)
        loader = DataLoader(TensorDataset(torch.arange(float(n))), batch_size=size, shuffle=True, drop_last=drop)
        want = [[b[0].tolist() for b in loader] for _ in range(2)] + [torch.rand(3).tolist()]
        ran = run(f"import torch\nfrom torch.utils.data import TensorDataset, DataLoader\ntorch.manual_seed({seed})\n"
                  f"loader = DataLoader(TensorDataset(torch.arange({float(n)})), batch_size={size}, shuffle=True, "
                  f"drop_last={drop})\nfirst = [b[0].tolist() for b in loader]\nsecond = [b[0].tolist() for b in "
                  f"loader]\nafter = torch.rand(3).tolist()\nsteps = len(loader)\n")
        assert [ran["first"], ran["second"], ran["after"]] == want
        assert ran["steps"] == len(loader)


EPOCHS_OF_A_GENERATOR = """
import torch
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(1)
for n, bs, drop in [(10, 5, False), (10, 3, True), (10, 4, True), (7, 7, False), (9, None, False)]:
    g = torch.Generator().manual_seed(n)
    loader = DataLoader(TensorDataset(torch.arange(float(n))), batch_size=bs, shuffle=True, generator=g, drop_last=drop)
    out = []
    for epoch in range(3):
        out.append([b[0].tolist() for b in loader])
    for b in loader:
        break
    out.append([b[0].tolist() for b in loader])
    print(n, bs, drop, out, torch.rand(1).item())
it = iter(DataLoader(TensorDataset(torch.arange(4.0)), batch_size=2, shuffle=True))
print(torch.rand(1).item())
print(next(it)[0].tolist(), torch.rand(1).item())
"""


def test_a_loaders_own_generator_moves_as_pytorchs_sampler_moves_it():
    """With generator=g, PyTorch's sampler draws a second randperm from g when a pass runs out (none
    when the pass is left early), so later epochs depend on it; recorded from torch 2.13."""
    assert run(EPOCHS_OF_A_GENERATOR).printed == [
        '10 5 False [[[2.0, 5.0, 0.0, 7.0, 9.0], [3.0, 1.0, 6.0, 8.0, 4.0]], [[2.0, 6.0, 9.0, 5.0, 1.0], [0.0'
        ', 3.0, 7.0, 8.0, 4.0]], [[5.0, 7.0, 1.0, 3.0, 4.0], [2.0, 8.0, 6.0, 0.0, 9.0]], [[4.0, 1.0, 3.0, 7.0'
        ', 2.0], [0.0, 6.0, 9.0, 8.0, 5.0]]] 0.7576315999031067',
        '10 3 True [[[2.0, 5.0, 0.0], [7.0, 9.0, 3.0], [1.0, 6.0, 8.0]], [[2.0, 6.0, 9.0], [5.0, 1.0, 0.0], ['
        '3.0, 7.0, 8.0]], [[5.0, 7.0, 1.0], [3.0, 4.0, 2.0], [8.0, 6.0, 0.0]], [[4.0, 1.0, 3.0], [7.0, 2.0, 0'
        '.0], [6.0, 9.0, 8.0]]] 0.2793108820915222',
        '10 4 True [[[2.0, 5.0, 0.0, 7.0], [9.0, 3.0, 1.0, 6.0]], [[2.0, 6.0, 9.0, 5.0], [1.0, 0.0, 3.0, 7.0]'
        '], [[5.0, 7.0, 1.0, 3.0], [4.0, 2.0, 8.0, 6.0]], [[4.0, 1.0, 3.0, 7.0], [2.0, 0.0, 6.0, 9.0]]] 0.403'
        '06925773620605',
        '7 7 False [[[6.0, 3.0, 5.0, 0.0, 1.0, 4.0, 2.0]], [[0.0, 5.0, 1.0, 2.0, 4.0, 3.0, 6.0]], [[1.0, 5.0,'
        ' 3.0, 6.0, 0.0, 4.0, 2.0]], [[1.0, 4.0, 2.0, 6.0, 3.0, 0.0, 5.0]]] 0.7346844673156738',
        '9 None False [[0.0, 6.0, 1.0, 5.0, 2.0, 7.0, 3.0, 8.0, 4.0], [7.0, 5.0, 8.0, 3.0, 1.0, 2.0, 0.0, 6.0'
        ', 4.0], [5.0, 1.0, 2.0, 8.0, 6.0, 3.0, 7.0, 0.0, 4.0], [8.0, 4.0, 6.0, 7.0, 2.0, 3.0, 1.0, 5.0, 0.0]'
        '] 0.029281556606292725',
        '0.7543719410896301',
        '[1.0, 3.0] 0.6386804580688477',
    ]


def test_a_loaders_own_generator_against_torch():
    pytest.importorskip("torch")
    import subprocess
    import sys
    want = subprocess.run([sys.executable, "-c", EPOCHS_OF_A_GENERATOR], capture_output=True, text=True, timeout=120)
    assert want.returncode == 0, want.stderr
    assert "\n".join(run(EPOCHS_OF_A_GENERATOR).printed) + "\n" == want.stdout


def test_collate_of_tuples_dicts_numbers_and_a_user_free_dataset():
    ran = run("import torch\nfrom torch.utils.data import DataLoader, TensorDataset, random_split, Subset\n"
              "X = torch.arange(12.0).reshape(6, 2)\ny = torch.tensor([0, 1, 0, 1, 1, 0])\n"
              "batches = [(xb.shape, yb.tolist()) for xb, yb in DataLoader(TensorDataset(X, y), batch_size=4)]\n"
              "torch.manual_seed(0)\nparts = random_split(TensorDataset(X, y), [4, 2])\n"
              "sizes = [len(p) for p in parts]\nsub = Subset(TensorDataset(X), [5, 0])\nfirst = sub[0][0].tolist()\n")
    assert ran["batches"] == [((4, 2), [0, 1, 0, 1]), ((2, 2), [1, 0])]
    from gradcli.data.loading import DataLoader
    (batch,) = list(DataLoader([{"a": 1, "b": 2.5}, {"a": 3, "b": 4.5}], batch_size=2))
    assert (batch["a"].dtype, batch["a"].tolist(), batch["b"].tolist()) == (np.int64, [1, 3], [2.5, 4.5])
    assert ran["sizes"] == [4, 2]
    assert ran["first"] == [10.0, 11.0]


def test_random_split_against_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import TensorDataset, random_split
    torch.manual_seed(2)
    want = [list(p.indices) for p in random_split(TensorDataset(torch.arange(10.0)), [0.5, 0.3, 0.2])]
    ran = run("import torch\nfrom torch.utils.data import TensorDataset, random_split\ntorch.manual_seed(2)\n"
              "parts = [p.indices for p in random_split(TensorDataset(torch.arange(10.0)), [0.5, 0.3, 0.2])]\n")
    assert ran["parts"] == want


CONV_NET = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(1)
net = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(3, 4, 2, padding=1), nn.AvgPool2d(2),
                    nn.Flatten(), nn.Linear(16, 3))
x = torch.randn(5, 1, 10, 10)
t = torch.tensor([0, 1, 2, 1, 0])
opt = torch.optim.SGD(net.parameters(), lr=0.1)
losses = []
for i in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(net(x), t)
    loss.backward()
    opt.step()
    losses.append(loss.item())
w = net[0].weight.reshape(-1)[:4].tolist()
b = net[0].bias.tolist()
"""


def test_a_conv_net_trains_with_pytorchs_initialisation_and_losses():
    ran = run(CONV_NET)
    # recorded from torch 2.13: the first layer after training, and the three losses
    assert np.allclose(ran["losses"], [1.1028116941452026, 1.0898975133895874, 1.078723430633545], rtol=2e-6)
    assert np.allclose(ran["w"], [0.17736636102199554, -0.14462706446647644, -0.0626835823059082,
                                  0.15680664777755737], rtol=1e-5, atol=1e-7)
    assert np.allclose(ran["b"], [0.18546846508979797, -0.3262155055999756, 0.2011183500289917], rtol=1e-5)


def _torch_pair(torch, shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x, torch.tensor(x, requires_grad=True)


@pytest.mark.parametrize("call", [
    "F.conv2d(x, w, b, stride=2, padding=1, groups=2)",
    "F.conv2d(x, w, None, padding='same', dilation=2)",
    "F.max_pool2d(x, 3, stride=2, padding=1)",
    "F.avg_pool2d(x, 2)",
    "F.adaptive_avg_pool2d(x, (3, 2))",
    "F.unfold(x, 2, padding=1, stride=(1, 2))",
    "F.dropout2d(x, 0.4)",
    "F.batch_norm(x, None, None, training=True)",
])
def test_functional_values_and_gradients_against_torch(call):
    torch = pytest.importorskip("torch")
    import gradcli.nn.conv as C
    from gradcli.engine.tensor import Tensor
    x, tx = _torch_pair(torch, (2, 4, 6, 4))
    w, tw = _torch_pair(torch, (6, 2 if "groups" in call else 4, 3, 3), seed=1)
    b, tb = _torch_pair(torch, (6,), seed=2)
    gx, gw, gb = (Tensor(v, requires_grad=True) for v in (x, w, b))
    names = {"F": torch.nn.functional, "x": tx, "w": tw, "b": tb}
    torch.manual_seed(0)
    want = _call(call, names)
    from gradcli.engine.creation import manual_seed
    manual_seed(0)
    got = _call(call, {"F": C, "x": gx, "w": gw, "b": gb})
    assert got.shape == tuple(want.shape)
    assert np.allclose(got._data, want.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.random.default_rng(3).standard_normal(got.shape).astype(np.float32)
    (got * Tensor(g)).sum().backward()
    (want * torch.tensor(g)).sum().backward()
    assert np.allclose(gx.grad._data, tx.grad.numpy(), rtol=1e-5, atol=1e-5)
    if "w," in call:
        assert np.allclose(gw.grad._data, tw.grad.numpy(), rtol=1e-5, atol=1e-4)


def _call(text, names):
    """The few call shapes above, dispatched without evaluating text."""
    fn_name, args = text.split("(", 1)
    fn = getattr(names["F"], fn_name.split(".")[1])
    x = names["x"]
    table = {
        "F.conv2d(x, w, b, stride=2, padding=1, groups=2)": lambda: fn(x, names["w"], names["b"], stride=2, padding=1,
                                                                       groups=2),
        "F.conv2d(x, w, None, padding='same', dilation=2)": lambda: fn(x, names["w"], None, padding="same", dilation=2),
        "F.max_pool2d(x, 3, stride=2, padding=1)": lambda: fn(x, 3, stride=2, padding=1),
        "F.avg_pool2d(x, 2)": lambda: fn(x, 2),
        "F.adaptive_avg_pool2d(x, (3, 2))": lambda: fn(x, (3, 2)),
        "F.unfold(x, 2, padding=1, stride=(1, 2))": lambda: fn(x, 2, padding=1, stride=(1, 2)),
        "F.dropout2d(x, 0.4)": lambda: fn(x, 0.4),
        "F.batch_norm(x, None, None, training=True)": lambda: fn(x, None, None, training=True),
    }
    return table[text]()


def test_conv_node_names_are_pytorchs():
    ran = run("import torch\nimport torch.nn.functional as F\nx = torch.ones(1, 1, 4, 4, requires_grad=True)\n"
              "a = F.conv2d(x, torch.ones(1, 1, 2, 2)).grad_fn.name()\nb = F.max_pool2d(x, 2).grad_fn.name()\n"
              "c = F.avg_pool2d(x, 2).grad_fn.name()\nd = F.unfold(x, 2).grad_fn.name()\n")
    assert [ran[k] for k in "abcd"] == ["ConvolutionBackward0", "MaxPool2DWithIndicesBackward0",
                                        "AvgPool2DBackward0", "Im2ColBackward0"]


MODEL = ("nn.Sequential(nn.Conv2d(1, 6, 5, padding=2, bias=False), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2), "
         "nn.Conv1d(3, 4, 3, stride=2, dilation=2, groups=1), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((1, 1)), "
         "nn.Dropout2d(0.3), nn.Embedding(10, 3), nn.Unflatten(1, (2, 8)), nn.BatchNorm1d(4, affine=False), "
         "nn.Conv2d(2, 4, 3, groups=2, padding='same'))")


def test_print_model_is_pytorchs_text():
    import gradcli.nn.layers as L  # noqa: F401 (the namespace the program reaches)
    printed = run(f"import torch\nimport torch.nn as nn\nprint({MODEL})\n").printed[0]
    # recorded from torch 2.13
    assert printed.splitlines()[1:4] == [
        "  (0): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2), bias=False)",
        "  (1): BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)",
        "  (2): ReLU()"]
    torch = pytest.importorskip("torch")
    nn = torch.nn
    want = repr(nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2, bias=False), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv1d(3, 4, 3, stride=2, dilation=2, groups=1), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((1, 1)),
        nn.Dropout2d(0.3), nn.Embedding(10, 3), nn.Unflatten(1, (2, 8)), nn.BatchNorm1d(4, affine=False),
        nn.Conv2d(2, 4, 3, groups=2, padding="same")))
    assert printed == want


def test_initialisation_after_manual_seed_against_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(4)
    conv, conv1, emb = torch.nn.Conv2d(2, 3, (3, 2)), torch.nn.Conv1d(2, 2, 4, groups=2), torch.nn.Embedding(5, 3)
    ran = run("import torch\nimport torch.nn as nn\ntorch.manual_seed(4)\nc = nn.Conv2d(2, 3, (3, 2))\n"
              "c1 = nn.Conv1d(2, 2, 4, groups=2)\ne = nn.Embedding(5, 3)\n")
    for mine, theirs in ((ran["c"], conv), (ran["c1"], conv1)):
        assert np.array_equal(mine.weight._data, theirs.weight.detach().numpy())
        assert np.array_equal(mine.bias._data, theirs.bias.detach().numpy())
    assert np.array_equal(ran["e"].weight._data, emb.weight.detach().numpy())


def test_batch_norm_running_statistics_and_eval_against_torch():
    torch = pytest.importorskip("torch")
    x, tx = _torch_pair(torch, (4, 3, 2, 2))
    bn = torch.nn.BatchNorm2d(3, momentum=0.2)
    for _ in range(2):
        bn(tx)
    bn.eval()
    want = bn(tx).detach().numpy()
    import gradcli.nn.layers as L
    from gradcli.engine.tensor import Tensor
    mine = L.BatchNorm2d(3, momentum=0.2)
    for _ in range(2):
        mine(Tensor(x))
    mine.eval()
    assert np.allclose(mine.running_mean._data, bn.running_mean.numpy(), rtol=1e-6, atol=1e-7)
    assert np.allclose(mine.running_var._data, bn.running_var.numpy(), rtol=1e-6)
    assert int(mine.num_batches_tracked._data) == 2
    assert np.allclose(mine(Tensor(x))._data, want, rtol=1e-5, atol=1e-6)


SCHEDULES = [
    ("StepLR", {"step_size": 2, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [1, 3, 3], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 3, "eta_min": 0.01}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 8}),
]


@pytest.mark.parametrize("name, options", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedules_against_torch(name, options):
    torch = pytest.importorskip("torch")
    w = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.5)
    sched = getattr(torch.optim.lr_scheduler, name)(opt, **options)
    want = [sched.get_last_lr()]
    moms = [opt.param_groups[0]["momentum"]]
    for _ in range(7):
        opt.step()
        sched.step()
        want.append(sched.get_last_lr())
        moms.append(opt.param_groups[0]["momentum"])
    args = ", ".join(f"{k}={v!r}" for k, v in options.items())
    ran = run(f"import torch\nw = torch.zeros(2, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1, momentum=0.5)"
              f"\nsched = torch.optim.lr_scheduler.{name}(opt, {args})\nlrs = [sched.get_last_lr()]\n"
              "for i in range(7):\n    opt.step()\n    sched.step()\n    lrs.append(sched.get_last_lr())\n")
    assert ran["lrs"] == want
    assert ran["opt"].param_groups[0]["momentum"] == moms[-1]


def test_lambda_lr_and_reduce_on_plateau_hand_derived():
    ran = run("import torch\nw = torch.zeros(1, requires_grad=True)\nopt = torch.optim.SGD([w], lr=1.0)\n"
              "s = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1))\nlrs = []\n"
              "for i in range(3):\n    s.step()\n    lrs.append(s.get_last_lr()[0])\n"
              "opt2 = torch.optim.SGD([w], lr=1.0)\n"
              "p = torch.optim.lr_scheduler.ReduceLROnPlateau(opt2, factor=0.5, patience=1)\nseen = []\n"
              "for loss in [3.0, 2.0, 2.5, 2.5, 2.5, 1.0]:\n    p.step(loss)\n"
              "    seen.append(p.get_last_lr()[0])\n")
    assert ran["lrs"] == [1 / 2, 1 / 3, 1 / 4]
    # bad epochs: 2.5 (1), 2.5 (2 > patience: halve, reset), 2.5 (1), 1.0 improves
    assert ran["seen"] == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]


@pytest.mark.parametrize("name, options", [("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
                                           ("RMSprop", {"lr": 0.02, "weight_decay": 0.1}),
                                           ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
                                           ("Adadelta", {"lr": 1.0, "rho": 0.8})])
def test_optimizers_against_torch(name, options):
    torch = pytest.importorskip("torch")
    x0 = np.array([1.5, -0.5, 0.25], dtype=np.float32)
    w = torch.tensor(x0, requires_grad=True)
    opt = getattr(torch.optim, name)([w], **options)
    for _ in range(4):
        opt.zero_grad()
        ((w ** 3).sum() + (w * w).sum()).backward()
        opt.step()
    args = ", ".join(f"{k}={v!r}" for k, v in options.items())
    ran = run(f"import torch\nw = torch.tensor({x0.tolist()}, requires_grad=True)\nopt = torch.optim.{name}([w], "
              f"{args})\nfor i in range(4):\n    opt.zero_grad()\n    ((w ** 3).sum() + (w * w).sum()).backward()\n"
              "    opt.step()\nout = w.tolist()\nstate = opt.state_dict()\n")
    assert np.allclose(ran["out"], w.tolist(), rtol=1e-6, atol=1e-7)
    assert ran["state"]["param_groups"][0]["params"] == [0]
    assert sorted(ran["state"]["state"][0]) == sorted(opt.state_dict()["state"][0])


def test_param_groups_have_their_own_options():
    from gradcli.optim.optimizers import SGD
    from gradcli.engine.tensor import Tensor
    a, b = Tensor([1.0], requires_grad=True), Tensor([1.0], requires_grad=True)
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (a * 2 + b * 2).sum().backward()
    opt.step()
    assert [a.item(), b.item()] == [pytest.approx(0.8), pytest.approx(0.0)]
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.state_dict()["param_groups"][1]["params"] == [1]


def test_clip_grad_norm_and_value_against_hand_numbers():
    ran = run("import torch\nw = torch.tensor([3.0, 4.0], requires_grad=True)\nv = torch.tensor([12.0], "
              "requires_grad=True)\n(w * w / 2).sum().backward()\n(v * v / 2).sum().backward()\n"
              "total = torch.nn.utils.clip_grad_norm_([w, v], 1.0).item()\ng = w.grad.tolist() + v.grad.tolist()\n"
              "torch.nn.utils.clip_grad_value_([w], 0.1)\nflat = torch.nn.utils.parameters_to_vector([w, v]).tolist()\n")
    assert ran["total"] == pytest.approx(13.0)
    scale = 1.0 / (13.0 + 1e-6)
    assert np.allclose(ran["g"], [3 * scale, 4 * scale, 12 * scale], rtol=1e-6)
    assert ran["flat"] == [3.0, 4.0, 12.0]


def test_set_printoptions_changes_tensor_text_as_pytorch():
    ran = run("import torch\ntorch.set_printoptions(precision=2)\na = str(torch.tensor([1.23456, 2.5]))\n"
              "torch.set_printoptions(sci_mode=True)\nb = str(torch.tensor([1.5, 250.0]))\n"
              "torch.set_printoptions(profile='default', edgeitems=1, threshold=3)\nc = str(torch.arange(10.0))\n")
    # recorded from torch 2.13
    assert ran["a"] == "tensor([1.23, 2.50])"
    assert ran["b"] == "tensor([1.50e+00, 2.50e+02])"
    assert ran["c"] == "tensor([0.,  ..., 9.])"  # an elided run is " ..." after the comma


def test_print_options_do_not_outlive_the_program():
    run("import torch\ntorch.set_printoptions(precision=1)\n")
    assert run("import torch\ns = str(torch.tensor([1.23456]))\n")["s"] == "tensor([1.2346])"


def test_generators_are_independent_of_the_global_one():
    ran = run("import torch\ng = torch.Generator().manual_seed(7)\ns = g.initial_seed()\ntorch.manual_seed(7)\n"
              "a = torch.randperm(6).tolist()\n")
    assert ran["s"] == 7
    torch = pytest.importorskip("torch")
    torch.manual_seed(7)
    assert ran["a"] == torch.randperm(6).tolist()


@pytest.mark.parametrize("source, words", [
    ("import torch.nn as nn\nimport torch\nnn.Conv2d(3, 2, 3)(torch.ones(1, 1, 5, 5))",
     ["expected input[1, 1, 5, 5] to have 3 channels, but got 1 channels instead"]),
    ("import torch\nimport torch.nn.functional as F\nF.conv2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 3, 3))",
     ["Kernel size can't be greater than actual input size"]),
    ("import torch\nfrom torch.utils.data import DataLoader\nDataLoader([1, 2], batch_size=0)",
     ["batch_size should be a positive integer value"]),
    ("import torch\nfrom torch.utils.data import TensorDataset\nTensorDataset(torch.ones(3), torch.ones(4))",
     ["Size mismatch between tensors"]),
    ("import torch.nn as nn\nnn.Conv2d(4, 6, 3, groups=3)", ["in_channels must be divisible by groups"]),
    ("import torch.nn as nn\nimport torch\nnn.Conv2d(1, 1, 3, stride=2, padding='same')", ["strided convolutions"]),
    ("import torch\nimport torch.nn.functional as F\nF.embedding(torch.tensor([5]), torch.ones(3, 2))",
     ["index out of range in self"]),
    ("import torch\nw = torch.zeros(1, requires_grad=True)\nopt = torch.optim.SGD([w], lr=0.1)\n"
     "torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0)", ["total_steps OR (epochs AND steps_per_epoch)"]),
    ("import torch\ntorch.set_printoptions(precision=-1)", ["precision must be a non-negative integer"]),
    ("import torch\nfrom torch.utils.data import DataLoader\nDataLoader([1], generator=3)",
     ["generator must be a torch.Generator"]),
])
def test_bad_input_is_a_gradcli_error_with_pytorchs_words(source, words):
    with pytest.raises(GradcliError) as info:
        run(source)
    assert all(w in info.value.message for w in words), info.value.message


def test_the_cli_reports_a_channel_mismatch_with_exit_code_2(tmp_path, cli):
    script = tmp_path / "bad.py"
    script.write_text("import torch\nimport torch.nn as nn\nconv = nn.Conv2d(3, 2, 3)\nconv(torch.ones(1, 1, 5, 5))\n")
    result = cli("run", str(script))
    assert result.exit_code == 2
    assert "to have 3 channels" in result.output and "Traceback" not in result.output


def test_check_proves_a_small_conv_and_pool_symbolically(cli):
    result = cli("eval", "y = F.max_pool2d(F.conv2d(x, w, padding=1), 2).sum()", "x=[[[[1.,2.,0.],[0.5,-1.,3.],"
                 "[2.,1.,-2.]]]]", "w=[[[[0.5,-1.],[2.,0.25]]]]", "--check")
    assert result.exit_code == 0, result.output
    assert "agree" in result.output.lower()


def test_embedding_gradient_adds_per_row():
    ran = run("import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\ne = nn.Embedding(4, 2)\n"
              "e(torch.tensor([1, 3, 1])).sum().backward()\ng = e.weight.grad.tolist()\n")
    assert ran["g"] == [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]


def test_modulelist_and_moduledict_register_their_modules():
    ran = run("import torch\nimport torch.nn as nn\nlayers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 1)])\n"
              "n = len(list(layers.parameters()))\nx = torch.ones(1, 2)\nfor layer in layers:\n    x = layer(x)\n"
              "shape = tuple(x.shape)\n")
    assert ran["n"] == 4 and ran["shape"] == (1, 1)
    assert math.isfinite(ran["x"].item())
    from gradcli.nn.layers import ModuleDict
    from gradcli.nn.modules import Linear
    d = ModuleDict({"a": Linear(1, 1)})
    assert d.keys() == ["a"] and len(list(d.parameters())) == 2


def test_tensor_of_a_list_of_one_element_tensors_has_pytorchs_shape():
    ran = run("import torch\nt = torch.tensor(2.0)\na = torch.tensor([t, t]).shape\n"
              "b = torch.tensor([torch.tensor([1.0]), torch.tensor([2.0])]).shape\nxs = []\n"
              "for i in range(3):\n    xs = torch.tensor([torch.tensor(xs).sum() + i])\n"
              "c = xs.shape\nd = torch.tensor([torch.tensor(1), torch.tensor(2)]).dtype\n"
              "e = torch.tensor([[torch.tensor([1.5], dtype=torch.float64)]]).dtype\n")
    # recorded from torch 2.13: a one-element tensor in a list is its number
    assert (ran["a"], ran["b"], ran["c"]) == ((2,), (2,), (1,))
    assert (ran["d"], ran["e"]) == (np.int64, np.float64)
    with pytest.raises(GradcliError) as info:
        run("import torch\ntorch.tensor([torch.ones(2), torch.ones(2)])\n")
    assert info.value.message == "only one element tensors can be converted to Python scalars"


def test_modulelist_prints_runs_of_equal_modules_as_pytorch():
    printed = run("import torch.nn as nn\nprint(nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()]))\n"
                  "print(nn.ModuleList())\n").printed
    # recorded from torch 2.13
    assert printed == ["ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n  (2): ReLU()\n)",
                       "ModuleList()"]


def test_summarized_tensors_print_as_pytorch():
    ran = run("import torch\ntorch.set_printoptions(edgeitems=2, threshold=50, linewidth=75)\n"
              "a = str(torch.arange(100.))\nb = str(torch.arange(100).reshape(10, 10))\n"
              "torch.set_printoptions(precision=2)\nc = str(torch.arange(3000.))\nd = str(torch.tensor([1., 2000.]))\n"
              "torch.set_printoptions(precision=4)\ntorch.manual_seed(0)\nx = torch.randn(2000)\nx[1000] = 1e-6\n"
              "e = str(x)\nn = sum(p.nelement() for p in [torch.ones(2, 3), torch.ones(4)])\n")
    # recorded from torch 2.13: the elided run is " ..." in a row, and the number format is chosen from
    # the elements shown (so the tiny value in the middle of x does not make it scientific)
    assert ran["a"] == "tensor([ 0.,  1.,  ..., 98., 99.])"
    assert ran["b"] == "tensor([[ 0,  1,  ...,  8,  9],\n        [10, 11,  ..., 18, 19],\n        ...,\n" \
                       "        [80, 81,  ..., 88, 89],\n        [90, 91,  ..., 98, 99]])"
    assert ran["c"] == "tensor([0.00e+00, 1.00e+00,  ..., 3.00e+03, 3.00e+03])"
    assert ran["d"] == "tensor([1.00e+00, 2.00e+03])"
    assert ran["e"] == "tensor([-1.1258, -1.1524,  ...,  0.0829, -0.5187])"
    assert ran["n"] == 10
