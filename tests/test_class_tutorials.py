"""The tutorials' classes from scratch, as the issue names them: a `torch.optim.Optimizer` subclass (param_groups,
self.state, defaults, `step(closure=None)` under `@torch.no_grad()`), a LeNet-style module printed and run once
forward and backward, and a `Dataset` subclass read by a shuffling `DataLoader`; against PyTorch running the same
text, and by hand."""
from __future__ import annotations

import numpy as np
import pytest

from tests.language_helpers import oracle, run

SOURCE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

class MomentumSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01, momentum=0.9):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, momentum=momentum)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["velocity"] = torch.zeros_like(p)
                    state["step"] = 0
                v = state["velocity"]
                v.mul_(group["momentum"]).add_(p.grad)
                p.add_(v, alpha=-group["lr"])
                state["step"] += 1
        return loss

class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)

class Squares(Dataset):
    def __init__(self, n):
        self.x = torch.linspace(-1, 1, n).reshape(n, 1)
        self.y = self.x ** 2

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]

torch.manual_seed(0)
net = LeNet()
text = str(net)
img = torch.randn(2, 1, 28, 28)
out = net(img)
loss = F.cross_entropy(out, torch.tensor([3, 7]))
loss.backward()
lenet = [round(loss.item(), 5), out[0, :3].tolist(), net.conv1.weight.grad.sum().item(), net.fc3.bias.grad.tolist()]

torch.manual_seed(1)
data = Squares(10)
loader = DataLoader(data, batch_size=4, shuffle=True)
order = [xb.flatten().tolist() for xb, _ in loader]
model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
opt = MomentumSGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
for epoch in range(3):
    for xb, yb in loader:
        def closure():
            opt.zero_grad()
            l = F.mse_loss(model(xb), yb)
            l.backward()
            return l
        losses.append(opt.step(closure).item())
steps = [opt.state[p]["step"] for p in model.parameters()]
info = [len(opt.param_groups), [opt.defaults["lr"], opt.defaults["momentum"]], steps, len(data), len(loader)]
'''

LENET = """LeNet(
  (conv1): Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
  (conv2): Conv2d(6, 16, kernel_size=(5, 5), stride=(1, 1))
  (fc1): Linear(in_features=256, out_features=120, bias=True)
  (fc2): Linear(in_features=120, out_features=84, bias=True)
  (fc3): Linear(in_features=84, out_features=10, bias=True)
)"""


def _close(a, b) -> bool:
    return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-5, atol=1e-6))


@pytest.fixture(scope="module")
def both():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(SOURCE)
    return run(SOURCE), namespace


def test_lenet_prints_pytorchs_repr_and_runs_forward_and_backward_with_pytorchs_numbers(both):
    ran, torch_ran = both
    assert ran["text"] == torch_ran["text"] == LENET
    loss, first, conv_grad, bias_grad = ran["lenet"]
    assert _close(loss, torch_ran["lenet"][0]) and _close(first, torch_ran["lenet"][1])
    assert _close(conv_grad, torch_ran["lenet"][2]) and _close(bias_grad, torch_ran["lenet"][3])


def test_a_dataset_subclass_shuffled_by_a_dataloader_comes_in_pytorchs_order(both):
    ran, torch_ran = both
    assert [len(batch) for batch in ran["order"]] == [4, 4, 2]
    assert _close(sum(ran["order"], []), sum(torch_ran["order"], []))


def test_an_optimizer_subclass_with_a_closure_trains_as_pytorchs(both):
    ran, torch_ran = both
    assert _close(ran["losses"], torch_ran["losses"])
    assert ran["info"] == torch_ran["info"] == [1, [0.1, 0.9], [9, 9, 9, 9], 10, 3]


def test_the_optimizer_subclass_by_hand():
    ran = run(SOURCE[:SOURCE.index("class LeNet")] + '''
w = torch.tensor([1.0], requires_grad=True)
opt = MomentumSGD([w], lr=0.1, momentum=0.9)
for _ in range(2):
    opt.zero_grad()
    (w * w).sum().backward()
    opt.step()
kept = opt.state[w]["velocity"].item()
''')
    # grad 2w: v1 = 2, w1 = 1 - 0.2 = 0.8; v2 = 0.9·2 + 1.6 = 3.4, w2 = 0.8 - 0.34 = 0.46
    assert ran["w"].item() == pytest.approx(0.46) and ran["kept"] == pytest.approx(3.4)
    assert ran["opt"].state_dict()["state"][0]["step"] == 2


def test_d2l_init_functions_print_each_parameter_through_a_starred_print():
    ran = run('''
import torch
from torch import nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(20, 8), nn.ReLU(), nn.Linear(8, 1))
def my_init(module):
    if type(module) == nn.Linear:
        print("Init", *[(name, param.shape) for name, param in module.named_parameters()][0])
        nn.init.uniform_(module.weight, -10, 10)
        module.weight.data *= module.weight.data.abs() >= 5
