"""torch.autograd.functional with create_graph=True: results on a graph that later backward passes
differentiate to the inputs, as PyTorch's. Numbers derived by hand (f = x³ elementwise at x = [1, 2])."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli
from gradcli.check import checker
from gradcli.engine.autograd import hessian, hvp, jacobian, jvp, vhp, vjp
from gradcli.program.scripts import run_file
from tests.language_helpers import run


def cube(v):
    return v ** 3


def cube_sum(v):
    return (v ** 3).sum()


def test_the_sum_of_a_jacobian_backpropagates_to_the_input():
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    J = jacobian(cube, x, create_graph=True)  # diag(3x²)
    assert J.requires_grad and J.grad_fn.name == "ViewBackward0"
    np.testing.assert_array_equal(J.detach().numpy(), [[3.0, 0.0], [0.0, 12.0]])
    J.sum().backward()  # d/dx Σ 3x² = 6x
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0])


def test_hessian_with_create_graph_and_as_a_jacobian_of_a_jacobian():
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    H = hessian(lambda v: cube_sum(v) + v[0] * v[1], x, create_graph=True)  # [[6x0, 1], [1, 6x1]]
    np.testing.assert_array_equal(H.detach().numpy(), [[6.0, 1.0], [1.0, 12.0]])
    H.sum().backward()  # d/dx (6x0 + 6x1 + 2)
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    nested = jacobian(lambda v: jacobian(cube_sum, v, create_graph=True), x.detach())  # d(3v²)/dv = diag(6v)
    np.testing.assert_array_equal(nested.numpy(), [[6.0, 0.0], [0.0, 12.0]])
    assert not nested.requires_grad


def test_vjp_jvp_hvp_vhp_with_create_graph():
    u = gradcli.tensor([1.0, 0.5])
    for functional, f, want in ((vjp, cube, [6.0, 6.0]),  # Σ 3x²·u -> 6x·u
                                (jvp, cube, [6.0, 6.0]),  # the same contraction from the other side
                                (hvp, cube_sum, [6.0, 3.0]),  # Σ 6x·u -> 6u
                                (vhp, cube_sum, [6.0, 3.0])):
        x = gradcli.tensor([1.0, 2.0], requires_grad=True)
        out, product = functional(f, x, u, create_graph=True)
        assert out.requires_grad and product.requires_grad
        product.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), want)


def test_two_inputs_a_closure_and_an_input_that_does_not_require_grad():
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    w = gradcli.tensor([3.0, -1.0], requires_grad=True)
    Jx, Jw = jacobian(lambda a, b: a * b, (x, w), create_graph=True)  # diag(w), diag(x)
    (Jx.sum() * 2 + Jw.sum()).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    x.grad = None
    jacobian(lambda v: v * x, x, create_graph=True).sum().backward()  # diag(x): the closure's x counts too
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    constant = gradcli.tensor([1.0, 2.0])
    assert jacobian(cube, constant, create_graph=True).requires_grad  # on a graph of its own leaf, as PyTorch
    assert not jacobian(lambda v: v * 2, x, create_graph=True).requires_grad  # a constant Jacobian has no graph
    assert constant.grad is None


def test_a_program_differentiates_through_jacobian_and_hessian():
    ran = run("import torch\nfrom torch.autograd.functional import jacobian, hessian\n"
              "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "J = jacobian(lambda v: v ** 3, x, create_graph=True)\nJ.sum().backward()\ng = x.grad.clone()\n"
              "x.grad = None\nH = hessian(lambda v: (v ** 3).sum(), x, create_graph=True)\n(H * H).sum().backward()\n")
    np.testing.assert_array_equal(ran["g"].numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(ran["x"].grad.numpy(), [72.0, 144.0])  # d/dx Σ (6x)² = 72x
    assert ran["H"].grad_fn.name == "ViewBackward0"


def test_check_verifies_create_graph_calls_and_counts_a_closure_as_unchecked(tmp_path):
    path = tmp_path / "second.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp\n"
                    "x = torch.tensor([1.0, 2.0], requires_grad=True)\nu = torch.tensor([1.0, 0.5])\n"
                    "J = jacobian(lambda v: v ** 3, x, create_graph=True)\n"
                    "H = hessian(lambda v: (v ** 3).sum(), x, create_graph=True)\n"
                    "o, a = vjp(lambda v: v ** 3, x, u, create_graph=True)\n"
                    "o, b = jvp(lambda v: v ** 3, x, u, create_graph=True)\n"
                    "o, c = hvp(lambda v: (v ** 3).sum(), x, u, create_graph=True)\n"
                    "J.sum().backward()\n"
                    "K = jacobian(lambda v: v * x, x, create_graph=True)\n")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.checks_failed == 0
    assert [(s.line, s.calls, s.unchecked) for s in result.sites] == [
        (5, 1, 0), (6, 1, 0), (7, 1, 0), (8, 1, 0), (9, 1, 0), (10, 1, 0), (11, 1, 1)]


@pytest.mark.parametrize("call", ["jacobian(lambda t: t ** 3, x, create_graph=True)",
                                  "hessian(lambda t: (t ** 3).sum(), x, create_graph=True)",
                                  "vjp(lambda t: t ** 3, x, u, create_graph=True)",
                                  "jvp(lambda t: t ** 3, x, u, create_graph=True)"])
def test_check_catches_a_wrong_vjp_inside_a_create_graph_call(tmp_path, patched, call):
    from gradcli.engine import ops as O
    patched(O.POW, (lambda ns, g, o, a, b: g * 2.0 * a, O.POW.vjps[1]))
    path = tmp_path / "wrong.grad"
    path.write_text(f"import torch\nfrom torch.autograd.functional import {call.split('(')[0]}\n"
                    f"x = torch.tensor([1.0, 2.0], requires_grad=True)\nu = torch.tensor([1.0, 0.5])\n"
                    f"result = {call}\n")
    assert run_file(path, checker("symbolic")).checks_failed == 1


def test_run_check_of_a_create_graph_program_exits_0(cli, tmp_path):
    path = tmp_path / "jac.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import jacobian\n"
                    "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                    "jacobian(lambda v: v ** 3, x, create_graph=True).sum().backward()\n"
                    "assert torch.allclose(x.grad, torch.tensor([6.0, 12.0]))\n")
    result = cli("run", "--check", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 file: 1 ok, 0 failed, 0 error" in result.stdout


def test_a_hessian_of_a_vector_function_stops_run_with_pytorchs_error(cli, tmp_path):
    path = tmp_path / "vector.grad"
    path.write_text("import torch\nfrom torch.autograd.functional import hessian\n"
                    "x = torch.tensor([1.0, 2.0], requires_grad=True)\nH = hessian(lambda v: v ** 3, x, create_graph=True)\n")
    result = cli("run", str(path))
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "| H = hessian(lambda v: v ** 3, x, create_graph=True)" in text
    assert "The Tensor returned by the function given to hessian should contain a single element" in text
    assert "return y.sum()" in text
