"""The NumPy facade against NumPy itself: a few hundred expressions, each printed by gradcli and by
Python with real NumPy, the printed text compared exactly (issue 32). The expressions are built from
the allowlist's families (creation, ufuncs, reductions, manipulation, indexing, operators, linalg,
random with a seed), on the arrays published snippets use."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from gradcli.lang.numpy_facade import allowlist
from language_helpers import run

SETUP = ("import numpy as np\nA = np.arange(6).reshape(2, 3)\nB = np.linspace(-1.0, 1.0, 6).reshape(2, 3)\n"
         "C = np.array([[2.0, 1.0], [1.0, 3.0]])\nv = np.array([3.0, -1.0, 2.0])\nm = np.array([True, False, True])\n"
         "P = np.array([0.25, 0.5, 1.0, 2.0])\n")

UNARY = ["abs", "absolute", "negative", "positive", "sign", "sqrt", "cbrt", "square", "exp", "exp2", "expm1",
         "log1p", "sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh", "floor", "ceil", "trunc",
         "rint", "round", "isfinite", "isnan", "signbit", "deg2rad", "rad2deg", "fix", "sinc", "nan_to_num"]
POSITIVE = ["log", "log2", "log10", "reciprocal", "arccosh", "sqrt"]
REDUCTIONS = ["sum", "prod", "mean", "std", "var", "min", "max", "argmin", "argmax", "median", "ptp", "all", "any",
              "cumsum", "cumprod", "count_nonzero", "average", "nansum", "nanmean"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "fmax", "fmin", "arctan2",
          "hypot", "greater", "less_equal", "equal", "not_equal", "copysign", "logaddexp", "heaviside", "mod",
          "floor_divide"]
OPERATORS = ["+", "-", "*", "/", "**", "//", "%", "<", ">=", "==", "!="]

EXPRESSIONS = (
    [f"np.{f}(B)" for f in UNARY] + [f"np.{f}(v)" for f in UNARY[:12]] +
    [f"np.{f}(P)" for f in POSITIVE] +
    [f"np.{f}(B)" for f in REDUCTIONS] + [f"np.{f}(B, axis=0)" for f in REDUCTIONS if f != "ptp"] +
    [f"np.{f}(A, axis=1)" for f in REDUCTIONS if f not in ("ptp",)] +
    [f"B.{f}()" for f in ("sum", "mean", "std", "var", "min", "max", "argmax", "argmin", "prod", "cumsum", "all")] +
    [f"B.{f}(axis=1)" for f in ("sum", "mean", "max", "argmax")] +
    [f"np.{f}(B, v[:1] + 0.5)" for f in BINARY] + [f"np.{f}(A, 2)" for f in BINARY[:10]] +
    [f"B {op} A" for op in OPERATORS] + [f"A {op} 2" for op in OPERATORS] + [f"2.5 {op} P" for op in OPERATORS] +
    [f"[1, 2, 3] {op} v" for op in ("+", "*", "-", "<")] +
    ["-B", "+A", "~m", "abs(B)", "np.round(B, 1)", "B @ A.T", "C @ v[:2]", "v @ v", "m & (v > 0)", "m | ~m",
     "A[0]", "A[-1]", "A[:, 0]", "A[1, 2]", "A[..., 1]", "A[:, None, :].shape", "A[np.newaxis].shape", "A[::-1]",
     "A[:, ::2]", "B[B > 0]", "v[m]", "v[[2, 0]]", "A[[0, 1], [2, 0]]", "A[A % 2 == 0]", "v[np.argsort(v)]",
     "len(A)", "len(v)", "list(v)", "[row.sum() for row in A]", "float(np.array(2.5))", "int(A[1, 2])",
     "A.shape", "A.ndim", "A.size", "A.dtype", "B.dtype", "A.T", "A.T.shape", "A.itemsize", "A.nbytes",
     "A.astype(np.float32)", "A.astype(float).dtype", "B.astype(int)", "A.reshape(3, 2)", "A.reshape(-1)",
     "A.ravel()", "A.flatten()", "A.tolist()", "B.round(2)", "B.clip(-0.5, 0.5)", "A.transpose()", "A.squeeze()",
     "A.copy()", "A.item(3)", "B.argsort()", "np.sort(v)", "A.repeat(2)", "A.swapaxes(0, 1)", "A.take([0, 4])",
     "np.zeros(3)", "np.ones((2, 2))", "np.zeros((2, 3), dtype=int)", "np.full((2, 2), 7.5)", "np.eye(3)",
     "np.identity(2)", "np.arange(5)", "np.arange(1, 10, 3)", "np.arange(0.0, 1.0, 0.25)", "np.arange(4, dtype=int)",
     "np.linspace(0, 1, 5)", "np.logspace(0, 2, 3)", "np.empty((2, 2), 'int64').shape", "np.zeros_like(B)",
     "np.ones_like(A)", "np.full_like(v, 2)", "np.array([[1, 2], [3, 4]])", "np.array([1, 2], dtype=np.float32)",
     "np.asarray([1.5, 2.5])", "np.diag([1, 2])", "np.diag(C)", "np.tri(3)", "np.tril(C)", "np.triu(np.ones((3, 3)))",
     "np.meshgrid(np.arange(2), np.arange(3))", "np.indices((2, 2))", "np.vander([1, 2, 3])",
     "np.vstack([v, v])", "np.hstack([v, v])", "np.stack([v, v], axis=1)", "np.concatenate([A, A])",
     "np.concatenate([A, A], axis=1)", "np.column_stack([v, v])", "np.dstack([v, v]).shape", "np.split(np.arange(6), 3)",
     "np.array_split(np.arange(7), 3)", "np.tile(v, 2)", "np.tile(A, (2, 1))", "np.repeat(v, 2)",
     "np.repeat(A, 2, axis=0)", "np.flip(v)", "np.fliplr(A)", "np.flipud(A)", "np.roll(v, 1)", "np.roll(A, 1, axis=1)",
     "np.rot90(A)", "np.pad(v, 1)", "np.pad(A, ((1, 0), (0, 2)))", "np.append(v, 4)", "np.insert(v, 1, 9)",
     "np.delete(v, 0)", "np.expand_dims(v, 0).shape", "np.squeeze(A[None]).shape", "np.transpose(A)",
     "np.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape", "np.broadcast_to(v, (2, 3))", "np.atleast_2d(v)",
     "np.reshape(A, (3, -1))", "np.ravel(A)", "np.unique([3, 1, 3, 2])", "np.unique([3, 1, 3], return_counts=True)",
     "np.argsort([3, 1, 2])", "np.argmax(v)", "np.argmin(v)", "np.nonzero(A)", "np.where(v > 0)",
     "np.where(B > 0, B, 0)", "np.argwhere(A > 3)", "np.flatnonzero(A > 2)", "np.searchsorted([1, 3, 5], 4)",
     "np.clip(B, -0.5, 0.5)", "np.cumsum(A, axis=0)", "np.diff(v)", "np.diff(A, axis=1)", "np.gradient(v)",
     "np.outer(v, v)", "np.inner(v, v)", "np.dot(C, C)", "np.dot(v, v)", "np.matmul(C, C)", "np.cross(v, v[::-1])",
     "np.kron(C, np.eye(2))", "np.tensordot(A, A.T, axes=1)", "np.einsum('ij,kj->ik', B, B)", "np.einsum('ii', C)",
     "np.trace(C)", "np.diagonal(C)", "np.percentile(v, 50)", "np.quantile(P, [0.25, 0.75])",
     "np.histogram(v, bins=3)", "np.bincount([0, 1, 1, 3])", "np.digitize(v, [0, 1])", "np.corrcoef(B)",
     "np.cov(B)", "np.isclose(v, 3.0)", "np.allclose(B, B)", "np.array_equal(A, A)", "np.isin(v, [2.0, 3.0])",
     "np.intersect1d([1, 2, 3], [2, 3, 4])", "np.union1d([1, 2], [2, 5])", "np.setdiff1d([1, 2, 3], [2])",
     "np.logical_and(m, ~m)", "np.logical_not(m)", "np.any(m)", "np.all(m)", "np.polyfit([0, 1, 2], [1, 3, 5], 1)",
     "np.polyval([2, 1], 3)", "np.interp(1.5, [1, 2], [10, 20])", "np.convolve([1, 2, 3], [0, 1, 0.5])",
     "np.trapezoid([1, 2, 3])", "np.linalg.norm(v)", "np.linalg.norm(C, axis=1)", "np.linalg.det(C)",
     "np.linalg.inv(C)", "np.linalg.solve(C, [1.0, 2.0])", "np.linalg.eigvalsh(C)", "np.linalg.svd(C)[1]",
     "np.linalg.matrix_rank(C)", "np.linalg.matrix_power(C, 3)", "np.linalg.pinv(C)", "np.linalg.qr(C)[1].shape",
     "np.linalg.cholesky(C)", "np.linalg.slogdet(C)", "np.float32(2.5)", "np.float64(1) / 3", "np.int64(7) // 2",
     "[np.float64(1.5)]", "type(A).__name__", "type(B[0, 0]).__name__", "isinstance(A, np.ndarray)",
     "np.pi", "np.e", "np.inf", "np.nan", "np.float32", "np.dtype('float32')", "A.dtype == np.int64",
     "np.result_type(A, B)", "np.promote_types('int32', 'float32')", "np.issubdtype(A.dtype, np.int64)",
     "3 in A", "7 in A", "sorted(v)", "max(v)", "min(A[0])", "sum(v)", "np.max(A) + 1", "A.sum() / A.size"] +
    [f"(np.random.seed(1), np.random.{call})[1]" for call in
     ("rand(3)", "randn(2, 2)", "randint(0, 10, 4)", "uniform(-1, 1, 2)", "normal(0, 1, 3)", "choice(5, 3)",
      "permutation(4)", "random(2)", "binomial(5, 0.5, 3)", "poisson(2.0, 3)", "exponential(1.0, 2)", "beta(2, 3)",
      "standard_normal(3)", "multivariate_normal([0, 0], np.eye(2), 2)", "dirichlet([1, 1, 1])")] +
    [f"np.random.default_rng(0).{call}" for call in
     ("random(3)", "integers(0, 10, 4)", "normal(size=3)", "uniform(0, 1, 2)", "choice(5, 2, replace=False)",
      "permutation(5)", "standard_normal((2, 2))", "exponential(2.0, 2)", "poisson(3.0, 3)", "gamma(2.0, size=2)")]
)


def _numpy_printed(expression: str) -> str:
    """What Python with real NumPy prints for `print(expression)` after SETUP (the oracle)."""
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out), np.errstate(all="ignore"):
        exec(SETUP + f"print({expression})\n", namespace)  # the test's oracle, never gradcli's code path
    np.set_printoptions(**_DEFAULT_PRINTING)
    return out.getvalue().rstrip("\n")


_DEFAULT_PRINTING = np.get_printoptions()


def test_the_differential_set_is_a_few_hundred_expressions():
    assert len(EXPRESSIONS) >= 300 and len(set(EXPRESSIONS)) == len(EXPRESSIONS)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_gradcli_prints_what_numpy_prints(expression):
    expected = _numpy_printed(expression)
    assert "\n".join(run(SETUP + f"print({expression})\n").printed) == expected


def test_printing_options_are_numpys_and_reset_for_the_next_run():
    ran = run("import numpy as np\nnp.set_printoptions(precision=2, suppress=True)\nprint(np.array([1 / 3, 1e-9]))\n")
    assert ran.printed == ["[0.33 0.  ]"]
    assert run("import numpy as np\nprint(np.array([1 / 3]))\n").printed == ["[0.33333333]"]


def test_the_allowlist_names_only_what_numpy_has():
    assert all(hasattr(np, name) for name in allowlist.FUNCTIONS)
    assert all(hasattr(np.linalg, name) for name in allowlist.LINALG)
    assert all(hasattr(np.ndarray, name) for name in allowlist.NDARRAY_METHODS | allowlist.NDARRAY_ATTRIBUTES)
    assert all(hasattr(np.random.RandomState, name) for name in allowlist.RANDOM_LEGACY)
    assert all(hasattr(np.random.Generator, name) for name in allowlist.GENERATOR_METHODS)
    assert not (allowlist.FUNCTIONS | allowlist.NDARRAY_METHODS) & set(allowlist.REFUSED)
