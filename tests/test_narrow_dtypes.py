"""torch.bfloat16 (emulated in float32, rounded per op) and torch.float16 (NumPy's float16) against PyTorch's
numbers and printed text; the rounding itself against hand-derived bit patterns."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import narrow
from gradcli.errors import GradcliError
from tests.language_helpers import fails, run, torch_printed


def _bits(values: np.ndarray) -> list[str]:
    return [f"{int(b):08x}" for b in np.asarray(values, np.float32).view(np.uint32)]


def test_rounding_is_to_nearest_even_on_the_upper_half():
    # 1 + 2**-8 lies halfway between 1 and 1 + 2**-7: even (1) wins; 1 + 3 * 2**-8 rounds up to 1 + 2**-6
    halfway = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, -(1 + 2 ** -8), 1 + 2 ** -8 + 2 ** -20], np.float32)
    assert _bits(narrow.round_to_bfloat16(halfway)) == ["3f800000", "3f820000", "bf800000", "3f810000"]
    # the largest float32 overflows to inf, as torch's conversion does; nan stays nan; 0-d stays 0-d
    edge = narrow.round_to_bfloat16(np.array([np.finfo(np.float32).max, np.nan, -0.0], np.float32))
    assert np.isinf(edge[0]) and np.isnan(edge[1]) and _bits(edge[2:]) == ["80000000"]
    assert narrow.round_to_bfloat16(np.float32(1 / 3)).shape == ()


def test_bfloat16_arrays_round_every_numpy_result():
    a = narrow.as_bfloat16(np.array([1 / 3, 100.123, 2.5]))
    assert a.tolist() == [0.333984375, 100.0, 2.5]
    assert (a * 3.3).tolist() == [1.1015625, 330.0, 8.25]
    assert isinstance(a.sum(), narrow.BFloat16Array) and float(a.sum()) == 103.0
    assert type(a.astype(np.float64)) is np.ndarray  # out of bfloat16 the values are exact, and plain
    assert type(a + np.ones(3, np.float32)) is np.ndarray  # a dimensioned float32 operand wins, as in torch


ORACLE_PROGRAM = """
import torch
import torch.nn as nn
torch.manual_seed(0)
print(torch.finfo(torch.bfloat16))
print(torch.finfo(torch.float16))
lin = nn.Linear(4, 3).to(torch.bfloat16)
x = torch.randn(5, 4).to(torch.bfloat16)
y = lin(x)
print(y)
loss = y.pow(2).mean()
loss.backward()
print(loss)
print(lin.weight.grad)
print(lin.bias.grad)
opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
opt.step()
print(lin.weight)
a = torch.randn(3, 5).bfloat16()
print(a.softmax(dim=1))
print(a.sum(), a.mean(dim=0), a @ a.T)
h = torch.randn(3).half()
print(h + a[0, :3], (h + a[0, :3]).dtype, a[0] + 2.5, (a[0] + torch.tensor(2.5)).dtype, (a[0] + torch.ones(5)).dtype)
print(torch.zeros(2, dtype=torch.bfloat16), torch.ones(2, 2).bfloat16().dtype == torch.bfloat16)
print(torch.ones(2).bfloat16().dtype == torch.float32, torch.ones(2).bfloat16().float().dtype)
print(torch.exp(a[0]), torch.tanh(a[1]) * 3, torch.sigmoid(a[2]))
print(torch.rand(3, dtype=torch.bfloat16), torch.rand(2, 2, dtype=torch.float16))
print(torch.tensor([1, 2]).to(torch.bfloat16) / 3, torch.arange(5, dtype=torch.bfloat16))
print(torch.full((2,), 1 / 3, dtype=torch.bfloat16), torch.tensor([1 / 3, 65504.0, 7e-5]).half())
f = torch.randn(4, 3).half().requires_grad_()
(f.exp() * f).sum().backward()
print(f.grad)
"""


def test_bfloat16_and_float16_programs_print_torchs_text_and_numbers():
    expected = torch_printed(ORACLE_PROGRAM)
    assert "\n".join(run(ORACLE_PROGRAM).printed).splitlines() == expected


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """Distance in bfloat16 steps (the upper 16 bits of float32 patterns of the same sign)."""
    ia, ib = (np.asarray(v, np.float32).view(np.int32) >> 16 for v in (a, b))
    return int(np.abs(ia.astype(np.int64) - ib.astype(np.int64)).max())


ADAM = """
import torch
import torch.nn as nn
torch.manual_seed(0)
lin = nn.Linear(4, 3).bfloat16()
opt = torch.optim.Adam(lin.parameters(), lr=0.01)
x = torch.randn(5, 4).bfloat16()
for _ in range(3):
    opt.zero_grad()
    loss = lin(x).pow(2).mean()
    loss.backward()
    opt.step()
