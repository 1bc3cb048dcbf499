"""CTC loss against torch itself: losses and gradients for padded and concatenated targets, ragged input
lengths, repeated labels, an empty target, a non-zero blank, every reduction, an impossible alignment
(inf, or 0 with zero_infinity), unbatched input, float32 and float64; bad calls are errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
logits = torch.randn(6, 4, 5, dtype=torch.{dtype}, requires_grad=True)
lp = logits.log_softmax(2)
padded = torch.tensor([[1, 2, 2], [3, 3, 3], [4, 1, 0], [2, 0, 0]])
lens_in, lens_tg = torch.tensor([6, 5, 4, 6]), torch.tensor([3, 3, 1, 0])
flat = torch.tensor([1, 2, 2, 3, 3, 3, 4])
outs = [F.ctc_loss(lp, padded, lens_in, lens_tg, reduction='none'),
        F.ctc_loss(lp, flat, lens_in, lens_tg),
        F.ctc_loss(lp, padded, [6, 6, 6, 6], [3, 3, 1, 0], reduction='sum'),
        nn.CTCLoss(blank=4, reduction='none')(lp, torch.tensor([[1, 0, 0], [3, 3, 2], [0, 0, 0], [2, 2, 2]]), lens_in, torch.tensor([2, 3, 1, 0])),
        nn.CTCLoss(reduction='none', zero_infinity=True)(lp, padded, torch.tensor([3, 5, 4, 1]), lens_tg),
        F.ctc_loss(lp[:, 0], torch.tensor([1, 2]), torch.tensor(6), torch.tensor(2), reduction='none')]
sum(o.sum() for o in outs).backward()
values = [o.tolist() for o in outs] + [logits.grad.tolist()]
impossible = F.ctc_loss(lp, padded, torch.tensor([3, 5, 4, 1]), lens_tg, reduction='none').tolist()
nodes = [outs[0].grad_fn.name(), outs[1].grad_fn.name(), outs[2].grad_fn.name()]
texts = [str(nn.CTCLoss()), str(nn.CTCLoss(blank=4, zero_infinity=True))]
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_matches_torch(dtype):
    source = PROGRAM.format(dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-5 if dtype == "float32" else 1e-11
    for a, b in zip(mine["values"], torch_["values"]):
        assert np.asarray(a).shape == np.asarray(b).shape
        assert np.allclose(a, b, atol=tol, rtol=tol)
    assert np.allclose(mine["impossible"], torch_["impossible"], rtol=tol) and np.isinf(mine["impossible"][0])
    assert mine["nodes"] == torch_["nodes"] == ["CtcLossBackward0", "MeanBackward0", "SumBackward0"]
    assert mine["texts"] == torch_["texts"]


def test_ctc_by_hand():
    """One frame, one label, two classes: the only alignment emits the label, so the loss is −log p(label)."""
    ran = run("import torch\nimport torch.nn.functional as F\n"
              "y = F.ctc_loss(torch.tensor([[[0.25, 0.75]]]).log(), torch.tensor([[1]]), [1], [1], reduction='sum')\n")
    assert np.isclose(float(ran["y"]), -np.log(0.75))


@pytest.mark.parametrize("call, words", [
    ("F.ctc_loss(lp, torch.tensor([[0, 1]]), [3], [2])", "is the blank"),
    ("F.ctc_loss(lp, torch.tensor([[1, 5]]), [3], [2])", "out of range"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), [4], [2])", "at most 3"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), [3, 3], [2])", "one per sample"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), [3], [2], blank=3)", "blank must be in label range"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), [3], [2], reduction='max')", "not a valid value for reduction"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), torch.tensor([3]), [2])", "both tensors or both"),
    ("F.ctc_loss(lp, torch.tensor([[1, 2]]), 3, 2)", "a tensor or a sequence of ints"),
])
def test_bad_ctc_calls_are_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn.functional as F\nlp = torch.randn(3, 1, 3).log_softmax(2)\ny = {call}\n")
    assert words in info.value.message


IMPOSSIBLE = """import torch
import torch.nn.functional as F
torch.manual_seed(1)
logits = torch.randn(4, 2, 3, dtype=torch.{dtype}, requires_grad=True)
loss = F.ctc_loss(logits.log_softmax(2), torch.tensor([[1, 1, 2], [1, 2, 2]]), torch.tensor([3, 4]), torch.tensor([3, 1]), reduction='{reduction}')
loss.sum().backward()
values, grad = loss.tolist(), logits.grad.tolist()
"""


@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_impossible_target_has_torchs_infinite_loss_and_nan_gradient(dtype, reduction):
    """[1, 1, 2] needs four frames and has three: inf, and nan over every class of those three frames only."""
    source = IMPOSSIBLE.format(dtype=dtype, reduction=reduction)
    mine, torch_ = run(source), oracle(source)
    assert np.allclose(mine["values"], torch_["values"], equal_nan=True) and np.isinf(np.sum(mine["values"]))
    assert np.allclose(mine["grad"], torch_["grad"], atol=1e-6, equal_nan=True)
    assert np.isnan(mine["grad"]).sum() == 9


def test_the_gradient_at_log_probs_themselves_is_the_true_one():
    """PyTorch's own backward returns exp(log_probs) − occupancy, the gradient *through* a log_softmax
    (pytorch/pytorch#52241, #82545): right only once a log_softmax precedes it. gradcli's is the derivative
    of the loss it prints (−occupancy, summing to −1 over each frame inside the input length; 0 after it),
    equal to PyTorch's wherever a log_softmax makes the log-probabilities, as the tests above show."""
    ran = run("import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"
              "lp = torch.randn(4, 1, 3).log_softmax(2).requires_grad_()\n"
              "F.ctc_loss(lp, torch.tensor([[1, 2]]), torch.tensor([3]), torch.tensor([2]), reduction='sum').backward()\n"
              "g = lp.grad\n")
    assert np.allclose(ran["g"].numpy().sum(axis=2).ravel(), [-1, -1, -1, 0], atol=1e-6)


def test_full_takes_its_dtype_from_the_fill_value():
    """`torch.full((8,), 100)` is int64 in PyTorch (so it can be a length tensor), True gives bool, 1.5 floats."""
    source = ("import torch\nkinds = [str(torch.full((2,), v).dtype) for v in (100, True, 1.5)] + "
              "[str(torch.full((2,), 3, dtype=torch.float64).dtype)]\n")
    assert run(source)["kinds"] == oracle(source)["kinds"] == ["torch.int64", "torch.bool", "torch.float32",
                                                               "torch.float64"]
