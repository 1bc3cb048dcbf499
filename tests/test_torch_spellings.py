"""Arguments under PyTorch's own names, and names PyTorch does not have: `torch.cumsum(x, 0, dtype=)`,
`torch.swapaxes(x, axis0=, axis1=)` (its only keywords), and `torch.view`/`torch.expand`, which are Tensor
methods only, so torch's AttributeError is gradcli's refusal."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import ArgumentError, NameLookupError
from tests.language_helpers import fails, run

SCANS = """import torch
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
c = torch.cumsum(x, 0, dtype=torch.float64)
p = x.cumprod(dim=1, dtype=torch.float64)
(c * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
s = torch.swapaxes(x, axis0=0, axis1=1)
m = x.swapaxes(axis0=1, axis1=0)
"""


def test_cumsum_and_cumprod_accumulate_in_the_given_dtype_and_swapaxes_takes_axis_keywords() -> None:
    ran = run(SCANS)  # float32 by default, so dtype=float64 is a real cast
    assert str(ran["c"].dtype) == "float64" and str(ran["p"].dtype) == "float64"
    assert ran["c"].detach().numpy().tolist() == [[1.0, 2.0], [4.0, 6.0]]
    assert ran["p"].detach().numpy().tolist() == [[1.0, 2.0], [3.0, 12.0]]
    assert ran["x"].grad.numpy().tolist() == [[4.0, 6.0], [3.0, 4.0]]  # reverse cumsum of the weights down dim 0
    assert str(ran["x"].grad.dtype) == "float32"
    assert ran["s"].detach().numpy().tolist() == ran["m"].detach().numpy().tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_same_as_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    c = torch.cumsum(x, 0, dtype=torch.float64)
    (c * torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)).sum().backward()
    ran = run(SCANS)
    np.testing.assert_array_equal(ran["c"].detach().numpy(), c.detach().numpy())
    np.testing.assert_array_equal(ran["x"].grad.numpy(), x.grad.numpy())
    np.testing.assert_array_equal(ran["m"].detach().numpy(), x.swapaxes(axis0=1, axis1=0).detach().numpy())
    with pytest.raises(TypeError, match="axis0"):
        x.swapaxes(dim0=0, dim1=1)
    assert not hasattr(torch, "view") and not hasattr(torch, "expand") and not hasattr(torch, "softplus")


@pytest.mark.parametrize("call", ["x.swapaxes(dim0=0, dim1=1)", "torch.swapaxes(x, dim0=0, dim1=1)"])
def test_swapaxes_refuses_transposes_keywords_as_torch_does(call: str) -> None:
    error = fails(f"import torch\nx = torch.ones(2, 3)\ny = {call}", ArgumentError)
    assert "missing a required argument: 'axis0'" in error.message


@pytest.mark.parametrize("name, hint", [("view", "it is a Tensor method: write x.view(...)"),
                                        ("expand", "it is a Tensor method: write x.expand(...)"),
                                        ("view_as", "it is a Tensor method: write x.view_as(...)"),
                                        ("softplus", "write torch.nn.functional.softplus(x)")])
def test_names_torch_lacks_are_torchs_attribute_error(name: str, hint: str) -> None:
    error = fails(f"import torch\nx = torch.ones(2, 2)\ny = torch.{name}(x, 4)", NameLookupError)
    assert error.message == f"module 'torch' has no attribute '{name}'"
    assert error.hint == hint


def test_the_cli_exits_2_and_eval_keeps_softplus_as_a_bare_name(cli, tmp_path) -> None:
    program = tmp_path / "v.py"
    program.write_text("import torch\nx = torch.ones(2, 2)\ny = torch.view(x, 4)\n")
    result = cli("run", str(program))
    assert result.exit_code == 2
    assert "module 'torch' has no attribute 'view'" in result.stdout + result.stderr and "x.view(...)" in result.stdout + result.stderr
    result = cli("eval", "out = softplus(x).sum()", "x=[0.0]")
    assert result.exit_code == 0 and "out = 0.693147" in result.stdout  # log 2 + result.stderr
