"""Forward-mode AD: dual tensors through chains of primitives, every table entry's JVP rule against
central finite differences of the forward (independent of the VJPs), PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli.engine.creation as C
import gradcli.engine.functions as F
from gradcli.engine import forward_ad as FA
from gradcli.engine import ops as O
from gradcli.engine.tensor import Observe, apply
from gradcli.errors import BackwardError, ShapeError
from tests.language_helpers import fails, run

PRE = "import torch\nimport torch.autograd.forward_ad as fwAD\n"


# -- hostile input first ----------------------------------------------------------------------------------
def test_make_dual_outside_a_level_is_pytorchs_error() -> None:
    assert fails(PRE + "d = fwAD.make_dual(torch.ones(2), torch.ones(2))", BackwardError).message == \
        "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first."


def test_a_tangent_of_another_shape_is_refused() -> None:
    assert "Tensor is of size [2] while the given forward gradient is of size [3]" in fails(
        PRE + "with fwAD.dual_level():\n    d = fwAD.make_dual(torch.ones(2), torch.ones(3))\n", ShapeError).message


def test_an_op_without_a_jvp_rule_is_refused_as_pytorch_refuses_it() -> None:
    no_rule = O.Op(name="no_rule", node="NoRuleBackward0", forward=np.negative, vjps=(None,), rule="-")
    with FA.dual_level():
        d = FA.make_dual(C.tensor([1.0]), C.tensor([1.0]))
        with pytest.raises(BackwardError, match="Trying to use forward AD with no_rule that does not support it"):
            apply(no_rule, d)


def test_no_op_pays_for_forward_ad_outside_a_level() -> None:
    assert not Observe.on and not FA.LEVELS
    with FA.dual_level():
        assert Observe.on
        FA.make_dual(C.tensor([1.0]), C.tensor([1.0]))
    assert not Observe.on and not FA.LEVELS  # tangents are forgotten with the level


def test_a_dual_computation_that_never_ends_hits_the_step_cap() -> None:
    from gradcli.errors import LimitError
    fails(PRE + "with fwAD.dual_level():\n    d = fwAD.make_dual(torch.ones(2), torch.ones(2))\n"
                "    while True:\n        d = d * 1.0\n", LimitError, max_steps=500)


# -- values ---------------------------------------------------------------------------------------------
def test_a_chain_of_primitives_carries_its_tangent() -> None:
    ran = run(PRE + "x = torch.tensor([1.0, 2.0])\nwith fwAD.dual_level():\n"
                    "    dx = fwAD.make_dual(x, torch.tensor([1.0, 0.0]))\n"
                    "    y = (dx.sin() * dx).exp().sum() + (dx @ dx) + dx.softmax(0)[0] + dx.norm()\n"
                    "    p, t = fwAD.unpack_dual(y)\n    q = fwAD.unpack_dual(torch.ones(2)).tangent\n"
                    "    dx.mul_(3)\n    t3 = fwAD.unpack_dual(dx).tangent\n    keep = dx * 3\n"
                    "after = fwAD.unpack_dual(keep).tangent\n", dtype="float64")
    x = np.array([1.0, 2.0])
    s = np.exp(x) / np.exp(x).sum()
    # d/dx0 of each term, by hand
    want = np.exp(np.sin(1.0) * 1.0) * (np.cos(1.0) * 1.0 + np.sin(1.0)) + 2 * 1.0 + s[0] * (1 - s[0]) + 1.0 / np.sqrt(5)
    assert float(ran["t"]) == pytest.approx(want, rel=1e-12)  # PyTorch 2.13 (float32): 5.8492
    assert ran["q"] is None and ran["after"] is None
    np.testing.assert_allclose(ran["t3"]._data, [3.0, 0.0])


def _samples() -> list[tuple[str, object, list[np.ndarray]]]:
    """(name, function of tensors, inputs) for the table's entries, at points away from kinks and poles."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 0.8, (2, 3)), rng.uniform(0.2, 0.8, (2, 3))
    m, n = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3), rng.uniform(-1, 1, (3, 2))
    unary = ["exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid", "softplus", "asin", "acos",
             "atan", "sinh", "cosh", "asinh", "atanh", "log2", "log10", "exp2", "expm1", "erf", "erfc", "erfinv",
             "rsqrt", "reciprocal", "lgamma", "digamma", "neg", "abs", "relu", "square", "logit"]
    cases = [(name, getattr(F, name), [a]) for name in unary]
    cases += [(name, getattr(F, name), [a, b]) for name in
              ("add", "sub", "mul", "div", "pow", "atan2", "hypot", "xlogy", "maximum", "minimum")]
    cases += [("acosh", F.acosh, [a + 1]), ("matmul", F.matmul, [m, n]), ("det", F.det, [m]),
              ("inverse", F.inverse, [m]), ("sum", lambda x: F.sum(x, 1), [a]), ("mean", F.mean, [a]),
              ("prod", F.prod, [a]), ("var", F.var, [a]), ("std", lambda x: F.std(x, 0), [a]), ("norm", F.norm, [a]),
              ("softmax", lambda x: F.softmax(x, 1), [a]), ("log_softmax", lambda x: F.log_softmax(x, 0), [a]),
              ("logsumexp", lambda x: F.logsumexp(x, 1), [a]), ("cumsum", lambda x: F.cumsum(x, 1), [a]),
              ("cumprod", lambda x: F.cumprod(x, 1), [a]), ("transpose", F.t, [a]), ("reshape", lambda x: F.reshape(x, (3, 2)), [a]),
              ("index", lambda x: x[1, 1:], [a]), ("cat", lambda x, y: F.cat([x, y], 1), [a, b]),
              ("stack", lambda x, y: F.stack([x, y]), [a, b]), ("where", lambda x, y: F.where(x > 0.5, x, y), [a, b]),
              ("clamp", lambda x: F.clamp(x, 0.3, 0.6), [a]), ("lerp", lambda x, y: F.lerp(x, y, 0.3), [a, b]),
              ("cross", lambda x, y: F.cross(x, y, dim=1), [a, b]), ("expand", lambda x: x[0].expand(4, 3), [a]),
              ("einsum", lambda x, y: F.einsum("ij,kj->ik", x, y), [a, b]), ("amax", lambda x: F.amax(x, 1), [a]),
              ("flip", lambda x: F.flip(x, (0,)), [a]), ("tril", F.tril, [m]), ("cholesky", F.cholesky, [m @ m.T])]
    return cases


