"""Every assignment target Python allows (issue 32): attributes, items, starred and nested targets,
in assignments, `for` targets, comprehensions and `with ... as`, as CPython binds them and, for
tensors, as PyTorch does (published code: `lstm_out, self.hidden = self.lstm(x)`)."""
from __future__ import annotations

import pytest

from gradcli.errors import NotAllowedError
from gradcli.lang.parser import parse_program
from language_helpers import fails, run, same_as_cpython, torch_printed

PURE = [
    "class S:\n    pass\ns = S()\nd = {}\nxs = [0, 0, 0]\ns.a, d['k'], xs[1] = 1, 2, 3\nprint(s.a, d, xs)",
    "class S:\n    pass\ns = S()\n(s.a, (s.b, *s.rest)), last = (1, (2, 3, 4)), 5\nprint(s.a, s.b, s.rest, last)",
    "xs = [1, 2, 3, 4]\nxs[0], xs[-1] = xs[-1], xs[0]\nprint(xs)",
    "d = {}\n*d['head'], d['tail'] = range(4)\nprint(d)",
    "m = [[0] * 2 for _ in range(2)]\nfor m[0][0], m[1][1] in [(1, 2), (3, 4)]:\n    print(m)",
    "class S:\n    pass\ns = S()\nfor s.i in range(3):\n    pass\nprint(s.i)",
    "d = {}\nfor k, d[k] in [('a', 1), ('b', 2)]:\n    pass\nprint(d)",
    "xs = [0] * 3\nfor i, xs[i] in enumerate('abc'):\n    pass\nprint(xs)",
    "class S:\n    pass\ns = S()\na = s.b = [1]\ns.c = s.d = 2\nprint(a is s.b, s.c, s.d)",
    "xs = [0, 0]\nys = [x for xs[0] in range(3) for x in [xs[0]]]\nprint(xs, ys)",
    "d = {'a': [0, 0]}\nd['a'][0], d['a'][1] = 'x', 'y'\nprint(d)",
]


@pytest.mark.parametrize("source", PURE)
def test_targets_bind_as_cpython_binds_them(source):
    same_as_cpython(source)


TORCHY = '''import torch
import torch.nn as nn
torch.manual_seed(0)

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.Linear(3, 2)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.lstm(x), x.sum()
        return out

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
(a * b).sum().backward()
print(a.grad, b.grad)
a.grad, b.grad = None, None
print(a.grad, b.grad)
t = Tagger()
y = t(torch.ones(1, 3))
print(t.hidden)
x = torch.zeros(4)
x[0], x[1:3] = 1.0, torch.tensor([2.0, 3.0])
print(x)
with torch.no_grad() as g:
    print(g)
'''


def test_tensor_targets_bind_as_pytorch_does():
    assert run(TORCHY).printed == torch_printed(TORCHY)


@pytest.mark.parametrize("source, words", [
    ("import torch\nx = torch.ones(1)\nfor x.__class__ in [1]:\n    pass", "attribute '__class__' is not available"),
    ("import torch\nwith torch.no_grad() as x.__dict__:\n    pass", "attribute '__dict__' is not available"),
])
def test_a_target_still_passes_the_name_rules(source, words):
    with pytest.raises(NotAllowedError) as caught:
        parse_program(source)
    assert words in caught.value.message


@pytest.mark.parametrize("target, attr", [("x.shape", "shape"), ("x._data", "_data"), ("*x._grad", "_grad")])
def test_a_tensors_other_attributes_stay_unassignable_in_an_unpacking(target, attr):
    caught = fails(f"import torch\nx = torch.ones(1)\na, {target} = 1, 2", NotAllowedError)
    assert f"attribute '{attr}'" in caught.message and caught.hint
