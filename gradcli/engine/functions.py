"""The functional API (`gradcli.exp(x)`, `gradcli.matmul(a, b)`, ...) over the op table.

This is where arguments are normalised (dims, shapes, keys) and user mistakes become errors with
PyTorch's text, so the op table stays pure. The module doubles as the namespace VJPs use under
`create_graph=True`: every name `ops.NUMPY` has, this module has with the same signature.
"""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Sequence

import numpy as np

from gradcli.engine import ops as O
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.engine.tensor import (
    ADD,
    DIV,
    MAXIMUM,
    MINIMUM,
    MUL,
    POW,
    POW_TENSOR,
    RPOW,
    SUB,
    Tensor,
    _wrap,
    apply,
    broadcast_shape,
    check_elements,
)


def as_tensor(x: Any, dtype: Any = None) -> Tensor:
    """A Tensor for a Tensor, number or nested list (no copy for a Tensor)."""
    if isinstance(x, Tensor):
        return x
    from gradcli.engine.creation import tensor
    return tensor(x, dtype=dtype)


def as_operand(x: Any, op: O.Op) -> Any:
    """Numbers stay numbers (they are constants in the graph); anything else must be a tensor."""
    if isinstance(x, Tensor) or isinstance(x, (int, float, bool, np.number)):
        return x
    if isinstance(x, (list, tuple, np.ndarray)):
        return as_tensor(x)
    raise ArgumentError(f"{op.name}: unsupported operand of type {type(x).__name__}",
                        hint="operands must be tensors or numbers")


def _dim(d: Any, ndim: int, what: str = "dim") -> int:
    if isinstance(d, Tensor):
        d = d.item()
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
        raise ArgumentError(f"{what} must be an integer, got {d!r}",
                            hint="dimensions are counted from 0, or from -1 for the last one")
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    if not lo <= d <= hi:
        raise ShapeError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})",
                         hint=f"this tensor has {ndim} dimension(s)")
    return int(d) % builtins.max(ndim, 1)


def _dims(dim: Any, ndim: int) -> tuple[int, ...] | None:
    """Reduction dims, sorted and non-negative; None (and, as in PyTorch, `()`) means all of them."""
    if dim is None or isinstance(dim, (list, tuple)) and not dim:
        return None
    if isinstance(dim, (list, tuple)):
        return tuple(sorted({_dim(d, ndim) for d in dim}))
    return (_dim(dim, ndim),)


def _shape_args(shape: Sequence[Any]) -> tuple[int, ...]:
    """Accept `f(2, 3)` and `f((2, 3))` as PyTorch does."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, Tensor):
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise ArgumentError(f"sizes must be integers, got {s!r}", hint="write the shape as integers, e.g. (2, 3)")
        out.append(int(s))
    return tuple(out)


def number_arg(value: Any, fn: str, name: str, integer: bool = False) -> Any:
    """A number argument (`min=`, `fill_value`, `step`, a seed) as PyTorch takes it: a Python number or a
    one-element tensor. Anything else is the user's mistake, named, rather than a failed conversion."""
    if isinstance(value, Tensor) and value._data.size == 1:
        value = value.item()
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, kinds):
        return value
    what = "an integer" if integer else "a number"
    raise ArgumentError(f"{fn}(): argument '{name}' must be {what}, not {_type_name(value)}",
                        hint=f"pass {what} (or a one-element tensor) as '{name}'")


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def size(x: Tensor, dim: Any) -> int:
    """`x.size(dim)`: PyTorch's message for a 0-d tensor, which has no dimension to ask about."""
    if x.ndim == 0:
        raise ShapeError(f"Dimension specified as {dim!r} but tensor has no dimensions",
                         hint="a 0-d tensor has size(); ask x.size() or x.numel()")
    return x._data.shape[_dim(dim, x.ndim)]


def _tensor_arg(x: Any, fn: str) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, list, tuple, np.ndarray, np.number)):
        return as_tensor(x)
    raise ArgumentError(f"{fn}(): argument must be a tensor, not {type(x).__name__}",
                        hint="pass a tensor, a number or a (nested) list of numbers")


# -- elementwise -------------------------------------------------------------------------
def add(a: Any, b: Any) -> Tensor:
    return ADD(a, b)


def sub(a: Any, b: Any) -> Tensor:
    return SUB(a, b)


