"""Linear algebra: matmul and its kinds (mm, bmm, mv, dot, outer, tensordot, kron, einsum) and torch.linalg
(det, slogdet, inverse, solve, cholesky, matrix_power, norms, cross)."""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.ops.op import Composite
from gradcli.errors import ArgumentError, NotAllowedError, ShapeError, ValueDomainError
from gradcli.engine.tensor import Tensor, _wrap, apply, broadcast_shape, check_elements
from gradcli.engine.functions.arguments import _dim, _int, _tensor_arg, _with_dims
from gradcli.engine.functions.elementwise import clone, mul, where
from gradcli.engine.functions.shape import permute, reshape, unsqueeze
from gradcli.engine.functions.arguments import _TORCH_NAMES


# -- linear algebra ------------------------------------------------------------------------
def matmul(input: Any, other: Any) -> Tensor:
    a, b = _tensor_arg(input, "matmul"), _tensor_arg(other, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D",
                         hint="use * for multiplying by a scalar")
    batch = broadcast_shape("matmul", a.shape[:-2], b.shape[:-2]) if a.ndim > 2 or b.ndim > 2 else ()
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            _matmul_mismatch(a.shape, b.shape, batch),
            explanation=f"matmul of shapes {tuple(a.shape)} and {tuple(b.shape)}: the first's last dimension ({k_a}) "
                        f"must equal the second's {'only' if b.ndim == 1 else 'second-to-last'} dimension ({k_b})",
            hint="transpose one operand (w.T or w.t()) or reshape it so the inner dimensions agree")
    rows = (a.shape[-2],) if a.ndim > 1 else ()
    cols = (b.shape[-1],) if b.ndim > 1 else ()
    check_elements(batch + rows + cols, "the result of matmul", np.result_type(a.dtype, b.dtype))
    return apply(O.MATMUL, a, b, name=_MATMUL_NODES.get((builtins.min(a.ndim, 3), builtins.min(b.ndim, 3)),
                                                        "UnsafeViewBackward0"))

# The node PyTorch's matmul leaves on top for each pair of operand ndims (capped at 3); the rest end in a view.
_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4", (2, 2): "MmBackward0",
                 (2, 3): "CloneBackward0"}


def _matmul_mismatch(sa: tuple[int, ...], sb: tuple[int, ...], batch: tuple[int, ...]) -> str:
    """PyTorch's text, which names the kernel its matmul dispatched to (dot, mv, mm, folded mm or bmm)."""
    def mat(rows: int, cols: int) -> str:
        return f"{rows}x{cols}"
    if len(sa) == 1 and len(sb) == 1:
        return (f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the same number of "
                f"elements, but got {sa[0]} and {sb[0]} elements respectively")
    if len(sb) <= 2 and len(sa) >= 2:
        rows = int(np.prod(sa[:-1], dtype=np.int64))
        if len(sb) == 1:
            return f"size mismatch, got input ({rows}), mat ({mat(rows, sa[-1])}), vec ({sb[0]})"
        return f"mat1 and mat2 shapes cannot be multiplied ({mat(rows, sa[-1])} and {mat(*sb)})"
    if len(sa) == 1 and len(sb) == 2:
        return f"mat1 and mat2 shapes cannot be multiplied ({mat(1, sa[0])} and {mat(*sb)})"
    count = int(np.prod(batch, dtype=np.int64))
    return (f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {sa[-1]}] but got: "
            f"[{count}, {sb[-2]}].")


def mm(input: Any, mat2: Any) -> Tensor:
    a, b = _tensor_arg(input, "mm"), _tensor_arg(mat2, "mm")
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"mm(): both arguments must be 2-D, got {a.ndim}-D and {b.ndim}-D",
                         hint="use matmul (or @) for other shapes")
    return matmul(a, b)


def dot(input: Any, tensor: Any) -> Tensor:
    a, b = _tensor_arg(input, "dot"), _tensor_arg(tensor, "dot")
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors",
                         hint="dot takes two vectors; use matmul (or @) for matrices")
    if a.shape != b.shape:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                         f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively",
                         hint="dot needs two vectors of the same length")
    return matmul(a, b)


def outer(input: Any, vec2: Any) -> Tensor:
    a, b = _tensor_arg(input, "outer"), _tensor_arg(vec2, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer(): expected two 1-D tensors, got {a.ndim}-D and {b.ndim}-D",
                         hint="flatten them first (x.flatten()), or use matmul for matrices")
    return mul(unsqueeze(a, 1), b)


# -- linear algebra: torch.linalg ---------------------------------------------------------------
class SignLogAbsDet(NamedTuple):
    """What `torch.linalg.slogdet` returns."""

    sign: Tensor
    logabsdet: Tensor


