"""vmap by batching rules (func/batching.py): one call of f on the whole batch, with PyTorch's numbers.

Each case runs the same function (operators and methods only, so it reads the same in both libraries)
under gradcli's vmap and torch.func.vmap on the same inputs; a case also asserts that it really ran
batched (no fallback recorded) or, for a function without a rule, that it fell back and still agrees.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradcli.engine.creation as C
import gradcli.nn.functional as NF
import gradcli.nn.conv as NC
from gradcli.engine.batched import BatchedTensor, NoRule
from gradcli.func import transforms as func
from gradcli.errors import ArgumentError
from tests.language_helpers import fails, run

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _fresh_fallbacks() -> None:
    """Each case counts its own fallbacks (the list is capped for a long-running process)."""
    func.Fallbacks.reasons.clear()


def _arrays(*shapes: tuple[int, ...], dtype: str = "float64") -> list[np.ndarray]:
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def _both(fn, arrays: list[np.ndarray], in_dims=0, out_dims=0, **kw):
    """fn under our vmap and torch's on the same inputs, and whether ours fell back."""
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(fn, in_dims=in_dims, out_dims=out_dims, **kw)(*[C.tensor(a) for a in arrays])
    fell = len(func.Fallbacks.reasons) > before
    theirs = torch.func.vmap(fn, in_dims=in_dims, out_dims=out_dims, **kw)(*[torch.tensor(a) for a in arrays])
    return ours, theirs, fell


def _same(ours, theirs, rtol: float = 1e-12) -> None:
    if isinstance(theirs, tuple):
        for o, t in zip(ours, theirs):
            _same(o, t, rtol)
        return
    assert type(ours) is not BatchedTensor
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=rtol, atol=1e-12)


CASES = [
    ("elementwise with a broadcast operand", lambda x, y: (x * y).sin() + y, [(4, 3), (2, 1, 3)], (0, None), 0),
    ("reduction over a negative dim, keepdim", lambda x: x.sum(-1, keepdim=True) * x.mean(), [(5, 2, 3)], 0, 0),
    ("softmax and logsumexp along dims", lambda x: x.softmax(0) + x.logsumexp(1, keepdim=True), [(3, 4, 2)], 0, 0),
    ("mapped dim 1, result at dim 1", lambda x: x.exp().prod(0), [(2, 6, 3)], 1, 1),
    ("vector @ shared matrix", lambda x, w: x @ w, [(6, 3), (3, 4)], (0, None), 0),
    ("shared matrix @ vector", lambda w, x: w @ x, [(4, 3), (6, 3)], (None, 0), 0),
    ("both batched: matrix @ vector", lambda a, v: a @ v, [(5, 2, 3), (5, 3)], 0, 0),
    ("both batched: vector @ vector", lambda a, v: a @ v, [(5, 3), (5, 3)], 0, 0),
    ("batched matrices @ shared 3-d stack", lambda a, b: a @ b, [(4, 2, 3), (7, 3, 2)], (0, None), 0),
    ("shared 3-d stack @ batched vector", lambda b, v: b @ v, [(7, 2, 3), (4, 3)], (None, 0), 0),
    ("views: transpose, permute, reshape, expand", lambda x: x.t().reshape(-1, 2).permute(1, 0).expand(3, 2, 6),
     [(4, 3, 4)], 0, 0),
    ("unsqueeze, squeeze, flatten", lambda x: x.unsqueeze(0).flatten().squeeze(), [(3, 2, 2)], 0, 0),
    ("stack and cat with a shared tensor", lambda x, y: _lib(x).cat([_lib(x).stack([x, y], 1), x.unsqueeze(1)], 1),
     [(3, 4), (4,)], (0, None), 0),
]


def _lib(x):
    """The library x belongs to (a case calls torch.stack or gradcli's stack the same way)."""
    import gradcli.engine.functions as F
    return torch if isinstance(x, torch.Tensor) else F