def mul(a: Any, b: Any) -> Tensor:
    return MUL(a, b)


def div(a: Any, b: Any) -> Tensor:
    return DIV(a, b)


def pow(a: Any, b: Any) -> Tensor:
    if not isinstance(a, Tensor):
        return RPOW(a, b)
    return (POW_TENSOR if isinstance(b, Tensor) else POW)(a, b)


def maximum(a: Any, b: Any) -> Tensor:
    return MAXIMUM(_tensor_arg(a, "maximum"), _tensor_arg(b, "maximum"))


def minimum(a: Any, b: Any) -> Tensor:
    return MINIMUM(_tensor_arg(a, "minimum"), _tensor_arg(b, "minimum"))


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """Select from `a` where `condition`, else `b`; the condition is never differentiated."""
    cond = as_tensor(condition)._data
    if cond.dtype != bool:
        cond = cond.astype(bool)
    a, b = as_operand(a, O.WHERE), as_operand(b, O.WHERE)
    shape = cond.shape
    for x in (a, b):
        if isinstance(x, Tensor):
            shape = broadcast_shape("where", shape, x.shape)
    return apply(O.WHERE, _wrap(cond), a, b)


def neg(x: Any) -> Tensor:
    return Tensor.neg(_tensor_arg(x, "neg"))


def exp(x: Any) -> Tensor:
    return Tensor.exp(_tensor_arg(x, "exp"))


def log(x: Any) -> Tensor:
    return Tensor.log(_tensor_arg(x, "log"))


def log1p(x: Any) -> Tensor:
    return Tensor.log1p(_tensor_arg(x, "log1p"))


def sqrt(x: Any) -> Tensor:
    return Tensor.sqrt(_tensor_arg(x, "sqrt"))


def abs(x: Any) -> Tensor:
    return Tensor.abs(_tensor_arg(x, "abs"))


def sign(x: Any) -> Tensor:
    return Tensor.sign(_tensor_arg(x, "sign"))


def sin(x: Any) -> Tensor:
    return Tensor.sin(_tensor_arg(x, "sin"))


def cos(x: Any) -> Tensor:
    return Tensor.cos(_tensor_arg(x, "cos"))


def tan(x: Any) -> Tensor:
    return Tensor.tan(_tensor_arg(x, "tan"))


def tanh(x: Any) -> Tensor:
    return Tensor.tanh(_tensor_arg(x, "tanh"))


def sigmoid(x: Any) -> Tensor:
    return Tensor.sigmoid(_tensor_arg(x, "sigmoid"))


def relu(x: Any) -> Tensor:
    return Tensor.relu(_tensor_arg(x, "relu"))


def softplus(x: Any) -> Tensor:
    return Tensor.softplus(_tensor_arg(x, "softplus"))


def clamp(x: Any, min: Any = None, max: Any = None) -> Tensor:
    """Bounds are numbers (ClampBackward1) or tensors that broadcast against x (ClampBackward0, which
    passes gradient to the bounds too), as in PyTorch; a missing bound beside a tensor one is ∓inf."""
    if min is None and max is None:
        raise ArgumentError("clamp: at least one of 'min' or 'max' must not be None",
                            hint="e.g. clamp(x, min=0) or clamp(x, -1, 1)")
    x = _tensor_arg(x, "clamp")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo, hi = (_clamp_bound(b, name, default) for b, name, default in ((min, "min", -np.inf), (max, "max", np.inf)))
        return apply(O.CLAMP_TENSOR, x, lo, hi)
    lo, hi = (None if b is None else float(_clamp_bound(b, name, None)) for b, name in ((min, "min"), (max, "max")))
    return apply(O.CLAMP, x, min=lo, max=hi)


def _clamp_bound(bound: Any, name: str, default: float | None) -> Any:
    if bound is None:
        return default
    if isinstance(bound, Tensor) or isinstance(bound, (int, float, np.integer, np.floating)):
        return bound
    raise ArgumentError(f"clamp(): argument '{name}' must be a number or a tensor, not {_type_name(bound)}",
                        hint=f"e.g. clamp(x, min=0.0) or clamp(x, {name}=torch.tensor([...]))")