@pytest.mark.parametrize("name, fn, inputs", _samples(), ids=[c[0] for c in _samples()])
def test_each_jvp_rule_agrees_with_finite_differences_of_the_forward(name: str, fn, inputs) -> None:
    rng = np.random.default_rng(1)
    tangents = [rng.uniform(-1, 1, x.shape) for x in inputs]
    if name == "cholesky":  # its domain is symmetric matrices: a direction within it
        tangents = [t + t.T for t in tangents]
    with FA.dual_level():
        duals = [FA.make_dual(C.tensor(x, dtype="float64"), C.tensor(t, dtype="float64")) for x, t in zip(inputs, tangents)]
        got = FA.unpack_dual(fn(*duals)).tangent._data
    h = 1e-6
    plus = fn(*[C.tensor(x + h * t, dtype="float64") for x, t in zip(inputs, tangents)])._data
    minus = fn(*[C.tensor(x - h * t, dtype="float64") for x, t in zip(inputs, tangents)])._data
    np.testing.assert_allclose(got, (plus - minus) / (2 * h), rtol=1e-5, atol=1e-7)


def test_every_table_entry_has_a_jvp_rule() -> None:
    assert [op.name for op in O.TABLE if op.jvp is None] == []


# -- --check proves tangents against SymPy's directional derivative -------------------------------------------
DUAL_SCRIPT = PRE + ("x = torch.tensor([1.0, 2.0])\nwith fwAD.dual_level():\n"
                     "    dx = fwAD.make_dual(x, torch.tensor([1.0, -0.5]))\n    y = (dx.sin() * dx).exp() + dx @ dx\n"
                     "    dx.mul_(2.0)\n    z = dx.tanh()\n    ty = fwAD.unpack_dual(y).tangent\n"
                     "    tz = fwAD.unpack_dual(z).tangent\n")


def _checked(tmp_path):
    from gradcli.check import checker
    from gradcli.program.scripts import run_file
    path = tmp_path / "dual.py"
    path.write_text(DUAL_SCRIPT, encoding="utf-8")
    return run_file(path, checker("symbolic"))


def test_check_proves_tangents_through_a_chain_and_an_in_place_update(tmp_path) -> None:
    result = _checked(tmp_path)
    assert result.status == "ok" and result.checks_passed == 2 and result.checks_failed == 0
    assert [c.line for c in result.checks] == [9, 10]
    assert not FA.Directions.on and not FA.LEVELS  # nothing is followed after the checked run


