"""Every op's SymPy meaning computes what its NumPy forward computes, on random inputs.

The cases are keyed by op name and the test fails for an op of the table without one, so a new
primitive cannot reach `--check` untested.
"""
import math

import numpy as np
import pytest
import sympy as sp

from gradcli.engine import ops as O
from gradcli.engine import sliding
from gradcli.check.calculus import Calculus, FloatEvaluator, float_pow
from gradcli.check.meaning import Meaning

R = np.random.default_rng(7)


def normal(*shape):
    return R.standard_normal(shape)


def positive(*shape):
    return R.uniform(0.5, 2.0, shape)


def unit(*shape):
    return R.uniform(-0.9, 0.9, shape)


_M = R.standard_normal((3, 3))
SPD = _M @ _M.T + np.eye(3)


def binary(a, b):
    return [((a, b), {})]


# name -> list of (inputs, params); array inputs become symbols, Python numbers stay constants
CASES = {
    "add": binary(normal(2, 3), normal(3)) + [((normal(2, 3), 2.5), {})],
    "sub": binary(normal(2, 3), normal(2, 1)) + [((1.5, normal(3)), {})],
    "mul": binary(normal(2, 3), normal(3)) + [((normal(4), 0.1), {})],
    "div": binary(normal(2, 3), positive(3)) + [((2.0, positive(3)), {})],
    "pow": binary(positive(2, 3), normal(3)) + [((normal(3), 2), {}), ((positive(3), 0.5), {}), ((2.0, normal(3)), {})],
    "maximum": binary(normal(2, 3), normal(3)),
    "minimum": binary(normal(2, 3), normal(2, 1)),
    "where": [((normal(2, 3) > 0, normal(2, 3), normal(3)), {}), ((np.array([True, False]), normal(2), 0.0), {})],
    "matmul": binary(normal(2, 3), normal(3, 4)) + binary(normal(3), normal(3, 2)) + binary(normal(2, 3), normal(3))
    + binary(normal(3), normal(3)) + binary(normal(2, 2, 3), normal(3, 2)),
    "clamp": [((normal(2, 3),), {"min": -0.5, "max": 0.5}), ((normal(4),), {"min": 0.1}), ((normal(4),), {"max": 0.0})],
    "clamp_tensor": [((normal(2, 3), normal(3) - 1, normal(2, 1) + 1), {}), ((normal(4), -np.inf, normal(4)), {}),
                     ((normal(4), normal(4), normal(4)), {})],
    "sum": [((normal(2, 3),), {"dim": None, "keepdim": False}), ((normal(2, 3, 2),), {"dim": (0, 2), "keepdim": True})],
    "mean": [((normal(2, 3),), {"dim": None, "keepdim": False}), ((normal(2, 3),), {"dim": (1,), "keepdim": False})],
    "max": [((normal(2, 3),), {"dim": None, "keepdim": False}), ((normal(2, 6),), {"dim": (1,), "keepdim": True})],
    "min": [((normal(7),), {"dim": None, "keepdim": False}), ((normal(2, 3),), {"dim": (0,), "keepdim": False})],
    "prod": [((normal(2, 3),), {"dim": None, "keepdim": False}), ((normal(2, 3),), {"dim": (1,), "keepdim": True})],
    "var": [((normal(2, 4),), {"dim": None, "correction": 1, "keepdim": False}),
            ((normal(2, 4),), {"dim": (1,), "correction": 0, "keepdim": True})],
    "std": [((normal(2, 4),), {"dim": (0,), "correction": 1, "keepdim": False})],
    "norm": [((normal(2, 3),), {"p": p, "dim": d, "keepdim": False})
             for p in (2.0, 1.0, math.inf, 3.0, -math.inf, -1.5) for d in (None, (1,))],
    "softmax": [((normal(2, 4),), {"dim": 1}), ((normal(3, 2),), {"dim": 0})],
    "log_softmax": [((normal(2, 4),), {"dim": 1})],
    "reshape": [((normal(2, 3),), {"shape": (3, 2)}), ((normal(6),), {"shape": (1, 6)})],
    "transpose": [((normal(2, 3, 4),), {"dim0": 0, "dim1": 2})],
    "permute": [((normal(2, 3, 4),), {"dims": (2, 0, 1)})],
    "expand": [((normal(1, 3),), {"shape": (2, 3)}), ((normal(3),), {"shape": (4, 3)})],
    "index": [((normal(4, 3),), {"key": (slice(1, 3), 2)}), ((normal(5),), {"key": (np.array([0, 0, 4]),)}),
              ((normal(3, 3),), {"key": (1, 1)}), ((normal(2, 3),), {"key": (normal(2, 3) > 0,)})],
    "index_put": [((normal(3),), {"shape": (4,), "key": (np.array([0, 0, 2]),)}),
                  ((normal(2),), {"shape": (2, 3), "key": (slice(None), 1)})],
    "cat": [((normal(2, 3), normal(1, 3)), {"dim": 0}), ((normal(2, 1), normal(2, 2), normal(2, 3)), {"dim": 1})],
    "stack": [((normal(2), normal(2)), {"dim": 1})],
    "to": [((normal(2, 3),), {"dtype": np.dtype(np.float64)})],
    "polygamma": [((positive(2, 3),), {"n": 1}), ((normal(4),), {"n": 3})],
    "logit": [((unit(2, 3) * 0.5 + 0.5,), {}), ((unit(2, 3) * 0.5 + 0.5,), {"eps": 0.3})],
    "round": [((normal(2, 3) * 3,), {}), ((normal(2, 3),), {"decimals": 2})],
    "atan2": binary(normal(2, 3), normal(3)),
    "hypot": binary(normal(2, 3), normal(2, 1)),
    "fmod": binary(normal(2, 3) * 3, positive(3)) + [((normal(4) * 3, -0.7), {})],
    "remainder": binary(normal(2, 3) * 3, -positive(3)) + [((normal(4) * 3, 0.7), {})],
    "div_trunc": binary(normal(2, 3) * 3, positive(3)) + [((normal(4) * 3, -0.7), {})],
    "div_floor": binary(normal(2, 3) * 3, -positive(3)) + [((normal(4) * 3, 0.7), {})],
    "add_alpha": [((normal(2, 3), normal(3)), {"alpha": 2.5}), ((normal(4), 0.5), {"alpha": -3})],
    "sub_alpha": [((normal(2, 3), normal(3)), {"alpha": 2.5}), ((normal(4), 0.5), {"alpha": -3})],
    "xlogy": binary(normal(2, 3), positive(3)) + [((np.array([0.0, 1.5]), positive(2)), {})],
    "fmax": binary(normal(2, 3), normal(3)),
    "fmin": binary(normal(2, 3), normal(2, 1)),
    "lerp": [((normal(2, 3), normal(3), normal(2, 3)), {}), ((normal(3), normal(3), 0.25), {})],
    "addcmul": [((normal(2, 3), normal(3), normal(2, 1)), {"value": 0.5})],
    "addcdiv": [((normal(3), normal(2, 3), positive(2, 3)), {"value": 2})],
    "logsumexp": [((normal(2, 3),), {"dim": (1,), "keepdim": False}),
                  ((normal(2, 3, 2),), {"dim": None, "keepdim": True})],
    "amax": [((normal(2, 3),), {"dim": (0, 1), "keepdim": False}), ((normal(2, 3),), {"dim": (1,), "keepdim": True})],
    "amin": [((normal(2, 3),), {"dim": None, "keepdim": False})],
    "median": [((normal(2, 3),), {"at": 4})],
    "cumsum": [((normal(2, 3),), {"dim": 1}), ((normal(3, 2),), {"dim": 0})],
    "cumprod": [((normal(2, 3),), {"dim": 1})],
    "flip": [((normal(2, 3),), {"dims": (0, 1)})],
    "roll": [((normal(2, 3),), {"shifts": (1, -1), "dims": (0, 1)}), ((normal(2, 3),), {"shifts": (4,), "dims": None})],
    "repeat": [((normal(2, 3),), {"repeats": (2, 1, 3)})],
    "tril": [((normal(3, 3),), {"diagonal": 0}), ((normal(2, 3, 4),), {"diagonal": -1})],
    "triu": [((normal(3, 4),), {"diagonal": 1})],
    "diag_embed": [((normal(3),), {"offset": 0, "dim1": 0, "dim2": 1}), ((normal(2, 3),), {"offset": -1, "dim1": 1,
                                                                                          "dim2": 2})],
    "scatter": [((normal(3, 2), normal(2, 2)), {"key": (np.array([[2, 0]]), np.array([[0, 1]]))}),
                ((normal(3, 2), 0.5), {"key": (np.array([[1]]), np.array([[0]]))})],
    "scatter_add": [((normal(3, 2), normal(2, 2)), {"key": (np.array([[2, 2], [0, 2]]), np.array([[0, 1], [0, 1]]))})],
    "cross": [((normal(2, 3), normal(3)), {"dim": -1}), ((normal(3, 2), normal(3, 2)), {"dim": -2})],
    "einsum": [((normal(2, 3), normal(3, 4)), {"equation": "ij,jk->ik"}), ((normal(3, 3),), {"equation": "ii->"}),
               ((normal(2), normal(3), normal(2)), {"equation": "i,j,k->ijk"})],
    "det": [((normal(3, 3),), {}), ((normal(2, 2, 2),), {})],
    "slogdet": [((normal(3, 3),), {})],
    "inverse": [((normal(2, 2) + 2 * np.eye(2),), {}), ((normal(2, 3, 3) + 2 * np.eye(3),), {})],
    "solve": [((normal(2, 2) + 2 * np.eye(2), normal(2)), {}), ((normal(3, 3) + 2 * np.eye(3), normal(3, 2)), {})],
    "solve_triangular": [((normal(3, 3) + 2 * np.eye(3), normal(3, 2)), {"upper": False}),
                         ((normal(2, 2, 2) + 2 * np.eye(2), normal(2, 2)), {"upper": True}),
                         ((normal(2, 2) + 2 * np.eye(2), normal(3, 2, 1)), {"upper": False})],
    "cholesky": [((SPD,), {})],
    "_standard_gamma": [((np.array([0.5, 2.0]), np.array([0.3, 1.7])), {})],
    "_sample_dirichlet": [((np.array([[0.5, 2.0]]), np.array([[0.2, 0.8]])), {})],
}
UNARY_DOMAIN = {"log": positive, "sqrt": positive, "log1p": positive, "tan": lambda *s: R.uniform(-1, 1, s),
                "asin": unit, "acos": unit, "atanh": unit, "erfinv": unit, "acosh": lambda *s: positive(*s) + 1.0,
                "log2": positive, "log10": positive, "rsqrt": positive, "lgamma": positive, "digamma": positive,
                **dict.fromkeys(("floor", "ceil", "trunc", "frac"), lambda *s: normal(*s) * 3)}
