"""Against PyTorch 2.13: higher-order derivatives of each elementwise primitive (values and whether each order
still requires grad), torch.func transforms and forward-mode tangents."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.engine.creation as C  # noqa: E402  (after the skip)
import gradcli.engine.functions as F  # noqa: E402
from gradcli.engine import forward_ad as FA  # noqa: E402
from gradcli.func import transforms as func  # noqa: E402
from gradcli.engine.autograd import grad  # noqa: E402

UNARY = ["exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "asin", "acos", "atan", "sinh",
         "cosh", "asinh", "atanh", "expm1", "erf", "rsqrt", "reciprocal", "neg", "abs", "relu", "square"]
BINARY_WITH_NUMBER = [("mul", lambda x: x * 3.0), ("pow3", lambda x: 2 * x ** 3), ("pow2", lambda x: x ** 2),
                      ("div", lambda x: 1.5 / x), ("sub", lambda x: 1.0 - x), ("add", lambda x: x + x)]


def _orders(fn, x, lib_grad, n: int = 4) -> list[tuple[float, bool]]:
    out, found = fn(x), []
    for _ in range(n):
        if not out.requires_grad:
            break
        out = lib_grad(out, x)
        found.append((float((out + 0).item()), bool(out.requires_grad)))
    return found


TORCH_UNARY = ["log2", "log10", "exp2", "erfc", "erfinv", "lgamma", "digamma", "sign", "floor", "ceil", "trunc",
               "frac", "clone", "acosh"]
NN_FUNCTIONAL = ["softplus", "silu", "mish", "hardsigmoid", "hardswish", "logsigmoid", "elu", "gelu", "leaky_relu",
                 "hardtanh", "selu", "celu", "softsign"]
WITH_TENSORS = [("maximum", lambda lib, x: lib.maximum(x, x * x)), ("minimum", lambda lib, x: lib.minimum(x, 2 * x)),
                ("where", lambda lib, x: lib.where(x > 0, x ** 3, x.exp())), ("clamp", lambda lib, x: x.clamp(-1, 1))]
"""Every elementwise entry of the op table (the test above covers the rest), by PyTorch's name."""


def _elementwise_cases() -> list:
    import gradcli.nn.functional as NF
    cases = [(n, getattr(F, n), getattr(torch, n)) for n in UNARY + TORCH_UNARY]
    cases += [(n, getattr(NF, n), getattr(torch.nn.functional, n)) for n in NN_FUNCTIONAL]
    cases += [(n, lambda x, fn=fn: fn(F, x), lambda x, fn=fn: fn(torch, x)) for n, fn in WITH_TENSORS]
    cases += [(n, fn, fn) for n, fn in BINARY_WITH_NUMBER]
    return cases


@pytest.mark.parametrize("x0", [0.4, -0.7, 1.3])
@pytest.mark.parametrize("name, ours_fn, theirs_fn", _elementwise_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_four_derivatives_of_each_elementwise_primitive_match_pytorch(name, ours_fn, theirs_fn, x0) -> None:
    theirs_x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    if not np.isfinite(float(theirs_fn(theirs_x))):
        pytest.skip(f"{name} is not defined at {x0}")
    n = 1 if name == "hardsigmoid" else 4  # PyTorch: "derivative for aten::hardsigmoid_backward is not implemented"
    ours = _orders(ours_fn, C.tensor(x0, dtype="float64", requires_grad=True),
                   lambda y, x: grad(y, x, create_graph=True)[0], n)
    theirs = _orders(theirs_fn, theirs_x, lambda y, x: torch.autograd.grad(y, x, create_graph=True)[0], n)
    assert [r for _, r in ours] == [r for _, r in theirs]
    rtol = 1e-8 if name in ("lgamma", "digamma") else 1e-10  # polygamma's series, not PyTorch's
    np.testing.assert_allclose([v for v, _ in ours], [v for v, _ in theirs], rtol=rtol, atol=1e-12)


def _t(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def test_transforms_match_torch_func() -> None:
    x = np.array([0.3, -1.2, 2.0])
    xs = np.array([[0.3, -1.2], [2.0, 0.5], [1.0, 1.0]])

    def ours(t):
        return (t.sin() * t ** 2).sum()

    def theirs(t):
        return (t.sin() * t ** 2).sum()
    ours_x = C.tensor(x, dtype="float64")
    np.testing.assert_allclose(func.grad(ours)(ours_x)._data, torch.func.grad(theirs)(_t(x)).numpy())
    np.testing.assert_allclose(func.hessian(ours)(ours_x)._data, torch.func.hessian(theirs)(_t(x)).numpy())
    np.testing.assert_allclose(func.jacrev(F.tanh)(ours_x)._data, torch.func.jacrev(torch.tanh)(_t(x)).numpy())
    np.testing.assert_allclose(func.jacfwd(func.jacrev(ours))(ours_x)._data,
                               torch.func.jacfwd(torch.func.jacrev(theirs))(_t(x)).numpy())
    np.testing.assert_allclose(func.vmap(func.grad(ours))(C.tensor(xs, dtype="float64"))._data,
                               torch.func.vmap(torch.func.grad(theirs))(_t(xs)).numpy())
    o, t = func.jvp(F.tanh, (ours_x,), (C.tensor(np.ones(3), dtype="float64"),))
    to, tt = torch.func.jvp(torch.tanh, (_t(x),), (torch.ones(3, dtype=torch.float64),))
    np.testing.assert_allclose(t._data, tt.numpy())


def test_forward_mode_tangents_match_pytorch() -> None:
    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])

    def chain(lib, d):
        return lib.tanh(d.exp() * d) .softmax(0) * d.sigmoid() + (d * d).sum()
    with FA.dual_level():
        ours = FA.unpack_dual(chain(F, FA.make_dual(C.tensor(x, dtype="float64"), C.tensor(v, dtype="float64"))))
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        theirs = fwAD.unpack_dual(chain(torch, fwAD.make_dual(_t(x), _t(v))))
    np.testing.assert_allclose(ours.primal._data, theirs.primal.numpy())
    np.testing.assert_allclose(ours.tangent._data, theirs.tangent.numpy(), rtol=1e-12)