def test_check_catches_a_wrong_jvp_rule(tmp_path) -> None:
    wrong = lambda op, ts, out, x: 2 * np.cos(x) * ts[0]  # noqa: E731  (twice the true derivative)
    right = O.SIN.jvp
    object.__setattr__(O.SIN, "jvp", wrong)
    try:
        result = _checked(tmp_path)
    finally:
        object.__setattr__(O.SIN, "jvp", right)
    assert result.status == "failed" and result.checks_failed == 1  # y's tangent; z's does not read sin


def test_a_run_without_check_follows_no_shadow() -> None:
    with FA.dual_level() as level:
        y = FA.make_dual(C.tensor([1.0, 2.0]), C.tensor([1.0, 0.0])).sin()
        assert FA.unpack_dual(y).tangent is not None and not level.follow and not level.shadows
    with FA.directions(True), FA.dual_level() as level:
        y = FA.make_dual(C.tensor([1.0, 2.0]), C.tensor([1.0, 0.0])).sin()
        assert level.follow and FA.shadow_of(y) is not None


# -- a custom autograd.Function's jvp ---------------------------------------------------------------------
CUBE_BACKWARD_AND_JVP = '''
    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * t
'''
"""A Function's backward (passing g through, as written) and its jvp (3x²·t): the tests' Cube in both styles."""
CUSTOM = PRE + '''
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x ** 3
''' + CUBE_BACKWARD_AND_JVP + '''
class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g

with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
    t = fwAD.unpack_dual(Cube.apply(d) * 2).tangent
    plain = fwAD.unpack_dual(NoJvp.apply(torch.ones(2))).tangent
'''


def test_a_custom_function_jvp_gives_the_tangent() -> None:
    ran = run(CUSTOM)
    np.testing.assert_allclose(ran["t"]._data, [6.0, 24.0])  # PyTorch: 2 * 3x² * 1
    assert ran["plain"] is None


def test_a_custom_function_without_jvp_is_pytorchs_error() -> None:
    assert fails(CUSTOM + "    NoJvp.apply(d)\n", BackwardError).message == \
        "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."


def test_check_counts_a_custom_jvp_tangent_as_unchecked_never_as_failed(tmp_path) -> None:
    from gradcli.check import checker
    from gradcli.program.scripts import run_file
    path = tmp_path / "custom.py"
    path.write_text(CUSTOM, encoding="utf-8")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and result.checks_failed == 0


# -- dual tensors print as PyTorch prints them (the oracle test runs this program in torch) ------------------
PRINTED = """
with fwAD.dual_level():
    print(str(fwAD.make_dual(torch.tensor(1.5), torch.tensor(0.123456789))))
    print(f"{fwAD.make_dual(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 2.0], [3.0, 4.5]]))}")
    d = fwAD.make_dual(torch.tensor([1.0, 2.0], requires_grad=True), torch.ones(2))
    e = fwAD.make_dual(torch.tensor([1.0]), torch.tensor([1.0]))
    print(str(d), repr([e]), (e * 3,))
    print(fwAD.unpack_dual(e * 3), fwAD.unpack_dual(torch.ones(2)))
    print(str(torch.arange(12.0, dtype=torch.float64) * 1.25))
print(str(e), str(torch.ones(12, requires_grad=True, dtype=torch.float64) * 1.25))
"""
PRINTED_LINES = ["tensor(1.5000, tangent=0.12345679104328156)",
                 "tensor([[1., 2.],\n        [3., 4.]],\n       tangent=tensor([[1.0000, 2.0000],\n        [3.0000, 4.5000]]))",
                 "tensor([1., 2.], grad_fn=<ViewBackward0>, tangent=tensor([1., 1.])) "
                 "[tensor([1.], tangent=tensor([1.]))] (tensor([3.], tangent=tensor([3.])),)",
                 "UnpackedDualTensor(primal=tensor([3.]), tangent=tensor([3.])) "
                 "UnpackedDualTensor(primal=tensor([1., 1.]), tangent=None)",
                 "tensor([ 0.0000,  1.2500,  2.5000,  3.7500,  5.0000,  6.2500,  7.5000,  8.7500,\n"
                 "        10.0000, 11.2500, 12.5000, 13.7500], dtype=torch.float64)",
                 "tensor([1.]) tensor([1.2500, 1.2500, 1.2500, 1.2500, 1.2500, 1.2500, 1.2500, 1.2500, 1.2500,\n"
                 "        1.2500, 1.2500, 1.2500], dtype=torch.float64, grad_fn=<MulBackward0>)"]


def test_dual_tensors_print_as_pytorch_prints_them() -> None:
    ran = run(PRE + PRINTED)
    assert "\n".join(ran.printed) == "\n".join(PRINTED_LINES)
