"""The engine's PyTorch semantics: the seed tutorials' numbers, accumulation, freeing, kinks, depth.

Expected numbers are PyTorch's (run with torch 2.13 in float64) or derived by hand below.
"""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import gradcli
from gradcli.engine import functions as F
from gradcli.errors import BackwardError
from gradcli.engine.tensor import Node


def test_seed000_mean_of_3_x_plus_2_squared() -> None:
    x = gradcli.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    out.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 4.5))
    assert y.grad is None and z.grad is None
    assert x.creator is None and x.grad_fn is None and x.is_leaf
    assert repr(y.creator) == "<AddBackward0>" and repr(z.grad_fn) == "<MulBackward0>"
    assert repr(out.grad_fn) == "<MeanBackward0>" and not y.is_leaf and y.requires_grad
    assert out.item() == 27.0


def test_seed000_written_with_pow() -> None:
    x = gradcli.ones(2, 2, requires_grad=True)
    (3 * (x + 2) ** 2).mean().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 4.5))


def test_seed002_one_element_output_needs_no_gradient() -> None:
    x = gradcli.tensor([2.0], requires_grad=True)
    z = (x + 2) ** 2 + 3
    assert z.shape == (1,) and z.item() == 19.0
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [8.0])


@pytest.mark.parametrize("gradient, expected", [
    ([1.0, 0.1, 0.01], [2.0, 0.2, 0.02]),
    ([[1.0, 0.1, 0.01], [1.0, 1.0, 1.0]], [[2.0, 0.2, 0.02], [2.0, 2.0, 2.0]]),
    ([1, 1, 1], [2.0, 2.0, 2.0]),
])
def test_seed002_weighted_backward(gradient: list, expected: list) -> None:
    x = gradcli.randn(*np.shape(gradient), requires_grad=True)
    (x * 2).backward(gradcli.tensor(gradient))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15)


def test_seed000_doubling_while_loop() -> None:
    x = gradcli.tensor([0.5, -1.2, 0.3], requires_grad=True)
    y = x * 2
    steps = 1
    while y.data.norm() < 1000:
        y = y * 2
        steps += 1
    assert steps == 10
    y.backward(gradcli.float_tensor([0.1, 1.0, 0.0001]))
    np.testing.assert_allclose(x.grad.numpy(), [102.4, 1024.0, 0.1024], rtol=1e-6)


def test_seed002_mean_of_y_minus_matmul() -> None:
    rng = np.random.default_rng(3)
    X, Y, W = rng.standard_normal((10, 20)), rng.standard_normal((10, 5)), rng.standard_normal((20, 5))
    x, y, w = (gradcli.tensor(a, requires_grad=True) for a in (X, Y, W))
    out = gradcli.mean(y - gradcli.matmul(x, w))
    out.backward()
    g = np.full((10, 5), 1 / 50)
    np.testing.assert_allclose(out.item(), np.mean(Y - X @ W), rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), -g @ W.T, rtol=1e-13)
    np.testing.assert_allclose(y.grad.numpy(), g, rtol=1e-15)
    np.testing.assert_allclose(w.grad.numpy(), -X.T @ g, rtol=1e-13)


def test_seed002_broadcast_w_times_x_plus_b() -> None:
    x = gradcli.ones(1)
    b = gradcli.rand(1, requires_grad=True)
    w = gradcli.rand(2, requires_grad=True)
    z = w * x
    y = z + b
    y.backward(gradcli.ones(2))
    assert x.grad is None and not x.requires_grad
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [2.0])
    assert b.grad.shape == (1,)