# -- reductions --------------------------------------------------------------------------
def _reduction(op: O.Op, x: Any, dim: Any, keepdim: bool, fn: str, **extra: Any) -> Tensor:
    x = _tensor_arg(x, fn)
    dims = _dims(dim, x.ndim)
    if x.ndim == 0:
        dims = None
    name = op.node[:-1] + ("0" if dims is None else "1")
    return apply(op, x, dim=dims, keepdim=bool(keepdim), name=name, **extra)


def sum(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _reduction(O.SUM, x, dim, keepdim, "sum")


# PyTorch's names for dtypes in its messages ("Got: Long").
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = _tensor_arg(x, "mean")
    if x.dtype.kind not in "fc":
        raise ValueDomainError(f"mean(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {_TORCH_NAMES.get(x.dtype.name, x.dtype.name)}",
                               hint=f"this tensor is {x.dtype}; make it float first, e.g. x.float() or x.double()")
    return _reduction(O.MEAN, x, dim, keepdim, "mean")


def prod(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _reduction(O.PROD, x, dim, keepdim, "prod")


class MaxMin(NamedTuple):
    """What PyTorch's `max(dim)` returns: the values and where they are."""

    values: Tensor
    indices: Tensor


def _extremum(op: O.Op, x: Any, dim: Any, keepdim: bool, fn: str) -> Tensor | MaxMin:
    x = _tensor_arg(x, fn)
    if isinstance(dim, Tensor):
        return maximum(x, dim) if op is O.MAX else minimum(x, dim)
    if x.numel() == 0:
        raise ValueDomainError(f"{fn}(): expected a non-empty tensor",
                               hint="an empty tensor has no largest or smallest element")
    if dim is None:
        return apply(op, x, dim=None, keepdim=False, name=op.node[:-1] + "1")
    d = _dim(dim, x.ndim)
    values = apply(op, x, dim=(d,), keepdim=bool(keepdim), name=op.node)
    arg = np.argmax if op is O.MAX else np.argmin
    idx = arg(x._data, axis=d)
    if keepdim:
        idx = np.expand_dims(idx, d)
    return MaxMin(values, _wrap(np.asarray(idx)))


def max(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor | MaxMin:
    return _extremum(O.MAX, x, dim, keepdim, "max")


def min(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor | MaxMin:
    return _extremum(O.MIN, x, dim, keepdim, "min")


def _correction(unbiased: bool | None, correction: int | None, fn: str) -> int:
    if correction is not None:
        return number_arg(correction, fn, "correction", integer=True)
    return 0 if unbiased is False else 1


def var(x: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        correction: int | None = None) -> Tensor:
    x = _tensor_arg(x, "var")
    return apply(O.VAR, x, dim=_dims(dim, x.ndim), correction=_correction(unbiased, correction, "var"),
                 keepdim=bool(keepdim))


def std(x: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
        correction: int | None = None) -> Tensor:
    x = _tensor_arg(x, "std")
    return apply(O.STD, x, dim=_dims(dim, x.ndim), correction=_correction(unbiased, correction, "std"),
                 keepdim=bool(keepdim))


def norm(x: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    x = _tensor_arg(x, "norm")
    if isinstance(p, str) and p == "fro":
        p = 2
    if not isinstance(p, (int, float)) or isinstance(p, bool) or p <= 0:
        raise ArgumentError(f"norm(): p must be a positive number, 'fro' or inf, got {p!r}",
                            hint="e.g. x.norm() for the Euclidean norm, x.norm(1), or x.norm(float('inf'))")
    return apply(O.NORM, x, p=float(p), dim=_dims(dim, x.ndim), keepdim=bool(keepdim))


def softmax(x: Any, dim: Any = None) -> Tensor:
    return _normalised(O.SOFTMAX, _tensor_arg(x, "softmax"), dim)


def log_softmax(x: Any, dim: Any = None) -> Tensor:
    return _normalised(O.LOG_SOFTMAX, _tensor_arg(x, "log_softmax"), dim)


def _normalised(op: O.Op, x: Tensor, dim: Any) -> Tensor:
    """A 0-d input is a one-element distribution, as in PyTorch (softmax 1, log_softmax 0)."""
    d = _softmax_dim(x, dim, op.name)
    if x.ndim == 0:
        return reshape(apply(op, reshape(x, 1), dim=0), ())
    return apply(op, x, dim=d)


def _softmax_dim(x: Tensor, dim: Any, fn: str) -> int:
    if dim is None:
        if x.ndim > 1:
            raise ArgumentError(f"{fn}(): dim must be given for a tensor of {x.ndim} dimensions",
                                hint=f"e.g. {fn}(x, dim=1) to normalise each row")
        return 0
    return _dim(dim, x.ndim)


# -- linear algebra ------------------------------------------------------------------------
def matmul(a: Any, b: Any) -> Tensor:
    a, b = _tensor_arg(a, "matmul"), _tensor_arg(b, "matmul")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D",
                         hint="use * for multiplying by a scalar")
    batch = broadcast_shape("matmul", a.shape[:-2], b.shape[:-2]) if a.ndim > 2 or b.ndim > 2 else ()
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            f"{_matmul_mismatch(a.shape, b.shape, batch)}: matmul of shapes {tuple(a.shape)} and {tuple(b.shape)}: "
            f"the first's last dimension ({k_a}) must equal the second's "
            f"{'only' if b.ndim == 1 else 'second-to-last'} dimension ({k_b})",
            hint="transpose one operand (w.T or w.t()) or reshape it so the inner dimensions agree")
    rows = (a.shape[-2],) if a.ndim > 1 else ()
    cols = (b.shape[-1],) if b.ndim > 1 else ()
    check_elements(batch + rows + cols, "the result of matmul")
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


def mm(a: Any, b: Any) -> Tensor:
    a, b = _tensor_arg(a, "mm"), _tensor_arg(b, "mm")
    if a.ndim != 2 or b.ndim != 2:
        raise ShapeError(f"mm(): both arguments must be 2-D, got {a.ndim}-D and {b.ndim}-D",
                         hint="use matmul (or @) for other shapes")
    return matmul(a, b)


def dot(a: Any, b: Any) -> Tensor:
    a, b = _tensor_arg(a, "dot"), _tensor_arg(b, "dot")
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors",
                         hint="dot takes two vectors; use matmul (or @) for matrices")
    if a.shape != b.shape:
        raise ShapeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                         f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively",
                         hint="dot needs two vectors of the same length")
    return matmul(a, b)


def outer(a: Any, b: Any) -> Tensor:
    a, b = _tensor_arg(a, "outer"), _tensor_arg(b, "outer")
    if a.ndim != 1 or b.ndim != 1:
        raise ShapeError(f"outer(): expected two 1-D tensors, got {a.ndim}-D and {b.ndim}-D",
                         hint="flatten them first (x.flatten()), or use matmul for matrices")
    return mul(unsqueeze(a, 1), b)


# -- shapes ----------------------------------------------------------------------------------
def reshape(x: Any, *shape: Any) -> Tensor:
    x = _tensor_arg(x, "reshape")
    dims = _shape_args(shape)
    unknown = [i for i, s in enumerate(dims) if s == -1]
    known = int(np.prod([s for s in dims if s != -1], dtype=np.int64))
    if len(unknown) > 1 or builtins.any(s < -1 for s in dims) or (
            not unknown and known != x.numel()) or (unknown and (known == 0 or x.numel() % known)):
        raise ShapeError(f"shape '{list(dims)}' is invalid for input of size {x.numel()}",
                         hint=f"the new shape must hold exactly {x.numel()} elements (shape {tuple(x.shape)}); "
                              "use -1 for one size to be inferred")
    if unknown:
        dims = tuple(x.numel() // known if s == -1 else s for s in dims)
    return apply(O.RESHAPE, x, shape=dims)


view = reshape


def flatten(x: Any) -> Tensor:
    """PyTorch returns a vector itself, without a node."""
    x = _tensor_arg(x, "flatten")
    return x if x.ndim == 1 else reshape(x, -1)


def _same(x: Tensor, name: str) -> Tensor:
    """A view that changes nothing still gets its node in PyTorch (`v.t()` of a vector is a TBackward0)."""
    return apply(O.RESHAPE, x, shape=x.shape, name=name)


def transpose(x: Any, dim0: int, dim1: int) -> Tensor:
    x = _tensor_arg(x, "transpose")
    d0, d1 = _dim(dim0, x.ndim), _dim(dim1, x.ndim)
    if x.ndim == 0:
        return _same(x, "TransposeBackward0")
    return apply(O.TRANSPOSE, x, dim0=d0, dim1=d1)


def t(x: Any) -> Tensor:
    x = _tensor_arg(x, "t")
    if x.ndim > 2:
        raise ShapeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D",
                         hint="use transpose(x, dim0, dim1) or permute for more dimensions")
    if x.ndim < 2:
        return _same(x, "TBackward0")
    return apply(O.TRANSPOSE, x, dim0=0, dim1=1, name="TBackward0")


def permute(x: Any, *dims: Any) -> Tensor:
    x = _tensor_arg(x, "permute")
    order = tuple(_dim(d, x.ndim) for d in _shape_args(dims))
    if sorted(order) != list(range(x.ndim)):
        raise ShapeError(f"permute(): dims {order} are not a permutation of the {x.ndim} dimensions",
                         hint=f"name each of 0..{x.ndim - 1} exactly once, e.g. permute(1, 0) for a matrix")
    return apply(O.PERMUTE, x, dims=order)


def squeeze(x: Any, dim: Any = None) -> Tensor:
    x = _tensor_arg(x, "squeeze")
    if dim is None:
        return apply(O.RESHAPE, x, shape=tuple(s for s in x.shape if s != 1), name="SqueezeBackward0")
    d = _dim(dim, x.ndim)
    if x.ndim == 0 or x.shape[d] != 1:
        return _same(x, "SqueezeBackward1")
    return apply(O.RESHAPE, x, shape=x.shape[:d] + x.shape[d + 1:], name="SqueezeBackward1")


def unsqueeze(x: Any, dim: int) -> Tensor:
    x = _tensor_arg(x, "unsqueeze")
    d = _dim(dim, x.ndim + 1)
    return apply(O.RESHAPE, x, shape=x.shape[:d] + (1,) + x.shape[d:], name="UnsqueezeBackward0")


def expand(x: Any, *sizes: Any) -> Tensor:
    x = _tensor_arg(x, "expand")
    shape = _shape_args(sizes)
    if len(shape) < x.ndim:
        raise ShapeError(f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
                         f"number of dimensions in the tensor ({x.ndim})",
                         hint=f"give one size per dimension of {tuple(x.shape)} (use -1 to keep one), plus any new "
                              "leading ones")
    lead = len(shape) - x.ndim
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    for i, s in enumerate(x.shape):
        if s != 1 and s != shape[lead + i]:
            raise ShapeError(f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                             f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(shape)}.  "
                             f"Tensor sizes: {list(x.shape)}", hint="only dimensions of size 1 can be expanded")
    check_elements(shape, "the result of expand")
    return apply(O.EXPAND, x, shape=shape)


