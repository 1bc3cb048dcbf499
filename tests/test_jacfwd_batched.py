"""jacfwd in one vectorised forward pass (engine/forward_batched.py): every basis direction's tangent at once.

The vectorised tangent of each kind of forward rule is held against the rule run once per direction (the
definition), for every elementwise op of the table; whole programs are held against torch.func.jacfwd, and
each case asserts it ran vectorised (no fallback recorded) or, where an op has no batched form, that it
fell back, said so, and still agrees.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradcli.engine.creation as C
import gradcli.engine.functions as GF
from gradcli.engine import forward_batched as FB
from gradcli.engine import ops as O
from gradcli.engine.batched import Fallbacks, NoRule
from gradcli.engine.forward_ad import _one_rule
from gradcli.engine.ops.op import diagonal_jvp
from gradcli.func import transforms as func
from gradcli.func.batching import install

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def _fresh_fallbacks() -> None:
    Fallbacks.reasons.clear()
    install()


def _per_direction(op, tangents, out, arrays, params, n):
    return np.stack([_one_rule(op, tuple(None if t is None else t[k] for t in tangents), out, arrays, params)
                     for k in range(n)])


DIAGONAL = [op for op in O.TABLE if op.jvp is diagonal_jvp]
PARAMS = {"polygamma": {"n": 1}, "to": {"dtype": np.float64}, "add_alpha": {"alpha": 2.5},
          "sub_alpha": {"alpha": 2.5}, "addcmul": {"value": 0.5}, "addcdiv": {"value": 0.5},
          "leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 1.5}, "gelu": {"approximate": "tanh"}}


@pytest.mark.parametrize("op", DIAGONAL, ids=[op.name for op in DIAGONAL])
def test_an_elementwise_rule_gives_every_direction_at_once_what_it_gives_each(op) -> None:
    """Inputs broadcast against each other ((2, 1, 4), (4,), (3, 1)); values inside every op's domain."""
    shapes = [(2, 1, 4), (4,), (3, 1)][:len(op.vjps)]
    arrays = tuple(RNG.uniform(0.2, 0.8, s) + (1 if op.name == "acosh" else 0) for s in shapes)
    params = PARAMS.get(op.name, {})
    if op.name == "where":
        arrays = (arrays[0] > 0.5,) + arrays[1:]
    out = np.asarray(op.forward(*arrays, **params))
    n = 5
    tangents = tuple(None if op.vjps[i] is None or arrays[i].dtype == bool else
                     RNG.standard_normal((n,) + np.shape(arrays[i])) for i in range(len(arrays)))
    at_once = FB.tangents(op, tangents, out, arrays, params, n)
    each = _per_direction(op, tangents, out, arrays, params, n)
    assert at_once.shape == each.shape == (n,) + out.shape
    np.testing.assert_allclose(at_once, each, rtol=1e-14, atol=1e-15, equal_nan=True)


def test_a_forward_rule_of_no_known_kind_is_refused_for_the_loop() -> None:
    import dataclasses
    conv = next(op for op in O.TABLE if op.name == "convolution")
    odd = dataclasses.replace(conv, name="odd", jvp=lambda *args, **params: None)
    with pytest.raises(NoRule, match="forward rule of 'odd'"):
        FB.tangents(odd, (None,), np.zeros(()), (), {}, 2)


torch = pytest.importorskip("torch")


def _lib(x):
    import gradcli.engine.functions as F
    return torch if isinstance(x, torch.Tensor) else F


CASES = [
    ("elementwise with a broadcast operand", lambda x, y: (x * y).sin() / (1 + y * y), [(4, 3), (3,)]),
    ("reductions along dims", lambda x: x.sum(-1) * x.mean(0).sum() + x.prod(1), [(3, 4)]),
    ("var, std and norm", lambda x: x.var(0) + x.std(1).sum() + x.norm(dim=1).sum(), [(3, 4)]),
    ("softmax, log_softmax, logsumexp", lambda x: x.softmax(1) + x.log_softmax(0) * x.logsumexp(1, keepdim=True),
     [(3, 4)]),
    ("cumsum and cumprod", lambda x: x.cumsum(0) * x.cumprod(1), [(3, 4)]),
    ("matmul both sides", lambda a, b: (a @ b).tanh() @ b.t(), [(3, 4), (4, 2)]),
    ("views", lambda x: x.t().reshape(-1, 2).permute(1, 0).expand(3, 2, 6).flatten()[2:9], [(4, 3)]),
    ("indexing and cat/stack", lambda x, y: _lib(x).cat([_lib(x).stack([x[1], y], 0), x[:2, :1].flip(0)], 1),
     [(3, 4), (4,)]),
    ("clamp and maximum", lambda x, y: x.clamp(-0.5, 0.5) + _lib(x).maximum(x, y), [(3, 4), (3, 4)]),
]


