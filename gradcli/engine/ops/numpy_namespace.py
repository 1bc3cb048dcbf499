"""`NUMPY`, the namespace VJPs run against on plain arrays (the fast path; `engine/functions.py` is the
same names on tensors, under create_graph). Hand-written here: the array functions VJPs call that are
not themselves a declared function's forward; `numpy_namespace(TABLE)` adds every declared function's
forward under its name, from the same declarations `engine/functions.py` makes `torch.X` from."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine import narrow, sliding, special
from gradcli.engine.ops.op import Op
from gradcli.engine.ops.elementwise import _softplus_forward
from gradcli.engine.ops.linalg import _cross_forward, _einsum_forward, _solve_forward, _solve_triangular_forward
from gradcli.engine.ops.nn import _gelu_slope, _pad_forward
from gradcli.engine.ops.reductions import _first_along, _prod_others
from gradcli.engine.ops.shape import _diag_embed_forward, _diagonal_forward, _index_put_forward, _roll_forward

_FILL_MAX = 1 << 12
"""Elements up to which a filled gradient, written and then read by the next VJP, costs less than
`np.broadcast_to`'s view (about 9 µs of Python, then read through a zero stride); measured: 1,000
elements 4.5 against 14 µs, 4,000 10 against 14, 16,000 28 against 15."""


class _NumpyNamespace:
    """The fast path for VJPs: plain NumPy with the tensor functions' names and signatures.

    Every declared elementwise function is here as its forward, added below from the same declarations
    `engine.functions` makes its `torch.X` from, so the two namespaces cannot drift apart."""

    @staticmethod
    def flip(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
        return np.flip(x, dims)

    roll = staticmethod(_roll_forward)
    inverse = staticmethod(np.linalg.inv)
    det = staticmethod(np.linalg.det)
    solve = staticmethod(_solve_forward)
    solve_triangular = staticmethod(_solve_triangular_forward)
    tril = staticmethod(np.tril)
    triu = staticmethod(np.triu)
    diagonal = staticmethod(_diagonal_forward)  # the layout of functions.diagonal, which indexes
    diag_embed = staticmethod(_diag_embed_forward)
    cross = staticmethod(_cross_forward)

    @staticmethod
    def einsum(equation: str, *xs: np.ndarray) -> np.ndarray:
        return _einsum_forward(*xs, equation=equation)
    polygamma = staticmethod(special.polygamma)
    matmul = staticmethod(np.matmul)
    permute = staticmethod(np.transpose)
    first_along = staticmethod(_first_along)
    index_put = staticmethod(_index_put_forward)

    @staticmethod
    def constant(value: np.ndarray) -> np.ndarray:
        return value

    @staticmethod
    def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        return narrow.astype(x, dtype)

    @staticmethod
    def reshape(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """The method, not np.reshape: its dispatch wrapper costs more than the reshape itself."""
        return x.reshape(shape)

    @staticmethod
    def transpose(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
        return x.swapaxes(dim0, dim1)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> np.ndarray:
        return np.where(cond, a, b)

    @staticmethod
    def expand(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """A sum's gradient spread over its input. `np.broadcast_to` spends several µs in Python
        building a view; a small array is cheaper filled, a large one stays a view (no memory)."""
        if x.size == 1 and x.ndim <= len(shape) and math.prod(shape) <= _FILL_MAX:
            out = np.empty(shape, x.dtype)
            out.fill(x.reshape(()))
            return out
        return np.broadcast_to(x, shape)

    @staticmethod
    def index(x: np.ndarray, key: Any) -> np.ndarray:
        return x[key]

    @staticmethod
    def prod_others(x: np.ndarray, dim: tuple[int, ...] | None, out: np.ndarray) -> np.ndarray:
        return _prod_others(x, dim, out)

    # torch.nn.functional
    softplus = staticmethod(_softplus_forward)
    constant_pad_nd = staticmethod(_pad_forward)
    im2col = staticmethod(sliding.im2col)
    col2im = staticmethod(sliding.col2im)

    @staticmethod
    def gelu_backward(g: np.ndarray, x: np.ndarray, approximate: str) -> np.ndarray:
        return g * _gelu_slope(x, approximate)


def numpy_namespace(table: tuple[Op, ...]) -> _NumpyNamespace:
    """The namespace, with every function `table` declares as its forward (`NUMPY.asin` is asin's forward,
    `NUMPY.sum(x, dim, keepdim)` sum's) where the forward takes what `torch.X` takes, in the same order."""
    for op in table:
        if op.names and op.names.functions and takes_its_arguments(op):
            setattr(_NumpyNamespace, op.name, staticmethod(op.forward))
    return _NumpyNamespace()


def takes_its_arguments(op: Op) -> bool:
    """Whether the op's forward is called as its `torch.X` is: one input, or the declared positional arguments
    by the same names (a reduction's dim and keepdim; not var's `unbiased`, which its forward has not)."""
    sig = op.names.signature
    if sig is None:
        return True
    if sig.form not in ("reduction", "scan"):
        return False
    declared = tuple(a.name for a in sig.args[1:] if not a.keyword)
    code = getattr(op.forward, "__code__", None)  # read, not `inspect.signature`'d: this runs at every start
    return code is not None and code.co_varnames[1:min(code.co_argcount, len(declared) + 1)] == declared
