"""Masks: `torch.isnan`, comparisons as functions, `logical_*`, and `& | ^ ~` on bool and integer tensors, as
PyTorch computes and prints them; on float tensors and numbers the operators stay refused, with hints that
never lead to a wrong program."""
import pytest
from language_helpers import fails, run, torch_printed

from gradcli.errors import NotAllowedError

MASKS = """\
import torch
x = torch.tensor([1.0, float('nan'), 3.0, -2.0])
print(torch.isnan(x), x.isnan(), torch.isinf(x), torch.isfinite(x))
print(torch.gt(x, 1), x.eq(3), x.ne(3), torch.le(x, 1), torch.greater(x, 0), x.less_equal(1))
m = (x > 0) & (x < 2)
print(m, ~m, (x > 0) | (x < -1), (x > 0) ^ (x > 2))
print(torch.logical_not(m), m.logical_and(x > 0), torch.logical_or(m, x < 0), torch.logical_xor(m, x > 0))
print(x[~torch.isnan(x)].sum())
i = torch.tensor([5, 3])
print(i & 1, i | 2, ~i, torch.bitwise_xor(i, 6), torch.bitwise_not(torch.tensor([True, False])))
w = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
inside = (w >= -1) & (w <= 1)
(w * inside.float()).sum().backward()
print(w.grad, inside.requires_grad)
"""

EXPECTED = [
    "tensor([False,  True, False, False]) tensor([False,  True, False, False]) "
    "tensor([False, False, False, False]) tensor([ True, False,  True,  True])",
    "tensor([False, False,  True, False]) tensor([False, False,  True, False]) tensor([ True,  True, False,  True]) "
    "tensor([ True, False, False,  True]) tensor([ True, False,  True, False]) tensor([ True, False, False,  True])",
    "tensor([ True, False, False, False]) tensor([False,  True,  True,  True]) tensor([ True, False,  True,  True]) "
    "tensor([ True, False, False, False])",
    "tensor([False,  True,  True,  True]) tensor([ True, False, False, False]) tensor([ True, False, False,  True]) "
    "tensor([False, False,  True, False])",
    "tensor(2.)",
    "tensor([1, 1]) tensor([7, 3]) tensor([-6, -4]) tensor([3, 5]) tensor([False,  True])",
    "tensor([0., 1., 1., 0.]) False",
]


def test_masks_compute_and_print_as_pytorch_does():
    assert run(MASKS).printed == EXPECTED


def test_masks_match_torch():
    assert torch_printed(MASKS) == EXPECTED


@pytest.mark.parametrize("source, words, hint", [
    ("import torch\nx = torch.ones(2)\ny = ~x", "operator '~' is not supported on a float32 tensor", "~(x > 0)"),
    ("y = ~3", "operator '~' is not supported on an int", "write 'not'"),
    ("import torch\nx = torch.ones(2)\ny = (x > 0) & 1.5", "operator '&' is not supported on a float", "(x < 1)"),
    ("import torch\nx = torch.ones(2)\ny = x | (x > 0)", "operator '|' is not supported on a float32 tensor",
     "elementwise"),
])
def test_bit_operators_off_bool_and_integer_tensors_are_refused_with_a_hint_that_holds(source, words, hint):
    error = fails(source, NotAllowedError)
    assert error.message.startswith(words) and hint in error.hint


def test_a_wrong_operand_to_a_logical_function_is_a_user_error():
    error = fails("import torch\ny = torch.logical_and(torch.ones(2) > 0, 'yes')", Exception)
    assert "logical_and(): expected a tensor or a number, not str" in error.message
