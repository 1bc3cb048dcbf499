"""torch.cuda, torch.backends.cudnn/cuda and torch.version as PyTorch's CPU-only build answers them.

Tutorials call these unguarded (`torch.backends.cudnn.benchmark = True`, `torch.cuda.synchronize()` before a
clock); each line below is what torch 2.13+cpu printed, and `test_the_texts_are_torchs_own` reruns torch."""
from __future__ import annotations

import pytest

from gradcli.errors import ArgumentError
from language_helpers import fails, run, torch_printed

SOURCE = """import torch
import torch.backends.cudnn as cudnn
print(torch.backends.cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32, cudnn.is_available())
torch.backends.cudnn.benchmark = True
cudnn.deterministic = True
print(torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic, cudnn.version())
print(torch.backends.cuda.matmul.allow_tf32)
torch.backends.cuda.matmul.allow_tf32 = True
print(torch.backends.cuda.matmul.allow_tf32, torch.version.cuda, torch.backends.cuda.is_built())
print(torch.cuda.max_memory_allocated(), torch.cuda.memory_allocated(0), torch.cuda.memory_reserved())
print(torch.cuda.max_memory_reserved(), torch.cuda.empty_cache(), torch.cuda.is_bf16_supported())
print(torch.get_float32_matmul_precision())
torch.set_float32_matmul_precision('high')
print(torch.get_float32_matmul_precision())
for f in (torch.cuda.synchronize, torch.cuda.current_device, torch.cuda.get_device_name, torch.cuda.mem_get_info,
          torch.cuda.get_device_capability, torch.cuda.reset_peak_memory_stats, torch.cuda.Event):
    try:
        f()
    except AssertionError as e:
        print('AssertionError', e)
    except AttributeError as e:
        print('AttributeError', e)
    except RuntimeError as e:
        print('RuntimeError', e)
try:
    torch.cuda.set_device(0)
except AttributeError as e:
    print('AttributeError', e)
for value in (1, 'yes'):
    try:
        torch.backends.cudnn.benchmark = value
    except RuntimeError as e:
        print('RuntimeError', e)
try:
    torch.backends.cuda.matmul.allow_tf32 = 0
except RuntimeError as e:
    print('RuntimeError', e)
try:
    with torch.cuda.device(0):
        print('entered')
except RuntimeError as e:
    print('RuntimeError', e)
try:
    torch.ones(2).cuda()
except AssertionError as e:
    print('AssertionError', e)
print(torch.backends.cudnn.benchmark)
"""

PRINTED = [
    "False False True True False",
    "True True None",
    "False",
    "True None False",
    "0 0 0",
    "0 None False",
    "high",
    "high",
    "AssertionError Torch not compiled with CUDA enabled",
    "AssertionError Torch not compiled with CUDA enabled",
    "AssertionError Torch not compiled with CUDA enabled",
    "AssertionError Torch not compiled with CUDA enabled",
    "AssertionError Torch not compiled with CUDA enabled",
    "AttributeError module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'",
    "RuntimeError Tried to instantiate dummy base class Event",
    "AttributeError module 'torch._C' has no attribute '_cuda_setDevice'",
    "RuntimeError set_benchmark_cudnn expects a bool, but got int",
    "RuntimeError set_benchmark_cudnn expects a bool, but got str",
    "RuntimeError set_allow_tf32_cublas expects a bool, but got int",
    "RuntimeError PyTorch was compiled without CUDA support",
    "AssertionError Torch not compiled with CUDA enabled",
    "True",
]


def test_each_answer_is_the_cpu_builds() -> None:
    assert run(SOURCE).printed == PRINTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == PRINTED


def test_a_programs_switches_end_with_its_run() -> None:
    run("import torch\ntorch.backends.cudnn.benchmark = True\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.set_float32_matmul_precision('medium')\n")
    assert run("import torch\nprint(torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32, "
               "torch.get_float32_matmul_precision())\n").printed == ["False False highest"]


def test_an_unknown_switch_is_refused_by_name() -> None:
    error = fails("import torch\ntorch.backends.cudnn.benchmrk = True\n", ArgumentError)
    assert "benchmrk" in str(error) and "benchmark" in error.hint


def test_an_uncaught_cuda_call_says_how_to_guard_it(cli) -> None:
    done = cli("eval", "torch.cuda.synchronize(); out = x.sum()", "x=[1.0]")
    assert done.exit_code == 2
    assert "Torch not compiled with CUDA enabled" in done.stderr and "torch.cuda.is_available()" in done.stderr