net.apply(my_init)
small = (net[0].weight.abs() * (net[0].weight.abs() < 5)).sum().item()
''')
    assert ran.printed == ["Init weight torch.Size([8, 20])", "Init weight torch.Size([1, 8])"]
    assert ran["small"] == 0


@pytest.mark.parametrize("base", ["int", "list", "torch.Tensor", "Exception"])
def test_a_base_outside_the_list_is_named_as_written(base):
    from gradcli.errors import NotAllowedError
    from tests.language_helpers import fails
    error = fails(f"import torch\nclass A({base}):\n    pass\n", NotAllowedError)
    assert error.message == f"cannot subclass '{base}'"


UVA = """import torch
from torch import nn

class OptimizerTemplate:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def zero_grad(self):
        for p in self.params:
            if p.grad is not None:
                p.grad.detach_()
                p.grad.zero_()

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            self.update_param(p)

    def update_param(self, p):
        raise NotImplementedError

class SGD(OptimizerTemplate):
    def __init__(self, params, lr):
        super().__init__(params, lr)

    def update_param(self, p):
        p_update = -self.lr * p.grad
        p.add_(p_update)

class SGDMomentum(OptimizerTemplate):
    def __init__(self, params, lr, momentum=0.0):
        super().__init__(params, lr)
        self.momentum = momentum
        self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}

    def update_param(self, p):
        self.param_momentum[p] = (1 - self.momentum) * p.grad + self.momentum * self.param_momentum[p]
        p_update = -self.lr * self.param_momentum[p]
        p.add_(p_update)

class Adam(OptimizerTemplate):
    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(params, lr)
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.param_step = {p: 0 for p in self.params}
        self.param_momentum = {p: torch.zeros_like(p.data) for p in self.params}
        self.param_2nd_momentum = {p: torch.zeros_like(p.data) for p in self.params}

    def update_param(self, p):
        self.param_step[p] += 1
        self.param_momentum[p] = (1 - self.beta1) * p.grad + self.beta1 * self.param_momentum[p]
        self.param_2nd_momentum[p] = (1 - self.beta2) * (p.grad) ** 2 + self.beta2 * self.param_2nd_momentum[p]
        bias_correction_1 = 1 - self.beta1 ** self.param_step[p]
        bias_correction_2 = 1 - self.beta2 ** self.param_step[p]
        p_2nd_mom = self.param_2nd_momentum[p] / bias_correction_2
        p_mom = self.param_momentum[p] / bias_correction_1
        p_lr = self.lr / (torch.sqrt(p_2nd_mom) + self.eps)
        p_update = -p_lr * p_mom
        p.add_(p_update)

losses = []
for cls, kw in [(SGD, {}), (SGDMomentum, {"momentum": 0.9}), (Adam, {})]:
    torch.manual_seed(1)
    net = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = cls(net.parameters(), lr=0.05, **kw)
    x = torch.randn(16, 2)
    y = (x[:, :1] * x[:, 1:]).detach()
    for _ in range(30):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    losses.append((cls.__name__, loss.item()))
try:
    OptimizerTemplate([torch.ones(1, requires_grad=True)], 0.1).update_param(None)
except NotImplementedError:
    losses.append("NotImplementedError")

x = torch.ones(3, requires_grad=True)
y = x * 2
try:
    y[:2].detach_()
except RuntimeError as e:
    losses.append(str(e))
y.detach_()
losses.append([y.requires_grad, y.grad_fn is None, y.is_leaf])
"""


def test_uva_optimizer_templates_train_as_with_pytorch_and_detach_is_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(UVA)
    ran = run(UVA)["losses"]
    expected = namespace["losses"]
    assert [name for name, _ in ran[:3]] == ["SGD", "SGDMomentum", "Adam"]
    assert _close([v for _, v in ran[:3]], [v for _, v in expected[:3]])
    assert ran[3] == "NotImplementedError" == expected[3]
    assert expected[4].startswith(ran[4]) and ran[4] == "Can't detach views in-place. Use detach() instead."
    assert ran[5] == expected[5] == [False, True, True]


def test_a_dtype_prints_and_compares_as_pytorchs():
    source = '''
import torch
x = torch.ones(2, dtype=torch.float64)
print(f"Datatype of tensor: {torch.ones(3).dtype}")
print(x.dtype, [x.dtype])
same = [x.dtype == torch.float64, x.dtype != torch.float32, x.dtype == torch.float32,
        x.dtype in (torch.float32, torch.float64), x.dtype == "nonsense", torch.ones(1).dtype == x.dtype]
'''
    ran = run(source)
    assert ran.printed == ["Datatype of tensor: torch.float32", "torch.float64 [torch.float64]"]
    assert ran["same"] == [True, True, False, True, False, False]


DATA = """import torch
log = []
from torch.utils.data import Dataset, IterableDataset, DataLoader, random_split

class Squares(Dataset):
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError("out")
        return torch.tensor([float(i)]), torch.tensor([float(i * i)])

class Stream(IterableDataset):
    def __init__(self, n):
        super().__init__()
        self.n = n
    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor(float(i))

class Dicts(Dataset):
    def __len__(self):
        return 3
    def __getitem__(self, i):
        return {"x": torch.ones(2) * i, "label": i}

ds = Squares(5)
log.append([len(ds), ds[2][1].tolist()])
log.append([[x.item() for x, _ in ds]])
log.append([[b.tolist() for b in DataLoader(Stream(5), batch_size=2)]])
torch.manual_seed(3)
a, b = random_split(ds, [3, 2])
log.append([len(a), len(b), [a[i][0].item() for i in range(len(a))]])
for batch in DataLoader(Dicts(), batch_size=2):
    log.append([batch["x"].tolist(), batch["label"].tolist()])
torch.manual_seed(0)
log.append([[xb.flatten().tolist() for xb, yb in DataLoader(ds, batch_size=2, shuffle=True, drop_last=True)]])
log.append([len(DataLoader(ds, batch_size=2)), len(DataLoader(ds, batch_size=2, drop_last=True))])
"""


def test_dataset_subclasses_iterate_split_collate_and_shuffle_as_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(DATA)
    ran = run(DATA)["log"]
    assert ran == namespace["log"]
    assert ran[1] == [[0.0, 1.0, 2.0, 3.0, 4.0]]  # `for` over __getitem__ stops at the program's IndexError
