"""The small integer dtypes images and quantised values come in: torch.uint8 (byte), torch.int8 (char) and
torch.int16 (short), with PyTorch's arithmetic (wrap-around, true division and Python floats to the default float
type, sums in int64) and printing. Each line is what torch 2.13 printed (`test_the_texts_are_torchs_own`)."""
from __future__ import annotations

from gradcli.errors import DtypeError
from language_helpers import fails, run, torch_printed

SOURCE = """import torch
a = torch.tensor([250, 3, 7], dtype=torch.uint8)
b = torch.tensor([-100, 5, 2], dtype=torch.int8)
print(a, b, a.dtype, b.dtype, torch.uint8, torch.int8, torch.int16, torch.short)
print(a + 10, a * 2, a + b, a / 2, a * 2.5, a + 1.5, a // 3, a % 4)
print(b * 2, b - 100, b.float(), b.abs(), -b, b.sum(), a.sum(), a.max(), a.mean(dtype=torch.float32))
x = torch.tensor([0.5, 1.7, -2.2])
print(x.byte(), x.char(), x.short(), (x > 0).byte(), x.to(torch.uint8), torch.zeros(2, dtype=torch.int16))
print(a.type(), b.type(), x.short().type(), a.long(), a.float() / 255, torch.ones(2, dtype=torch.uint8) * x[:2])
print(a == 3, a > 5, a.tolist(), a[0].item(), torch.arange(3, dtype=torch.uint8), a.numpy().dtype)
img = torch.randint(0, 256, (2, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
print(img, img.float().div(255).mean())
print(torch.cat([a, a]), a.view(3, 1), a.unsqueeze(0).shape, torch.stack([b, b]).dtype)
print(a.prod(), a.cumsum(0), a.cumprod(0), a.sum(0, keepdim=True), torch.sum(a, dim=0), b.cumsum(0))
print(torch.ByteTensor([1, 2]), torch.tensor([1, 2]).byte().dtype)
"""

EXPECTED = """tensor([250,   3,   7], dtype=torch.uint8) tensor([-100,    5,    2], dtype=torch.int8) torch.uint8 torch.int8 torch.uint8 torch.int8 torch.int16 torch.int16
tensor([ 4, 13, 17], dtype=torch.uint8) tensor([244,   6,  14], dtype=torch.uint8) tensor([150,   8,   9], dtype=torch.int16) tensor([125.0000,   1.5000,   3.5000]) tensor([625.0000,   7.5000,  17.5000]) tensor([251.5000,   4.5000,   8.5000]) tensor([83,  1,  2], dtype=torch.uint8) tensor([2, 3, 3], dtype=torch.uint8)
tensor([56, 10,  4], dtype=torch.int8) tensor([ 56, -95, -98], dtype=torch.int8) tensor([-100.,    5.,    2.]) tensor([100,   5,   2], dtype=torch.int8) tensor([100,  -5,  -2], dtype=torch.int8) tensor(-93) tensor(260) tensor(250, dtype=torch.uint8) tensor(86.6667)
tensor([  0,   1, 254], dtype=torch.uint8) tensor([ 0,  1, -2], dtype=torch.int8) tensor([ 0,  1, -2], dtype=torch.int16) tensor([1, 1, 0], dtype=torch.uint8) tensor([  0,   1, 254], dtype=torch.uint8) tensor([0, 0], dtype=torch.int16)
torch.ByteTensor torch.CharTensor torch.ShortTensor tensor([250,   3,   7]) tensor([0.9804, 0.0118, 0.0275]) tensor([0.5000, 1.7000])
tensor([False,  True, False]) tensor([ True, False,  True]) [250, 3, 7] 250 tensor([0, 1, 2], dtype=torch.uint8) uint8
tensor([[172,  47, 117],
        [192,  67, 251]], dtype=torch.uint8) tensor(0.5529)
tensor([250,   3,   7, 250,   3,   7], dtype=torch.uint8) tensor([[250],
        [  3],
        [  7]], dtype=torch.uint8) torch.Size([1, 3]) torch.int8
tensor(5250) tensor([250, 253, 260]) tensor([ 250,  750, 5250]) tensor([260]) tensor(260) tensor([-100,  -95,  -93])
tensor([1, 2], dtype=torch.uint8) torch.uint8
""".splitlines()


def test_each_prints_what_torch_printed() -> None:
    assert "\n".join(run(SOURCE).printed).splitlines() == EXPECTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == EXPECTED


def test_an_integer_tensor_cannot_require_grad() -> None:
    error = fails("import torch\ntorch.tensor([1, 2], dtype=torch.uint8, requires_grad=True)\n", DtypeError)
    assert "floating point" in str(error)