# torch.nn.functional
CASES.update({
    "hardtanh": [((normal(2, 3),), {"min_val": -0.5, "max_val": 0.5})],
    "leaky_relu": [((normal(2, 3),), {"negative_slope": 0.2})],
    "elu": [((normal(2, 3),), {"alpha": 0.7, "scale": 1.1, "input_scale": 0.5})],
    "gelu": [((normal(2, 3),), {"approximate": "none"}), ((normal(4),), {"approximate": "tanh"})],
    "gelu_backward": [((normal(2, 3), normal(3)), {"approximate": "none"}),
                      ((normal(4), normal(4)), {"approximate": "tanh"})],
    "softplus": [((normal(2, 3),), {}), ((normal(4) * 3,), {"beta": 2.0, "threshold": 20.0})],
    "addmm": [((normal(2), normal(3, 4), normal(4, 2)), {})],
    "pad": [((normal(2, 3),), {"pad": (1, -1, 0, 2), "value": 0.5})],
    "weight_norm_interface": [((normal(2, 3), normal(2, 1)), {"dim": 0}), ((normal(2, 2, 3), normal(1, 1, 3)), {"dim": 2})],
    "layer_norm": [((normal(2, 3), normal(3), normal(3)), {"count": 1, "eps": 1e-5}),
                   ((normal(2, 2, 2), 1.0, 0.0), {"count": 2, "eps": 1e-5})],
    "batch_norm": [((normal(3, 2, 2), normal(2), normal(2)), {"eps": 1e-5}),
                   ((normal(4, 2), 1.0, 0.0), {"eps": 1e-3, "mean": normal(2), "var": positive(2)})],
    "mse_loss": [((normal(2, 3), normal(3)), {"reduction": r}) for r in ("mean", "sum", "none")],
    "smooth_l1_loss": [((normal(2, 3), normal(2, 3)), {"reduction": "mean", "beta": 0.5})],
    "huber_loss": [((normal(2, 3), normal(2, 3)), {"reduction": "none", "delta": 0.5})],
    "nll_loss": [((normal(3, 4),), {"target": np.array([0, 3, 1]), "weight": positive(4), "ignore_index": 1,
                                    "reduction": r}) for r in ("mean", "sum", "none")]
    + [((normal(4),), {"target": np.array(2), "weight": None, "ignore_index": -100, "reduction": "mean"})],
    "binary_cross_entropy": [((R.uniform(0.1, 0.9, (2, 3)), R.uniform(0, 1, (2, 3))),
                              {"weight": positive(3), "reduction": "mean"})],
    "binary_cross_entropy_with_logits": [((normal(2, 3), R.uniform(0, 1, (2, 3))),
                                          {"weight": None, "pos_weight": positive(3), "reduction": "sum"})],
})
# sliding windows (engine/sliding.py)
_POOLED = normal(1, 2, 4, 5)
CASES.update({
    "unfold": [((normal(1, 2, 3, 3),), {"kernel": (2, 2), "dilation": (1, 1), "padding": ((1, 1), (0, 0)),
                                        "stride": (1, 2)})],
    "fold": [((normal(1, 8, 4),), {"output_size": (3, 3), "kernel": (2, 2), "dilation": (1, 1),
                                   "padding": ((0, 0), (0, 0)), "stride": (1, 1)})],
    "convolution": [((normal(1, 2, 4, 4), normal(4, 1, 2, 2), normal(4)), {"stride": (1, 2), "padding": ((1, 0), (0, 1)),
                                                                          "dilation": (1, 1), "groups": 2}),
                    ((normal(2, 1, 5), normal(2, 1, 2), 0.0), {"stride": (2,), "padding": ((0, 0),),
                                                               "dilation": (2,), "groups": 1})],
    "max_pool": [((_POOLED,), {"key": sliding.max_pool_at(_POOLED, (2, 2), (1, 1), ((1, 1), (0, 0)), (2, 2)),
                               "kernel": (2, 2), "dilation": (1, 1), "padding": ((1, 1), (0, 0)), "stride": (2, 2)})],
    "avg_pool": [((normal(1, 2, 4, 4),), {"kernel": (2, 2), "padding": ((1, 1), (1, 1)), "stride": (2, 2)}),
                 ((normal(1, 1, 3, 4),), {"kernel": (2, 2), "padding": ((0, 1), (1, 1)), "stride": (2, 2),
                                          "divisor": np.array([[1.0, 2.0, 1.0], [3.0, 4.0, 2.0]])})],
})
UNARY_DOMAIN = {"log": positive, "sqrt": positive, "log1p": positive, "tan": lambda *s: R.uniform(-1, 1, s)}


