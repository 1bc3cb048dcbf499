"""torch.utils.checkpoint against torch itself: the same seeded program (dropout inside the block, so the
recomputation must replay the random stream) prints what torch prints, and --check proves the gradients."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

PROGRAM = """import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
torch.manual_seed(0)
block = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(5, 3, requires_grad=True)
y = checkpoint(block, x, use_reentrant=True)
print(y.grad_fn.name())
y.pow(2).sum().backward()
print(x.grad, block[0].weight.grad)
g1 = block[3].weight.grad.clone()
block.zero_grad(); x.grad = None
torch.manual_seed(0); _ = torch.randn(5, 3)
z = block(x)
z.pow(2).sum().backward()
print(z.grad_fn.name())
w = checkpoint(block, x, use_reentrant=False)
print(w.grad_fn.name())
s = checkpoint_sequential(block, 2, x, use_reentrant=True)
s.sum().backward()
print(s.grad_fn.name(), x.grad)
"""


def test_checkpoint_prints_what_torch_prints():
    assert "\n".join(run(PROGRAM).printed).splitlines() == torch_printed(PROGRAM)


def test_checkpointed_gradients_are_proven(cli, tmp_path):
    record = cli.checked_file(tmp_path / "c.grad", PROGRAM)
    assert record["backward_calls"] == 3 and record["checks"] == {"passed": 3, "failed": 0, "undefined": 0}


def test_the_recomputed_block_reaches_the_parameters_as_a_plain_call_does():
    ran = run("import torch\nimport torch.nn as nn\nfrom torch.utils.checkpoint import checkpoint\n"
              "torch.manual_seed(0)\nlin = nn.Linear(2, 2)\nx = torch.ones(3, 2, requires_grad=True)\n"
              "checkpoint(lin, x, use_reentrant=True).pow(2).sum().backward()\n"
              "a, ax = lin.weight.grad.clone(), x.grad.clone()\nlin.zero_grad()\nx.grad = None\n"
              "lin(x).pow(2).sum().backward()\nsame = torch.allclose(a, lin.weight.grad) and torch.allclose(ax, x.grad)\n")
    assert ran["same"] is True


@pytest.mark.parametrize("source, words", [
    ("checkpoint(3, x)", "checkpoint() takes the function"),
    ("checkpoint(lambda a, k: a * k, x, k=2, use_reentrant=True)", "Unexpected keyword arguments: k"),
])
def test_bad_checkpoints_are_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nfrom torch.utils.checkpoint import checkpoint\nx = torch.ones(2, requires_grad=True)\n"
            f"y = {source}\n")
    assert words in info.value.message