@pytest.mark.parametrize("name, fn, shapes, in_dims, out_dims", CASES, ids=[c[0] for c in CASES])
def test_each_rule_runs_once_with_pytorchs_numbers(name, fn, shapes, in_dims, out_dims) -> None:
    ours, theirs, fell = _both(fn, _arrays(*shapes), in_dims, out_dims)
    _same(ours, theirs)
    assert not fell, func.Fallbacks.reasons[-1]


def test_a_function_without_a_rule_runs_per_example_and_says_why() -> None:
    """PyTorch refuses .item() inside vmap; gradcli runs such a function once per example, as it always did."""
    (x,) = _arrays((4, 3))
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(lambda t: t * t.sum().item())(C.tensor(x))
    np.testing.assert_allclose(ours._data, x * x.sum(axis=1, keepdims=True), rtol=1e-15)
    assert len(func.Fallbacks.reasons) == before + 1
    assert func.Fallbacks.reasons[-1] == ("vmap(<lambda>) ran once per example: reading a batched tensor's numbers "
                                          "has no batching rule")


def test_nested_vmaps_batch_at_both_levels() -> None:
    fn = lambda x, y: (x * y).sum(-1).tanh()  # noqa: E731
    x, y = _arrays((3, 5), (4, 5))
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(func.vmap(fn, in_dims=(None, 0)), in_dims=(0, None))(C.tensor(x), C.tensor(y))
    theirs = torch.func.vmap(torch.func.vmap(fn, in_dims=(None, 0)), in_dims=(0, None))(torch.tensor(x),
                                                                                     torch.tensor(y))
    _same(ours, theirs)
    assert len(func.Fallbacks.reasons) == before


def test_chunk_size_gives_the_same_result() -> None:
    x, w = _arrays((7, 3), (3, 2))
    whole = func.vmap(lambda a, b: (a @ b).tanh(), in_dims=(0, None))(C.tensor(x), C.tensor(w))
    chunked = func.vmap(lambda a, b: (a @ b).tanh(), in_dims=(0, None), chunk_size=3)(C.tensor(x), C.tensor(w))
    np.testing.assert_allclose(whole._data, chunked._data, rtol=1e-15)  # the product's row blocks differ
    assert chunked.shape == (7, 2)


def test_a_result_no_example_changes_is_every_examples() -> None:
    ours, theirs, fell = _both(lambda x, y: (x.sum(), y * 2), _arrays((3, 2), (4,)), (0, None))
    _same(ours, theirs)
    assert ours[1].shape == (3, 4) and not fell


def test_no_batched_tensor_can_be_caught_or_escape_a_program() -> None:
    """NoRule is not a program's exception: `except Exception` inside f does not swallow the fallback."""
    assert not issubclass(NoRule, __import__("gradcli.errors", fromlist=["GradcliError"]).GradcliError)
    values = run("import torch\nfrom torch.func import vmap\n"
                 "def f(x):\n    try:\n        v = x.sum().item()\n    except Exception:\n        v = -1.0\n"
                 "    return x * v\nr = vmap(f)(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))\n")
    np.testing.assert_allclose(values["r"]._data, [[3.0, 6.0], [21.0, 28.0]])


def test_random_draws_run_per_example() -> None:
    before = len(func.Fallbacks.reasons)
    values = run("import torch\nfrom torch.func import vmap\ntorch.manual_seed(0)\n"
                 "r = vmap(lambda x: x + torch.rand(2), randomness='different')(torch.zeros(3, 2))\n")
    rows = values["r"]._data
    assert rows.shape == (3, 2) and len({tuple(r) for r in rows.tolist()}) == 3
    assert "random draw" in func.Fallbacks.reasons[before]


# -- per-example gradients: grad, jacrev, jacfwd and hessian inside vmap ---------------------------------------

def _predict(lib):
    linear = NF.linear if lib is None else torch.nn.functional.linear
    return lambda w, b, x: linear(x, w, b).tanh()


