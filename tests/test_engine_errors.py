"""Each engine error: its kind, PyTorch's message (gradcli may add after it, never change it), a hint.

gradcli writes shapes as Python tuples, `(3,)`, where PyTorch writes `torch.Size([3])`.
"""
from __future__ import annotations

from typing import Callable

import pytest

import gradcli
from gradcli.engine.backward import FREED
from gradcli.errors import (
    ArgumentError,
    BackwardError,
    DtypeError,
    GradcliError,
    ShapeError,
    ValueDomainError,
)


def _backward_twice() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.backward(gradcli.ones(2), retain_graph=True)
    y.backward(gradcli.ones(2))
    y.backward(gradcli.ones(2))


P = pytest.param
ERRORS = [
    P(lambda: (gradcli.ones(2, 3, requires_grad=True) * 2).backward(), BackwardError,
      "grad can be implicitly created only for scalar outputs", ["shape (2, 3)", "ones(2, 3)", ".sum()"],
      id="non-scalar-backward"),
    P(lambda: (gradcli.ones(3, requires_grad=True) * 2).backward(gradcli.ones(2)), BackwardError,
      "Mismatch in shape: grad_output[0] has a shape of (2,) and output[0] has a shape of (3,).", ["(3,)"],
      id="gradient-shape"),
    P(lambda: gradcli.ones(2).sum().backward(), BackwardError,
      "element 0 of tensors does not require grad and does not have a grad_fn", ["requires_grad=True"],
      id="no-grad-fn"),
    P(_backward_twice, BackwardError, FREED, ["retain_graph=True"], id="freed-graph"),
    P(lambda: gradcli.tensor([1, 2], requires_grad=True), DtypeError,
      "Only Tensors of floating point and complex dtype can require gradients", ["int64", "x.float()"],
      id="integer-requires-grad"),
    P(lambda: gradcli.arange(3).requires_grad_(), DtypeError,
      "Only Tensors of floating point and complex dtype can require gradients", ["int64"], id="integer-requires-grad_"),
    P(lambda: gradcli.ones(2, 3) @ gradcli.ones(2, 3), ShapeError,
      "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3): matmul of shapes (2, 3) and (2, 3)", ["transpose"],
      id="matmul-shapes"),
    P(lambda: gradcli.matmul(gradcli.ones(4, 2, 3), gradcli.ones(4, 2, 3)), ShapeError,
      "Expected size for first two dimensions of batch2 tensor to be: [4, 3] but got: [4, 2].: matmul of shapes "
      "(4, 2, 3) and (4, 2, 3)", ["transpose"], id="bmm-shapes"),
    P(lambda: gradcli.ones(2, 3) + gradcli.ones(2), ShapeError,
      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1: add of shapes "
      "(2, 3) and (2,) do not broadcast", ["from the right", "unsqueeze"], id="broadcast"),
    P(lambda: gradcli.ones(4, 3) * gradcli.ones(2, 1, 2), ShapeError,
      "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2: mul of shapes "
      "(4, 3) and (2, 1, 2)", ["reshape"], id="broadcast-3d"),
    P(lambda: gradcli.ones(2, 3) + gradcli.ones(4, 5), ShapeError,  # torch 2.13 names the clash nearest the right
      "The size of tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1: add of shapes "
      "(2, 3) and (4, 5) do not broadcast", ["from the right"], id="broadcast-two-clashes"),
    P(lambda: gradcli.where(gradcli.ones(2, 3) > 0, gradcli.ones(2, 3), gradcli.ones(3, 3)), ShapeError,
      "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0: where", [],
      id="where-broadcast"),
    P(lambda: gradcli.ones(2, 3).reshape(4), ShapeError, "shape '[4]' is invalid for input of size 6", ["-1"],
      id="reshape"),
    P(lambda: gradcli.ones(2, 3).sum(2), ShapeError,
      "Dimension out of range (expected to be in range of [-2, 1], but got 2)", ["2 dimension"], id="dim"),
    P(lambda: gradcli.cat([gradcli.ones(2, 3), gradcli.ones(2, 2)]), ShapeError,
      "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the "
      "list.", ["(2, 3), (2, 2)"], id="cat"),
    P(lambda: gradcli.stack([gradcli.ones(2, 3), gradcli.ones(3, 2)]), ShapeError,
      "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1", ["cat"],
      id="stack"),
    P(lambda: gradcli.ones(2, 3)[5], ShapeError, "index 5 is out of bounds for dimension 0 with size 2",
      ["shape (2, 3)"], id="index"),
    P(lambda: gradcli.ones(2).item(), ValueDomainError, "a Tensor with 2 elements cannot be converted to Scalar",
      [".sum()"], id="item"),
    P(lambda: gradcli.ones(2, requires_grad=True).numpy(), BackwardError,
      "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.", ["detach"],
      id="numpy"),
    P(lambda: gradcli.ones(2, requires_grad=True).zero_(), BackwardError,
      "a leaf Variable that requires grad is being used in an in-place operation.", ["no_grad", "w.grad.zero_()"],
      id="leaf-in-place"),
    P(lambda: gradcli.ones(2).retain_grad(), BackwardError,
      "can't retain_grad on Tensor that has requires_grad=False", ["graph"], id="retain-grad"),
    P(lambda: gradcli.grad(gradcli.ones(2, requires_grad=True).sum(), [gradcli.ones(2, requires_grad=True)]),
      BackwardError, "The differentiated Tensor at index 0 appears to not have been used in the graph.",
      ["used"], id="grad-unused"),
    P(lambda: gradcli.clamp(gradcli.ones(2)), ArgumentError,
      "clamp: at least one of 'min' or 'max' must not be None", ["min=0"], id="clamp"),
    P(lambda: gradcli.tensor([1, 2]).mean(), ValueDomainError,
      "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
      ["float"], id="mean-integer"),
]


@pytest.mark.parametrize("fn, kind, message, hint_words", ERRORS)
def test_error_kind_message_and_hint(fn: Callable, kind: type, message: str, hint_words: list[str]) -> None:
    with pytest.raises(kind) as info:
        fn()
    error = info.value
    assert isinstance(error, GradcliError) and error.kind == kind.kind
    assert error.message.startswith(message), error.message
    assert error.hint and all(word in error.hint for word in hint_words), error.hint


def test_non_scalar_hint_shows_pytorchs_fixes_with_the_shape() -> None:
    with pytest.raises(BackwardError) as info:
        (gradcli.ones(3, requires_grad=True) * 2).backward()
    assert info.value.hint == ("the output has shape (3,): pass a gradient of that shape, e.g. "
                               "y.backward(torch.ones(3)), or reduce it to one number first, e.g. y.sum().backward()")


def test_shape_errors_leave_no_partial_graph() -> None:
    x = gradcli.ones(2, 3, requires_grad=True)
    with pytest.raises(ShapeError):
        x @ x
    (x * 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_a_type_error_from_float_operands_is_a_bug_not_a_dtype_mistake():
    from gradcli.engine import ops as O
    from gradcli.engine.tensor import apply
    x = gradcli.ones(2, requires_grad=True)
    with pytest.raises(TypeError):
        apply(O.SUM, x, dims=0)
