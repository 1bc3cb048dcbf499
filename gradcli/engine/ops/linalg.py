"""Linear algebra: matmul, det, slogdet, inverse, solve, solve_triangular, cholesky, cross and einsum, and `variadic`
(one VJP per operand for the ops that take any number of tensors: cat, stack, einsum)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from gradcli.engine import costs
from gradcli.engine.ops.op import Op, product_jvp, transposed_jvp
from gradcli.engine.ops.shape import CAT, _cat_vjps, _stack_vjps


def _lifted_gradient(ns: Any, g: Any, a: Any, b: Any) -> Any:
    """`g` with the axes of 1-D operands put back, as NumPy and PyTorch lift them to matrices.

    Only `ndim` is read from `a` and `b`: the VJP of one operand must not touch the other's data,
    which a node may not have kept.
    """
    gshape = g.shape
    if a.ndim == 1:
        gshape = gshape[:-1] + (1,) + gshape[-1:] if b.ndim > 1 else (1,) + gshape
    if b.ndim == 1:
        gshape = gshape + (1,)
    return ns.reshape(g, gshape)


def _matmul_vjp_a(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    b2 = ns.reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    ga = ns.matmul(_lifted_gradient(ns, g, a, b), ns.transpose(b2, -1, -2))
    return ns.reshape(ga, ga.shape[:-2] + ga.shape[-1:]) if a.ndim == 1 else ga


def _matmul_vjp_b(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    a2 = ns.reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    gb = ns.matmul(ns.transpose(a2, -1, -2), _lifted_gradient(ns, g, a, b))
    return ns.reshape(gb, gb.shape[:-1]) if b.ndim == 1 else gb


def _matmul_forward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a, b)

MATMUL = Op(name="matmul", node="MmBackward0", forward=_matmul_forward, vjps=(_matmul_vjp_a, _matmul_vjp_b),
            jvp=product_jvp, rule="∂(A@B)/∂A = G@Bᵀ, ∂(A@B)/∂B = Aᵀ@G", saves=("b", "a"),
            nests=False, sym=lambda S, a, b: S.matmul(a, b), cost=costs.matmul)


# -- linear algebra (torch.linalg.det ... torch.linalg.cholesky) -----------------------------------
class Singular(ArithmeticError):
    """A factorisation failed (a singular or not positive-definite matrix): the functional API
    words it as PyTorch does. Not a ValueError, which `apply` reads as a shape mistake."""


def _factorising(fn: Callable) -> Callable:
    def forward(*arrays: np.ndarray) -> np.ndarray:
        try:
            return fn(*arrays)
        except np.linalg.LinAlgError:
            raise Singular(fn.__name__) from None
    return forward


def _mT(ns: Any, x: Any) -> Any:
    return ns.transpose(x, -1, -2)


def _matrix_of(ns: Any, v: Any) -> Any:
    """A batch of scalars as a batch of 1x1 matrices, to scale matrices."""
    return ns.reshape(v, tuple(v.shape) + (1, 1))


def _cofactors(ns: Any, a: Any) -> Any:
    """The cofactor matrix, (-1)^(i+j)·det(A without row i and column j): det's gradient at a
    singular A too, and differentiable again (each minor's det is an op of its own)."""
    n = a.shape[-1]
    if n == 1:
        return a * 0.0 + 1.0
    total = None
    for i in range(n):
        for j in range(n):
            rows = np.array([k for k in range(n) if k != i])[:, None]
            cols = np.array([k for k in range(n) if k != j])[None, :]
            unit = np.zeros((n, n), dtype=a.dtype)
            unit[i, j] = (-1) ** (i + j)
            term = _matrix_of(ns, ns.det(ns.index(a, (Ellipsis, rows, cols)))) * unit
            total = term if total is None else total + term
    return total


def _det_vjp(ns: Any, g: Any, out: Any, a: Any) -> Any:
    """g·det(A)·A⁻ᵀ, the cofactor matrix; minor by minor where some matrix is singular."""
    if np.all(np.asarray(out) != 0):
        return _matrix_of(ns, g * out) * _mT(ns, ns.inverse(a))
    return _matrix_of(ns, g) * _cofactors(ns, a)


def _logabsdet_forward(a: np.ndarray) -> np.ndarray:
    return np.linalg.slogdet(a)[1]


def _solve_forward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A X = B; a B with one dimension fewer than A is a (batch of) vector(s), as in PyTorch."""
    if b.ndim == a.ndim - 1:
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _solve_vjp_a(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    gb = ns.solve(_mT(ns, a), g)
    if out.ndim == a.ndim - 1:
        return -ns.reshape(gb, tuple(gb.shape) + (1,)) * ns.reshape(out, tuple(out.shape[:-1]) + (1, out.shape[-1]))
    return -ns.matmul(gb, _mT(ns, out))


def _solve_triangular_forward(a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """A X = B by substitution, reading only A's triangle (what is above or below it may hold anything),
    row by row, batched over the leading dimensions; a zero on the diagonal gives inf or nan, as PyTorch's."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    n = a.shape[-1]
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        done = slice(i + 1, n) if upper else slice(0, i)
        x[..., i, :] = (x[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, done], x[..., done, :])) / \
            a[..., i, i:i + 1]
    return x


