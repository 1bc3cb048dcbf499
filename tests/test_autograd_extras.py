"""The autograd API and nn utilities tutorials still call: grad(is_grads_batched=), torch.autograd.backward,
gradcheck's signature, nn.init.orthogonal_, the deprecated register_backward_hook, nn.utils.clip_grad as a module
path and torch.backends.mps; each program prints, line for line, what torch prints for it."""
from __future__ import annotations

import inspect

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

UTILITIES = """import torch
import torch.nn as nn
from torch.nn.utils.clip_grad import clip_grad_norm_
torch.manual_seed(0)
w = torch.empty(3, 5)
nn.init.orthogonal_(w, gain=2.0)
print(w)
v = torch.empty(4, 2, 2)
nn.init.orthogonal_(v)
print(v[0])
print(torch.backends.mps.is_available())
lin = nn.Linear(3, 2)
def hook(module, grad_input, grad_output):
    print("hook", [None if g is None else tuple(g.shape) for g in grad_input], grad_output[0])
h = lin.register_backward_hook(hook)
x = torch.randn(4, 3, requires_grad=True)
lin(x).sum().backward()
print(clip_grad_norm_(lin.parameters(), 0.5))
print(torch.nn.utils.clip_grad.clip_grad_value_(lin.parameters(), 0.1))
print(torch.autograd.gradcheck(lambda a: (a * a).sum(), (torch.randn(3, dtype=torch.float64, requires_grad=True),), fast_mode=True))
"""

AUTOGRAD = """import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2
(jac,) = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)
print(jac)
z = (x * 3).sum()
torch.autograd.backward(z)
print(x.grad)
w = x.exp()
torch.autograd.backward([w], [torch.ones(3)])
print(x.grad)
a, b = x.sum(), (x * x).sum()
torch.autograd.backward([a, b], [torch.tensor(1.0), torch.tensor(2.0)])
print(x.grad)
u = torch.tensor(1.0, requires_grad=True)
print(torch.autograd.grad(x.sum(), [x, u], materialize_grads=True))
"""


@pytest.mark.parametrize("source", [UTILITIES, AUTOGRAD], ids=["nn utilities", "autograd"])
def test_prints_what_torch_prints(source):
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


def test_gradcheck_signatures_are_pytorchs():
    torch = pytest.importorskip("torch")
    from gradcli.engine.gradcheck import gradcheck, gradgradcheck
    for mine, theirs in ((gradcheck, torch.autograd.gradcheck), (gradgradcheck, torch.autograd.gradgradcheck)):
        shape = [(n, p.kind, p.default) for n, p in inspect.signature(mine).parameters.items()]
        assert shape == [(n, p.kind, p.default) for n, p in inspect.signature(theirs).parameters.items()]


def test_a_backward_through_torch_autograd_backward_is_checked(cli, tmp_path):
    record = cli.checked_file(tmp_path / "b.grad", "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                                   "torch.autograd.backward((x * x).sum())\n")
    assert record["backward_calls"] == 1 and record["checks"]["passed"] == 1


@pytest.mark.parametrize("source, words", [
    ("torch.autograd.gradcheck(lambda a: a * 2, (x,), check_forward_ad=True)", "check_forward_ad=True is not supported"),
    ("torch.autograd.gradcheck(lambda a: a * 2, (x,), no_such_option=1)", "no_such_option"),
    ("torch.autograd.backward(x.sum(), inputs=[x])", "inputs=...) is not supported"),
    ("torch.autograd.grad([x * 2, x * 3], x, [torch.ones(2, 2), torch.ones(3, 2)], is_grads_batched=True)",
     "every grad_output needs the same batch size"),
    ("torch.autograd.grad(x * 2, x, is_grads_batched=True)", "is_grads_batched=True needs grad_outputs"),
    ("torch.nn.init.orthogonal_(torch.ones(3))", "Only tensors with 2 or more dimensions are supported"),
])
def test_bad_calls_are_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nx = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)\ny = {source}\n")
    assert words in info.value.message
