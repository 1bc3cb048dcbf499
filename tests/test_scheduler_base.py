"""torch.optim.lr_scheduler.LRScheduler as a base a program subclasses: its
`get_lr` sets every group's rate at each step, the first inside `__init__`, as PyTorch's does; the same program
prints what PyTorch prints."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from language_helpers import run, torch_printed

PROGRAM = """import torch
from torch.optim.lr_scheduler import LRScheduler, StepLR

class Warmup(LRScheduler):
    def __init__(self, optimizer, warmup, last_epoch=-1):
        self.warmup = warmup
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        scale = min(1.0, (self.last_epoch + 1) / self.warmup)
        return [base * scale for base in self.base_lrs]

w = torch.nn.Parameter(torch.ones(2))
opt = torch.optim.SGD([w], lr=0.5)
sched = Warmup(opt, 4)
for epoch in range(6):
    loss = (w * w).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(epoch, sched.get_last_lr(), sched.last_epoch, w)
print(isinstance(sched, LRScheduler), isinstance(StepLR(opt, 2), torch.optim.lr_scheduler.LRScheduler))
"""


def test_a_programs_scheduler_runs_as_in_pytorch():
    assert "\n".join(run(PROGRAM).printed).splitlines() == torch_printed(PROGRAM)


@pytest.mark.parametrize("body, words", [
    ("s = torch.optim.lr_scheduler.LRScheduler(opt)", "LRScheduler is a base class: subclass it"),
    ("class Lazy(torch.optim.lr_scheduler.LRScheduler):\n    pass\ns = Lazy(opt)", "LRScheduler.get_lr() is not implemented"),
    ("class Bad(torch.optim.lr_scheduler.LRScheduler):\n    def get_lr(self):\n        return 0.1\ns = Bad(opt)",
     "get_lr() must give one learning rate per parameter group (1), got 0.1"),
])
def test_a_scheduler_without_rates_is_an_error(body, words):
    with pytest.raises(GradcliError) as info:
        run("import torch\nopt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)\n" + body + "\n")
    assert words in info.value.message
