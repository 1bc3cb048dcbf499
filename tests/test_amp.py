"""Mixed precision as PyTorch's CPU build runs it: autocast('cuda'), torch.cuda.amp and GradScaler('cuda') are
disabled (the block runs in float32, the scaler hands the loss back and steps the optimizer), the same program
prints what PyTorch prints; what PyTorch does run on the CPU at another precision is refused, never computed
in float32 under its name."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError, NotAllowedError
from language_helpers import run, torch_printed

PROGRAM = """import torch
from torch.cuda.amp import autocast, GradScaler
a = torch.ones(2, 2, requires_grad=True)
opt = torch.optim.SGD([a], lr=0.1)
scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda"):
    y = a @ a
print(y.dtype)
with torch.autocast("cpu", enabled=False):
    print((a @ a).dtype)
with autocast():
    loss = (a * a).sum()
print(scaler.is_enabled(), scaler.get_scale(), scaler.scale(loss))
print(GradScaler().state_dict())
scaler.scale(loss).backward()
print(scaler.step(opt))
scaler.update()
print(a)
print(scaler.unscale_(opt))
with torch.amp.autocast(device_type="cuda", dtype=torch.float16):
    print((a @ a).dtype)
"""


def test_without_a_gpu_it_runs_as_pytorch_runs_it():
    assert "\n".join(run(PROGRAM).printed).splitlines() == torch_printed(PROGRAM)


@pytest.mark.parametrize("line, words", [
    ("with torch.autocast('cpu'):\n    y = torch.ones(2) * 2\n",
     "autocast on the CPU runs matmul, linear and convolution in bfloat16"),
    ("with torch.autocast(device_type='cpu', dtype=torch.float16):\n    pass\n", "in float16"),
    ("s = torch.amp.GradScaler('cpu')\n", "GradScaler('cpu') multiplies the loss by its scale"),
    ("with torch.autocast('gpu'):\n    pass\n", "expected device_type to be a device type string"),
])
def test_what_pytorch_runs_at_another_precision_is_refused(line, words):
    with pytest.raises(GradcliError) as info:
        run("import torch\n" + line)
    assert words in info.value.message


def test_a_refused_autocast_block_never_runs():
    """The refusal comes when the block is entered, before its first statement."""
    with pytest.raises(NotAllowedError):
        run("import torch\nran = False\nwith torch.autocast('cpu'):\n    ran = True\n")
