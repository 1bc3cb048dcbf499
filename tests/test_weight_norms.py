"""Spectral and weight normalisation, both of PyTorch's kinds (nn.utils.spectral_norm / weight_norm and
nn.utils.parametrizations.*), and register_parametrization: the same seeded program run by gradcli and by torch
prints the same text (parameter and buffer names, the power iteration's u and v, the weights, their gradients,
a parametrized module's repr and its node names); --check proves the gradients, and a wrong VJP of the fused
weight-norm primitive is caught."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.check import checker
from gradcli.engine import ops as O
from gradcli.errors import GradcliError
from gradcli.program.scripts import run_file
from language_helpers import oracle, run, torch_printed

PROGRAM = """import torch
import torch.nn as nn
from torch.nn.utils import parametrizations
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
m = nn.utils.spectral_norm(nn.Linear(3, 2))
print([n for n, _ in m.named_parameters()], list(m.state_dict().keys()))
print(m.weight_u, m.weight_v)
x = torch.randn(4, 3)
m(x).pow(2).sum().backward()
print(m.weight)
print(m.weight_orig.grad)
print(m.weight_u, m.weight_v)
m.eval()
print(m(x).sum())
p = parametrizations.spectral_norm(nn.Linear(3, 2))
print(p)
print([n for n, _ in p.named_parameters()], list(p.state_dict().keys()))
print(p.weight)
p(x).sum().backward()
print(p.parametrizations.weight.original.grad)
c = parametrizations.spectral_norm(nn.ConvTranspose1d(2, 3, 2))
print(c.weight.shape, c.weight.sum())
g = nn.utils.weight_norm(nn.Linear(3, 2))
print([n for n, _ in g.named_parameters()], g.weight_g, g.weight)
g(x).sum().backward()
print(g.weight_g.grad, g.weight_v.grad)
h = parametrizations.weight_norm(nn.Linear(3, 2), dim=None)
print(h, [n for n, _ in h.named_parameters()], h.weight)
h(x).pow(2).sum().backward()
print(h.parametrizations.weight.original0.grad, h.parametrizations.weight.original1.grad)
k = parametrizations.weight_norm(nn.Conv1d(2, 2, 3), dim=2)
k(torch.randn(1, 2, 4)).sum().backward()
print(k.weight.grad_fn.name(), k.parametrizations.weight.original0.grad, k.parametrizations.weight.original1.grad)
s = parametrizations.spectral_norm(nn.Conv2d(1, 2, 2), n_power_iterations=3)
y = s(torch.randn(1, 1, 3, 3)).sum()
y.backward()
print(s.parametrizations.weight.original.grad)
torch.set_default_dtype(torch.float32)
"""


def test_the_normalisations_print_what_pytorch_prints():
    source = PROGRAM.format(dtype="float32")
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


def test_in_float64_the_values_are_pytorchs():
    source = PROGRAM.format(dtype="float64").replace("print(", "show(").replace("torch.manual_seed(0)\n", (
        "torch.manual_seed(0)\nseen = []\ndef show(*a):\n"
        "    seen.extend(v.tolist() if isinstance(v, torch.Tensor) else str(v) for v in a)\n"), 1)
    mine, torch_ = run(source).env["seen"], oracle(source)["seen"]
    assert len(mine) == len(torch_) == 30
    for a, b in zip(mine, torch_):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_old_kinds_keep_the_optimizer_parameter_and_the_power_iteration_in_place():
    """The buffers keep their identity while the power iteration moves them (PyTorch writes them with out=);
    eval mode stops it; a parametrization's original is the parameter object the layer had."""
    source = """import torch
import torch.nn as nn
torch.manual_seed(0)
m = nn.Linear(3, 2)
w = m.weight
opt = torch.optim.SGD(m.parameters(), lr=0.1)
nn.utils.parametrizations.spectral_norm(m)
same = m.parametrizations.weight.original is w
old = nn.utils.spectral_norm(nn.Linear(3, 2))
u = old.weight_u
first = u.clone()
old(torch.ones(1, 3))
moved = not torch.equal(first, old.weight_u) and old.weight_u is u
old.eval()
before = old.weight_u.clone()
old(torch.ones(1, 3))
kept = torch.equal(before, old.weight_u)
"""
    env = run(source).env
    assert env["same"] and env["moved"] and env["kept"]


def test_register_parametrization_with_a_programs_module():
    source = """import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)
torch.manual_seed(0)
m = nn.Linear(3, 3)
P.register_parametrization(m, "weight", Symmetric())
sym = torch.equal(m.weight, m.weight.T)
m(torch.ones(2, 3)).sum().backward()
grad = m.parametrizations.weight.original.grad.tolist()
both = P.is_parametrized(m), P.is_parametrized(m, "bias")
name = str(m).split("(")[0]
"""
    mine, torch_ = run(source).env, oracle(source)
    assert mine["sym"] and mine["both"] == (True, False) and mine["name"] == "ParametrizedLinear"
    np.testing.assert_allclose(mine["grad"], torch_["grad"], rtol=1e-6)


@pytest.mark.parametrize("call, words", [
    ("nn.utils.spectral_norm(nn.Linear(2, 2), name='bias2')", "has no parameter or buffer with name 'bias2'"),
    ("nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)", "Expected n_power_iterations to be positive"),
    ("nn.utils.weight_norm(3)", "weight_norm() takes an nn.Module, not int"),
    ("nn.utils.parametrizations.spectral_norm(nn.ReLU())", "has no parameter or buffer with name 'weight'"),
])
def test_wrong_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\ny = {call}\n")
    assert words in info.value.message


CHECKED = """import torch
import torch.nn as nn
torch.manual_seed(0)
g = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
s = nn.utils.spectral_norm(nn.Linear(2, 1))
x = torch.randn(2, 3)
s(g(x)).pow(2).sum().backward()
"""


def test_check_proves_both_and_catches_a_wrong_weight_norm_vjp(tmp_path, patched):
    path = tmp_path / "norms.py"
    path.write_text(CHECKED)
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.checks_passed == 1
    right = O.WEIGHT_NORM.vjps
    patched(O.WEIGHT_NORM, (lambda *a, **k: right[0](*a, **k) * 1.5, right[1]))
    result = run_file(path, checker("symbolic"))
    assert result.status == "failed" and result.checks_failed == 1
