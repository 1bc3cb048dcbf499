"""Issue 12's functions refuse bad arguments with a GradcliError that teaches, never a traceback.

The texts that PyTorch has are held to PyTorch's in the torch oracle test; this runs without torch.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

import gradcli
from gradcli.engine import functions as F
from gradcli.errors import ArgumentError, GradcliError, ShapeError, ValueDomainError

X = gradcli.tensor([[1.0, 2.0], [3.0, 4.5]])
P = pytest.param

BAD = [
    P(lambda: X.roll("a"), ArgumentError, "roll's shifts must be an integer", id="roll"),
    P(lambda: F.lerp(X, X, "a"), ArgumentError, "lerp's weight must be a number", id="lerp"),
    P(lambda: F.tensordot(X, X, 3), ShapeError, "tensordot expects dims", id="tensordot"),
    P(lambda: X.tril(1.5), ArgumentError, "tril's diagonal must be an integer", id="tril"),
    P(lambda: X.round(decimals=1.5), ArgumentError, "round's decimals must be an integer", id="round"),
    P(lambda: X.masked_fill(X > 2, "q"), ArgumentError, "masked_fill's value must be a number", id="masked_fill"),
    P(lambda: X.masked_fill(X, 1.0), ArgumentError, "masked_fill only supports boolean masks", id="mask-dtype"),
    P(lambda: X.topk(3), ShapeError, "selected index k out of range", id="topk"),
    P(lambda: X.kthvalue(0), ShapeError, "kthvalue(): selected number k out of range", id="kthvalue"),
    P(lambda: X.gather(1, [[0.5]]), ArgumentError, "gather(): Expected dtype int64 for index", id="gather-dtype"),
    P(lambda: X.gather(1, F.as_tensor([[0, 2]])), ShapeError, "index 2 is out of bounds", id="gather-range"),
    P(lambda: X.take(F.as_tensor([9])), ShapeError, "out of range: tried to access index 9", id="take"),
    P(lambda: X.split(0), ArgumentError, "split expects split_size be non-negative", id="split"),
    P(lambda: X.split([1, 2]), ShapeError, "split_with_sizes expects split_sizes to sum exactly to 2", id="split-sizes"),
    P(lambda: X.narrow(0, 1, 2), ShapeError, "start (1) + length (2) exceeds dimension size (2).", id="narrow"),
    P(lambda: X.unflatten(1, (3, 3)), ShapeError, "unflatten: Provided sizes [3, 3]", id="unflatten"),
    P(lambda: F.einsum("ij,jk", X), ArgumentError, "einsum(): 2 operands in the equation but 1", id="einsum-count"),
    P(lambda: F.einsum("ij,jk->ik", X, gradcli.ones(3, 2)), ShapeError, "einsum():", id="einsum-sizes"),
    P(lambda: X.cross(X), ShapeError, "no dimension of size 3 in input", id="cross"),
    P(lambda: X.cross(X, -1), ShapeError, "linalg.cross: inputs dimension -1 must have length 3", id="cross-dim"),
    P(lambda: X.polygamma(-1), ArgumentError, "polygamma(n, x) does not support negative n", id="polygamma"),
    P(lambda: F.matrix_norm(X, "nuc"), ArgumentError, "linalg.matrix_norm: ord 'nuc'", id="matrix_norm"),
    P(lambda: F.det(gradcli.ones(2, 3)), ShapeError, "linalg.det: A must be batches of square matrices", id="det"),
    P(lambda: F.inverse(gradcli.zeros(2, 2)), ValueDomainError, "linalg.inv: The diagonal element 1 is zero",
      id="inverse-singular"),
    P(lambda: F.cholesky(F.as_tensor([[1.0, 2.0], [2.0, 1.0]])), ValueDomainError,
      "linalg.cholesky: The factorization could not be completed", id="cholesky"),
    P(lambda: F.solve(X, gradcli.ones(3)), ShapeError, "linalg.solve: Incompatible shapes", id="solve-shapes"),
    P(lambda: F.amax(gradcli.ones(0)), ValueDomainError, "amax(): Expected reduction dim", id="amax-empty"),
]


@pytest.mark.parametrize("call, kind, message", BAD)
def test_bad_arguments_teach(call: Callable, kind: type, message: str) -> None:
    with pytest.raises(GradcliError) as info:
        call()
    assert isinstance(info.value, kind)
    assert info.value.message.startswith(message) and info.value.hint


def test_a_bad_argument_in_a_program_exits_2_with_a_caret(cli):
    result = cli("eval", "y = torch.lerp(x, x, 'a')", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    assert "lerp's weight must be a number, got 'a'" in result.stderr
    assert "^" in result.stderr and "Traceback" not in result.stderr


def test_singular_matrices_are_named_by_their_zero_pivot():
    a = np.array([[0.0, 0.0, 1.0], [1.0, 2.0, 0.0], [2.0, 4.0, 0.0]])
    with pytest.raises(ValueDomainError, match="The diagonal element 2 is zero"):
        F.inverse(gradcli.tensor(a))