w = lin.weight.float().tolist()
"""


def test_adam_on_bfloat16_stays_within_one_ulp_of_torch_after_three_steps():
    """gradcli's Adam rounds where torch's single-tensor Adam does (lerp_, mul_, addcmul_, sqrt, div, add_,
    addcdiv_), yet an element may land one bfloat16 step apart after three updates (four after thirty:
    docs/library.md says so)."""
    from tests.language_helpers import oracle
    theirs = np.array(oracle(ADAM)["w"], np.float32)
    ours = np.array(run(ADAM)["w"], np.float32)
    assert _ulps(ours, theirs) <= 1


def test_dtype_names_and_promotion():
    ran = run("import torch\n"
              "b = torch.ones(2, dtype=torch.bfloat16)\n"
              "h = torch.ones(2, dtype=torch.half)\n"
              "print(b.dtype, h.dtype, (b + h).dtype, (b + 1.5).dtype, (b * torch.ones(2)).dtype)\n"
              "print((b + torch.tensor(2.0)).dtype, (b.sum() + torch.ones(2)).dtype, b.dtype is torch.bfloat16)\n"
              "print(torch.float16 == torch.half, b.dtype == torch.float32, b.half().dtype, h.bfloat16().dtype)\n")
    assert ran.printed == ["torch.bfloat16 torch.float16 torch.float32 torch.bfloat16 torch.float32",
                           "torch.bfloat16 torch.float32 True",
                           "True False torch.float16 torch.bfloat16"]


def test_a_module_casts_to_bfloat16_and_back():
    ran = run("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2).bfloat16()\n"
              "print(m.weight.dtype, m.float().weight.dtype, m.half().bias.dtype, m.to(torch.bfloat16).bias.dtype)\n")
    assert ran.printed == ["torch.bfloat16 torch.float32 torch.float16 torch.bfloat16"]


@pytest.mark.parametrize("source, words", [
    ("import torch\ntorch.ones(2, dtype=torch.bfloat17)", "bfloat17"),
    ("import torch\ntorch.ones(2, dtype='bfloat17')", "unknown dtype 'bfloat17'"),
    ("import torch\ntorch.finfo(torch.int64)", "torch.finfo() requires a floating point input type"),
    ("import torch\ntorch.ones(2).bfloat16(torch.float32)", "bfloat16"),
])
def test_wrong_dtypes_are_told(source: str, words: str):
    error = fails(source, GradcliError)
    assert words in str(error)


def _checked(out, leaves):
    from gradcli.check import check_gradients
    out.backward()
    return check_gradients(out, leaves, None, {k: t.grad._data for k, t in leaves.items()})


def test_check_proves_a_bfloat16_program_with_bfloat16s_tolerance_and_catches_a_wrong_vjp(patched):
    """bfloat16 keeps 8 significant bits: --check's rounding unit is 2**-8 for it, so a correct program's
    3-digit gradients pass, while a VJP off by one (x[1]'s gradient 2*1.7 + 1) still fails."""
    import gradcli as g
    from gradcli.engine import ops as O
    x = g.tensor([0.3, 1.7], dtype=narrow.BFLOAT16, requires_grad=True)
    assert _checked((x * x * 3.3).sum(), {"x": x}).status == "pass"

    def off_at_1(ns, gr, o, a, b):
        bump = np.zeros(np.shape(gr))
        bump[1] = 1.0
        return gr * b + bump
    patched(O.MUL, (off_at_1, O.MUL.vjps[1]))
    y = g.tensor([0.3, 1.7], dtype=narrow.BFLOAT16, requires_grad=True)
    report = _checked((y * y).sum(), {"y": y})
    assert report.status == "fail" and report.inputs["y"].worst.index == (1,)