@pytest.mark.parametrize("source, printed", [("ORDER", "ORDER_PRINTED"), ("SAVED", "SAVED_PRINTED"),
                                             ("IDENTITY", "IDENTITY_PRINTED")])
def test_the_recorded_hook_outputs_are_pytorchs(source: str, printed: str) -> None:
    from tests import test_graph_hooks as recorded
    lines: list[str] = []
    namespace = {"torch": torch, "print": lambda *args: lines.append(" ".join(map(str, args)))}
    exec(compile(getattr(recorded, source), "<recorded>", "exec"), namespace)  # the test's own program, run by torch
    assert lines == getattr(recorded, printed)


def _f64(a) -> "C.Tensor":
    return C.tensor(np.asarray(a, dtype=np.float64), dtype="float64")


NESTED = {
    "jacfwd": lambda T, f: T.jacfwd(f),
    "hessian": lambda T, f: T.hessian(f),
    "jacfwd(jacfwd)": lambda T, f: T.jacfwd(T.jacfwd(f)),
    "jacrev(jacfwd)": lambda T, f: T.jacrev(T.jacfwd(f)),
    "jacfwd(jacrev)": lambda T, f: T.jacfwd(T.jacrev(f)),
    "grad(sum of jacfwd)": lambda T, f: T.grad(lambda x: T.jacfwd(f)(x).sum()),
    "hvp by jvp(grad)": lambda T, f: lambda x: T.jvp(T.grad(lambda t: f(t).sum()), (x,), (x * 0 + 1,))[1],
    "vmap(jacfwd)": lambda T, f: lambda x: T.vmap(T.jacfwd(f))(x.reshape(1, -1)),
    "jvp(jvp)": lambda T, f: lambda x: T.jvp(lambda a: T.jvp(f, (a,), (a * 0 + 1,))[1], (x,), (x * 0 + 2,))[1],
}


@pytest.mark.parametrize("kind", list(NESTED))
def test_forward_mode_transforms_and_their_nestings_match_torch_func(kind: str) -> None:
    x = np.array([0.3, -1.2, 2.0])

    def f(lib):
        return lambda t: (lib.tanh(t) * t ** 2).softmax(0) * t.sin().sum() + t.exp() / (1 + t * t)
    ours = NESTED[kind](func, f(F))(_f64(x))
    theirs = NESTED[kind](torch.func, f(torch))(_t(x))
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours._data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_jacfwd_of_several_inputs_and_outputs_and_a_closure_that_requires_grad() -> None:
    a, b = np.array([0.5, -1.0]), np.array([2.0, 0.25, 1.5])

    def g(lib, w):
        return lambda p, q: (p.sin()[:, None] * q.exp() * w, (p * p).sum() * q)
    w_ours = C.tensor(np.array([1.5, -0.5, 2.0]), dtype="float64", requires_grad=True)
    w_theirs = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    ours = func.jacfwd(g(F, w_ours), argnums=(0, 1))(_f64(a), _f64(b))
    theirs = torch.func.jacfwd(g(torch, w_theirs), argnums=(0, 1))(_t(a), _t(b))
    for o_out, t_out in zip(ours, theirs):
        for o, t in zip(o_out, t_out):
            np.testing.assert_allclose(o._data, t.detach().numpy(), rtol=1e-12)
    ours[0][1].sum().backward()
    theirs[0][1].sum().backward()
    np.testing.assert_allclose(w_ours.grad._data, w_theirs.grad.numpy(), rtol=1e-12)


def test_the_recorded_dual_tensor_prints_are_pytorchs() -> None:
    from tests import test_forward_ad as recorded
    lines: list[str] = []
    import torch.autograd.forward_ad as fwAD
    namespace = {"torch": torch, "fwAD": fwAD, "print": lambda *args: lines.append(" ".join(map(str, args)))}
    exec(compile(recorded.PRINTED, "<recorded>", "exec"), namespace)  # the test's own program, run by torch
    assert "\n".join(lines) == "\n".join(recorded.PRINTED_LINES)