def _solve_triangular_vjp_a(ns: Any, g: Any, out: Any, a: Any, b: Any, upper: bool) -> Any:
    """PyTorch's: -(A⁻ᴴ G) Xᴴ, kept to A's triangle (the other entries were never read)."""
    gb = ns.solve_triangular(_mT(ns, a), g, not upper)
    full = -ns.matmul(gb, _mT(ns, out))
    return ns.triu(full, 0) if upper else ns.tril(full, 0)


def _triangle(shape: tuple[int, ...], upper: bool) -> np.ndarray:
    n = shape[-1]
    keep = np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool))
    return np.broadcast_to(keep, shape)


def _solve_triangular_sym(S: Any, a: np.ndarray, b: np.ndarray, upper: bool) -> np.ndarray:
    """The solve of the triangle alone, the batches of A and B broadcast against each other."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(S.masked(a, _triangle(a.shape, upper)), batch + a.shape[-2:])
    return S.solve(a, np.broadcast_to(b, batch + b.shape[-2:]))


def _cholesky_vjp(ns: Any, g: Any, out: Any, a: Any) -> Any:
    """PyTorch's rule: A⁻… = L⁻ᵀ·Φ(Lᵀ·tril(G))·L⁻¹, symmetrised (Φ: the lower triangle, half the diagonal)."""
    n = out.shape[-1]
    inner = ns.matmul(_mT(ns, out), ns.tril(g, 0))
    phi = ns.tril(inner, 0) * (1.0 - 0.5 * np.eye(n, dtype=out.dtype))
    linv = ns.inverse(out)
    ga = ns.matmul(ns.matmul(_mT(ns, linv), phi), linv)
    return (ga + _mT(ns, ga)) * 0.5

DET = Op(name="det", node="LinalgDetBackward0", forward=np.linalg.det, vjps=(_det_vjp,),
         jvp=transposed_jvp, rule="∂det(A)/∂A = det(A)·A⁻ᵀ (the cofactors)", saves=("xo",),
         sym=lambda S, x: S.matrices(x, lambda m: m.det(method="berkowitz")), cost=costs.cubic)
LOGABSDET = Op(name="slogdet", node="LinalgSlogdetBackward0", forward=_logabsdet_forward,
               vjps=(lambda ns, g, o, a: _matrix_of(ns, g) * _mT(ns, ns.inverse(a)),),
               jvp=transposed_jvp, rule="∂log|det A|/∂A = A⁻ᵀ", saves=("x",),
               sym=lambda S, x: S.matrices(x, lambda m: S.log(S.Abs(m.det(method="berkowitz")))), cost=costs.cubic)
INVERSE = Op(name="inverse", node="LinalgInvExBackward0", forward=_factorising(np.linalg.inv),
             vjps=(lambda ns, g, o, a: -ns.matmul(ns.matmul(_mT(ns, o), g), _mT(ns, o)),),
             jvp=transposed_jvp,
             rule="∂A⁻¹ᵀG/∂A = -A⁻ᵀ·G·A⁻ᵀ", saves=("o",), sym=lambda S, x: S.matrices(x, S.inverse_of),
             cost=costs.cubic)
SOLVE = Op(name="solve", node="LinalgSolveExBackward0", forward=_factorising(_solve_forward),
           vjps=(_solve_vjp_a, lambda ns, g, o, a, b: ns.solve(_mT(ns, a), g)),
           jvp=transposed_jvp, rule="X = A⁻¹B: ∂/∂B = A⁻ᵀG, ∂/∂A = -A⁻ᵀG·Xᵀ", saves=("ao", "a"),
           sym=lambda S, a, b: S.solve(a, b), cost=costs.cubic)