@pytest.mark.parametrize("dtype, rtol", [("float32", 1e-5), ("float64", 1e-12)])
def test_the_tutorials_two_batched_jacobian_routes_agree_exactly(dtype: str, rtol: float) -> None:
    """The Jacobians/Hessians tutorial's batched part (batch 64, Din 31, Dout 33): vmap(jacrev(predict)) and
    jacrev of the output summed over the batch are the same numbers to the last bit, as in PyTorch (one
    linear layer on every row at once), and both are PyTorch's."""
    w, b, x = _arrays((33, 31), (33,), (64, 31), dtype=dtype)
    ours_args, theirs_args = [C.tensor(a) for a in (w, b, x)], [torch.tensor(a) for a in (w, b, x)]
    ours, theirs = _predict(None), _predict(torch)
    route0 = func.vmap(func.jacrev(ours, argnums=2), in_dims=(None, None, 0))(*ours_args)
    route1 = func.jacrev(lambda *a: ours(*a).sum(0), argnums=2)(*ours_args).movedim(1, 0)
    np.testing.assert_array_equal(route0._data, route1._data)
    assert route0.shape == (64, 33, 31) and route0.dtype == np.dtype(dtype)
    expected = torch.func.vmap(torch.func.jacrev(theirs, argnums=2), in_dims=(None, None, 0))(*theirs_args)
    np.testing.assert_allclose(route0._data, expected.numpy(), rtol=rtol, atol=rtol)
    forward = func.vmap(func.jacfwd(ours, argnums=2), in_dims=(None, None, 0))(*ours_args)
    np.testing.assert_allclose(forward._data, expected.numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-4), ("float64", 1e-12)])
def test_the_tutorials_batched_hessian_is_pytorchs(dtype: str, tol: float) -> None:
    w, b, x = _arrays((33, 31), (33,), (64, 31), dtype=dtype)
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(func.hessian(_predict(None), argnums=2), in_dims=(None, None, 0))(*[C.tensor(a) for a in (w, b, x)])
    assert len(func.Fallbacks.reasons) == before
    theirs = torch.func.vmap(torch.func.hessian(_predict(torch), argnums=2), in_dims=(None, None, 0))(
        *[torch.tensor(a) for a in (w, b, x)])
    assert ours.shape == (64, 33, 31, 31) and ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=tol, atol=tol)


def test_per_example_gradients_of_a_shared_weight_are_each_examples() -> None:
    """vmap(grad(loss), in_dims=(None, 0, 0)): the weight is shared, its gradient is every example's own."""
    w, x, y = _arrays((3, 2), (5, 3), (5, 2))

    def loss(wt, xt, yt):
        return ((xt @ wt).tanh() - yt).pow(2).sum()
    ours = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(*[C.tensor(a) for a in (w, x, y)])
    theirs = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(*[torch.tensor(a) for a in (w, x, y)])
    _same(ours, theirs)
    assert ours.shape == (5, 3, 2)


def _cnn_loss(lib, loss: str):
    nnf = NF if lib is None else torch.nn.functional
    conv = NC if lib is None else torch.nn.functional

    def compute(p, x, y):
        h = conv.max_pool2d(conv.conv2d(x.unsqueeze(0), p["w"], p["b"]).relu(), 2)
        logits = nnf.linear(h.flatten(1), p["fw"], p["fb"])
        if loss == "nll":
            return nnf.nll_loss(logits.log_softmax(1), y.unsqueeze(0))
        return nnf.cross_entropy(logits, y.unsqueeze(0))
    return compute


