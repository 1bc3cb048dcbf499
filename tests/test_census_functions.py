"""Names the census of tutorial code (docs/coverage.md) found missing, as PyTorch prints them.

Each expression beside the text torch 2.13 printed for it (`test_the_texts_are_torchs_own` reruns torch, skipped
without it); the gradients by hand and by `--check`; the misuses with PyTorch's errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradcli.errors import ArgumentError, NameLookupError, NotAllowedError, ShapeError, ValueDomainError
from language_helpers import fails, run, torch_printed

PRE = ("import torch\nimport numpy as np\n"
       "x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)\n")

PRINTS = [
    ('x.ravel()',
     'tensor([ 0.5000, -1.0000,  2.0000,  1.5000,  0.3000, -0.7000],\n       grad_fn=<ViewBackward0>)'),
    ('torch.ravel(x).grad_fn.name()',
     'ViewBackward0'),
    ('x.repeat_interleave(2)',
     'tensor([ 0.5000,  0.5000, -1.0000, -1.0000,  2.0000,  2.0000,  1.5000,  1.5000,\n         0.3000,  0.3000, -0.7000, -0.7000], grad_fn=<ViewBackward0>)'),
    ('x.repeat_interleave(2, dim=1)',
     'tensor([[ 0.5000,  0.5000, -1.0000, -1.0000,  2.0000,  2.0000],\n        [ 1.5000,  1.5000,  0.3000,  0.3000, -0.7000, -0.7000]],\n       grad_fn=<ViewBackward0>)'),
    ('torch.repeat_interleave(x, torch.tensor([1, 2]), dim=0)',
     'tensor([[ 0.5000, -1.0000,  2.0000],\n        [ 1.5000,  0.3000, -0.7000],\n        [ 1.5000,  0.3000, -0.7000]], grad_fn=<IndexSelectBackward0>)'),
    ('torch.repeat_interleave(torch.tensor([1, 3]))',
     'tensor([0, 1, 1, 1])'),
    ('torch.nonzero(x > 0)',
     'tensor([[0, 0],\n        [0, 2],\n        [1, 0],\n        [1, 1]])'),
    ('(x > 0).nonzero(as_tuple=True)',
     '(tensor([0, 0, 1, 1]), tensor([0, 2, 0, 1]))'),
    ('torch.hstack([x, x])',
     'tensor([[ 0.5000, -1.0000,  2.0000,  0.5000, -1.0000,  2.0000],\n        [ 1.5000,  0.3000, -0.7000,  1.5000,  0.3000, -0.7000]],\n       grad_fn=<CatBackward0>)'),
    ('torch.vstack([torch.ones(2), torch.zeros(2)])',
     'tensor([[1., 1.],\n        [0., 0.]])'),
    ('torch.hstack([torch.ones(2), torch.zeros(2)])',
     'tensor([1., 1., 0., 0.])'),
    ('torch.row_stack([x, x]).shape',
     'torch.Size([4, 3])'),
    ('x.index_add(1, torch.tensor([0, 0, 2]), x * x, alpha=2)',
     'tensor([[ 3.0000, -1.0000, 10.0000],\n        [ 6.1800,  0.3000,  0.2800]], grad_fn=<IndexAddBackward0>)'),
    ('torch.zeros(3, 2).index_add(0, torch.tensor([0, 2, 0]), torch.ones(3, 2))',
     'tensor([[2., 2.],\n        [0., 0.],\n        [1., 1.]])'),
    ('x.detach().clone().masked_fill_(x > 1, 0.0)',
     'tensor([[ 0.5000, -1.0000,  0.0000],\n        [ 0.0000,  0.3000, -0.7000]])'),
    ('torch.zeros(2, 3).scatter_(1, torch.tensor([[2], [0]]), 1.0)',
     'tensor([[0., 0., 1.],\n        [1., 0., 0.]])'),
    ('torch.zeros(2, 3).scatter_add_(1, torch.tensor([[2, 2], [0, 1]]), torch.ones(2, 2))',
     'tensor([[0., 0., 2.],\n        [1., 1., 0.]])'),
    ('torch.zeros(3).index_add_(0, torch.tensor([1, 1]), torch.tensor([2.0, 3.0]))',
     'tensor([0., 5., 0.])'),
    ('x.new_zeros(2, 3)',
     'tensor([[0., 0., 0.],\n        [0., 0., 0.]])'),
    ('x.new_ones((2,))',
     'tensor([1., 1.])'),
    ('x.new_full((2,), 3.0)',
     'tensor([3., 3.])'),
    ('x.new_tensor([1, 2])',
     'tensor([1., 2.])'),
    ('x.new_zeros(2, dtype=torch.int64)',
     'tensor([0, 0])'),
    ('torch.LongTensor([1, 2])',
     'tensor([1, 2])'),
    ('torch.LongTensor([[1, 2]]).dtype',
     'torch.int64'),
    ('torch.from_numpy(np.array([0.0, 1.0]))',
     'tensor([0., 1.], dtype=torch.float64)'),
    ('torch.as_tensor([1.0, 2.0])',
     'tensor([1., 2.])'),
    ('torch.as_tensor(x) is x',
     'True'),
    ('x.sum(1, keepdims=True)',
     'tensor([[1.5000],\n        [1.1000]], grad_fn=<SumBackward1>)'),
    ('torch.mean(x, dim=0, keepdims=True)',
     'tensor([[ 1.0000, -0.3500,  0.6500]], grad_fn=<MeanBackward1>)'),
    ('x.broadcast_to((2, 2, 3)).shape',
     'torch.Size([2, 2, 3])'),
    ('torch.broadcast_to(torch.tensor([1.0, 2.0]), (2, 2))',
     'tensor([[1., 2.],\n        [1., 2.]])'),
    ('torch.backends.mps.is_available()',
     'False'),
    ('torch.cuda.manual_seed_all(0)',
     'None'),
    ('torch.unique(torch.tensor([3., 1., 3., 2.]))',
     'tensor([1., 2., 3.])'),
    ('torch.tensor([3., 1., 3., 2.]).unique(return_counts=True)',
     '(tensor([1., 2., 3.]), tensor([1, 1, 2]))'),
    ('torch.unique(torch.tensor([3, 1, 3]), return_inverse=True)',
     '(tensor([1, 3]), tensor([1, 0, 1]))'),
    ('torch.unique(torch.tensor([[1, 2], [1, 2]]), dim=0)',
     'tensor([[1, 2]])'),
    ('torch.argsort(x)',
     'tensor([[1, 0, 2],\n        [2, 1, 0]])'),
    ('x.argsort(dim=0, descending=True)',
     'tensor([[1, 1, 0],\n        [0, 0, 1]])'),
    ("torch.meshgrid(torch.tensor([1., 2.]), torch.tensor([3., 4., 5.]), indexing='ij')",
     '(tensor([[1., 1., 1.],\n        [2., 2., 2.]]), tensor([[3., 4., 5.],\n        [3., 4., 5.]]))'),
    ("torch.meshgrid(torch.tensor([1., 2.]), torch.tensor([3., 4., 5.]), indexing='xy')",
     '(tensor([[1., 2.],\n        [1., 2.],\n        [1., 2.]]), tensor([[3., 3.],\n        [4., 4.],\n        [5., 5.]]))'),
    ("torch.meshgrid(x[0], x[1, :2], indexing='ij')[0].grad_fn.name()",
     'ExpandBackward0'),
    ('torch.all(x > 0)',
     'tensor(False)'),
    ('torch.any(x > 1.9)',
     'tensor(True)'),
    ('torch.all(x > -1.5, dim=1)',
     'tensor([True, True])'),
    ('x.new(2).shape',
     'torch.Size([2])'),
    ('x.new([1, 2])',
     'tensor([1., 2.])'),
    ('torch.__version__',
     '2.13.0+cpu'),
]
SOURCE = PRE + "".join(f"print({expression})\n" for expression, _ in PRINTS)
EXPECTED = "\n".join(text for _, text in PRINTS).splitlines()


def test_each_prints_what_torch_printed() -> None:
    assert "\n".join(run(SOURCE).printed).splitlines() == EXPECTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == EXPECTED


def test_gradients_by_hand() -> None:
    ran = run(PRE + "y = x.index_add(1, torch.tensor([0, 0]), x[:, :2] * 3.0, alpha=2).repeat_interleave(2, dim=1)\n"
                    "y.sum().backward()\n")
    # y repeats each element of z twice, so dL/dz = 2 everywhere; z[:, k] gets x[:, k] once (2) plus, for k = 0,
    # 2 * 3 * x[:, j] for j = 0 and 1 (12 more each to x[:, 0] and x[:, 1])
    assert np.allclose(ran["x"].grad._data, [[14.0, 14.0, 2.0], [14.0, 14.0, 2.0]])


def test_an_in_place_fill_on_a_leaf_that_requires_grad_is_pytorchs_error() -> None:
    error = fails(PRE + "x.masked_fill_(x > 1, 0.0)\n")
    assert "leaf Variable that requires grad" in str(error)


@pytest.mark.parametrize("source, kind, words", [
    ("torch.testing.assert_close(x, x, rtol=1e-3)", ValueDomainError, "but got no atol."),
    ("x.__version__", NameLookupError, "attribute '__version__' is not available on a tensor"),
    ("torch.unique(x)", NotAllowedError, "the derivative for 'unique' is not implemented"),
    ("torch.meshgrid(x, x)", ShapeError, "Expected 0D or 1D tensor"),
    ("torch.from_numpy([1.0, 2.0])", ArgumentError, "expected np.ndarray (got list)"),
    ("x.repeat_interleave(-1)", ArgumentError, "repeats can not be negative"),
    ("x.repeat_interleave(torch.tensor([1, 2, 3]), dim=0)", ShapeError, "same size as input along dim"),
    ("x.index_add(0, torch.tensor([0]), torch.ones(2, 3))", ShapeError, "does not fit self of shape (2, 3)"),
    ("x.index_add(0, torch.tensor([5]), torch.ones(1, 3))", ShapeError, "out of bounds"),
])
def test_misuse_is_named(source: str, kind: type, words: str) -> None:
    assert words in str(fails(PRE + source + "\n", kind))


def test_check_proves_the_gradients(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "census.py", PRE + (
        "y = x.index_add(1, torch.tensor([0, 0, 2]), x * x, alpha=2).repeat_interleave(2, dim=1)\n"
        "z = torch.hstack([y, x.ravel().reshape(2, 3)]).clone()\nz.masked_fill_(z > 3, 0.0)\n"
        "(z * z).sum().backward()\n"))
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}


ASSERT_CLOSE = "import torch\nfrom torch.testing import assert_close\ncases = [(torch.tensor([1., 2.]), torch.tensor([1., 2.5]), {}), (torch.tensor([1., 2.]), torch.tensor([1., 2., 3.]), {}),\n         (torch.tensor([1., 2.]), torch.tensor([1., 2.], dtype=torch.float64), {}),\n         (torch.tensor([[1., 2.], [3, 4]]), torch.tensor([[1., 2.1], [3.5, 4]]), {}),\n         (torch.tensor([1., 2.]), torch.tensor([1., 2.0001]), {'rtol': 1e-3, 'atol': 0}),\n         (torch.tensor([1, 2]), torch.tensor([1, 3]), {}), (torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), {}),\n         (torch.tensor([1., float('nan')]), torch.tensor([1., float('nan')]), {'equal_nan': True}),\n         (1.0, 1.5, {}), (torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([1., 2.1], dtype=torch.float64), {}),\n         (torch.tensor([1., 2.]), torch.tensor([1.5, 2.]), {'msg': 'custom'})]\nfor a, b, kw in cases:\n    try:\n        assert_close(a, b, **kw)\n        print('OK')\n    except AssertionError as e:\n        print(e)\n"
ASSERT_CLOSE_PRINTED = "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\nGreatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\nGreatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)\nThe values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3]).\nThe values for attribute 'dtype' do not match: torch.float32 != torch.float64.\nTensor-likes are not close!\n\nMismatched elements: 2 / 4 (50.0%)\nGreatest absolute difference: 0.5 at index (1, 0) (up to 1e-05 allowed)\nGreatest relative difference: 0.1428571492433548 at index (1, 0) (up to 1.3e-06 allowed)\nOK\nTensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\nGreatest absolute difference: 1 at index (1,)\nGreatest relative difference: 0.3333333432674408 at index (1,)\nTensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\nGreatest absolute difference: nan at index (1,) (up to 1e-05 allowed)\nGreatest relative difference: nan at index (1,) (up to 1.3e-06 allowed)\nOK\nScalars are not close!\n\nExpected 1.5 but got 1.0.\nAbsolute difference: 0.5 (up to 1e-07 allowed)\nRelative difference: 0.3333333333333333 (up to 1e-07 allowed)\nTensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\nGreatest absolute difference: 0.10000000000000009 at index (1,) (up to 1e-07 allowed)\nGreatest relative difference: 0.04761904761904766 at index (1,) (up to 1e-07 allowed)\ncustom\n".splitlines()
"""torch.testing.assert_close's verdicts and AssertionError texts, as torch 2.13 printed them."""


def test_assert_close_fails_with_pytorchs_text() -> None:
    assert "\n".join(run(ASSERT_CLOSE).printed).splitlines() == ASSERT_CLOSE_PRINTED


def test_assert_close_texts_are_torchs_own() -> None:
    assert torch_printed(ASSERT_CLOSE) == ASSERT_CLOSE_PRINTED
