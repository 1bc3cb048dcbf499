"""`torch.cross(a, b)` without `dim` crosses along the input's FIRST dimension of size 3 (PyTorch 2, with a
deprecation warning given once); `torch.linalg.cross` along the last. On a 3x3 input the two differ, so a
wrong default is a wrong number, not an error."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from gradcli.errors import ShapeError
from tests.language_helpers import fails, run

A = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]
B = [[1.0, 0.0, 2.0], [3.0, 1.0, 0.0], [0.0, 2.0, 1.0]]
WARNING = ["\n".join(["UserWarning: Using torch.cross without specifying the dim arg is deprecated.",
           "Please either pass the dim explicitly or simply use torch.linalg.cross.",
           "The default value of dim will change to agree with that of linalg.cross in a future release."])]
PROGRAM = f"""import torch
a = torch.tensor({A}, requires_grad=True)
b = torch.tensor({B})
c = torch.cross(a, b)
m = a.cross(b)
w = torch.linalg.cross(a, b)
(c * torch.arange(9.0).reshape(3, 3)).sum().backward()
"""


def test_the_default_is_the_first_dimension_of_size_3_hand_derived() -> None:
    """Column j of cross(a, b) along dim 0 is a[:, j] x b[:, j]: column 0 is (0,3,6) x (1,3,0) = (-18, 6, -3)."""
    ran = run(PROGRAM, dtype="float64")
    assert ran["c"].detach().numpy()[:, 0].tolist() == [-18.0, 6.0, -3.0]
    assert ran["m"].detach().numpy().tolist() == ran["c"].detach().numpy().tolist()
    assert ran["w"].detach().numpy()[0].tolist() == [2.0, 2.0, -1.0]  # row 0 of linalg.cross: (0,1,2) x (1,0,2)


def test_the_warning_prints_once_per_run_as_torch_gives_it_once() -> None:
    ran = run(PROGRAM + "torch.cross(a, b)\n", dtype="float64")
    assert ran.printed == WARNING
    assert run(PROGRAM, dtype="float64").printed == WARNING  # a new run warns again
    assert run(PROGRAM.replace("torch.cross(a, b)", "torch.cross(a, b, dim=1)").replace("a.cross(b)", "a.cross(b, 0)"),
               dtype="float64").printed == []


def test_no_dimension_of_size_3_is_torchs_error() -> None:
    error = fails("import torch\ntorch.cross(torch.ones(2, 2), torch.ones(2, 2))", ShapeError)
    assert str(error.message) == "no dimension of size 3 in input"
    assert "(2, 2)" in error.hint


def test_same_values_gradients_and_warning_as_torch() -> None:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = torch.tensor(A, dtype=torch.float64, requires_grad=True)
        b = torch.tensor(B, dtype=torch.float64)
        c, m, w = torch.cross(a, b), a.cross(b), torch.linalg.cross(a, b)
        (c * torch.arange(9.0, dtype=torch.float64).reshape(3, 3)).sum().backward()
    ran = run(PROGRAM, dtype="float64")
    for name, want in (("c", c), ("m", m), ("w", w)):
        np.testing.assert_array_equal(ran[name].detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(ran["a"].grad.numpy(), a.grad.numpy())
    if caught:  # torch warns once per process: only the first test to cross without dim sees it
        assert str(caught[0].message).startswith(WARNING[0].removeprefix("UserWarning: "))
