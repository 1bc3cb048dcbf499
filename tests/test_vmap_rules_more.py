"""Batching rules for flips, rolls, repeats, triangles, padding, diag_embed, whole-tensor max/min and the
indices of max/argmax, layer and batch norm, scatter, scatter_add and index_put (func/batching.py), against
torch.func: the values, the per-example gradients (vmap of grad), forward-mode Jacobians (vmap of jacfwd),
nested vmaps and in_dims variants, each asserting it ran batched (no fallback recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli.engine.creation as C
import gradcli.engine.functions as GF
import gradcli.nn.conv as NC
import gradcli.nn.functional as NF
from gradcli.func import transforms as func

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(23)
IDX = np.array([[0, 2, 1, 1, 0], [2, 2, 0, 1, 1]])


@pytest.fixture(autouse=True)
def _fresh_fallbacks() -> None:
    func.Fallbacks.reasons.clear()


def _libs(x):
    """(torch-like functions, nn.functional) of the library x belongs to."""
    return (torch, torch.nn.functional) if isinstance(x, torch.Tensor) else (GF, NF)


def _idx(x):
    return torch.tensor(IDX) if isinstance(x, torch.Tensor) else C.tensor(IDX)


def _norms(x):
    """Where batch_norm lives in the library x belongs to."""
    return torch.nn.functional if isinstance(x, torch.Tensor) else NC


def _bn(x, w, b):
    return _norms(x).batch_norm(x, None, None, w, b, training=True).tanh()


def _bn_eval(x, w, b):
    mean, var = np.array([0.1, -0.3]), np.array([0.5, 2.0])
    to = torch.tensor if isinstance(x, torch.Tensor) else C.tensor
    return _norms(x).batch_norm(x, to(mean), to(var), w, b, training=False)


CASES = [
    ("flip, roll (with and without dims), repeat",
     lambda x: x.flip(0).roll(1, 1) + x.roll(2) * x.flip((0, 1)) + x.repeat(2, 1)[:3] + x.repeat(2, 1, 1)[1],
     [(4, 3, 5)], 0),
    ("tril, triu, pad, diag_embed", lambda x: _libs(x)[0].tril(x[:, :3]) + _libs(x)[0].triu(x[:, :3], 1)
     + _libs(x)[1].pad(x, (1, 2))[:, 1:4] + _libs(x)[0].diag_embed(x[0], 1)[:3, :3], [(4, 3, 5)], 0),
    ("whole-tensor max and min, with a tie", lambda x: x.max() * x + x.min() + x.amax(1, keepdim=True),
     [(4, 3, 5)], 0),
    ("max and min along a dim, their indices", lambda x: x.max(1).values + x.min(-1, keepdim=True).values
     + x.max(1).indices + x.argmax(1) + x.argmin(0).sum(), [(4, 3, 5)], 0),
    ("layer_norm with a shared weight", lambda x, w: _libs(x)[1].layer_norm(x, (5,), w) ** 2, [(4, 3, 5), (5,)],
     (0, None)),
    ("layer_norm with each example's weight", lambda x, w: _libs(x)[1].layer_norm(x, (3, 5), w, w * 2),
     [(3, 5), (4, 3, 5)], (None, 0)),
    ("layer_norm mapped along dim 1", lambda x: _libs(x)[1].layer_norm(x, (5,)).exp(), [(3, 4, 5)], 1),
    ("batch_norm, training, shared affine", _bn, [(4, 6, 2, 3), (2,), (2,)], (0, None, None)),
    ("batch_norm, training, each example's weight", _bn, [(6, 2), (4, 2), (2,)], (None, 0, None)),
    ("batch_norm, eval, running statistics", _bn_eval, [(4, 6, 2, 3), (2,), (2,)], (0, None, None)),
    ("scatter, scatter_add, gather", lambda x: x.scatter(0, _idx(x), x[:2] * 2) + x.scatter_add(0, _idx(x), x[:2])
     + x.gather(0, _idx(x)).sum(), [(4, 3, 5)], 0),
    ("scatter of a shared input from each example's source",
     lambda x, s: x.scatter(1, _idx(x)[:, :3].t(), s) * s.sum(), [(3, 5), (4, 3, 2)], (None, 0)),
    ("cummax and cummin, values and indices", lambda x: _libs(x)[0].cummax(x, 1).values * x.cummin(-1).values
     + x.cummax(0).indices + _libs(x)[0].cummin(x, -2).indices, [(4, 3, 5)], 0),
    ("cummax of a shared input times each example's", lambda x, y: x.cummax(0).values * y, [(5,), (3, 5)],
     (None, 0)),
    ("index_put: the gradient of repeated indexing", lambda x: x[_idx(x)[0]] * x[1:4:2].sum(0), [(4, 3, 5)], 0),
]


def _run(lib_func, fn, arrays, in_dims, make, transform):
    return transform(lib_func, fn, in_dims)(*[make(a) for a in arrays])


def _values(F, fn, in_dims):
    return F.vmap(fn, in_dims=in_dims)


def _grads(F, fn, in_dims):
    argnums = 0 if (in_dims if isinstance(in_dims, int) else in_dims[0]) is not None else 1
    return F.vmap(F.grad(lambda *a: (fn(*a) ** 2).sum() / 7, argnums=argnums), in_dims=in_dims)


def _forward(F, fn, in_dims):
    argnums = 0 if (in_dims if isinstance(in_dims, int) else in_dims[0]) is not None else 1
    return F.vmap(F.jacfwd(fn, argnums=argnums), in_dims=in_dims)


@pytest.mark.parametrize("transform", [_values, _grads, _forward], ids=["values", "grad", "jacfwd"])
@pytest.mark.parametrize("name, fn, shapes, in_dims", CASES, ids=[c[0] for c in CASES])
def test_each_new_rule_runs_once_with_pytorchs_numbers(name, fn, shapes, in_dims, transform) -> None:
    arrays = [RNG.standard_normal(s) for s in shapes]
    if "tie" in name:
        arrays[0][1, 2, :2] = arrays[0][1].max() + 1
    ours = _run(func, fn, arrays, in_dims, C.tensor, transform)
    theirs = _run(torch.func, fn, arrays, in_dims, torch.tensor, transform)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert not func.Fallbacks.reasons, func.Fallbacks.reasons


def test_nested_vmaps_of_layer_norm_and_scatter() -> None:
    def fn(x, y):
        T, nnf = _libs(x)
        return nnf.layer_norm(x * y, (5,)).scatter_add(0, _idx(x)[:1] % 2, y.unsqueeze(0)).flip(0)
    x, y = RNG.standard_normal((3, 2, 5)), RNG.standard_normal((4, 5))
    ours = func.vmap(func.vmap(fn, in_dims=(None, 0)), in_dims=(0, None))(C.tensor(x), C.tensor(y))
    theirs = torch.func.vmap(torch.func.vmap(fn, in_dims=(None, 0)), in_dims=(0, None))(torch.tensor(x),
                                                                                     torch.tensor(y))
    assert ours.shape == (3, 4, 2, 5)
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert not func.Fallbacks.reasons, func.Fallbacks.reasons


def test_whole_tensor_max_under_vmap_shares_a_tie_as_outside() -> None:
    """max() of a whole example splits the gradient evenly among its ties, as max() of a tensor does."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
    ours = func.vmap(func.grad(lambda t: t.max()))(C.tensor(x))
    np.testing.assert_array_equal(ours._data, [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    assert not func.Fallbacks.reasons


def test_stack_module_state_ensembles_models_under_vmap_as_pytorch() -> None:
    """The model-ensembling tutorial's core: stacked parameters (new leaves), each model on its own minibatch
    and every model on one minibatch, one batched call each."""
    from tests.language_helpers import run
    values = run("import torch\nfrom torch.func import stack_module_state, functional_call, vmap\n"
                 "models = [torch.nn.Linear(3, 2) for _ in range(4)]\n"
                 "params, buffers = stack_module_state(models)\n"
                 "x = torch.randn(4, 5, 3)\n"
                 "f = lambda p, b, x: functional_call(models[0], (p, b), (x,))\n"
                 "each = vmap(f)(params, buffers, x)\none = vmap(f, in_dims=(0, 0, None))(params, buffers, x[0])\n"
                 "loop = torch.stack([m(xi) for m, xi in zip(models, x)])\n"
                 "shapes = {k: tuple(v.shape) for k, v in params.items()}\nleaf = params['weight'].is_leaf\n"
                 "grad = params['weight'].requires_grad\n")
    assert values["shapes"] == {"weight": (4, 2, 3), "bias": (4, 2)} and values["leaf"] and values["grad"]
    np.testing.assert_allclose(values["each"]._data, values["loop"]._data, rtol=1e-6)
    assert values["one"].shape == (4, 5, 2)
    assert not func.Fallbacks.reasons, func.Fallbacks.reasons


@pytest.mark.parametrize("models, message", [
    ("[]", "stack_module_state: Expected at least one model, got 0."),
    ("[torch.nn.Linear(2, 2), torch.nn.Tanh()]", "stack_module_state: Expected all models to be of the same class."),
    ("[torch.nn.Linear(2, 2), torch.nn.Linear(2, 2).eval()]",
     "stack_module_state: Expected all models to have the same training/eval mode.")])
def test_stack_module_state_refuses_what_pytorch_refuses(models, message) -> None:
    from tests.language_helpers import fails
    error = fails(f"import torch\nfrom torch.func import stack_module_state\nstack_module_state({models})\n")
    assert error.message == message


@pytest.mark.parametrize("chunk_size", [None, 1, 3, 7, 50])
def test_jacrev_in_chunks_of_basis_cotangents_is_pytorchs(chunk_size) -> None:
    x, w = RNG.standard_normal((7,)), RNG.standard_normal((7, 7))
    fn = lambda t, w, unused: (w @ t).tanh() * t.sum()  # noqa: E731
    args = (x, w, RNG.standard_normal(3))
    ours = func.jacrev(fn, argnums=(0, 1, 2), chunk_size=chunk_size)(*map(C.tensor, args))
    theirs = torch.func.jacrev(fn, argnums=(0, 1, 2), chunk_size=chunk_size)(*map(torch.tensor, args))
    for o, t in zip(ours, theirs):
        assert o.shape == tuple(t.shape)
        np.testing.assert_allclose(o._data, t.numpy(), rtol=1e-12, atol=1e-12)
    assert not func.Fallbacks.reasons


def test_a_large_basis_runs_in_chunks_by_itself(monkeypatch) -> None:
    """Past BASIS_BYTES the basis cotangents run in chunks of rows: the same numbers, without an n×n identity."""
    x = RNG.standard_normal((6, 5))
    fn = lambda t: (t @ t.t()).sin()  # noqa: E731
    whole = func.jacrev(fn)(C.tensor(x))
    monkeypatch.setattr(func, "BASIS_BYTES", 36 * 8 * 4)  # four rows of the 36-element output's basis
    chunked = func.jacrev(fn)(C.tensor(x))
    np.testing.assert_array_equal(whole._data, chunked._data)
    hess = func.jacrev(func.jacrev(lambda t: fn(t).sum()))(C.tensor(x))
    np.testing.assert_allclose(hess._data, torch.func.hessian(lambda t: fn(t).sum())(torch.tensor(x)).numpy(),
                               rtol=1e-10, atol=1e-12)


def test_jacrev_refuses_a_chunk_size_below_one() -> None:
    from gradcli.errors import ArgumentError
    with pytest.raises(ArgumentError, match="jacrev: `chunk_size` should be greater than 0."):
        func.jacrev(lambda t: t, chunk_size=0)


def _vjp_rows(T, make, eye, w, x):
    out, vjp_fn = T.vjp(lambda w: (make(x) @ w.t()).tanh(), make(w))
    return T.vmap(lambda v: vjp_fn(v)[0])(eye(3))


def test_a_vjp_fn_vmapped_over_its_cotangents_runs_one_batched_backward() -> None:
    """`vmap(vjp_fn)(basis)`, the NTK tutorial's pattern (PyTorch's is_grads_batched): one backward."""
    w, x = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    ours = _vjp_rows(func, C.tensor, C.eye, w, x)
    theirs = _vjp_rows(torch.func, torch.tensor, torch.eye, w, x)
    assert ours.shape == (3, 3, 4)
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert not func.Fallbacks.reasons, func.Fallbacks.reasons


def test_inside_the_vmap_of_its_output_a_batched_cotangent_runs_per_example() -> None:
    w, xs = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4))
    ours = func.vmap(lambda x: _vjp_rows(func, lambda a: a, C.eye, C.tensor(w), x))(C.tensor(xs))
    theirs = torch.func.vmap(lambda x: _vjp_rows(torch.func, lambda a: a, torch.eye, torch.tensor(w), x))(
        torch.tensor(xs))
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert func.Fallbacks.reasons[0] == ("vmap(<lambda>) ran once per example: a cotangent batched differently "
                                         "from its output has no batching rule")


