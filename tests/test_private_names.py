"""A program's own `_names` (micrograd's `self._prev`, `out._backward`, `def _helper`) on its plain
classes, and every other `_name` still refused: on tensors, modules, facades, gradcli's bases."""
from __future__ import annotations

import pytest

from gradcli.errors import NameLookupError, NotAllowedError
from gradcli.lang.mangling import mangled
from gradcli.lang.parser import parse_program
from language_helpers import fails, run

VALUE = '''import math

class Value:
    _made = 0

    def __init__(self, data, children=()):
        self.data = data
        self.grad = 0.0
        self._prev = set(children)
        self._backward = lambda: None
        Value._made += 1

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other))
        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other))
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,))
        def _backward():
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def _topo(self):
        order, seen = [], set()
        def visit(v):
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    visit(child)
                order.append(v)
        visit(self)
        return order

    def backward(self):
        self.grad = 1.0
        for v in reversed(self._topo()):
            v._backward()

x, w, b = Value(2.0), Value(-0.5), Value(0.25)
y = (x * w + b).tanh()
y.backward()
'''


def test_micrograds_value_runs_and_its_gradients_are_the_chain_rule() -> None:
    import math
    ran = run(VALUE)
    t = math.tanh(2.0 * -0.5 + 0.25)
    assert ran["y"].data == pytest.approx(t)
    assert ran["w"].grad == pytest.approx((1 - t * t) * 2.0)
    assert ran["x"].grad == pytest.approx((1 - t * t) * -0.5)
    assert ran["b"].grad == pytest.approx(1 - t * t)
    assert run(VALUE + "made = Value._made\n")["made"] == 6  # x, w, b, x*w, +b, tanh


def test_a_private_method_through_super() -> None:
    ran = run("class A:\n    def _h(self):\n        return 2\n\nclass B(A):\n    def _h(self):\n"
              "        return super()._h() + 1\n\nv = B()._h()\n")
    assert ran["v"] == 3


REFUSED_BEFORE_RUNNING = [
    ("import random\nx = random._os", "attribute '_os'"),
    ("import torch\nx = torch.ones(1)._data", "attribute '_data'"),
    ("class A:\n    pass\nx = A()._gradcli_class", "attribute '_gradcli_class'"),
    ("class A:\n    def __init__(self):\n        self._gradcli_names = 1", "attribute '_gradcli_names'"),
]


@pytest.mark.parametrize("source, words", REFUSED_BEFORE_RUNNING)
def test_a_private_name_the_program_never_gives_is_refused_before_it_runs(source: str, words: str) -> None:
    with pytest.raises(NotAllowedError) as caught:
        parse_program(source)
    assert words in caught.value.message


REFUSED_WHEN_RUN = [
    ("import torch\nclass A:\n    def __init__(self):\n        self._data = 1\nA()\nv = torch.ones(1)._data",
     NameLookupError, "attribute '_data' is not available on a tensor"),
    ("import torch\nx = torch.ones(1)\nx._data = 1", NotAllowedError, "cannot assign to attribute '_data'"),
    ("import torch\nx = torch.ones(1)\nx._grad = 1", NotAllowedError, "cannot assign to attribute '_grad'"),
    ("from torch import nn\nlin = nn.Linear(1, 1)\nlin._parameters = {}", NotAllowedError,
     "assignment to attribute '_parameters' is not supported"),
    ("from torch import nn\nclass A:\n    def __init__(self):\n        self._modules = 1\nA()\n"
     "m = nn.Linear(1, 1)._modules", NameLookupError, "attribute '_modules' is not available"),
    ("from torch import nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self._parameters = {}\nN()", NotAllowedError, "assignment to attribute '_parameters'"),
    ("from torch import nn\nclass N(nn.Module):\n    def __init__(self):\n        self._forward_hooks = []\n"
     "        super().__init__()\nN()", NotAllowedError, "assignment to attribute '_forward_hooks' is not supported"),
    ("from torch import nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self._cache = self._modules\nN()", NotAllowedError, "attribute '_modules' is not available"),
    ("from torch import nn\nclass N(nn.Module):\n    def _named(self, m):\n        pass",
     NotAllowedError, "'_named' is a name gradcli's own base class uses"),
    ("from torch import nn\nclass N(nn.Module):\n    _parameters = {}", NotAllowedError,
     "'_parameters' is a name gradcli's own base class uses"),
    ("from torch import nn\nclass A:\n    def _forget(self):\n        pass\nclass N(A, nn.Module):\n    pass",
     NotAllowedError, "'_forget' is a name gradcli's own base class uses"),
    ("import torch\nclass O(torch.optim.Optimizer):\n    def _update(self):\n        pass", NotAllowedError,
     "'_update' is a name gradcli's own base class uses"),
    ("from torch.utils.data import Dataset\nclass D(Dataset):\n    def __init__(self):\n        self._batches = 1\n"
     "D()", NotAllowedError, "assignment to attribute '_batches' is not supported"),
    ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        ctx._x = x\n        return x\n\ny = F.apply(torch.ones(1, requires_grad=True))", NotAllowedError,
     "assignment to attribute '_x' is not supported"),
    ("class A:\n    def __init__(self):\n        self._p = 1\nv = getattr(A(), '_p')", NotAllowedError,
     "attribute '_p' is not available"),
]


@pytest.mark.parametrize("source, kind, words", REFUSED_WHEN_RUN)
def test_a_private_name_on_anything_but_a_plain_program_object_is_refused(source: str, kind: type,
                                                                          words: str) -> None:
    caught = fails(source, kind)
    assert words in caught.message and caught.hint
    wrapped = "try:\n" + "\n".join("    " + line for line in source.split("\n")) + "\nexcept BaseException:\n    pass"
    if kind is NotAllowedError:
        assert words in fails(wrapped, NotAllowedError).message  # no program catches a refusal


