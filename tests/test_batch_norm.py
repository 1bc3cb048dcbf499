"""Batch norm as one primitive (`NativeBatchNormBackward0`), as PyTorch's: values, every gradient,
double backward, node names and edges, running statistics, against torch (skipped without it) and
against numbers torch 2.13 printed for the same program (so the key values are checked without it).
`--check` and the wrong-VJP test cover the op in tests/test_nn_functional.py.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradcli as g
import gradcli.nn.layers as L
import gradcli.nn.conv as C
from gradcli.engine import ops as O
from gradcli.engine.tensor import _wrap
from tests.printed_numbers import assert_printed_like_torch
from language_helpers import run

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
bn = nn.BatchNorm1d(3)
x = torch.randn(4, 3, requires_grad=True)
y = bn(x)
print(y.grad_fn.name(), [f.name() for f, _ in y.grad_fn.next_functions])
print(y)
(gx,) = torch.autograd.grad((y ** 3).sum(), x, create_graph=True)
(gxx,) = torch.autograd.grad(gx.pow(2).sum(), x)
print(gxx[0])
print(bn.running_mean, bn.running_var, bn.num_batches_tracked)
bn.eval()
z = bn(x)
print(z.grad_fn.name())
print(z[0])
y = F.batch_norm(x, None, None, training=True)
print([f if f is None else f.name() for f, _ in y.grad_fn.next_functions])
"""

# printed by torch 2.13 running PROGRAM
TORCH_PRINTED = [
    "NativeBatchNormBackward0 ['torch::autograd::AccumulateGrad', 'torch::autograd::AccumulateGrad', "
    "'torch::autograd::AccumulateGrad']",
    "tensor([[ 1.4666, -0.0131, -1.3234],\n        [ 0.0594, -1.1326, -0.4257],\n"
    "        [-0.1794,  1.5879,  0.3560],\n        [-1.3466, -0.4422,  1.3931]], grad_fn=<NativeBatchNormBackward0>)",
    "tensor([-93.3218,  33.7633,  12.4663])",
    "tensor([ 0.0527, -0.0284, -0.1029]) tensor([0.9637, 0.9666, 1.0007]) tensor(1)",
    "NativeBatchNormBackward0",
    "tensor([ 1.5160, -0.2696, -2.0752], grad_fn=<SelectBackward0>)",
    "['torch::autograd::AccumulateGrad', None, None]",
]


def test_a_program_prints_what_torch_printed():
    assert run(PROGRAM).printed == TORCH_PRINTED


def test_the_same_text_as_torch_live():
    pytest.importorskip("torch")
    want = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert want.returncode == 0, want.stderr
    assert_printed_like_torch("\n".join(TORCH_PRINTED) + "\n", want.stdout)


def test_one_node_in_both_modes():
    x = g.randn(4, 3, 2, requires_grad=True)
    w, b = g.ones(3, requires_grad=True), g.zeros(3, requires_grad=True)
    for training in (True, False):
        y = C.batch_norm(x, g.zeros(3), g.ones(3), w, b, training=training)
        assert y.grad_fn.op is O.BATCH_NORM and y.grad_fn.name == "NativeBatchNormBackward0"
        assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 3