@pytest.mark.parametrize("fn", ["cummax", "cummin"])
def test_cummax_and_cummin_are_pytorchs_with_ties_going_to_the_latest(fn) -> None:
    """Values, indices (a tie's is the latest), the node's name and the gradient, which goes to the element
    each running extreme is, summed where it stays the extreme."""
    from tests.language_helpers import run
    source = ("import torch\nx = torch.tensor([[1., 3., 3., 2., 5.], [2., 2., 1., 1., 0.]], requires_grad=True)\n"
              f"v, i = torch.{fn}(x, 1)\nname = v.grad_fn.name()\n"
              "(v * torch.arange(5.0)).sum().backward()\ng = x.grad\n"
              f"s = torch.{fn}(torch.tensor(2.0), 0)\n")
    ours = run(source)
    x = torch.tensor([[1., 3., 3., 2., 5.], [2., 2., 1., 1., 0.]], requires_grad=True)
    v, i = getattr(torch, fn)(x, 1)
    (v * torch.arange(5.0)).sum().backward()
    np.testing.assert_array_equal(ours["v"]._data, v.detach().numpy())
    np.testing.assert_array_equal(ours["i"]._data, i.numpy())
    np.testing.assert_array_equal(ours["g"]._data, x.grad.numpy())
    assert ours["name"] == v.grad_fn.name()
    assert float(ours["s"][0]._data) == 2.0 and int(ours["s"][1]._data) == 0


def test_cummax_gradient_is_proved_by_check(cli) -> None:
    result = cli("eval", "v = torch.cummax(x, 0).values; out = (v*v).sum()", "x=[1.0, 3.0, 2.0, 4.0]", "--check")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "pass" in result.stdout and "∂out/∂x[2] = 0" in result.stdout