def cases(op):
    """An op's own cases, else what its declaration's form implies (so a declared function needs none here)."""
    if op.name in CASES:
        return CASES[op.name]
    form = op.names.signature.form if op.names and op.names.signature else None
    if form == "binary":
        return [((normal(2, 3), normal(2, 3)), {}), ((normal(2, 3), normal(3)), {})]
    if form == "reduction":
        return [((normal(2, 3),), {}), ((normal(2, 3),), {"dim": (1,), "keepdim": True})]
    return [((UNARY_DOMAIN.get(op.name, normal)(2, 3),), {}), ((np.array(25.0),), {})]


def test_every_op_has_a_meaning_and_a_case():
    for op in O.TABLE:
        assert op.sym is not None, op.name
        assert cases(op), op.name
    assert set(CASES) <= {op.name for op in O.TABLE}


def evaluate(op, inputs, params):
    """The op's SymPy meaning at symbols standing for the array inputs, evaluated at their values."""
    S = Meaning()
    args, point = [], {}
    for n, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            syms = np.empty(x.shape, dtype=object)
            for idx in np.ndindex(*x.shape):
                syms[idx] = sp.Symbol(f"a{n}_{'_'.join(map(str, idx))}", real=True)
                point[syms[idx]] = float(x[idx])
            args.append(syms)
        else:
            args.append(S.constant(x))
    if op in (O.CAT, O.STACK, O.EINSUM):
        op = O.variadic(op, len(inputs))
    result = S.as_array(op.sym(S, *args, **params))
    ev = FloatEvaluator(point)
    return np.vectorize(lambda e: ev(e) if isinstance(e, sp.Basic) else float(e), otypes=[float])(result) \
        if result.size else result.astype(float)