SOLVE_TRIANGULAR = Op(
    name="solve_triangular", node="LinalgSolveTriangularBackward0", forward=_solve_triangular_forward,
    vjps=(_solve_triangular_vjp_a, lambda ns, g, o, a, b, upper: ns.solve_triangular(_mT(ns, a), g, not upper)),
    jvp=transposed_jvp, rule="X = T⁻¹B: ∂/∂B = T⁻ᵀG, ∂/∂T = -triangle(T⁻ᵀG·Xᵀ)", saves=("ao", "a"),
    sym=lambda S, a, b, upper: _solve_triangular_sym(S, a, b, upper),
    cost=lambda a, b, upper: costs.cubic(a, b))
CHOLESKY = Op(name="cholesky", node="LinalgCholeskyExBackward0", forward=_factorising(np.linalg.cholesky),
              vjps=(_cholesky_vjp,),
              jvp=transposed_jvp, rule="L = chol(A): Ā = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, symmetrised", saves=("o",),
              sym=lambda S, x: S.matrices(x, S.cholesky_of), kink=lambda K, x: K.asymmetric_kink(x),
              cost=costs.cubic)


def _cross_forward(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    return np.cross(a, b, axis=dim)


def _einsum_forward(*xs: np.ndarray, equation: str) -> np.ndarray:
    return np.einsum(equation, *xs, optimize=len(xs) > 2)


def _einsum_vjps(count: int) -> tuple[Callable, ...]:
    return tuple((lambda i: lambda ns, g, out, *xs, equation: _einsum_vjp(ns, g, xs, i, equation))(i)
                 for i in range(count))

_FRESH = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_vjp(ns: Any, g: Any, xs: tuple, i: int, equation: str) -> Any:
    """∂/∂xᵢ of an einsum is another einsum: of g with the other operands, into xᵢ's subscripts.

    Letters repeated in xᵢ (a diagonal, 'ii->i') get fresh names tied by an identity matrix, and
    letters found only in xᵢ (summed away, 'ij->i') by a vector of ones; both are constants.
    `equation` is explicit ('...->...') with no ellipsis (the functional API expands it).
    """
    ins, result = equation.split("->")
    subs = ins.split(",")
    sizes = {c: n for s, x in zip(subs, xs) for c, n in zip(s, x.shape)}
    target, extra, extra_subs = "", [], []
    fresh = iter(c for c in _FRESH if c not in equation)
    for c in subs[i]:
        if c in target:
            new = next(fresh)
            extra.append(np.eye(sizes[c], dtype=g.dtype))
            extra_subs.append(c + new)
            target += new
        else:
            target += c
    others = [s for k, s in enumerate(subs) if k != i]
    present = set(result).union(*others) if others else set(result)
    for c in dict.fromkeys(subs[i]):
        if c not in present:
            extra.append(np.ones(sizes[c], dtype=g.dtype))
            extra_subs.append(c)
    operands = [g] + [x for k, x in enumerate(xs) if k != i] + extra
    return ns.einsum(",".join([result] + others + extra_subs) + "->" + target, *operands)

CROSS = Op(name="cross", node="LinalgCrossBackward0", forward=_cross_forward,
           vjps=(lambda ns, g, o, a, b, dim: ns.cross(b, g, dim), lambda ns, g, o, a, b, dim: ns.cross(g, a, dim)),
           jvp=product_jvp, rule="∂(a×b)ᵀg/∂a = b×g, ∂/∂b = g×a", saves=("b", "a"),
           nests=False, sym=lambda S, a, b, dim: S.cross(a, b, dim))
EINSUM = Op(name="einsum", node="ViewBackward0", forward=_einsum_forward, vjps=(),
            jvp=product_jvp, rule="∂/∂xᵢ: the einsum of the gradient with the other operands, into xᵢ's subscripts",
            nests=False, sym=lambda S, *xs, equation: S.einsum(equation, *xs), cost=costs.einsum)


def variadic(op: Op, count: int) -> Op:
    """Cat, stack and einsum take any number of tensors: give this call one VJP per input."""
    if op is EINSUM:  # each operand's VJP reads all the others: a node keeps every input
        names = _FRESH.lower()[:count]
        return dataclasses.replace(op, vjps=_einsum_vjps(count), args=names, saves=(names,) * count,
                                   plans=(((True,) * count, False),) * (1 << count))
    vjps = _cat_vjps(count) if op is CAT else _stack_vjps(count)
    return dataclasses.replace(op, vjps=vjps, plans=())


OPS: tuple[Op, ...] = (
    MATMUL, DET, LOGABSDET, INVERSE, SOLVE, SOLVE_TRIANGULAR, CHOLESKY, CROSS, EINSUM,
)
"""This family's primitives, in `TABLE` (the package joins the families)."""
