"""F.gumbel_softmax: PyTorch's noise stream (exponential_), the soft sample, and hard=True's one-hot with the soft
sample's gradient (straight-through); the same program prints what PyTorch prints, and --check proves it."""
from __future__ import annotations

from gradcli.check import checker
from gradcli.program.scripts import run_file
from language_helpers import run, torch_printed

PROGRAM = """import torch
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(2, 4, requires_grad=True)
y = F.gumbel_softmax(logits, tau=0.5)
print(y)
h = F.gumbel_softmax(logits, tau=1.0, hard=True)
print(h)
(y[:, 0].sum() + (h * torch.arange(4.)).sum()).backward()
print(logits.grad)
z = F.gumbel_softmax(torch.randn(3, 2, dtype=torch.float64), dim=0, hard=True)
print(z)
"""


def test_prints_what_pytorch_prints():
    assert "\n".join(run(PROGRAM).printed).splitlines() == torch_printed(PROGRAM)


def test_check_proves_the_straight_through_gradient(tmp_path):
    path = tmp_path / "g.py"
    path.write_text(PROGRAM)
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.checks_passed == 1
