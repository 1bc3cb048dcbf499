"""A program's own `_names` (micrograd's `self._prev`, `out._backward`, `def _helper`) on its plain
classes, and every other `_name` still refused: on tensors, modules, facades, gradcli's bases."""
from __future__ import annotations

import pytest

from gradcli.errors import NameLookupError, NotAllowedError
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
    ("from torch import nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self._cache = 1\nN()", NotAllowedError, "assignment to attribute '_cache' is not supported"),
    ("from torch import nn\nclass N(nn.Module):\n    def _init_weights(self, m):\n        pass",
     NotAllowedError, "a method or class attribute of a subclass of a gradcli class cannot start with '_'"),
    ("from torch import nn\nclass A:\n    def _forget(self):\n        pass\nclass N(A, nn.Module):\n    pass",
     NotAllowedError, "cannot start with '_' ('_forget')"),
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
