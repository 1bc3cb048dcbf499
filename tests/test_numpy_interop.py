"""ndarray attributes and methods through the allowlist, and arrays compared with numbers in conditions."""
from __future__ import annotations

import numpy as np

from gradcli.errors import ArgumentError, GradcliError, NameLookupError, NotAllowedError, ShapeError
from tests.language_helpers import fails, run

PRE = "import torch\nimport numpy as np\n"


def test_unlisted_attributes_and_object_dtypes_are_refused() -> None:
    assert "'tofile' of NumPy is not available: gradcli refuses file I/O" in \
        fails(PRE + "a = np.array([1.0])\na.tofile", NotAllowedError).message
    assert "attribute 'setflags' is not available" in fails(PRE + "a = np.array([1.0])\na.setflags",
                                                             NameLookupError).message
    fails(PRE + "a = np.array([1.0]).astype('object')", GradcliError)


def test_an_ambiguous_truth_value_and_a_shape_mismatch_are_numpys_errors() -> None:
    assert fails(PRE + "if np.array([1.0, 2.0]) < 3:\n    x = 1\n", ArgumentError).message.startswith(
        "The truth value of an array with more than one element is ambiguous.")
    fails(PRE + "c = np.array([1.0, 2.0]) < np.array([1.0, 2.0, 3.0])", ShapeError)
    fails(PRE + "c = np.array([1.0]).reshape(3)", ShapeError)


def test_tutorial_uses_of_arrays() -> None:
    ran = run(PRE + "a = np.array([1.0, 2.0, 3.0, 4.0])\nloss = torch.tensor(0.05)\nsmall = False\n"
                    "if loss.data.numpy() < 0.1:\n    small = True\nb = a.reshape(2, 2)\ns = b.shape\nt = b.T.tolist()\n"
                    "total = b.sum()\nm = b.mean(axis=0).tolist()\nd = a.astype(np.float32).dtype\nn = b.ndim\n")
    assert ran["small"] is True and ran["s"] == (2, 2) and ran["t"] == [[1.0, 3.0], [2.0, 4.0]]
    assert float(ran["total"]) == 10.0 and ran["m"] == [2.0, 3.0] and ran["d"] == "float32" and ran["n"] == 2


def test_torch_tensor_of_a_float64_array_stays_float64_as_in_pytorch() -> None:
    """PyTorch keeps a NumPy array's dtype (torch.tensor(np.array([1.0])) is float64); Python floats take the
    default (float32). A float32 copy made finite differences of a forward through .numpy() fail."""
    ran = run(PRE + "a = torch.tensor(np.array([1.0, 2.0]))\nb = torch.tensor([1.0, 2.0])\n"
                    "c = torch.tensor(torch.tensor([1.0], dtype=torch.float64).numpy())\n")
    assert [ran[n]._data.dtype for n in "abc"] == [np.float64, np.float32, np.float64]