def test_seed002_backward_twice_then_zero_then_freed() -> None:
    x = gradcli.randn(3, requires_grad=True)
    y = x * 3
    y.backward(gradcli.float_tensor([1, 1, 1]), retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    y.backward(gradcli.float_tensor([1, 1, 1]), retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 6.0])
    x.grad.data.zero_()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    y.backward(gradcli.float_tensor([1, 1, 1]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    with pytest.raises(BackwardError, match="Trying to backward through the graph a second time"):
        y.backward(gradcli.float_tensor([1, 1, 1]))


def test_x_grad_zero_resets_in_place() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    grad = x.grad
    grad.zero_()
    (x * x).sum().backward()
    assert x.grad is grad
    np.testing.assert_array_equal(grad.numpy(), [2.0, 4.0])


def test_shared_gradients_never_alias() -> None:
    """A gradient passed through unchanged (add, expand) must not become two `.grad`s' memory."""
    x, w = gradcli.tensor(1.0, requires_grad=True), gradcli.tensor(2.0, requires_grad=True)
    out = x + w
    out.backward(retain_graph=True)
    out.backward()
    assert x.grad.item() == 2.0 and w.grad.item() == 2.0
    x.grad.zero_()
    assert w.grad.item() == 2.0
    g = gradcli.tensor([1.0, 1.0])
    a, b = gradcli.ones(2, requires_grad=True), gradcli.ones(2, requires_grad=True)
    (a + b).backward(g, retain_graph=True)
    a.grad.zero_()
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    leaf = gradcli.ones(2, requires_grad=True)
    leaf.backward(g)
    leaf.grad.zero_()
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])


def test_leaf_used_twice_gets_the_sum() -> None:
    x = gradcli.tensor([1.0, -2.0], requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, -3.0])


def test_retain_grad_keeps_a_non_leaf_gradient() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    assert y.retains_grad and not x.retains_grad
    np.testing.assert_array_equal(y.grad.numpy(), [4.0, 8.0])
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 16.0])


def test_requires_grad_propagates_and_detach_cuts() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    c = gradcli.tensor([3.0, 4.0])
    assert (x * c).requires_grad and not (c * 2).requires_grad and (c * 2).grad_fn is None
    d = (x * c).detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert not x.data.requires_grad and np.shares_memory(x.data.numpy(), x.detach().numpy())
    assert gradcli.tensor([1, 2]).dtype == np.int64 and gradcli.tensor([1.0]).dtype == np.float64


def test_gradient_dtype_follows_the_leaf() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True, dtype="float32")
    (x * 2).backward(gradcli.tensor([1.0, 1.0]))
    assert x.grad.dtype == np.float32
    y = gradcli.tensor([1.0, 2.0], requires_grad=True)
    (y * 2).backward(gradcli.tensor([1, 1]))
    assert y.grad.dtype == np.float64 and y.grad.tolist() == [2.0, 2.0]


def test_ops_that_save_nothing_can_run_backward_again() -> None:
    x = gradcli.tensor([1.0, -2.0], requires_grad=True)
    y = (x + x).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    z = (x * 2).sum()
    z.backward()
    with pytest.raises(BackwardError):
        z.backward()


def test_graph_structure_survives_backward() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    node = y.grad_fn
    assert node.name == "SumBackward0" and node.saved is not None
    mul = node.inputs[0]
    assert mul.name == "MulBackward0" and mul.saved is None and mul.inputs[1] is x
    assert [type(f).__name__ for f, _ in mul.next_functions] == ["Node", "AccumulateGrad"]
    assert mul.next_functions[1][0] is mul.next_functions[1][0] and mul.next_functions[1][0].variable is x


def test_a_chain_does_not_keep_its_intermediates() -> None:
    """`y * 0.5` needs only the number, so the node keeps no array of y (PyTorch keeps none either)."""
    x = gradcli.ones(3, requires_grad=True)
    y = (x.sin() + 1) * 0.5
    mul, add = y.grad_fn, y.grad_fn.inputs[0]
    assert mul.saved is mul.inputs == (add, 0.5) and mul.saved_out is None
    assert add.saved == ()


