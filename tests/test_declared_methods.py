"""Tensor methods whose arguments PyTorch takes otherwise than torch.X's, made from the function's declaration
(`Composite`'s `input_at`, `packs` and `renamed`): `x.where(c, y)` is `torch.where(c, x, y)`, `x.polygamma(n)`
is `torch.polygamma(n, x)`, `x.flip(0, 1)` is `torch.flip(x, (0, 1))`, and the keywords are PyTorch's own.
Numbers are PyTorch 2.13's (float64); the values in comments were read from it."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import functions as F
from gradcli.engine.functions.declared import composite_method
from gradcli.engine.ops.op import Composite
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from tests.language_helpers import fails, run

PRE = ("import torch\nx = torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64, requires_grad=True)\n"
       "m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)\n")


# -- hostile calls first: the method's own usage, never the function's --------------------------------
@pytest.mark.parametrize("call, message, usage", [
    ("x.where(x > 1)", "x.where(): missing a required argument: 'other'", "usage: where(condition, other)"),
    ("x.where(x > 1, x, x)", "x.where(): too many positional arguments", "usage: where(condition, other)"),
    ("x.where(x > 1, -x, input=x)", "x.where(): got an unexpected keyword argument 'input'",
     "usage: where(condition, other)"),
    ("x.polygamma()", "x.polygamma(): missing a required argument: 'n'", "usage: polygamma(n)"),
    ("x.split(split_size_or_sections=1)", "x.split(): missing a required argument: 'split_size'",
     "usage: split(split_size, dim=0)"),
    ("m.swapaxes(dim0=0, dim1=1)", "x.swapaxes(): missing a required argument: 'axis0'",
     "usage: swapaxes(axis0, axis1)"),
])
def test_a_mapped_method_tells_its_own_usage(call, message, usage) -> None:
    error = fails(PRE + f"y = {call}", ArgumentError)
    assert error.message == message.replace("x.", call.split(".")[0] + ".", 1)
    assert error.hint == usage


def test_a_wrong_mapped_call_exits_2_with_the_usage(cli) -> None:
    result = cli("eval", "out = x.where(x > 1).sum()", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    assert "missing a required argument: 'other'" in result.output
    assert "usage: where(condition, other)" in result.output
    assert "Traceback" not in result.output


# -- the same values and gradients, positionally and by PyTorch's keywords --------------------------
def test_where_and_polygamma_take_the_tensor_in_the_functions_place() -> None:
    # torch 2.13: x.where(x > 1, -x) is [-0.5, 2, 3]; x.polygamma(1) is [4.934802200544679, 0.6449340668482264,
    # 0.3949340668482264]; the gradient of its sum is polygamma(2, x) = [-16.8287966442343, -0.4041138063191886,
    # -0.1541138063191886]
    ran = run(PRE + "a = x.where(x > 1, -x)\nb = x.where(condition=x > 1, other=-x)\nc = torch.where(x > 1, x, -x)\n"
                    "d = x.polygamma(1)\ne = x.polygamma(n=1)\nf = torch.polygamma(1, input=x)\n"
                    "g, = torch.autograd.grad(e.sum(), x)")
    for name in "abc":
        assert ran[name].tolist() == [-0.5, 2.0, 3.0]
    for name in "def":
        np.testing.assert_allclose(ran[name]._data, [4.934802200544679, 0.6449340668482264, 0.3949340668482264],
                                   rtol=1e-14)
    np.testing.assert_allclose(ran["g"]._data, [-16.8287966442343, -0.4041138063191886, -0.1541138063191886],
                               rtol=1e-13)
    assert ran["a"].grad_fn.name == "WhereBackward0" and ran["d"].grad_fn.name == "PolygammaBackward0"


def test_flip_packs_its_dims_and_split_swapaxes_take_pytorchs_keywords() -> None:
    # torch 2.13: m.flip(0, 1), m.flip((0, 1)) and m.flip(dims=(0, 1)) are [[4, 3], [2, 1]]; m.flip(0) is
    # [[3, 4], [1, 2]]; x.split(split_size=2) is ([0.5, 2], [3]); m.swapaxes(axis0=0, axis1=1) and
    # m.swapdims(dim0=0, dim1=1) are m.T
    ran = run(PRE + "a = m.flip(0, 1)\nb = m.flip((0, 1))\nc = m.flip(dims=(0, 1))\nd = m.flip(0)\n"
                    "e = x.split(split_size=2)\nf = m.swapaxes(axis0=0, axis1=1)\ng = m.swapdims(dim0=0, dim1=1)\n"
                    "h = m.swapaxes(0, 1)")
    for name in "abc":
        assert ran[name].tolist() == [[4.0, 3.0], [2.0, 1.0]] and ran[name].grad_fn.name == "FlipBackward0"
    assert ran["d"].tolist() == [[3.0, 4.0], [1.0, 2.0]]
    assert [part.tolist() for part in ran["e"]] == [[0.5, 2.0], [3.0]]
    for name in "fgh":
        assert ran[name].tolist() == [[1.0, 3.0], [2.0, 4.0]] and ran[name].grad_fn.name == "TransposeBackward0"


def test_the_products_take_pytorchs_keyword_names() -> None:
    # torch 2.13 names them mat2, tensor, vec2, mat2 and other (x.dot(other=x) is its TypeError); x.dot(x) is
    # 13.25, x.outer(x)[2] is [1.5, 6, 9]
    ran = run(PRE + "a = m.mm(mat2=m)\nb = x.dot(tensor=x)\nc = x.outer(vec2=x)\n"
                    "d = m.unsqueeze(0).bmm(mat2=m.unsqueeze(0))\ne = x.cross(other=x.flip(0))")
    assert ran["a"].tolist() == [[7.0, 10.0], [15.0, 22.0]] == ran["d"].tolist()[0]
    assert float(ran["b"]._data) == 13.25 and ran["c"].tolist()[2] == [1.5, 6.0, 9.0]
    assert ran["e"].tolist() == [2.0 * 0.5 - 3.0 * 2.0, 3.0 * 3.0 - 0.5 * 0.5, 0.5 * 2.0 - 2.0 * 3.0]
    assert "tensor" in fails(PRE + "y = x.dot(other=x)", ArgumentError).message


def test_methods_agree_with_torch() -> None:
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, 2.0, 3.0], [1.5, -1.0, 0.25]])
    t, ours = torch.tensor(a), Tensor(a)
    cond_t, cond = t > 1, ours > 1
    pairs = [(t.where(cond_t, -t), ours.where(cond, -ours)), (t.polygamma(2), ours.polygamma(2)),
             (t.flip(0, 1), ours.flip(0, 1)), (t.flip(-1), ours.flip(-1)), (t.swapaxes(0, 1), ours.swapaxes(0, 1)),
             (t.split(2, 1)[1], ours.split(2, 1)[1]), (t.cross(t[:, [2, 0, 1]], dim=1), ours.cross(ours[:, [2, 0, 1]], dim=1))]
    for theirs, mine in pairs:
        np.testing.assert_allclose(mine._data, theirs.numpy(), rtol=1e-13)


# -- the declaration alone makes the method --------------------------------------------------------
def test_a_new_mapped_method_is_made_from_its_declaration() -> None:
    def scaled(factor: float, input: Tensor, shift: float = 0.0) -> Tensor:
        return F.mul(input, factor) + shift
    method = composite_method(Composite(scaled, (), ("scaled",), input_at=1, renamed=(("offset", "shift"),)))
    x = Tensor([1.0, 2.0])
    assert method(x, 3.0).tolist() == [3.0, 6.0]
    assert method(x, factor=2.0, offset=1.0).tolist() == [3.0, 5.0]
    assert str(__import__("inspect").signature(method)) == "(self: 'Tensor', factor: 'float', offset: 'float' = 0.0)"
    plain = Composite(scaled, ("scaled",), ("scaled",))
    assert composite_method(plain) is scaled
