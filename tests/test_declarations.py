"""One declaration per function: the names, namespaces and checker tables derived from the op table.

`torch.sinc` was added by its declaration alone (`engine/ops/elementwise.py`) to prove it: everything a program
and `--check` reach of it below comes from that one entry. Numbers are PyTorch 2.13's (float64).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from gradcli.check.domains import domain_cause
from gradcli.check.meaning import Meaning
from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.ops.numpy_namespace import takes_its_arguments
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.lang import builtins as B
from tests.language_helpers import fails, oracle, run

DECLARED = [op for op in O.TABLE if op.names]
POINTS = "[0.0, 0.5, -1.3, 2.0]"


# -- the derivations -----------------------------------------------------------------------------
@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.name)
def test_every_declared_name_reaches_its_primitive_from_a_program(op: O.Op) -> None:
    for name in op.names.functions:
        # abs(2), max(1, 2) and min(1, 2) are Python's on numbers, torch's on tensors
        assert getattr(B.FUNCTIONS[name], "__wrapped__", B.FUNCTIONS[name]) is getattr(F, name), name
        assert B.TORCH.members[name] is B.FUNCTIONS[name]  # np.X is NumPy's own list (lang/numpy_facade)
        assert B.OP_OF[name] is op
    for name in op.names.methods:
        assert name in B.TENSOR_METHODS and B.OP_OF[name] is op
        assert getattr(Tensor, name) is getattr(Tensor, op.names.methods[0])  # aliases are the same kernel
    assert (op.name + "_" in B.TENSOR_METHODS) == op.names.in_place == hasattr(Tensor, op.name + "_")


@pytest.mark.parametrize("op", [op for op in DECLARED if op.names.functions and takes_its_arguments(op)],
                         ids=lambda op: op.name)
def test_both_vjp_namespaces_have_every_declared_function_from_the_same_declaration(op: O.Op) -> None:
    assert getattr(O.NUMPY, op.name) is op.forward
    x = np.array([[0.25, 0.75], [1.5, 0.5]])
    args = (1,) if op.names.signature else ()  # a reduction's or scan's dim, in both namespaces' places
    np.testing.assert_array_equal(getattr(F, op.name)(Tensor(x, dtype=np.float64), *args)._data,
                                  op.forward(x, *args))


def test_the_numpy_namespace_leaves_out_a_function_whose_forward_takes_other_arguments() -> None:
    # var(x, dim, unbiased, keepdim) is torch's order; its forward takes (x, dim, correction, keepdim)
    assert not takes_its_arguments(O.VAR) and not hasattr(O.NUMPY, "var")
    assert {"sum", "mean", "cumsum", "amax"} <= {op.name for op in DECLARED if takes_its_arguments(op)}


def test_the_checker_takes_element_meanings_and_domains_from_the_declarations() -> None:
    elements = [op for op in O.TABLE if op.element]
    assert {"exp", "asin", "lgamma", "sinc", "atan2", "hypot", "fmod", "remainder", "xlogy", "logaddexp"} <= \
        {op.name for op in elements}  # of one element, of two, and made of other meanings
    S = Meaning()
    for op in elements:
        values = (1.25 if op.name == "acosh" else 0.25, 0.75)[:len(op.vjps)]  # inside every domain
        want = float(op.forward(*map(np.array, values)))
        assert float(getattr(S, op.name)(*values)) == pytest.approx(want, rel=1e-12), op.name  # known floats
        exact = getattr(S, op.name)(*map(sp.Rational, values))  # SymPy's function of exact values
        assert float(sp.N(exact, 30)) == pytest.approx(want, rel=1e-12), op.name
    assert domain_cause("acosh", np.array([0.5])) == "acosh is nan below 1"
    assert domain_cause("sqrt", np.array([4.0])) is None


def test_a_name_declared_for_nn_functional_only_is_not_a_torch_function_or_method() -> None:
    assert "silu" not in B.FUNCTIONS and "silu" not in B.TENSOR_METHODS and not hasattr(Tensor, "silu")
    assert "detach" not in B.FUNCTIONS  # the --check-only identity primitive is not public at all


# -- torch.sinc, added by one declaration ------------------------------------------------------------
def test_sinc_values_and_gradient_as_pytorch() -> None:
    # sinc(x) = sin(πx)/(πx), 1 at 0; d/dx = (cos(πx) - sinc(x))/x, 0 at 0: -4/π at 0.5, 1/2 at 2,
    # 0.2997649234201025 at -1.3 (torch 2.13)
    ran = run(f"import torch\nx = torch.tensor({POINTS}, dtype=torch.float64, requires_grad=True)\n"
              "y = torch.sinc(x)\ny.sum().backward()\nname = y.grad_fn.name()")
    np.testing.assert_allclose(ran["y"]._data, [1.0, 2 / math.pi, math.sin(-1.3 * math.pi) / (-1.3 * math.pi),
                                                 0.0], atol=1e-15)
    np.testing.assert_allclose(ran["x"].grad._data, [0.0, -4 / math.pi, 0.2997649234201025, 0.5], rtol=1e-12)
    assert ran["name"] == "SincBackward0"


def test_sinc_is_a_method_and_an_in_place_method() -> None:
    ran = run(f"import torch\nx = torch.tensor({POINTS})\na = x.sinc()\nc = x.clone()\nc.sinc_()")
    for name in "ac":
        np.testing.assert_array_equal(ran[name]._data, np.sinc(np.float32([0.0, 0.5, -1.3, 2.0])))
        assert ran[name].dtype == np.float32


def test_sinc_second_derivative_is_pytorchs_nan_at_zero() -> None:
    # PyTorch's formula reads 0/0 at x = 0, so its second derivative there is nan; elsewhere
    # d²/dx² sinc(0.5) = -1.1902 and sinc''(-1.3) = 2.4163 (torch 2.13)
    ran = run("import torch\nx = torch.tensor([0.0, 0.5, -1.3], dtype=torch.float64, requires_grad=True)\n"
              "g, = torch.autograd.grad(torch.sinc(x).sum(), x, create_graph=True)\n"
              "h, = torch.autograd.grad(g.sum(), x)")
    assert np.isnan(ran["h"]._data[0])
    np.testing.assert_allclose(ran["h"]._data[1:], [-1.1902, 2.4163], atol=1e-4)


def test_sinc_of_a_string_is_an_argument_error() -> None:
    error = fails("import torch\ny = torch.sinc('a')", ArgumentError)
    assert error.message == "sinc(): argument must be a tensor, not str"


def test_sinc_check_agrees_with_sympy(cli) -> None:
    result = cli("eval", "out = (torch.sinc(x) * x).sum()", f"x={POINTS}", "--check")
    assert result.exit_code == 0, result.stdout
    assert "│ x     │ pass   │ SymPy   │" in result.stdout and "│ 4/4     │" in result.stdout


def test_a_wrong_sinc_vjp_fails_the_check(cli, patched) -> None:
    # the checker differentiates the declared meaning, not the VJP: a VJP off by its sign is caught
    right = O.SINC.vjps[0]
    patched(O.SINC, (lambda ns, g, o, x: -right(ns, g, o, x),))
    result = cli("eval", "out = torch.sinc(x).sum()", "x=[0.5, -1.3]", "--check")
    assert result.exit_code == 1 and "fail" in result.stdout


def test_sinc_matches_torch_at_random_points() -> None:
    xs = np.random.default_rng(3).uniform(-3, 3, 7).tolist()
    source = (f"import torch\nx = torch.tensor({xs}, dtype=torch.float64, requires_grad=True)\n"
              "y = torch.sinc(x)\ny.sum().backward()\nvalue, slope = y.detach().tolist(), x.grad.tolist()")
    want, got = oracle(source), run(source)
    np.testing.assert_allclose(got["value"], want["value"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got["slope"], want["slope"], rtol=1e-12, atol=1e-14)