def test_node_names_match_pytorch() -> None:
    x = gradcli.ones(2, 3, requires_grad=True)
    w = gradcli.ones(3, requires_grad=True)
    names = {
        "x+2": x + 2, "2-x": 2 - x, "2/x": 2 / x, "x**2": x ** 2, "x**x": x ** x, "2**x": 2 ** x, "x.T": x.T,
        "x.t()": x.t(), "sum": x.sum(), "sum(0)": x.sum(0), "mean(1)": x.mean(1), "max": x.max(), "max(1)": x.max(1)[0],
        "prod": x.prod(), "prod(1)": x.prod(1), "norm": x.norm(), "x@w": x @ w, "w@w": w @ w, "x@x.T": x @ x.T,
        "view": x.view(6), "x[0]": x[0], "x[:,1:]": x[:, 1:], "x[[0,0]]": x[[0, 0]], "x[1:,0]": x[1:, 0],
        "x[None]": x[None], "x[...]": x[...], "clamp": x.clamp(0, 1), "float": x.float(), "clone": x.clone(),
    }
    assert {k: v.grad_fn.name for k, v in names.items()} == {
        "x+2": "AddBackward0", "2-x": "RsubBackward1", "2/x": "MulBackward0", "x**2": "PowBackward0",
        "x**x": "PowBackward1", "2**x": "PowBackward2", "x.T": "PermuteBackward0", "x.t()": "TBackward0",
        "sum": "SumBackward0", "sum(0)": "SumBackward1", "mean(1)": "MeanBackward1", "max": "MaxBackward1",
        "max(1)": "MaxBackward0", "prod": "ProdBackward0", "prod(1)": "ProdBackward1",
        "norm": "LinalgVectorNormBackward0", "x@w": "MvBackward0", "w@w": "DotBackward0", "x@x.T": "MmBackward0",
        "view": "ViewBackward0", "x[0]": "SelectBackward0", "x[:,1:]": "SliceBackward0", "x[[0,0]]": "IndexBackward0",
        "x[1:,0]": "SelectBackward0", "x[None]": "UnsqueezeBackward0", "x[...]": "AliasBackward0",
        "clamp": "ClampBackward1", "float": "ToCopyBackward0", "clone": "CloneBackward0"}


def test_a_cast_to_an_integer_or_bool_dtype_leaves_the_graph():
    """PyTorch: an integer or bool tensor cannot require grad, so `x.long()` of a tensor in a graph has no grad_fn
    (and prints none), while a cast to another float dtype stays in the graph."""
    x = gradcli.tensor([1.5, -2.5], requires_grad=True)
    for cast in (x.long(), x.int(), x.bool(), x.to(np.int32), (x * 2).byte()):
        assert cast.grad_fn is None and not cast.requires_grad
    assert x.long().tolist() == [1, -2]  # truncated toward zero, as PyTorch
    assert x.half().grad_fn.name == "ToCopyBackward0" and x.double().requires_grad