@pytest.mark.parametrize("loss", ["nll", "cross_entropy"])
def test_per_sample_gradients_of_a_cnn_run_once_with_pytorchs_numbers(loss: str) -> None:
    """The per-sample-gradients tutorial's structure (conv, relu, max-pool, linear, a class loss) in small:
    the kernels are shared, so each example's gradient comes from one grouped convolution."""
    shapes = {"w": (4, 2, 3, 3), "b": (4,), "fw": (5, 4 * 3 * 3), "fb": (5,)}
    params = {k: RNG.standard_normal(s) for k, s in shapes.items()}
    x, y = RNG.standard_normal((6, 2, 8, 8)), RNG.integers(0, 5, 6)
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(func.grad(_cnn_loss(None, loss)), in_dims=(None, 0, 0))(
        {k: C.tensor(v) for k, v in params.items()}, C.tensor(x), C.tensor(y))
    assert len(func.Fallbacks.reasons) == before, func.Fallbacks.reasons[-1:]
    theirs = torch.func.vmap(torch.func.grad(_cnn_loss(torch, loss)), in_dims=(None, 0, 0))(
        {k: torch.tensor(v) for k, v in params.items()}, torch.tensor(x), torch.tensor(y))
    for k in shapes:
        assert ours[k].shape == (6,) + shapes[k]
        np.testing.assert_allclose(ours[k]._data, theirs[k].numpy(), rtol=1e-10, atol=1e-12)


def test_a_batched_input_through_a_shared_convolution_folds_into_its_samples() -> None:
    w, x = _arrays((3, 2, 3, 3), (4, 5, 2, 6, 6))
    ours = func.vmap(lambda t: NC.max_pool2d(NC.conv2d(t, C.tensor(w)), 2))(C.tensor(x))
    theirs = torch.func.vmap(lambda t: torch.nn.functional.max_pool2d(
        torch.nn.functional.conv2d(t, torch.tensor(w)), 2))(torch.tensor(x))
    _same(ours, theirs)


# -- jacrev: every row in one backward --------------------------------------------------------------------------

def test_jacrev_runs_one_backward_over_every_basis_cotangent() -> None:
    (x,) = _arrays((5,))
    fn = lambda t: (t.sin() * t.sum()).exp()  # noqa: E731
    before = len(func.Fallbacks.reasons)
    ours = func.jacrev(fn)(C.tensor(x))
    assert len(func.Fallbacks.reasons) == before
    _same(ours, torch.func.jacrev(fn)(torch.tensor(x)))
    hess = func.hessian(lambda t: (t.sin() * t.sum()).exp().sum())(C.tensor(x))
    _same(hess, torch.func.hessian(lambda t: (t.sin() * t.sum()).exp().sum())(torch.tensor(x)), rtol=1e-10)


def test_jacrev_through_a_vjp_without_a_rule_runs_row_by_row() -> None:
    x, c = _arrays((3,), (3,))
    fn = lambda t, c: _lib(t).cross(t * t, c, dim=0)  # noqa: E731
    before = len(func.Fallbacks.reasons)
    ours = func.jacrev(fn)(C.tensor(x), C.tensor(c))
    _same(ours, torch.func.jacrev(fn)(torch.tensor(x), torch.tensor(c)))
    assert func.Fallbacks.reasons[before:] == [
        "jacrev ran one backward per output element: the op 'cross' has no batching rule"]


# -- what a user sees ---------------------------------------------------------------------------------------------

FALLS_BACK = ("import torch\nfrom torch.func import vmap\nx = torch.ones(3, 2)\nfor _ in range(2):\n"
              "    y = vmap(lambda t: t * t.sum().item())(x)\nprint(y[0])\n")


def test_explain_says_which_vmap_ran_per_example_and_why(cli, tmp_path) -> None:
    path = tmp_path / "fallback.py"
    path.write_text(FALLS_BACK)
    explained = cli("run", str(path), "--explain")
    assert explained.exit_code == 0, explained.stderr
    body = explained.stdout.split("gradcli run")[0]
    assert body.split("\n", 1)[1] == ("tensor([2., 2.])\nnote: vmap(<lambda>) ran once per example: reading a batched "
                                      "tensor's numbers has no batching rule (2 calls)\n")
    plain = cli("run", str(path))
    assert plain.exit_code == 0 and "note:" not in plain.stdout and "batching rule" not in plain.stderr


