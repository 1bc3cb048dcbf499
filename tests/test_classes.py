"""Classes as tutorials write them: values by hand and against PyTorch (oracle tests skip without torch)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import ArgumentError, BackwardError, NotAllowedError, ShapeError
from tests.language_helpers import fails, run


def test_methods_class_attributes_docstrings_properties_and_static_and_class_methods():
    ran = run('''
class Point:
    """A point."""
    dims = 2

    def __init__(self, x, y):
        self.x = x
        self._y_value = 0 if False else y

    @property
    def norm2(self):
        return self.x * self.x + self._y_value * self._y_value

    @staticmethod
    def origin_name():
        return "origin"

    @classmethod
    def unit(cls):
        return cls(1, 0)

    def __repr__(self):
        return f"Point({self.x}, {self._y_value})"
''' .replace("_y_value", "yv") + '''
p = Point(3, 4)
u = Point.unit()
print(p, p.norm2, Point.dims, Point.origin_name(), u, type(u).__name__, isinstance(u, Point))
''')
    assert ran.printed == ["Point(3, 4) 25 2 origin Point(1, 0) Point True"]


def test_property_setter_super_both_forms_and_inheritance():
    ran = run('''
class Base:
    def __init__(self, k):
        self.k = k
    def describe(self):
        return "base" + str(self.k)

class Child(Base):
    def __init__(self, k):
        super().__init__(k * 10)
    def describe(self):
        return "child/" + super().describe()

class Grandchild(Child):
    def __init__(self):
        super(Grandchild, self).__init__(2)

class Temp:
    def __init__(self):
        self.c = 0.0
    @property
    def f(self):
        return self.c * 9 / 5 + 32
    @f.setter
    def f(self, value):
        self.c = (value - 32) * 5 / 9

t = Temp()
t.f = 212
print(Grandchild().describe(), t.c, isinstance(Grandchild(), Base))
''')
    assert ran.printed == ["child/base20 100.0 True"]


def test_special_methods_len_getitem_iter_call():
    ran = run('''
class Squares:
    def __init__(self, n):
        self.n = n
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        return i * i
    def __call__(self, v):
        return v + self.n

class Countdown:
    def __init__(self, start):
        self.now = start
    def __iter__(self):
        return self
    def __next__(self):
        if self.now == 0:
            raise StopIteration
        self.now -= 1
        return self.now + 1

s = Squares(4)
print(len(s), s[3], s(1), [v for v in Countdown(3)])
''')
    assert ran.printed == ["4 9 5 [3, 2, 1]"]


def test_a_property_without_a_setter_is_read_only():
    caught = fails("class A:\n    @property\n    def v(self):\n        return 1\n\na = A()\na.v = 2", NotAllowedError)
    assert "has no setter" in caught.message


MODULE = '''
import torch
import torch.nn as nn

class TwoLayer(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("seen", torch.zeros(1))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale
'''


def test_a_module_registers_its_parts_with_pytorchs_dotted_names_and_prints_as_pytorch():
    ran = run(MODULE + '''
torch.manual_seed(0)
net = TwoLayer(3, 4, 2)
print([n for n, _ in net.named_parameters()])
print([n for n, _ in net.named_children()], len(net.modules()), list(net.state_dict().keys()))
print(net)
''')
    assert ran.printed[0] == "['scale', 'fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']"
    assert ran.printed[1] == "['fc1', 'act', 'fc2'] 4 ['scale', 'seen', 'fc1.weight', 'fc1.bias', 'fc2.weight', " \
                             "'fc2.bias']"
    assert ran.printed[2] == ("TwoLayer(\n  (fc1): Linear(in_features=3, out_features=4, bias=True)\n"
                              "  (act): Tanh()\n  (fc2): Linear(in_features=4, out_features=2, bias=True)\n)")


def test_modes_hooks_apply_requires_grad_and_state_dict_round_trip():
    ran = run(MODULE + '''
net = TwoLayer(2, 3, 1)
seen = []
h = net.register_forward_hook(lambda m, inp, out: out * 0 + 7)
net.register_forward_pre_hook(lambda m, inp: (inp[0] * 2,))
y = net(torch.ones(1, 2))
h.remove()
names = []
net.apply(lambda m: names.append(type(m).__name__))
net.eval()
other = TwoLayer(2, 3, 1)
result = other.load_state_dict(net.state_dict())
same = torch.equal(other.fc1.weight, net.fc1.weight)
net.requires_grad_(False)
print(y.item(), names, net.training, net.fc1.training, result, same, net.fc2.bias.requires_grad)
''')
    assert ran.printed == ["7.0 ['Linear', 'Tanh', 'Linear', 'TwoLayer'] False False <All keys matched successfully> "
                           "True False"]


def test_load_state_dict_names_missing_and_unexpected_keys_as_pytorch():
    caught = fails(MODULE + "net = TwoLayer(2, 3, 1)\nnet.load_state_dict({'fc1.weight': torch.ones(3, 2), "
                            "'extra': torch.ones(1)})", ShapeError)
    assert caught.message.startswith("Error(s) in loading state_dict for TwoLayer:\n\tMissing key(s) in state_dict: "
                                     '"scale", "seen", "fc1.bias"')
    assert 'Unexpected key(s) in state_dict: "extra".' in caught.message
    ran = run(MODULE + "net = TwoLayer(2, 3, 1)\ntry:\n    net.load_state_dict({'extra': torch.ones(1)})\n"
                       "except RuntimeError as e:\n    text = str(e)\n")  # PyTorch's type, so its except catches it
    assert ran["text"].startswith("Error(s) in loading state_dict for TwoLayer:")


def test_assigning_a_parameter_before_init_is_pytorchs_error():
    caught = fails("import torch\nimport torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n"
                   "        self.w = nn.Parameter(torch.ones(1))\n\nn = N()", ArgumentError)
    assert caught.message == "cannot assign parameters before Module.__init__() call"
    assert caught.line == 5


def test_a_two_layer_net_trained_with_sgd_matches_pytorch():
    torch = pytest.importorskip("torch")
    source = MODULE + '''
torch.manual_seed(1)
net = TwoLayer(3, 5, 1)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
y = torch.tensor([[0.5], [-0.25], [1.0], [0.0]])
opt = torch.optim.SGD(net.parameters(), lr=0.1)
losses = []
for step in range(20):
    opt.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
'''
    ran = run(source)
    namespace: dict = {}
    exec(compile(source.replace("import torch.nn as nn", "import torch.nn as nn"), "<oracle>", "exec"), namespace)
    assert np.allclose(ran["losses"], namespace["losses"], rtol=1e-5, atol=1e-7)
    assert ran["losses"][-1] < ran["losses"][0]


def test_parameters_made_after_manual_seed_equal_pytorchs():
    torch = pytest.importorskip("torch")
    ran = run(MODULE + "torch.manual_seed(3)\nnet = TwoLayer(2, 3, 2)\nw = net.fc2.weight.detach()\n")
    torch.manual_seed(3)
    import torch.nn as tnn
    tnn.Linear(2, 3)
    expected = tnn.Linear(3, 2).weight.detach().numpy()
    assert np.allclose(ran["w"]._data, expected)


def test_an_optimizer_template_with_momentum_by_hand():
    ran = run('''
import torch

class OptimizerTemplate:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is not None:
                self.update_param(p)

class SGDMomentum(OptimizerTemplate):
    def __init__(self, params, lr, momentum=0.0):
        super().__init__(params, lr)
        self.momentum = momentum
        self.velocity = {p: torch.zeros_like(p) for p in self.params}

    def update_param(self, p):
        self.velocity[p] = (1 - self.momentum) * p.grad + self.momentum * self.velocity[p]
        p.add_(-self.lr * self.velocity[p])

w = torch.tensor([1.0], requires_grad=True)
opt = SGDMomentum([w], lr=0.5, momentum=0.5)
for _ in range(2):
    opt.zero_grad()
    (w * w).sum().backward()
    opt.step()
print(w.item())
''')
    # grad 2w: w0=1, v1=0.5*2=1, w1=0.5; v2=0.5*1+0.5*1=1.0, w2=0.0
    assert ran.printed == ["0.0"]