@pytest.mark.parametrize("argnums", [0, (0,), "all"])
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_jacfwd_runs_once_with_pytorchs_numbers(name, fn, shapes, argnums) -> None:
    arrays = [RNG.standard_normal(s) for s in shapes]
    nums = tuple(range(len(arrays))) if argnums == "all" else argnums
    ours = func.jacfwd(fn, argnums=nums)(*[C.tensor(a) for a in arrays])
    theirs = torch.func.jacfwd(fn, argnums=nums)(*[torch.tensor(a) for a in arrays])
    for o, t in zip(*((ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,)))):
        assert o.shape == tuple(t.shape)
        np.testing.assert_allclose(o._data, t.numpy(), rtol=1e-12, atol=1e-12)
    assert not Fallbacks.reasons, Fallbacks.reasons


def _mlp(lib):
    def predict(weight, bias, x):
        return lib.tanh(x @ weight.t() + bias)
    return predict


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_tutorials_batched_jacobian_and_hessian_by_forward_mode(dtype) -> None:
    w, b, x = (RNG.standard_normal(s).astype(dtype) for s in [(5, 4), (5,), (6, 4)])
    import gradcli.engine.functions as F
    ours_j = func.vmap(func.jacfwd(_mlp(F), argnums=2), in_dims=(None, None, 0))(*map(C.tensor, (w, b, x)))
    ours_h = func.vmap(func.hessian(_mlp(F), argnums=2), in_dims=(None, None, 0))(*map(C.tensor, (w, b, x)))
    tf = torch.func
    theirs_j = tf.vmap(tf.jacfwd(_mlp(torch), argnums=2), in_dims=(None, None, 0))(*map(torch.tensor, (w, b, x)))
    theirs_h = tf.vmap(tf.hessian(_mlp(torch), argnums=2), in_dims=(None, None, 0))(*map(torch.tensor, (w, b, x)))
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert ours_j.shape == (6, 5, 4) and ours_h.shape == (6, 5, 4, 4) and ours_h.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours_j._data, theirs_j.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(ours_h._data, theirs_h.numpy(), rtol=tol, atol=tol)
    assert not Fallbacks.reasons, Fallbacks.reasons


def test_nested_vmap_of_jacfwd() -> None:
    fn = lambda x, y: (x * y).sum(-1).tanh() * x  # noqa: E731
    x, y = RNG.standard_normal((3, 5)), RNG.standard_normal((4, 5))
    ours = func.vmap(func.vmap(func.jacfwd(fn), in_dims=(None, 0)), in_dims=(0, None))(C.tensor(x), C.tensor(y))
    tf = torch.func
    theirs = tf.vmap(tf.vmap(tf.jacfwd(fn), in_dims=(None, 0)), in_dims=(0, None))(torch.tensor(x), torch.tensor(y))
    assert ours.shape == (3, 4, 5, 5)
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert not Fallbacks.reasons, Fallbacks.reasons


def test_a_convolution_runs_once_for_every_direction() -> None:
    import gradcli.nn.conv as NC
    x, w, b = RNG.standard_normal((1, 2, 5, 5)), RNG.standard_normal((3, 2, 3, 3)), RNG.standard_normal(3)
    ours = func.jacfwd(lambda t, k, c: NC.conv2d(t, k, c, padding=1), argnums=(0, 1, 2))(*map(C.tensor, (x, w, b)))
    theirs = torch.func.jacfwd(lambda t, k, c: torch.nn.functional.conv2d(t, k, c, padding=1), argnums=(0, 1, 2))(
        *map(torch.tensor, (x, w, b)))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o._data, t.numpy(), rtol=1e-12, atol=1e-12)
    assert not Fallbacks.reasons, Fallbacks.reasons


def test_an_op_without_a_batched_rule_runs_per_direction_says_so_and_agrees() -> None:
    x = RNG.standard_normal((3, 4))
    ours = func.jacfwd(lambda t: GF.einsum("ij,ij->j", t, t))(C.tensor(x))
    theirs = torch.func.jacfwd(lambda t: torch.einsum("ij,ij->j", t, t))(torch.tensor(x))
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert Fallbacks.reasons == ["jacfwd ran the forward rule of 'einsum' once per direction: the op 'einsum' has "
                                 "no batching rule"]