GPT_STYLE = '''import torch
import torch.nn as nn

class Block(nn.Module):
    _count = 0

    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self._token_freqs = [3, 1]
        self.__in_features = n
        self.apply(self._init_weights)
        Block._count += 1

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.25)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.fc(x) * self.__in_features

b = Block(2)
y = b(torch.ones(1, 2)).sum()
names = [k for k, _ in b.named_parameters()]
'''


def test_a_modules_own_private_names_and_mangled_names_are_the_programs():
    ran = run(GPT_STYLE + "feats = b._Block__in_features\nfreqs = b._token_freqs\ncount = Block._count\n")
    assert ran["y"].item() == pytest.approx(2 * (0.25 * 2) * 2)  # two outputs of 0.5, times n = 2
    assert (ran["feats"], ran["freqs"], ran["count"]) == (2, [3, 1], 1)
    assert ran["names"] == ["fc.weight", "fc.bias"]


def test_a_private_parameter_of_a_program_registers_under_its_name_as_in_pytorch():
    ran = run("import torch\nimport torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self._w = nn.Parameter(torch.ones(2))\n        self.__v = nn.Parameter(torch.ones(1))\n"
              "n = N()\nnames = [k for k, _ in n.named_parameters()]\nkeys = list(n.state_dict().keys())\n")
    assert ran["names"] == ["_w", "_N__v"] and ran["keys"] == ["_w", "_N__v"]  # torch's names, checked by hand


def test_an_optimizers_private_step_helper_runs():
    ran = run("import torch\nclass Plain(torch.optim.Optimizer):\n    def __init__(self, params, lr):\n"
              "        super().__init__(params, dict(lr=lr))\n    def _step(self, p, lr):\n        p.data -= lr * p.grad\n"
              "    def step(self):\n        for g in self.param_groups:\n            for p in g['params']:\n"
              "                self._step(p, g['lr'])\n"
              "w = torch.tensor([1.0], requires_grad=True)\nopt = Plain([w], 0.5)\n(w * 3).sum().backward()\nopt.step()\n")
    assert ran["w"].tolist() == [-0.5]


def test_a_mangled_name_is_private_to_its_class_as_in_python():
    source = ("class A:\n    def __init__(self):\n        self.__x = 1\n    def get(self):\n        return self.__x\n"
              "class B(A):\n    def __init__(self):\n        super().__init__()\n        self.__x = 2\n"
              "    def mine(self):\n        return self.__x\nb = B()\nv = (b.get(), b.mine(), b._A__x, b._B__x)\n")
    assert run(source)["v"] == (1, 2, 1, 2)
    with pytest.raises(NotAllowedError, match="attribute '_A__y' is not available"):
        parse_program(source + "w = b._A__y\n")  # a private name the program never gives


def test_a_mangled_name_outside_its_class_is_refused_as_every_dunder():
    with pytest.raises(NotAllowedError) as caught:
        parse_program("class A:\n    def __init__(self):\n        self.__x = 1\nv = A().__x")
    assert "attribute '__x' is not available" in caught.value.message


@pytest.mark.parametrize("name", ["__call__", "__init__", "__repr__"])
def test_dunders_are_never_mangled(name):
    assert mangled(name, "Net") == name
    assert mangled("__x", "__") == "__x"
    assert mangled("__x", "_Net") == "_Net__x"


def test_the_class_view_is_types_own_and_reads_as_in_python():
    ran = run('import torch\nfrom torch import nn\nclass Net(nn.Module):\n    """doc"""\n    pass\nn = Net()\n'
              "def f():\n    'fd'\n"
              "v = (n.__class__.__name__, n.__class__ is type(n), n.__class__.__qualname__, n.__class__.__module__, "
              "Net.__doc__, f.__doc__, f.__module__, torch.ones(1).__class__.__name__, (1.5).__class__.__name__, "
              "nn.Linear(1, 1).__class__.__name__, type(torch.ones(1)).__module__)\n")
    assert ran["v"] == ("Net", True, "Net", "__main__", "doc", "fd", "__main__", "Tensor", "float", "Linear", "torch")


@pytest.mark.parametrize("attr", ["__bases__", "__mro__", "__subclasses__", "__dict__", "__globals__", "__init__",
                                  "__code__", "__closure__", "__func__", "__self__", "__getattribute__"])
@pytest.mark.parametrize("owner", ["n.__class__", "type(n)", "n", "f", "torch.ones(1).__class__"])
def test_the_class_view_goes_no_further(owner, attr):
    with pytest.raises(NotAllowedError) as caught:
        parse_program(f"import torch\nclass N:\n    pass\nn = N()\ndef f():\n    pass\nv = {owner}.{attr}")
    assert f"attribute '{attr}' is not available" in caught.value.message


@pytest.mark.parametrize("source", ["class A:\n    pass\nclass B:\n    pass\na = A()\na.__class__ = B",
                                    "class A:\n    pass\nA.__name__ = 'B'", "def f():\n    pass\nf.__doc__ = 'x'"])
def test_the_class_view_is_read_only(source):
    with pytest.raises(NotAllowedError):
        parse_program(source)


def test_a_computed_class_view_reads_the_same_and_a_computed_private_name_stays_refused():
    ran = run("class A:\n    pass\nv = getattr(A(), '__class__').__name__\n")
    assert ran["v"] == "A"
    assert "attribute '__dict__' is not available" in fails("class A:\n    pass\nv = getattr(A(), '__dict__')",
                                                            NotAllowedError).message
