"""`Tensor.X_` derived from a declaration's `in_place` (op table, composites): the out-of-place method's result
for the same arguments, written back by `inplace.update`. Every derived name is one PyTorch 2.13 has, each gives
PyTorch's value, node and gradient, and a wrong call is told the method's usage."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine import rearranging as R
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, BackwardError, DtypeError
from gradcli.lang import builtins as B
from tests.language_helpers import fails

DERIVED = sorted({*O.named("in_place_methods"), *(n for c in F.COMPOSITES + R.COMPOSITES for n in c.in_place_methods)})
NOT_DERIVED = {"t_", "transpose_", "swapaxes_", "swapdims_",
               "acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_", "polygamma_",
               "subtract_", "floor_divide_"}
"""PyTorch's in-place forms of declared methods that gradcli leaves out: the first four change the tensor's shape
and strides, which `inplace.update` keeps (a shape-changing update is written by hand, as squeeze_ is); torch 2.13
has no derivative for the inverse hyperbolic ones in place ("the derivative for 'inplace version of acosh' is not
implemented"), so a program's gradient through them would be one PyTorch never gives; polygamma_ records
PolygammaBackward1 where torch.polygamma records PolygammaBackward0, which the derived form would not; sub's in-place
form is written by hand (with add_'s, below), so its alias subtract_ is not offered, nor floor_divide_ (no derivative)."""

PRE = "import torch\nx = torch.tensor([0.2, 0.7], requires_grad=True)\ny = x * 1\n"


# -- hostile calls first ----------------------------------------------------------------------------
@pytest.mark.parametrize("call, message, usage", [
    ("y.exp_(2)", "y.exp_(): too many positional arguments", "usage: exp_()"),
    ("y.fmod_()", "y.fmod_(): missing a required argument: 'other'", "usage: fmod_(other)"),
    ("y.clamp_(mn=0)", "y.clamp_(): got an unexpected keyword argument 'mn'", "usage: clamp_(min=None, max=None)"),
    ("y.cumsum_()", "y.cumsum_(): missing a required argument: 'dim'", "usage: cumsum_(dim, dtype=None)"),
])
def test_a_wrong_in_place_call_is_told_the_methods_usage(call, message, usage) -> None:
    error = fails(PRE + call, ArgumentError)
    assert (error.message, error.hint) == (message, usage)


def test_in_place_keeps_pytorchs_rules_for_leaves_and_dtypes() -> None:
    # torch 2.13: x.sin_() on a leaf that requires grad, and an int tensor's sin_() or cumsum_ of a float
    # other into it, are these errors
    assert fails(PRE + "x.sin_()", BackwardError).message == \
        "a leaf Variable that requires grad is being used in an in-place operation."
    assert fails("import torch\nn = torch.tensor([1, 2])\nn.sin_()", DtypeError).message == \
        "result type Float can't be cast to the desired output type Long"
    assert fails("import torch\nn = torch.tensor([1, 2])\nn.atan2_(torch.tensor([1.0, 2.0]))", DtypeError).message \
        == "result type Float can't be cast to the desired output type Long"


def test_a_bad_in_place_call_exits_2(cli) -> None:
    result = cli("eval", "y = x * 1; y.lerp_(x); out = y.sum()", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    assert "missing a required argument: 'weight'" in result.output and "Traceback" not in result.output


# -- the list, and the numbers -------------------------------------------------------------------------
def test_every_derived_in_place_form_is_pytorchs_and_in_the_tables() -> None:
    torch = pytest.importorskip("torch")
    assert set(DERIVED) <= set(dir(torch.Tensor))
    assert set(DERIVED) <= B.TENSOR_METHODS
    declared = set(O.named("methods")) | {n for c in F.COMPOSITES + R.COMPOSITES for n in c.methods}
    missing = {n + "_" for n in declared if hasattr(torch.Tensor, n + "_")} - set(DERIVED) - {"squeeze_", "unsqueeze_", "index_put_", "put_", "add_", "sub_"}  # hand-written
    assert missing == NOT_DERIVED


def _arguments(name: str, make: Callable[..., Any], x: Any) -> tuple[Any, tuple, dict]:
    """Inputs in each function's domain, and its arguments; `make(values, integer)` is torch's tensor or ours."""
    other, index = make([0.3, 0.9], False), make([1, 0], True)
    cases = {
        "cumsum": (x, (0,), {}), "cumprod": (x, (0,), {}),
        "lerp": (x, (other, 0.25), {}), "addcmul": (x, (other, other), {"value": 0.5}),
        "addcdiv": (x, (other, other + 1), {"value": 0.5}), "clamp": (x, (0.3, 0.6), {}), "clip": (x, (), {"max": 0.5}),
        "masked_fill": (x, (x > 0.5, 0.0), {}), "scatter": (x, (0, index, other), {}),
        "scatter_add": (x, (0, index, other), {}), "index_add": (x, (0, index, other), {"alpha": 2.0}),
        "tril": (x.reshape(1, 2), (), {}), "triu": (x.reshape(1, 2), (), {}), "round": (x * 10, (), {}),
    }
    binary = {"atan2", "arctan2", "fmod", "hypot", "remainder", "xlogy", "mul", "multiply", "div", "true_divide", "pow"}
    return cases.get(name, (x, (other,) if name in binary else (), {}))


@pytest.mark.parametrize("method", DERIVED)
def test_an_in_place_form_gives_pytorchs_value_node_and_gradient(method: str) -> None:
    torch = pytest.importorskip("torch")
    from gradcli.engine.autograd import grad
    from gradcli.engine.creation import tensor
    data = np.array([0.2, 0.7])
    makers = ((torch.tensor(data, requires_grad=True), torch.autograd.grad,
               lambda v, integer: torch.tensor(v, dtype=torch.int64 if integer else torch.float64)),
              (Tensor(data, requires_grad=True), grad, lambda v, integer: tensor(v, dtype="int64" if integer else "float64")))
    results = []
    for leaf, differentiate, make in makers:
        x, args, kwargs = _arguments(method[:-1], make, leaf * 1)
        y = x * 1
        assert getattr(y, method)(*args, **kwargs) is y
        g, = differentiate((y * y).sum(), leaf)
        node = y.grad_fn.name
        results.append((y.detach().numpy(), node() if callable(node) else node, g.detach().numpy()))
    (theirs, their_node, their_grad), (ours, our_node, our_grad) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-15)  # SciPy's polygamma(1, x) is 4e-10 off ATen's
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-9, atol=1e-15)
    assert our_node == their_node