def _square(x: Any, fn: str) -> Tensor:
    x = _tensor_arg(x, fn)
    if x.ndim < 2:
        raise ShapeError(f"{fn}: The input tensor A must have at least 2 dimensions.",
                         hint="pass a matrix (or a batch of matrices)")
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{fn}: A must be batches of square matrices, but they are {x.shape[-2]} by {x.shape[-1]} "
                         "matrices", hint="these functions need square matrices")
    if x.dtype.kind != "f":
        raise ValueDomainError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                               f"{_TORCH_NAMES.get(x.dtype.name, x.dtype.name)}", hint="make it float, e.g. A.double()")
    return x


def det(x: Any) -> Tensor:
    return apply(O.DET, _square(x, "linalg.det"))


def slogdet(x: Any) -> SignLogAbsDet:
    """(sign, log|det|); the sign is a constant (its gradient is zero)."""
    x = _square(x, "linalg.slogdet")
    return SignLogAbsDet(_wrap(np.asarray(np.linalg.slogdet(x._data)[0])), apply(O.LOGABSDET, x))


def logdet(x: Any) -> Tensor:
    """log det A, nan where det A < 0: PyTorch's own composition (its node is WhereBackward0)."""
    sign, logabs = slogdet(_square(x, "logdet"))
    return where(sign._data < 0, float("nan"), logabs)


def _singular(what: str, fn: str) -> ValueDomainError:
    return ValueDomainError(what, hint=f"{fn} needs an invertible matrix, and det(A) is 0 here")


def _zero_pivot(a: np.ndarray) -> int:
    """LAPACK's report (1-based) of the first zero on U's diagonal in LU with partial pivoting."""
    for m in a.reshape((-1,) + a.shape[-2:]):
        u = m.astype(np.float64).copy()
        for k in range(u.shape[0]):
            p = k + int(np.argmax(np.abs(u[k:, k])))
            if u[p, k] == 0:
                return k + 1
            u[[k, p]] = u[[p, k]]
            u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return a.shape[-1]


def inverse(x: Any) -> Tensor:
    x = _square(x, "linalg.inv")
    try:
        return apply(O.INVERSE, x)
    except O.Singular:
        raise _singular(f"linalg.inv: The diagonal element {_zero_pivot(x._data)} is zero, the inversion could not "
                        "be completed because the input matrix is singular.", "inverse") from None


def solve(a: Any, b: Any) -> Tensor:
    a = _square(a, "linalg.solve")
    b = _with_dims(b, "linalg.solve", "B")
    vector = b.ndim == 1 or b.ndim == a.ndim - 1
    rows = b.shape[-1] if vector else (b.shape[-2] if b.ndim >= 2 else -1)
    if rows != a.shape[-1]:
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                         f"({a.shape[-2]}x{a.shape[-1]} and {rows}x{1 if vector else b.shape[-1]})",
                         hint="B needs as many rows as A")
    try:
        return apply(O.SOLVE, a, b)
    except O.Singular:
        raise _singular("torch.linalg.solve: The solver failed because the input matrix is singular.",
                        "solve") from None


def cholesky(x: Any) -> Tensor:
    x = _square(x, "linalg.cholesky")
    try:
        return apply(O.CHOLESKY, x)
    except O.Singular:
        order = _failing_minor(x._data)
        raise ValueDomainError("linalg.cholesky: The factorization could not be completed because the input is not "
                               f"positive-definite (the leading minor of order {order} is not positive-definite).",
                               hint="Cholesky needs a symmetric positive-definite matrix, e.g. A @ A.T + eye(n)"
                               ) from None


def solve_triangular(a: Any, b: Any, upper: Any = None, *, left: bool = True, unitriangular: bool = False,
                     out: Any = None) -> Tensor:
    """`torch.linalg.solve_triangular(A, B, *, upper)`: A X = B reading only A's upper or lower triangle."""
    if upper is None or not isinstance(upper, (bool, np.bool_)):
        raise ArgumentError('linalg_solve_triangular() missing 1 required positional arguments: "upper"',
                            hint="say which triangle of A holds it: upper=False for a Cholesky factor L")
    if not left or unitriangular or out is not None:
        raise NotAllowedError("linalg.solve_triangular: left=False, unitriangular=True and out= are not built in "
                              "gradcli", hint="transpose to solve from the left: X A = B is Aᵀ Xᵀ = Bᵀ")
    a = _square(a, "linalg.solve_triangular")
    b = _tensor_arg(b, "linalg.solve_triangular")
    if b.ndim < 2:
        raise ShapeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.",
                         hint="a vector b is a one-column matrix: b.unsqueeze(-1)")
    if b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B "
                         f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})",
                         hint="B needs as many rows as A")
    return apply(O.SOLVE_TRIANGULAR, a, b, upper=bool(upper))