def _index_key(key: Any) -> tuple[Any, ...]:
    """Normalise an index to NumPy's form, rejecting what NumPy would misread."""
    out = []
    for p in key if isinstance(key, tuple) else (key,):
        if isinstance(p, Tensor):
            p = p._data
        if isinstance(p, list):
            p = np.asarray(p)
        if isinstance(p, np.ndarray):
            if p.dtype.kind == "f":
                raise ArgumentError("tensors used as indices must be long, int, byte or bool tensors",
                                    hint="index with integers, e.g. x[[0, 2]]")
            if p.dtype.kind != "b":
                p = int(p) if p.ndim == 0 else p.astype(np.intp)
        elif isinstance(p, bool) or not isinstance(p, (int, np.integer, slice, type(None), type(Ellipsis))):
            raise ArgumentError(f"index {p!r} is not supported", hint="use integers, slices, lists of integers, "
                                                                    "None or ...")
        out.append(p)
    return tuple(out)


def _index_node(shape: tuple[int, ...], parts: tuple[Any, ...], single: bool) -> str:
    """PyTorch's node name: indexing applies select/slice/unsqueeze left to right, the last one shows.

    Like PyTorch, a slice covering a whole dimension inside a tuple is skipped, and a key that
    changes nothing is an alias.
    """
    if builtins.any(isinstance(p, np.ndarray) for p in parts):
        return "IndexBackward0"
    rest = len(shape) - builtins.sum(1 for p in parts if p is not None and p is not Ellipsis)
    name, dim = "AliasBackward0", 0
    for p in parts:
        if p is Ellipsis:
            dim += rest
        elif p is None:
            name = "UnsqueezeBackward0"
        else:
            if not isinstance(p, slice):
                name = "SelectBackward0"
            elif single or p.indices(shape[dim]) != (0, shape[dim], 1):
                name = "SliceBackward0"
            dim += 1
    return name