def _arrays(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w, b, mean = (rng.standard_normal(shape[1]).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.5, 2.0, shape[1]).astype(np.float32)
    return x, w, b, mean, var, rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(
        np.float32)


def _leaf(a, grad=True):
    return _wrap(np.array(a)).requires_grad_(grad)


@pytest.mark.parametrize("shape", [(5, 3), (3, 3, 4), (4, 3, 2, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_values_gradients_and_double_backward_against_torch(shape, training, affine):
    torch = pytest.importorskip("torch")
    x, w, b, mean, var, gout, h = _arrays(shape, seed=len(shape) + 2 * training + affine)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tm, tv = torch.tensor(mean), torch.tensor(var)
    ty = torch.nn.functional.batch_norm(tx, tm, tv, tw if affine else None, tb if affine else None,
                                        training=training, momentum=0.3, eps=1e-3)
    gx, gw, gb = (_leaf(a) for a in (x, w, b))
    gm, gv = _leaf(mean, False), _leaf(var, False)
    gy = C.batch_norm(gx, gm, gv, gw if affine else None, gb if affine else None, training=training, momentum=0.3,
                      eps=1e-3)
    assert gy.dtype == np.float32 and gy.grad_fn.name == ty.grad_fn.name()
    assert np.allclose(gy._data, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert np.allclose(gm._data, tm.numpy(), atol=1e-6) and np.allclose(gv._data, tv.numpy(), atol=1e-6)
    inputs, leaves = ((tx, tw, tb), (gx, gw, gb)) if affine else ((tx,), (gx,))
    want = torch.autograd.grad((ty * torch.tensor(gout)).sum(), inputs, create_graph=True)
    got = g.grad((gy * _wrap(gout)).sum(), leaves, create_graph=True)
    for mine, theirs in zip(got, want):
        assert np.allclose(mine._data, theirs.detach().numpy(), rtol=1e-4, atol=1e-4)
    if not got[0].requires_grad:  # eval without weight: ∂y/∂x is a constant, so no second derivative
        assert not affine and not training
        return
    want2 = torch.autograd.grad((want[0] * torch.tensor(h)).sum(), inputs, allow_unused=True)
    got2 = g.grad((got[0] * _wrap(h)).sum(), leaves, allow_unused=True)
    for mine, theirs in zip(got2, want2):
        if theirs is None:
            assert mine is None
        else:
            assert np.allclose(mine._data, theirs.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_running_statistics_after_a_few_steps_equal_torchs(momentum):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    batches = [rng.standard_normal((6, 2, 3, 3)).astype(np.float32) * (k + 1) + k for k in range(4)]
    theirs, mine = torch.nn.BatchNorm2d(2, momentum=momentum), L.BatchNorm2d(2, momentum=momentum)
    for batch in batches:
        out_t, out_m = theirs(torch.tensor(batch)), mine(_wrap(batch))
        assert np.allclose(out_m._data, out_t.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert np.allclose(mine.running_mean._data, theirs.running_mean.numpy(), rtol=1e-6)
    assert np.allclose(mine.running_var._data, theirs.running_var.numpy(), rtol=1e-6)
    assert int(mine.num_batches_tracked._data) == int(theirs.num_batches_tracked) == 4
    theirs.eval()
    mine.eval()
    assert np.allclose(mine(_wrap(batches[0]))._data, theirs(torch.tensor(batches[0])).detach().numpy(), rtol=1e-5,
                       atol=1e-5)


def test_cumulative_average_when_momentum_is_none():
    """momentum=None: the running mean is the plain average of the batch means (hand-derived)."""
    bn = L.BatchNorm1d(1, momentum=None)
    for values in ([1.0, 3.0], [5.0, 7.0], [0.0, 0.0]):
        bn(_wrap(np.array(values, np.float32).reshape(2, 1)))
    assert np.allclose(bn.running_mean._data, [(2.0 + 6.0 + 0.0) / 3])
    assert np.allclose(bn.running_var._data, [(2.0 + 2.0 + 0.0) / 3])


@pytest.mark.parametrize("arguments, message", [
    ("torch.ones(2, 2), torch.ones(2)", "running_mean should contain 2 elements not 4"),
    ("torch.ones(2), torch.ones(3)", "running_var should contain 2 elements not 3"),
    ("torch.ones(2), torch.ones(2), weight=torch.ones(2, 2)", "weight should contain 2 elements not 4"),
    ("None, None, bias=torch.ones(3), training=True", "bias should contain 2 elements not 3"),
])
def test_per_channel_arguments_of_the_wrong_size_are_pytorchs_errors(arguments, message):
    from gradcli.errors import ShapeError
    with pytest.raises(ShapeError) as info:
        run(f"import torch\nimport torch.nn.functional as F\nF.batch_norm(torch.ones(2, 2), {arguments})\n")
    assert info.value.message == message  # recorded from torch 2.13 (a RuntimeError there, as here)