@pytest.mark.parametrize("op", O.TABLE, ids=lambda op: op.name)
def test_meaning_agrees_with_forward(op):
    for inputs, params in cases(op):
        want = np.asarray(op.forward(*inputs, **params), dtype=float)
        got = evaluate(op, inputs, params)
        assert got.shape == want.shape, (op.name, params)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"{op.name} {params}")


@pytest.mark.parametrize("op", [o for o in O.TABLE if o.name in (
    "exp", "log", "sin", "cos", "tan", "tanh", "abs", "sigmoid", "softplus", "log_softmax", "softmax", "prod",
    "var", "std", "norm", "max", "pow", "div", "matmul", "clamp")], ids=lambda op: op.name)
def test_pruned_derivatives_equal_sympys_own(op):
    """Calculus.diff (free-symbol pruning, its own statement of SymPy's function rules) is SymPy's derivative."""
    inputs, params = cases(op)[0]
    S = Meaning()
    x = inputs[0]
    syms = np.array([sp.Symbol(f"s{k}", real=True) for k in range(x.size)], dtype=object).reshape(x.shape)
    out = S.as_array(op.sym(S, syms, *[S.constant(v) for v in inputs[1:]], **params))
    calc = Calculus()
    point = {s: float(v) for s, v in zip(syms.flat, x.flat)}
    ev = FloatEvaluator(point)
    for e in out.flat:
        for s in list(syms.flat)[:3]:
            mine = ev(sp.Add(*calc.pieces(e, s, {})))
            theirs = float(sp.diff(e, s).xreplace({k: sp.Float(v) for k, v in point.items()}).evalf())
            assert mine == pytest.approx(theirs, rel=1e-9, abs=1e-12)


def test_known_floats_compute_like_the_forward():
    """Leaf elements held at their values take the float fast path with float64 edge cases."""
    S = Meaning()
    assert S.exp(1000.0) == math.inf
    assert math.isnan(S.log(-1.0)) and S.log(0.0) == -math.inf
    assert S.div(1.0, 0.0) == math.inf and math.isnan(S.div(0.0, 0.0))
    assert math.isnan(float_pow(-8.0, 1 / 3))
    assert S.Max(2.0, sp.Integer(3)) == 3.0
    assert isinstance(S.mul(2.0, sp.Symbol("x")), sp.Expr)
    assert S.total([1.0, 2.0]) == 3.0


def test_constants_are_exact_when_short():
    S = Meaning()
    assert S.number(0.1) == sp.Rational(1, 10)
    assert S.number(np.float32(0.1)) == sp.Rational(1, 10)
    assert S.number(3.0) == sp.Integer(3) and S.number(True) == 1
    assert S.number(0.123456789) == sp.Rational(*0.123456789.as_integer_ratio())
    assert Meaning(exact=True).fixed(0.123456789) == S.number(0.123456789)
    assert S.fixed(np.float32(0.5)) == 0.5 and type(S.fixed(0.5)) is float
