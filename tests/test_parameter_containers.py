"""nn.ParameterList and nn.ParameterDict: parameters registered by position or name, trained as the
model's, printed as PyTorch prints them."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gradcli.errors import ArgumentError
from language_helpers import fails, run

SOURCE = """import torch
from torch import nn
pl = nn.ParameterList([nn.Parameter(torch.ones(2)) for _ in range(2)])
pl.append(torch.zeros(3, 2))
print(pl)
print(len(pl), type(pl[2]).__name__, [n for n, _ in pl.named_parameters()])
print(pl[1:])
pd = nn.ParameterDict({'a': nn.Parameter(torch.ones(2)), 'b': torch.zeros(1, dtype=torch.float64)})
print(pd)
print(list(pd.keys()), 'a' in pd, 'c' in pd)

class Chain(nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = nn.ParameterList([nn.Parameter(torch.ones(1) * (i + 2)) for i in range(2)])

    def forward(self, x):
        for w in self.ws:
            x = x * w
        return x

m = Chain()
print(m)
print(m.state_dict())
print(nn.ParameterList(), nn.ParameterList([torch.ones(2)]))
m(torch.tensor([3.0])).sum().backward()
print([w.grad for w in m.ws])
"""
TEXT = """ParameterList(
    (0): Parameter containing: [torch.float32 of size 2]
    (1): Parameter containing: [torch.float32 of size 2]
    (2): Parameter containing: [torch.float32 of size 3x2]
)
3 Parameter ['0', '1', '2']
ParameterList(
    (0): Parameter containing: [torch.float32 of size 2]
    (1): Parameter containing: [torch.float32 of size 3x2]
)
ParameterDict(
    (a): Parameter containing: [torch.FloatTensor of size 2]
    (b): Parameter containing: [torch.DoubleTensor of size 1]
)
['a', 'b'] True False
Chain(
  (ws): ParameterList(
      (0): Parameter containing: [torch.float32 of size 1]
      (1): Parameter containing: [torch.float32 of size 1]
  )
)
OrderedDict([('ws.0', tensor([2.])), ('ws.1', tensor([3.]))])
ParameterList() ParameterList(  (0): Parameter containing: [torch.float32 of size 2])
[tensor([9.]), tensor([6.])]""".split("\n")


def test_parameter_containers_register_train_and_print_as_pytorchs() -> None:
    assert "\n".join(run(SOURCE).printed).split("\n") == TEXT


def test_a_plain_tensor_becomes_a_parameter_of_the_model() -> None:
    ran = run("import torch\nfrom torch import nn\nw = torch.ones(2)\npl = nn.ParameterList([w])\n"
              "n = len(list(nn.Sequential().parameters())) + len(list(pl.parameters()))\n")
    assert ran["n"] == 1
    np.testing.assert_array_equal(ran["pl"][0]._data, [1.0, 1.0])


@pytest.mark.parametrize("source, message", [
    ("nn.ParameterList([1.0])", "ParameterList.append() takes tensors or nn.Parameter, not float"),
    ("nn.ParameterList(3)", "ParameterList takes an iterable of tensors, not int"),
    ("nn.ParameterList([torch.ones(1)])[3]", "index 3 is out of range"),
    ("nn.ParameterDict({'a': torch.ones(1)})['b']", "ParameterDict has no key 'b'"),
    ("nn.ParameterDict({1: torch.ones(1)})", "ParameterDict maps string keys to parameters"),
    ("nn.ParameterList([torch.ones(1)])(torch.ones(1))", "ParameterList has no forward"),
])
def test_wrong_uses_are_named(source: str, message: str) -> None:
    err = fails(f"import torch\nfrom torch import nn\nv = {source}\n", ArgumentError)
    assert err.message.startswith(message) and err.hint


def test_the_texts_are_pytorchs() -> None:
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", SOURCE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == TEXT
