"""torch.finfo, torch.set_default_tensor_type, torch.range, torch.bincount/bucketize, torch.random and
torch.accelerator.set_device_index: what torch 2.13 printed for the same program (`test_the_texts_are_torchs_own`
reruns it)."""
from __future__ import annotations

from language_helpers import run, torch_printed

SOURCE = """import torch
print(torch.finfo(torch.float64))
print(torch.finfo(torch.float32).eps, torch.finfo().max, torch.finfo(torch.float32).tiny, torch.finfo(torch.float32).bits)
print(torch.range(1, 2, 0.5), torch.range(0, 5, 2), torch.range(0, 3, dtype=torch.int64))
x = torch.tensor([0, 1, 1, 3])
print(torch.bincount(x, weights=torch.tensor([0.5, 1., 2., 1.])), torch.bincount(x, minlength=6), x.bincount())
print(torch.bincount(x, weights=torch.tensor([0.5, 1., 2., 1.], dtype=torch.float64)))
print(torch.bucketize(torch.tensor([[0.5, 2.0], [3.0, 4.0]]), torch.tensor([1.0, 2.0, 3.0]), right=True), torch.bucketize(2.0, torch.tensor([1.0, 2.0])), torch.bucketize(torch.tensor([1, 5]), torch.tensor([1, 3]), out_int32=True))
for bad in [lambda: torch.bincount(torch.tensor([-1, 2])), lambda: torch.bincount(torch.tensor([1.0])), lambda: torch.finfo(torch.int64),
            lambda: torch.set_default_tensor_type('torch.cuda.FloatTensor'), lambda: torch.set_default_tensor_type('torch.LongTensor'),
            lambda: torch.accelerator.set_device_index(0), lambda: torch.set_default_dtype(torch.int64)]:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
torch.set_default_tensor_type(torch.FloatTensor)
print(torch.ones(1).dtype)
torch.set_default_tensor_type('torch.DoubleTensor')
print(torch.ones(1).dtype, torch.tensor([1.5]))
torch.set_default_tensor_type(torch.FloatTensor)
torch.random.manual_seed(0)
print(torch.rand(2), torch.random.initial_seed())
"""

EXPECTED = """finfo(resolution=1e-15, min=-1.79769e+308, max=1.79769e+308, eps=2.22045e-16, smallest_normal=2.22507e-308, tiny=2.22507e-308, dtype=float64)
1.1920928955078125e-07 3.4028234663852886e+38 1.1754943508222875e-38 32
tensor([1.0000, 1.5000, 2.0000]) tensor([0., 2., 4.]) tensor([0, 1, 2, 3])
tensor([0.5000, 3.0000, 0.0000, 1.0000]) tensor([1, 2, 0, 1, 0, 0]) tensor([1, 2, 0, 1])
tensor([0.5000, 3.0000, 0.0000, 1.0000], dtype=torch.float64)
tensor([[0, 2],
        [3, 3]]) tensor(1) tensor([0, 2], dtype=torch.int32)
RuntimeError bincount only supports 1-d non-negative integral inputs.
NotImplementedError "bincount_cpu" not implemented for 'Float'
TypeError torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'
TypeError type torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled.
TypeError only floating-point types are supported as the default type
RuntimeError Cannot access accelerator device when none is available.
TypeError only floating-point types are supported as the default type
torch.float32
torch.float64 tensor([1.5000])
tensor([0.4963, 0.7682]) 0""".splitlines()


def test_each_prints_what_torch_printed() -> None:
    assert "\n".join(run(SOURCE).printed).splitlines() == EXPECTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == EXPECTED


def test_the_default_type_a_program_sets_ends_with_its_run() -> None:
    run("import torch\ntorch.set_default_tensor_type('torch.DoubleTensor')\n")
    assert run("import torch\nprint(torch.ones(1).dtype)\n").printed == ["torch.float32"]