def index(x: Any, key: Any) -> Tensor:
    x = _tensor_arg(x, "index")
    k = _index_key(key)
    try:
        x._data[k]
    except IndexError as exc:
        raise ShapeError(str(exc).replace(" axis ", " dimension "), hint=f"the tensor has shape {tuple(x.shape)}; "
                         "indices run from 0 to size-1 (or from -size to -1)") from None
    name = _index_node(x.shape, k, not isinstance(key, tuple))
    if len(k) == 1:
        k = k[0] if not isinstance(k[0], (np.ndarray,)) else k
    return apply(O.INDEX, x, key=k, name=name)


def index_put(g: Any, shape: tuple[int, ...], key: Any) -> Tensor:
    """Scatter-add into zeros: the VJP of indexing, differentiable itself."""
    return apply(O.INDEX_PUT, g, shape=tuple(shape), key=key)


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    xs = [_tensor_arg(x, "cat") for x in _sequence_arg(tensors, "cat")]
    d = _dim(dim, xs[0].ndim)
    shapes = ", ".join(str(tuple(y.shape)) for y in xs)
    hint = f"cat joins along dim {d}; every other dimension must agree (shapes {shapes})"
    for k, x in enumerate(xs[1:], 1):
        if x.ndim != xs[0].ndim:
            raise ShapeError(f"Tensors must have same number of dimensions: got {xs[0].ndim} and {x.ndim}", hint=hint)
        for i, (a, b) in enumerate(zip(xs[0].shape, x.shape)):
            if i != d and a != b:
                raise ShapeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                 f"size {b} for tensor number {k} in the list.", hint=hint)
    return apply(O.variadic(O.CAT, len(xs)), *xs, dim=d)


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    xs = [_tensor_arg(x, "stack") for x in _sequence_arg(tensors, "stack")]
    for i, x in enumerate(xs):
        if x.shape != xs[0].shape:
            raise ShapeError(f"stack expects each tensor to be equal size, but got {list(xs[0].shape)} at entry 0 "
                             f"and {list(x.shape)} at entry {i}",
                             hint="stack puts tensors of one shape side by side; use cat to join along a dimension")
    return apply(O.variadic(O.STACK, len(xs)), *xs, dim=_dim(dim, xs[0].ndim + 1))