def _failing_minor(a: np.ndarray) -> int:
    """The order of the first leading minor whose Cholesky factorisation fails (LAPACK's report)."""
    for m in a.reshape((-1,) + a.shape[-2:]):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                return k
    return a.shape[-1]


def matrix_power(x: Any, n: int) -> Tensor:
    """PyTorch's recipe (repeated squaring, an inverse first for n < 0), so its node names show."""
    x = _square(x, "linalg.matrix_power")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ArgumentError(f"linalg.matrix_power: n must be an integer, got {n!r}", hint="e.g. matrix_power(A, 3)")
    if n == 0:
        from gradcli.engine.creation import eye
        return _wrap(np.broadcast_to(eye(x.shape[-1], dtype=x.dtype)._data, x.shape).copy())
    if n < 0:
        x, n = inverse(x), -n
    if n == 1:
        return clone(x)
    result, z = None, x
    while n:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if n:
            z = matmul(z, z)
    return result


def mv(input: Any, vec: Any) -> Tensor:
    a, v = _tensor_arg(input, "mv"), _tensor_arg(vec, "mv")
    if a.ndim != 2 or v.ndim != 1:
        raise ShapeError(f"vector + matrix @ vector expected, got {v.ndim}, {a.ndim}, {v.ndim}",
                         hint="mv multiplies a matrix by a vector")
    return matmul(a, v)


def tensordot(a: Any, b: Any, dims: Any = 2) -> Tensor:
    """Contract the last `dims` axes of a with the first of b (or the listed pairs), as PyTorch: permute,
    reshape, one matrix product, reshape."""
    a, b = _tensor_arg(a, "tensordot"), _tensor_arg(b, "tensordot")
    if isinstance(dims, (list, tuple)):
        da = [_dim(d, a.ndim) for d in (dims[0] if isinstance(dims[0], (list, tuple)) else [dims[0]])]
        db = [_dim(d, b.ndim) for d in (dims[1] if isinstance(dims[1], (list, tuple)) else [dims[1]])]
    else:
        count = _int(dims, "tensordot's dims")
        if not 0 <= count <= builtins.min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={count}",
                             hint=f"the tensors have {a.ndim} and {b.ndim} dimensions")
        da, db = list(range(a.ndim - count, a.ndim)), list(range(count))
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} and "
                             f"second has size {b.shape[j]} in dim {j}", hint="pair dimensions of the same size")
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da], dtype=np.int64))
    left = reshape(permute(a, free_a + da), (-1, k))
    right = reshape(permute(b, db + free_b), (k, -1))
    return reshape(matmul(left, right), tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b))


def kron(input: Any, other: Any) -> Tensor:
    a, b = _tensor_arg(input, "kron"), _tensor_arg(other, "kron")
    n = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (n - a.ndim) + a.shape)
    b = reshape(b, (1,) * (n - b.ndim) + b.shape)
    ka = reshape(a, tuple(s for d in a.shape for s in (d, 1)))
    kb = reshape(b, tuple(s for d in b.shape for s in (1, d)))
    return apply(O.RESHAPE, mul(ka, kb), shape=tuple(p * q for p, q in zip(a.shape, b.shape)),
                 name="UnsafeViewBackward0")


COMPOSITES: tuple[Composite, ...] = (
    Composite(matmul, ("matmul",), ("matmul",), O.MATMUL),
    Composite(mv, ("mv",), ("mv",), O.MATMUL),
    Composite(kron, ("kron",), ("kron",), O.MUL),
    Composite(det, ("det",), ("det",), O.DET, linalg=("det",)),
    Composite(logdet, ("logdet",), ("logdet",), O.LOGABSDET),
    Composite(slogdet, ("slogdet",), ("slogdet",), O.LOGABSDET, linalg=("slogdet",)),
    Composite(inverse, ("inverse",), ("inverse",), O.INVERSE, linalg=("inv",)),
    Composite(matrix_power, ("matrix_power",), ("matrix_power",), O.MATMUL, linalg=("matrix_power",)),
    Composite(cholesky, ("cholesky",), ("cholesky",), O.CHOLESKY, linalg=("cholesky",)),
    Composite(mm, ("mm",), ("mm",), O.MATMUL),
    Composite(dot, ("dot",), ("dot",), O.MATMUL),
    Composite(outer, ("outer",), ("outer",), O.MUL),
    Composite(tensordot, ("tensordot",), (), O.MATMUL),
    Composite(solve, op=O.SOLVE, linalg=("solve",)), Composite(solve_triangular, op=O.SOLVE_TRIANGULAR, linalg=("solve_triangular",)),
)
"""The torch.X of this family that are also Tensor.X with the same arguments, declared with their names and the
primitive they record: Tensor.X and the language's tables are derived from these (`engine/tensor.py`,
`lang/builtins.py`)."""