def grad_of(fn, values: list) -> list:
    x = gradcli.tensor(values, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


@pytest.mark.parametrize("fn, values, expected", [
    (lambda x: x.relu(), [0.0, 1.0, -1.0], [0.0, 1.0, 0.0]),
    (lambda x: x.abs(), [0.0, 1.0, -1.0], [0.0, 1.0, -1.0]),
    (lambda x: x.sign(), [0.0, 2.0], [0.0, 0.0]),
    (lambda x: x.max(), [1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
    (lambda x: x.min(), [1.0, 1.0, 1.0, 3.0], [1 / 3, 1 / 3, 1 / 3, 0.0]),
    (lambda x: x.max(1).values, [[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]),
    (lambda x: x.min(0).values, [[1.0, 3.0], [1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]]),
    (lambda x: gradcli.maximum(x, gradcli.tensor([1.0, 3.0, 3.0])), [1.0, 3.0, 4.0], [0.5, 0.5, 1.0]),
    (lambda x: gradcli.minimum(x, gradcli.tensor([1.0, 3.0, 3.0])), [1.0, 3.0, 4.0], [0.5, 0.5, 0.0]),
    (lambda x: x.clamp(0.0, 1.0), [0.0, 1.0, 2.0, -1.0, 0.5], [1.0, 1.0, 0.0, 0.0, 1.0]),
    (lambda x: x.norm(), [0.0, 0.0], [0.0, 0.0]),
    (lambda x: x.norm(1), [0.0, 1.0, -2.0], [0.0, 1.0, -1.0]),
    (lambda x: x.norm(float("inf")), [3.0, 1.0, -3.0], [0.5, 0.0, -0.5]),
    (lambda x: x.norm(dim=1), [[0.0, 0.0], [3.0, 4.0]], [[0.0, 0.0], [0.6, 0.8]]),
    (lambda x: x.std(), [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]),
    (lambda x: x.prod(), [0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    (lambda x: x.prod(), [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
    (lambda x: x ** 0, [0.0, 1.0], [0.0, 0.0]),
    (lambda x: x ** 2, [0.0, 1.0], [0.0, 2.0]),
    (lambda x: 0 ** x, [0.0, 2.0], [0.0, 0.0]),
    (lambda x: gradcli.tensor([0.0, 0.0]) ** x, [0.0, 2.0], [0.0, 0.0]),
    (lambda x: F.softplus(x), [25.0, -30.0], [1.0, float(1 / (1 + np.exp(30.0)))]),
])
def test_subgradients_at_kinks_follow_pytorch(fn, values: list, expected: list) -> None:
    np.testing.assert_allclose(grad_of(fn, values), expected, rtol=1e-15, atol=0)


def test_max_with_dim_returns_first_index() -> None:
    values, indices = gradcli.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]]).max(1)
    assert values.tolist() == [3.0, 2.0] and indices.tolist() == [1, 0]
    assert gradcli.tensor([[1.0, 3.0]]).min(1, keepdim=True).indices.shape == (1, 1)


def test_deep_while_loop_chain_backward_without_recursion() -> None:
    limit = sys.getrecursionlimit()
    x = gradcli.tensor([1.0, -1.0], requires_grad=True)
    y = x
    steps = 0
    while steps < 100_000:
        y = y * 1.0
        steps += 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert sys.getrecursionlimit() == limit
    del y
    gc.collect()


def test_deep_chain_create_graph_and_branching() -> None:
    x = gradcli.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y + y * 1e-4
    (g,) = gradcli.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.item(), 1.0001 ** 3000, rtol=1e-12)
    assert not g.requires_grad  # linear in x: the gradient is a constant, as in PyTorch


def test_create_graph_gives_a_differentiable_gradient() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    y.backward(create_graph=True)
    assert x.grad.grad_fn.name == "CopyBackwards"
    np.testing.assert_array_equal(x.grad.detach().numpy(), [3.0, 12.0])
    (h,) = gradcli.grad(x.grad.sum(), x)
    np.testing.assert_array_equal(h.numpy(), [6.0, 12.0])


def test_grad_returns_without_touching_dot_grad() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    w = gradcli.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).sum()
    gx, gw = gradcli.grad(y, [x, w], retain_graph=True)
    assert x.grad is None and w.grad is None
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    (gy,) = gradcli.grad(y, y)
    assert gy.item() == 1.0
    unused = gradcli.tensor([1.0], requires_grad=True)
    assert gradcli.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None


def test_functional_grad_of_intermediate_and_grad_outputs() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = h.sin()
    (gh,) = gradcli.grad(y, h, grad_outputs=gradcli.tensor([1.0, 0.5]))
    np.testing.assert_allclose(gh.numpy(), np.cos([3.0, 6.0]) * [1.0, 0.5])


def test_data_of_a_tensor_is_detached_and_shares_memory() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.grad_fn is None
    d.zero_()
    assert x.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("make, text", [
    (lambda: gradcli.ones(2, 2, requires_grad=True) + 2, "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)"),
    (lambda: gradcli.ones(2, 2, requires_grad=True), "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"),
    (lambda: gradcli.tensor([4.5, 1.0, -2.25]), "tensor([ 4.5000,  1.0000, -2.2500])"),
    (lambda: gradcli.tensor([1.0e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: gradcli.tensor([102.4, 1024.0, 0.1024]), "tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])"),
    (lambda: gradcli.tensor(27.0, requires_grad=True) * 1, "tensor(27., grad_fn=<MulBackward0>)"),
    (lambda: gradcli.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: gradcli.tensor([1.0, 2.0]).float(), "tensor([1., 2.], dtype=torch.float32)"),
    (lambda: gradcli.tensor([True, False]), "tensor([ True, False])"),
])
def test_repr_like_pytorch(make, text: str) -> None:
    assert repr(make()) == text


def test_repr_hides_the_default_dtype_whatever_it_is() -> None:
    gradcli.set_default_dtype("float32")
    try:
        assert repr(gradcli.tensor([1.5])) == "tensor([1.5000])"
        assert repr(gradcli.tensor([1.5], dtype="float64")) == "tensor([1.5000], dtype=torch.float64)"
    finally:
        gradcli.set_default_dtype("float64")


def test_constructors() -> None:
    gradcli.manual_seed(5)
    a = gradcli.randn(2, 3)
    gradcli.manual_seed(5)
    assert gradcli.randn((2, 3)).tolist() == a.tolist()
    assert gradcli.zeros(2, 3).shape == (2, 3) and gradcli.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert gradcli.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert gradcli.arange(3).tolist() == [0, 1, 2] and gradcli.arange(3).dtype == np.int64
    assert gradcli.arange(0, 1, 0.5).tolist() == [0.0, 0.5] and gradcli.linspace(0, 1, 3).tolist() == [0, 0.5, 1]
    r = gradcli.rand(4, requires_grad=True)
    assert r.requires_grad and r.is_leaf and np.all((r.detach().numpy() >= 0) & (r.detach().numpy() < 1))
    assert gradcli.ones(2).size() == (2,) and gradcli.ones(2, 3).size(1) == 3 and gradcli.ones(2, 3).dim() == 2
    assert gradcli.ones(2, 3).numel() == 6 and gradcli.ones(2, 3).T.shape == (3, 2)


def test_clone_is_a_copy_on_the_graph() -> None:
    x = gradcli.tensor([1.0, 2.0], requires_grad=True)
    c = F.clone(x)
    c.data.zero_()
    assert x.tolist() == [1.0, 2.0]
    assert isinstance(c.grad_fn, Node)


def test_anomaly_watch_names_the_first_op_making_non_finite_values() -> None:
    from gradcli.engine.tensor import Anomaly, Observe
    saved = Anomaly.watching, Anomaly.first
    Anomaly.watching, Anomaly.first = True, None
    Observe.refresh()
    try:
        with np.errstate(all="ignore"):  # as eval runs programs
            x = gradcli.tensor([1e200, -1e200, 2.0], requires_grad=True)
            y = x * 1.0 + 1.0
            assert Anomaly.first is None  # huge but finite: only the fast test's squares overflow
            z = (y * 0.0).log()
            w = z * 2
        assert Anomaly.first is z.grad_fn and Anomaly.first.name == "LogBackward0"
        assert w.grad_fn is not Anomaly.first
    finally:
        Anomaly.watching, Anomaly.first = saved
        Observe.refresh()


def test_anomaly_watch_names_an_op_whose_output_is_not_tracked() -> None:
    from gradcli.engine.tensor import Anomaly, Observe
    saved = Anomaly.watching, Anomaly.first
    Anomaly.watching, Anomaly.first = True, None
    Observe.refresh()
    try:
        with np.errstate(all="ignore"):
            gradcli.tensor([0.0, 1.0]).log()
        assert Anomaly.first is not None and Anomaly.first.name == "LogBackward0"
    finally:
        Anomaly.watching, Anomaly.first = saved
        Observe.refresh()


@pytest.mark.parametrize("exponent", [2, 3, 2.0, 3.0])
def test_integer_powers_multiply_as_pytorch_does_and_keep_pow_backward(exponent) -> None:
    values = np.linspace(-3, 3, 101)
    x = gradcli.tensor(values, requires_grad=True)
    y = x ** exponent
    product = values * values if exponent == 2 else values * values * values
    assert np.array_equal(y.detach().numpy(), product)
    assert y.grad_fn.name == "PowBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), exponent * values ** (exponent - 1), rtol=1e-12)


def test_a_zero_dim_tensor_does_not_widen_a_dimensioned_one_as_in_pytorch():
    g = gradcli
    a = g.float_tensor([1.0, 2.0]).requires_grad_()
    s = g.tensor(3.0, requires_grad=True)
    y = a * s
    assert y.dtype == np.float32 and (a + g.tensor([2.5])).dtype == np.float64
    y.sum().backward()
    assert s.grad.dtype == np.float64 and s.grad.item() == 3.0
    np.testing.assert_array_equal(a.grad.numpy(), np.float32([3.0, 3.0]))


def test_softmax_of_a_zero_dim_tensor_is_a_one_element_distribution():
    x = gradcli.tensor(2.0, requires_grad=True)
    y = gradcli.log_softmax(x) + gradcli.softmax(x)
    y.backward()
    assert y.shape == () and y.item() == 1.0 and x.grad.item() == 0.0


@pytest.mark.parametrize("call", [lambda x: x.norm(), lambda x: F.norm(x), lambda x: x.norm(2.0),
                                  lambda x: x.norm(p=2, dim=(0, 1)), lambda x: x.norm("fro")])
def test_the_default_norm_path_records_what_the_general_one_does(call) -> None:
    """x.norm() takes a specialised kernel; its value, node, parameters and gradient are the general path's."""
    values = np.array([[3.0, -4.0], [1e-3, 12.0]])
    x = gradcli.tensor(values, requires_grad=True)
    y = call(x)
    general = F.norm(gradcli.tensor(values, requires_grad=True), 2, (0, 1))
    assert y.item() == general.item() == np.sqrt((values * values).sum())
    assert y.grad_fn.name == general.grad_fn.name == "LinalgVectorNormBackward0"
    assert y.grad_fn.params["p"] == 2.0 and not y.grad_fn.params["keepdim"]
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), values / np.sqrt((values * values).sum()), rtol=1e-15)


@pytest.mark.parametrize("value, p", [(1e-300, 2), (-1e-300, 2), (1e200, 2), (1e-200, 3), (-2.0, 3), (5.0, 1)])
def test_the_norm_of_one_element_is_its_magnitude_as_in_pytorch(value: float, p: float) -> None:
    """PyTorch 2.13: a one-element norm never squares, so 1e-300 neither underflows to 0 nor 1e200 overflows
    to inf; the gradient is the sign (checked for p=2, where PyTorch's is finite)."""
    x = gradcli.tensor([value], requires_grad=True)
    y = x.norm(p)
    assert y.item() == abs(value)
    if p == 2:
        y.backward()
        assert x.grad.item() == np.sign(value)
    rows = gradcli.tensor([[value], [-3.0]], requires_grad=True).norm(p, dim=1)
    np.testing.assert_array_equal(rows.detach().numpy(), [abs(value), 3.0])


def test_a_norm_over_two_tiny_elements_underflows_as_in_pytorch() -> None:
    assert gradcli.tensor([1e-200, 1e-200]).norm().item() == 0.0
    np.testing.assert_array_equal(gradcli.tensor([[1e-300, 0.0]]).norm(dim=1).numpy(), [0.0])
    with np.errstate(over="ignore"):
        assert gradcli.tensor([1e200, 1e200]).norm().item() == np.inf


@pytest.mark.parametrize("shape", [(3,), (2, 3), (300, 300)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_a_sums_gradient_is_a_writable_array_of_its_own(shape: tuple, keepdim: bool) -> None:
    """Small inputs get a filled gradient, large ones (over 4,096 elements) a broadcast view: either way
    .grad is ones, writable, and shared with nothing (zeroing one leaf's leaves the other's)."""
    a = gradcli.ones(*shape, requires_grad=True)
    b = gradcli.ones(*shape, requires_grad=True)
    s = a.sum(dim=tuple(range(len(shape))), keepdim=True) if keepdim else a.sum()
    (s.sum() * 3 + b.sum()).backward()
    a.grad.zero_()
    assert a.grad._data.flags.writeable
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(shape))
    (a.sum() * 2).backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(shape, 2.0))