def _sequence_arg(tensors: Any, fn: str) -> list:
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ArgumentError(f"{fn}() expects a non-empty list of tensors", hint=f"e.g. {fn}([a, b], dim=0)")
    return list(tensors)


def clone(x: Any) -> Tensor:
    return Tensor.clone(_tensor_arg(x, "clone"))


def to_dtype(x: Any, dtype: Any) -> Tensor:
    x = _tensor_arg(x, "to")
    dt = np.dtype(dtype)
    return x if x.dtype == dt else apply(O.CAST, x, dtype=dt)


cast = to_dtype


# -- for VJPs under create_graph (the tensor twin of ops.NUMPY) -------------------------------
def first_along(mask: Tensor, axis: int) -> Tensor:
    return _wrap(O._first_along(mask._data, axis))


def prod_others(x: Tensor, dim: tuple[int, ...] | None, out: Tensor) -> Tensor:
    """The product of the other elements of each slice, differentiable to any order.

    Without zeros it is out / x. With zeros each slice of n elements becomes an n x n matrix with
    ones on its diagonal, whose row products are exact and built from differentiable ops (O(n²),
    only under create_graph, where a Hessian needs prod's second derivative at a zero).
    """
    if np.all(x._data != 0):
        return _back(out, x, dim) / x
    axes = tuple(range(x.ndim)) if dim is None else dim
    order = tuple(d for d in range(x.ndim) if d not in axes) + axes
    moved = permute(x, order)
    lead = moved.shape[:x.ndim - len(axes)]
    n = int(np.prod(moved.shape[len(lead):], dtype=np.int64))
    rows = expand(unsqueeze(reshape(moved, lead + (n,)), -2), lead + (n, n))
    others = prod(where(np.eye(n, dtype=bool), 1.0, rows), dim=-1)
    return permute(reshape(others, moved.shape), tuple(np.argsort(order)))


def _back(out: Tensor, x: Tensor, dim: tuple[int, ...] | None) -> Tensor:
    return reshape(out, O.reduced_shape(x.shape, dim))