def test_randomness_modes_are_pytorchs() -> None:
    pre = "import torch\nfrom torch.func import vmap\ntorch.manual_seed(0)\nx = torch.zeros(3, 2)\n"
    err = fails(pre + "r = vmap(lambda t: t + torch.rand(2))(x)\n", ArgumentError)
    assert err.message.startswith("vmap: called random operation while in randomness error mode.")
    same = run(pre + "r = vmap(lambda t: t + torch.rand(2), randomness='same')(x)\n")["r"]._data
    assert same.shape == (3, 2) and (same == same[0]).all() and (same[0] != 0).all()
    assert func.Fallbacks.reasons == []
    theirs = torch.func.vmap(lambda t: t + torch.rand(2), randomness="same")(torch.zeros(3, 2))
    assert bool((theirs == theirs[0]).all())


INDEXING = [
    ("an int and a slice", lambda x: x[1, ::2] * 2),
    ("an ellipsis and None", lambda x: x[..., None, 0]),
    ("an index array", lambda x: x[:, [2, 0, 2]]),
    ("a boolean mask of a dim", lambda x: x[:, torch_or_ours_mask(x)]),
]


def torch_or_ours_mask(x):
    mask = [True, False, True, True]
    return torch.tensor(mask) if isinstance(x, torch.Tensor) else C.tensor(mask)


@pytest.mark.parametrize("name, fn", INDEXING, ids=[c[0] for c in INDEXING])
def test_indexing_runs_once_with_pytorchs_numbers(name, fn) -> None:
    ours, theirs, fell = _both(fn, _arrays((5, 3, 4)))
    _same(ours, theirs)
    assert not fell, func.Fallbacks.reasons


def test_separated_index_arrays_run_per_example() -> None:
    fn = lambda x: x[[0, 1], :, [1, 0]]  # noqa: E731  (NumPy and PyTorch put the indexed dims first)
    ours, theirs, fell = _both(fn, _arrays((2, 3, 2, 2)))
    _same(ours, theirs)
    assert func.Fallbacks.reasons == ["vmap(<lambda>) ran once per example: indexing with separated index arrays "
                                      "has no batching rule"]
    grads = func.vmap(func.grad(lambda t: (t[1:] * t[0]).sum()))(C.tensor(_arrays((3, 4))[0]))
    assert grads.shape == (3, 4) and func.Fallbacks.reasons[1:] == []


def test_a_whole_tensor_max_keeps_pytorchs_tie_rule() -> None:
    """x.max() splits a tie evenly, x.max(dim) gives it to the first: reducing every dim is not the same."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    ours = func.vmap(func.grad(lambda t: t.max()))(C.tensor(x))
    theirs = torch.func.vmap(torch.func.grad(lambda t: t.max()))(torch.tensor(x))
    _same(ours, theirs)
    np.testing.assert_array_equal(ours._data, [[0, 0.5, 0.5], [0.5, 0, 0.5]])


def test_a_write_inside_vmap_happens_as_often_as_the_program_says() -> None:
    """A batched attempt that falls back must not have written already: writes make vmap run per example."""
    values = run("import torch\nfrom torch.func import vmap\ncount = torch.zeros(1)\n"
                 "def f(x):\n    count.add_(1)\n    return x * x.sum().item()\n"
                 "r = vmap(f)(torch.ones(3, 2))\n")
    np.testing.assert_array_equal(values["count"]._data, [3.0])
    assert func.Fallbacks.reasons == ["vmap(f) ran once per example: an in-place write has no batching rule"]


CHECKED = """import torch
from torch.func import vmap, grad, jacrev
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
x = torch.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.3]])
y = vmap(lambda r: (r * w).tanh().sum())(x)
y.sum().backward()
print(w.grad)
g = vmap(grad(lambda r: (r * r.sin()).sum()))(x)
print(g)
j = jacrev(lambda r: (r * r.sin()))(x[0])
print(j)
"""


def test_check_proves_a_backward_through_a_batched_vmap_and_the_transforms(cli, tmp_path) -> None:
    """The recorded graph of a batched call is made of ordinary ops (reshapes, expands, the op itself), so
    --check replays it as any other; vmap(grad(f)) is still judged example by example."""
    path = tmp_path / "checked.py"
    path.write_text(CHECKED)
    result = cli("run", str(path), "--check")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "│ ok     │        1 │    4/4 │" in result.stdout
