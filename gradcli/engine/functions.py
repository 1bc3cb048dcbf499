"""The functional API (`gradcli.exp(x)`, `gradcli.matmul(a, b)`, ...) over the op table.

This is where arguments are normalised (dims, shapes, keys) and user mistakes become errors with
PyTorch's text, so the op table stays pure. The module doubles as the namespace VJPs use under
`create_graph=True`: every name `ops.NUMPY` has, this module has with the same signature.
"""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Sequence

import numpy as np

from gradcli.engine import budget, costs
from gradcli.engine import ops as O
from gradcli.engine import views as V
from gradcli.engine.ties import note_order
from gradcli.errors import ArgumentError, BackwardError, ShapeError, ValueDomainError
from gradcli.engine.tensor import (
    ADD,
    DIV,
    MAXIMUM,
    MINIMUM,
    MUL,
    NORM2,
    POW,
    POW_TENSOR,
    RPOW,
    SUB,
    _NUMBER,
    Tensor,
    _general_binary,
    _root,
    _wrap,
    apply,
    GradMode,
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


def ints_arg(value: Any, fn: str, name: str, single: bool = False) -> tuple[int, ...]:
    """A tuple-of-ints argument (`pad`, `normalized_shape`) as PyTorch takes it: a list or tuple of integers
    (or of one-element integer tensors), and with `single` also one integer standing for a 1-tuple."""
    if single and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if not isinstance(value, (list, tuple)):
        raise ArgumentError(f"{fn}(): argument '{name}' must be tuple of ints, not {_type_name(value)}",
                            hint=f"write '{name}' as a tuple of integers, e.g. (1, 1)")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Tensor) and v.dtype.kind in "iu" and v.numel() == 1:
            v = v.item()
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ArgumentError(f"{fn}(): argument '{name}' must be tuple of ints, but found element of type "
                                f"{_type_name(v)} at pos {i}", hint=f"every entry of '{name}' is a whole number")
        out.append(int(v))
    return tuple(out)


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


def _int(v: Any, what: str) -> int:
    """An integer argument (a Python or NumPy integer, or a 1-element integer tensor)."""
    if isinstance(v, Tensor) and v.dtype.kind in "iu" and v.numel() == 1:
        v = v.item()
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
        raise ArgumentError(f"{what} must be an integer, got {v!r}", hint=f"write {what} as a whole number")
    return int(v)


def _number(v: Any, what: str) -> float:
    """A real-number argument (a Python or NumPy number, or a 1-element tensor)."""
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if not isinstance(v, (int, float, np.number)) or isinstance(v, bool):
        raise ArgumentError(f"{what} must be a number, got {v!r}", hint=f"write {what} as a number, e.g. 0.5")
    return float(v)


# -- elementwise -------------------------------------------------------------------------
def _alpha(alpha: Any, fn: str, operands: tuple[Any, Any]) -> Any:
    """add's and sub's `alpha`: a number, and a whole one for integer tensors, as in PyTorch."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)):
        raise ArgumentError(f"{fn}(): argument 'alpha' must be Number, not {type(alpha).__name__}",
                            hint=f"alpha scales the second operand: {fn}(x, y, alpha=2)")
    if not isinstance(alpha, (int, np.integer)) and all(
            v._data.dtype.kind in "iub" if isinstance(v, Tensor) else isinstance(v, (int, np.integer))
            for v in operands):
        raise ArgumentError("For integral input tensors, argument alpha must not be a floating point number.",
                            hint=f"use a whole alpha, or float tensors: {fn}(x.float(), y, alpha=...)")
    return alpha


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if _alpha(alpha, "add", (input, other)) == 1:
        return ADD(input, other)
    return _general_binary(O.ADD_ALPHA, input, other, None, alpha=alpha)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if _alpha(alpha, "sub", (input, other)) == 1:
        return SUB(input, other)
    return _general_binary(O.SUB_ALPHA, input, other, None, alpha=alpha)


def mul(input: Any, other: Any) -> Tensor:
    return MUL(input, other)


_ROUNDED_DIVISIONS = {"trunc": O.DIV_TRUNC, "floor": O.DIV_FLOOR}


def div(input: Any, other: Any, *, rounding_mode: Any = None) -> Tensor:
    if rounding_mode is None:
        return DIV(input, other)
    op = _ROUNDED_DIVISIONS.get(rounding_mode) if isinstance(rounding_mode, str) else None
    if op is None:
        raise ArgumentError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                            f"{rounding_mode!r}", hint="rounding_mode='floor' rounds down, 'trunc' towards zero")
    return _binary(op, input, other, "div")


true_divide = div


def floor_divide(input: Any, other: Any) -> Tensor:
    """`a // b`: PyTorch rounds down and has no derivative for it (a rounded `div` has one: 0)."""
    if GradMode.enabled and any(isinstance(v, Tensor) and v.requires_grad for v in (input, other)):
        raise BackwardError("the derivative for 'floor_divide' is not implemented.",
                            hint="PyTorch's backward through a // b fails so; torch.div(a, b, rounding_mode='floor') "
                                 "rounds the same way and has a gradient (zero), or compute it on .detach()")
    return div(input, other, rounding_mode="floor")


def pow(input: Any, exponent: Any) -> Tensor:
    if not isinstance(input, Tensor):
        return RPOW(input, exponent)
    return (POW_TENSOR if isinstance(exponent, Tensor) else POW)(input, exponent)


def maximum(input: Any, other: Any) -> Tensor:
    return MAXIMUM(_tensor_arg(input, "maximum"), _tensor_arg(other, "maximum"))


def minimum(input: Any, other: Any) -> Tensor:
    return MINIMUM(_tensor_arg(input, "minimum"), _tensor_arg(other, "minimum"))


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


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    beta, threshold = number_arg(beta, "softplus", "beta"), number_arg(threshold, "softplus", "threshold")
    if beta == 1 and threshold == 20:
        return Tensor.softplus(_tensor_arg(x, "softplus"))
    return apply(O.SOFTPLUS, _tensor_arg(x, "softplus"), beta=float(beta), threshold=float(threshold))


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


def _unary_function(op: O.Op) -> Any:
    """`torch.asin(x)` and friends: the Tensor method, for anything a tensor can be made from."""
    method = getattr(Tensor, op.name)

    def fn(x: Any) -> Tensor:
        return method(_tensor_arg(x, op.name))
    fn.__name__ = fn.__qualname__ = op.name
    return fn


asin, acos, atan, sinh, cosh, asinh, acosh, atanh, log2, log10, exp2, expm1, erf, erfc, erfinv, rsqrt, reciprocal, \
    lgamma, digamma, floor, ceil, trunc, frac = (_unary_function(op) for op in (
        O.ASIN, O.ACOS, O.ATAN, O.SINH, O.COSH, O.ASINH, O.ACOSH, O.ATANH, O.LOG2, O.LOG10, O.EXP2, O.EXPM1, O.ERF,
        O.ERFC, O.ERFINV, O.RSQRT, O.RECIPROCAL, O.LGAMMA, O.DIGAMMA, O.FLOOR, O.CEIL, O.TRUNC, O.FRAC))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh, fix = asin, acos, atan, asinh, acosh, atanh, trunc


def square(x: Any) -> Tensor:
    """PyTorch computes square as pow(x, 2) (its node is PowBackward0)."""
    return POW(_tensor_arg(x, "square"), 2)


def polygamma(n: int, x: Any) -> Tensor:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ArgumentError(f"polygamma(n, x) does not support negative n (got {n!r})",
                            hint="n is the order of the derivative of digamma: 0, 1, 2, ...")
    x = _tensor_arg(x, "polygamma")
    if n == 0:
        return digamma(x)
    return apply(O.POLYGAMMA, x, n=int(n))


def logit(x: Any, eps: float | None = None) -> Tensor:
    return apply(O.LOGIT, _tensor_arg(x, "logit"), eps=None if eps is None else _number(eps, "logit's eps"))


def round(x: Any, decimals: int = 0) -> Tensor:
    x = _tensor_arg(x, "round")
    decimals = _int(decimals, "round's decimals")
    return apply(O.ROUND, x, decimals=decimals, name="RoundBackward1" if decimals else None)


def _binary(op: O.Op, a: Any, b: Any, fn: str, name: str | None = None) -> Tensor:
    """A binary op that needs at least one tensor, with PyTorch's broadcasting and promotion."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _tensor_arg(a, fn)
    return _general_binary(op, a, b, name)


def atan2(input: Any, other: Any) -> Tensor:
    return _binary(O.ATAN2, _tensor_arg(input, "atan2"), _tensor_arg(other, "atan2"), "atan2")


arctan2 = atan2


def hypot(input: Any, other: Any) -> Tensor:
    return _binary(O.HYPOT, _tensor_arg(input, "hypot"), _tensor_arg(other, "hypot"), "hypot")


def fmod(input: Any, other: Any) -> Tensor:
    return _binary(O.FMOD, _tensor_arg(input, "fmod"), other, "fmod",
                   None if isinstance(other, Tensor) else "FmodBackward0")


def remainder(input: Any, other: Any) -> Tensor:
    return _binary(O.REMAINDER, input, other, "remainder", None if isinstance(other, Tensor) else "RemainderBackward0")


def xlogy(input: Any, other: Any) -> Tensor:
    return _binary(O.XLOGY, input, other, "xlogy")


def fmax(input: Any, other: Any) -> Tensor:
    return _binary(O.FMAX, _tensor_arg(input, "fmax"), _tensor_arg(other, "fmax"), "fmax")


def fmin(input: Any, other: Any) -> Tensor:
    return _binary(O.FMIN, _tensor_arg(input, "fmin"), _tensor_arg(other, "fmin"), "fmin")


def _broadcast_all(fn: str, *xs: Any) -> None:
    shape: tuple[int, ...] = ()
    for x in xs:
        if isinstance(x, Tensor):
            shape = broadcast_shape(fn, shape, x.shape)


def lerp(start: Any, end: Any, weight: Any) -> Tensor:
    start, end = _tensor_arg(start, "lerp"), _tensor_arg(end, "lerp")
    _broadcast_all("lerp", start, end, weight)
    if isinstance(weight, Tensor):
        return apply(O.LERP, start, end, weight)
    return apply(O.LERP, start, end, _number(weight, "lerp's weight"), name="LerpBackward0")


def addcmul(x: Any, tensor1: Any, tensor2: Any, value: float = 1) -> Tensor:
    xs = [_tensor_arg(t, "addcmul") for t in (x, tensor1, tensor2)]
    _broadcast_all("addcmul", *xs)
    return apply(O.ADDCMUL, *xs, value=_number(value, "addcmul's value"))


def addcdiv(x: Any, tensor1: Any, tensor2: Any, value: float = 1) -> Tensor:
    xs = [_tensor_arg(t, "addcdiv") for t in (x, tensor1, tensor2)]
    _broadcast_all("addcdiv", *xs)
    return apply(O.ADDCDIV, *xs, value=_number(value, "addcdiv's value"))


def dist(input: Any, other: Any, p: float = 2) -> Tensor:
    """‖input - other‖_p, under PyTorch's node name for it."""
    diff = sub(_tensor_arg(input, "dist"), _tensor_arg(other, "dist"))
    return apply(O.NORM, diff, p=_number(p, "dist's p"), dim=None, keepdim=False, name="DistBackward0")


# -- reductions --------------------------------------------------------------------------
def _reduction(op: O.Op, x: Any, dim: Any, keepdim: bool, fn: str, **extra: Any) -> Tensor:
    x = _tensor_arg(x, fn)
    dims = _dims(dim, x.ndim)
    if x.ndim == 0:
        dims = None
    name = op.node[:-1] + ("0" if dims is None else "1")
    return apply(op, x, dim=dims, keepdim=bool(keepdim), name=name, **extra)


def _as_dtype(x: Any, dtype: Any, fn: str) -> Any:
    """A reduction's `dtype=`: the input cast first, as PyTorch accumulates in that type."""
    if dtype is None:
        return x
    from gradcli.engine.creation import resolve_dtype
    return to_dtype(_tensor_arg(x, fn), resolve_dtype(dtype))


def sum(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    return _reduction(O.SUM, _as_dtype(x, dtype, "sum"), dim, keepdim, "sum")


# PyTorch's names for dtypes in its messages ("Got: Long").
_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def mean(x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    x = _tensor_arg(_as_dtype(x, dtype, "mean"), "mean")
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
    if type(x) is Tensor and type(p) in _NUMBER and p == 2 and dim is None and keepdim is False:
        return NORM2(x)
    x = _tensor_arg(x, "norm")
    if isinstance(p, str) and p == "fro":
        p = 2
    if not isinstance(p, (int, float)) or isinstance(p, bool) or p == 0:
        raise ArgumentError(f"norm(): p must be a nonzero number, 'fro', inf or -inf, got {p!r}",
                            hint="e.g. x.norm() for the Euclidean norm, x.norm(1), or x.norm(float('inf')); "
                                 "count nonzero elements with (x != 0).sum()")
    return apply(O.NORM, x, p=float(p), dim=_dims(dim, x.ndim), keepdim=bool(keepdim))


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """`torch.linalg.vector_norm`: the norm of the elements over `dim` (all of them by default)."""
    return norm(x, ord, dim, keepdim)


def matrix_norm(x: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    """Frobenius ('fro') and the induced 1- and inf-norms (max column / row sum of |x|, and -1/-inf's minimum)."""
    x = _tensor_arg(x, "matrix_norm")
    if x.ndim < 2:
        raise ShapeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
                         hint="use torch.linalg.vector_norm for a vector")
    dims = _dims(dim, x.ndim)
    if dims is None or len(dims) != 2:
        raise ArgumentError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim!r}", hint="e.g. dim=(-2, -1)")
    rows, cols = (_dim(d, x.ndim) for d in dim)
    if ord == "fro":
        return norm(x, 2, dims, keepdim)
    if ord in (1, -1, float("inf"), -float("inf")):
        summed, reduced = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = sum(abs(x), dim=summed, keepdim=keepdim)
        return (amax if ord > 0 else amin)(sums, dim=reduced - (not keepdim and summed < reduced), keepdim=keepdim)
    raise ArgumentError(f"linalg.matrix_norm: ord {ord!r} is not supported by gradcli",
                        hint="use 'fro', 1, -1, inf or -inf (2, -2 and 'nuc' need singular values)")


def linalg_norm(x: Any, ord: Any = None, dim: Any = None, keepdim: bool = False) -> Tensor:
    """`torch.linalg.norm`: a vector norm, or a matrix norm for a string ord or a 2-tuple dim."""
    x = _tensor_arg(x, "linalg.norm")
    matrix = isinstance(ord, str) or (isinstance(dim, (list, tuple)) and len(dim) == 2) or (
        dim is None and ord is not None and x.ndim == 2)
    if matrix:
        return matrix_norm(x, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim)
    return norm(x, 2 if ord is None else ord, dim, keepdim)

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


def logsumexp(x: Any, dim: Any, keepdim: bool = False) -> Tensor:
    x = _tensor_arg(x, "logsumexp")
    return apply(O.LOGSUMEXP, x, dim=None if x.ndim == 0 else _dims(dim, x.ndim), keepdim=bool(keepdim))


def _nonempty(x: Tensor, fn: str) -> None:
    if x.numel() == 0:
        raise ValueDomainError(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0.",
                               hint="an empty tensor has no largest, smallest or middle element")


def amax(x: Any, dim: Any = (), keepdim: bool = False) -> Tensor:
    x = _tensor_arg(x, "amax")
    _nonempty(x, "amax")
    return apply(O.AMAX, x, dim=None if x.ndim == 0 else _dims(dim, x.ndim), keepdim=bool(keepdim))


def amin(x: Any, dim: Any = (), keepdim: bool = False) -> Tensor:
    x = _tensor_arg(x, "amin")
    _nonempty(x, "amin")
    return apply(O.AMIN, x, dim=None if x.ndim == 0 else _dims(dim, x.ndim), keepdim=bool(keepdim))


def _scan(op: O.Op, x: Any, dim: Any, fn: str) -> Tensor:
    x = _tensor_arg(x, fn)
    if x.ndim == 0:
        return reshape(apply(op, reshape(x, 1), dim=0), ())
    return apply(op, x, dim=_dim(dim, x.ndim))


def cumsum(x: Any, dim: int) -> Tensor:
    return _scan(O.CUMSUM, x, dim, "cumsum")


def cumprod(x: Any, dim: int) -> Tensor:
    return _scan(O.CUMPROD, x, dim, "cumprod")


def argmax(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg_extremum(np.argmax, x, dim, keepdim, "argmax")


def argmin(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _arg_extremum(np.argmin, x, dim, keepdim, "argmin")


def _arg_extremum(arg: Any, x: Any, dim: Any, keepdim: bool, fn: str) -> Tensor:
    """Indices (int64, outside the graph): of the flattened tensor without `dim`, first on ties."""
    x = _tensor_arg(x, fn)
    _nonempty(x, fn)
    if dim is None:
        idx = np.asarray(arg(x._data), dtype=np.int64)
        return _wrap(idx.reshape((1,) * x.ndim) if keepdim else idx)
    d = _dim(dim, x.ndim)
    data = x._data.reshape(1) if x.ndim == 0 else x._data
    idx = np.asarray(arg(data, axis=d), dtype=np.int64)
    return _wrap(np.expand_dims(idx, d) if keepdim and x.ndim else idx.reshape(x.shape[:d] + x.shape[d + 1:]))


def _along(x: Tensor, order: np.ndarray, d: int, name: str) -> MaxMin:
    """The elements at `order` (indices along dim d; without dim d when it has fewer dimensions than
    x) and those indices: one indexing node, so the gradient goes back to exactly those elements."""
    if x.requires_grad:
        note_order(x._node if x._node is not None else x, x._data, d, name)
    grids = list(np.indices(order.shape, sparse=True))
    if order.ndim == x.ndim:
        grids[d] = order
    else:
        grids.insert(d, order)
    return MaxMin(apply(O.INDEX, x, key=tuple(grids), name=name), _wrap(order.astype(np.int64)))


def _order(x: Tensor, d: int, descending: bool) -> np.ndarray:
    """A stable order along d; descending keeps equal elements in their original order too."""
    data = x._data
    budget.spend(costs.sort(data.size), "sorting")
    return np.argsort(-data if descending else data, axis=d, kind="stable")


def sort(x: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> MaxMin:
    x = _tensor_arg(x, "sort")
    if x.ndim == 0:
        return MaxMin(_same(x, "SortBackward0"), _wrap(np.asarray(0)))
    d = _dim(dim, x.ndim)
    return _along(x, _order(x, d, bool(descending)), d, "SortBackward0")


def topk(x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MaxMin:
    x = _tensor_arg(x, "topk")
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= size:
        raise ShapeError("selected index k out of range",
                         hint=f"k must be between 0 and the size of dim {d} ({size})")
    if x.ndim == 0:
        return MaxMin(_same(x, "TopkBackward0"), _wrap(np.asarray(0)))
    order = np.take(_order(x, d, bool(largest)), range(int(k)), axis=d)
    return _along(x, order, d, "TopkBackward0")


def kthvalue(x: Any, k: int, dim: int = -1, keepdim: bool = False) -> MaxMin:
    x = _tensor_arg(x, "kthvalue")
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= size:
        raise ShapeError(f"kthvalue(): selected number k out of range for dimension {d}",
                         hint=f"k counts from 1 (the smallest) to the size of dim {d} ({size})")
    return _selected(x, d, int(k) - 1, keepdim, "KthvalueBackward0")


def median(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor | MaxMin:
    """Without dim the lower median, its gradient shared among ties; with dim (values, indices)."""
    x = _tensor_arg(x, "median")
    if dim is None:
        _nonempty(x, "median")
        flat = x._data.reshape(-1)
        budget.spend(costs.sort(flat.size), "median")
        at = int(np.argsort(flat, kind="stable")[(flat.size - 1) // 2])
        return apply(O.MEDIAN, x, at=at)
    d = _dim(dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    return _selected(x, d, (size - 1) // 2, keepdim, "MedianBackward1")


def _selected(x: Tensor, d: int, k: int, keepdim: bool, name: str) -> MaxMin:
    """The k-th smallest along d (0-based), and its index."""
    if x.ndim == 0:
        return MaxMin(_same(x, name), _wrap(np.asarray(0)))
    return _along(x, np.take(_order(x, d, False), [k] if keepdim else k, axis=d), d, name)


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


def _with_dims(x: Any, fn: str, name: str = "input") -> Tensor:
    """A tensor argument that must have a dimension to work along (a number becomes a 0-d tensor, which has none)."""
    x = _tensor_arg(x, fn)
    if x.ndim == 0:
        raise ShapeError(f"{fn}: the {name} tensor must have at least 1 dimension, but it is 0-d",
                         hint="pass a tensor with at least one dimension, e.g. tensor([1.0, 2.0])")
    return x


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


def view(x: Any, *shape: Any) -> Tensor:
    """reshape, which must give a view of x: PyTorch refuses a shape its strides cannot give without a copy
    (and an in-place update of a copy would not reach x)."""
    x = _tensor_arg(x, "view")
    out = reshape(x, *shape)
    if out.numel() and _root(out._data) is not _root(x._data):
        raise ShapeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                         "spans across two contiguous subspaces). Use .reshape(...) instead.",
                         hint="write x.reshape(...) (a copy where it must be), or x.contiguous().view(...)")
    return out


def flatten(x: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim; PyTorch returns the tensor itself, without a node, when that
    merges nothing (a vector, or start_dim == end_dim)."""
    x = _tensor_arg(x, "flatten")
    if x.ndim == 0:
        return reshape(x, 1)
    start, end = _dim(start_dim, x.ndim), _dim(end_dim, x.ndim)
    if start > end:
        raise ArgumentError("flatten() has invalid args: start_dim cannot come after end_dim",
                            hint=f"here start_dim is {start} and end_dim {end}")
    if start == end:
        return x
    return reshape(x, x.shape[:start] + (-1,) + x.shape[end + 1:])


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
    if isinstance(dim, (list, tuple)):
        dims = {_dim(d, x.ndim) for d in dim}
        return apply(O.RESHAPE, x, shape=tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1)),
                     name="SqueezeBackward2")
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
        if isinstance(p, (list, range)):  # x[range(n), target]: "What is torch.nn really?" picks so
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
    return apply(O.INDEX, x, key=_single(k), name=name)


def index_key(key: Any) -> Any:
    """A program's index as NumPy takes it (what `index` records), for writing through it."""
    return _single(_index_key(key))


def _single(k: tuple[Any, ...]) -> Any:
    return k[0] if len(k) == 1 and not isinstance(k[0], np.ndarray) else k


def constant(value: np.ndarray) -> Tensor:
    """An array a VJP holds fixed (batch norm's running statistics in eval mode) as a Tensor of its own
    dtype: an ndarray operand would be converted as a nested list, in the default dtype."""
    return _wrap(value)


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


# -- more shapes and indexing ----------------------------------------------------------------
def view_as(x: Any, other: Any) -> Tensor:
    return view(x, _tensor_arg(other, "view_as").shape)


def reshape_as(x: Any, other: Any) -> Tensor:
    return reshape(x, _tensor_arg(other, "reshape_as").shape)


def unflatten(x: Any, dim: int, sizes: Sequence[int]) -> Tensor:
    x = _tensor_arg(x, "unflatten")
    d = _dim(dim, x.ndim)
    sizes = _shape_args((sizes,))
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[d]) or (-1 in sizes and x.shape[d] % known):
        raise ShapeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                         f"({x.shape[d]}) in the input tensor", hint="the sizes must multiply to that dimension's size")
    sizes = tuple(x.shape[d] // known if s == -1 else s for s in sizes)
    return reshape(x, x.shape[:d] + sizes + x.shape[d + 1:])


def movedim(x: Any, source: Any, destination: Any) -> Tensor:
    x = _tensor_arg(x, "movedim")
    src = [_dim(d, x.ndim) for d in (source if isinstance(source, (list, tuple)) else (source,))]
    dst = [_dim(d, x.ndim) for d in (destination if isinstance(destination, (list, tuple)) else (destination,))]
    if len(src) != len(dst):
        raise ArgumentError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                            f"same number of dims as destination ({dst} dims)", hint="pair each source with a target")
    order = [d for d in range(x.ndim) if d not in src]
    for s, t in sorted(zip(dst, src)):
        order.insert(s, t)
    return apply(O.PERMUTE, x, dims=tuple(order))


moveaxis = movedim
swapaxes = swapdims = transpose


def flip(x: Any, dims: Any) -> Tensor:
    """`torch.flip(x, dims)`: dims a sequence (or one int); the method takes them unpacked too."""
    x = _tensor_arg(x, "flip")
    axes = tuple(sorted({_dim(d, x.ndim) for d in _shape_args((dims,))}))
    return apply(O.FLIP, x, dims=axes)


def fliplr(x: Any) -> Tensor:
    return flip(x, 1)


def flipud(x: Any) -> Tensor:
    return flip(x, 0)


def roll(x: Any, shifts: Any, dims: Any = None) -> Tensor:
    x = _tensor_arg(x, "roll")
    many = isinstance(shifts, (list, tuple))
    shift = tuple(_int(s, "roll's shifts") for s in shifts) if many else (_int(shifts, "roll's shifts"),)
    if dims is None:
        if len(shift) != 1:
            raise ArgumentError("roll: shifts and dims must align", hint="give one dim per shift")
        return apply(O.ROLL, x, shifts=shift, dims=None)
    axes = tuple(_dim(d, x.ndim) for d in (dims if isinstance(dims, (list, tuple)) else (dims,)))
    if len(axes) != len(shift):
        raise ArgumentError(f"shifts and dimensions must align. shifts: {len(shift)}, dims:{len(axes)}",
                            hint="give one dim per shift")
    return apply(O.ROLL, x, shifts=shift, dims=axes)


def repeat(x: Any, *sizes: Any) -> Tensor:
    x = _tensor_arg(x, "repeat")
    repeats = _shape_args(sizes)
    if len(repeats) < x.ndim:
        raise ShapeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
                         hint=f"give one count per dimension of {tuple(x.shape)}, plus any new leading ones")
    check_elements(tuple(r * s for r, s in zip(repeats, (1,) * (len(repeats) - x.ndim) + x.shape)),
                   "the result of repeat")
    return apply(O.REPEAT, x, repeats=repeats)


def tile(x: Any, *dims: Any) -> Tensor:
    x = _tensor_arg(x, "tile")
    reps = _shape_args(dims)
    return repeat(x, (1,) * (x.ndim - len(reps)) + reps)


def _matrix_arg(x: Any, fn: str) -> Tensor:
    x = _tensor_arg(x, fn)
    if x.ndim < 2:
        raise ShapeError(f"{fn}: input tensor must have at least 2 dimensions.",
                         hint="tril and triu take a matrix (or a batch of them)")
    return x


def tril(x: Any, diagonal: int = 0) -> Tensor:
    return apply(O.TRIL, _matrix_arg(x, "tril"), diagonal=_int(diagonal, "tril's diagonal"))


def triu(x: Any, diagonal: int = 0) -> Tensor:
    return apply(O.TRIU, _matrix_arg(x, "triu"), diagonal=_int(diagonal, "triu's diagonal"))


def diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    x = _tensor_arg(x, "diagonal")
    d1, d2 = _dim(dim1, x.ndim), _dim(dim2, x.ndim)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", hint="name two different dims")
    out = apply(O.INDEX, x, key=_diagonal_key(x.shape, _int(offset, "offset"), d1, d2), name="DiagonalBackward0")
    V.copied(out, x, "diagonal")
    return out


def _diagonal_key(shape: tuple[int, ...], offset: int, d1: int, d2: int) -> tuple[np.ndarray, ...]:
    """Index arrays picking the diagonal, laid out as PyTorch's (the other dims, then the diagonal)."""
    n = builtins.max(0, builtins.min(shape[d1] - builtins.max(-offset, 0), shape[d2] - builtins.max(offset, 0)))
    rest = [d for d in range(len(shape)) if d not in (d1, d2)]
    grids = np.indices(tuple(shape[d] for d in rest) + (n,), sparse=True)
    key: list[Any] = [None] * len(shape)
    for d, grid in zip(rest, grids):
        key[d] = grid
    key[d1] = grids[-1] + builtins.max(-offset, 0)
    key[d2] = grids[-1] + builtins.max(offset, 0)
    return tuple(key)


def diag_embed(x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    x = _tensor_arg(x, "diag_embed")
    d1, d2 = _dim(dim1, x.ndim + 1), _dim(dim2, x.ndim + 1)
    if d1 == d2:
        raise ShapeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}", hint="name two different dims")
    return apply(O.DIAG_EMBED, x, offset=_int(offset, "offset"), dim1=d1, dim2=d2)


def diag(x: Any, diagonal: int = 0) -> Tensor:
    """A vector becomes a diagonal matrix; a matrix gives its diagonal (PyTorch's node names for each)."""
    x = _tensor_arg(x, "diag")
    if x.ndim == 1:
        return diag_embed(x, diagonal)
    if x.ndim != 2:
        raise ShapeError("diag(): Supports 1D or 2D tensors. Got {}D".format(x.ndim),
                         hint="use diagonal() or diag_embed() for batches")
    return apply(O.INDEX, x, key=_diagonal_key(x.shape, _int(diagonal, "diagonal"), 0, 1),
                 name="DiagonalBackward0_copy")


def trace(x: Any) -> Tensor:
    """Σ of the diagonal; PyTorch's node name on top (the diagonal's own node sits below it)."""
    x = _tensor_arg(x, "trace")
    if x.ndim != 2:
        raise ShapeError("trace: expected a matrix, but got tensor with dim {}".format(x.ndim),
                         hint="trace takes one matrix; for a batch use diagonal(dim1=-2, dim2=-1).sum(-1)")
    return apply(O.SUM, diagonal(x), dim=None, keepdim=False, name="TraceBackward0")


def narrow(x: Any, dim: int, start: int, length: int) -> Tensor:
    x = _tensor_arg(x, "narrow")
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    start, length = _int(start, "narrow's start"), _int(length, "narrow's length")
    begin = start + size if start < 0 else start
    if not 0 <= begin <= size or length < 0 or begin + length > size:
        raise ShapeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).",
                         hint=f"dim {d} has {size} elements")
    return apply(O.INDEX, x, key=(slice(None),) * d + (slice(begin, begin + length),), name="SliceBackward0")


def split(x: Any, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Views along dim, each its own node under PyTorch's name (one multi-output node in PyTorch)."""
    x = _with_dims(x, "split")
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [_int(s, "split_sizes") for s in split_size_or_sections]
        if builtins.sum(sizes) != size:
            raise ShapeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                             f"dimension {d}), but got split_sizes={sizes}", hint="the sizes must add up to the dim")
        name = "SplitWithSizesBackward0"
    else:
        step = _int(split_size_or_sections, "split_size")
        if step <= 0:
            raise ArgumentError(f"split expects split_size be non-negative, but got split_size={step}",
                                hint="split_size is how many elements each piece has")
        sizes = [builtins.min(step, size - k) for k in range(0, size, step)] or [0]
        name = "SplitBackward0"
    bounds = np.cumsum([0] + sizes)
    return V.multiple(tuple(apply(O.INDEX, x, key=(slice(None),) * d + (slice(int(a), int(b)),), name=name)
                            for a, b in zip(bounds[:-1], bounds[1:])), name.removesuffix("Backward0"))


def chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    x = _tensor_arg(x, "chunk")
    chunks = _int(chunks, "chunks")
    if chunks <= 0:
        raise ArgumentError("chunk expects `chunks` to be greater than 0, got: {}".format(chunks),
                            hint="chunks is how many pieces you want")
    size = x.shape[_dim(dim, x.ndim)]
    return split(x, builtins.max(-(-size // chunks), 1), dim)


def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    x = _with_dims(x, "unbind")
    d = _dim(dim, x.ndim)
    return V.multiple(tuple(apply(O.INDEX, x, key=(slice(None),) * d + (i,), name="UnbindBackward0")
                            for i in range(x.shape[d])), "Unbind")


def _index_array(index: Any, fn: str) -> np.ndarray:
    data = _tensor_arg(index, fn)._data
    if data.dtype.kind not in "iu":
        raise ArgumentError(f"{fn}(): Expected dtype int64 for index", hint="pass integer indices, e.g. tensor([0, 2])")
    return data.astype(np.intp)


def _along_key(x: Tensor, index: np.ndarray, d: int, fn: str) -> tuple:
    """gather/scatter's positions: index along d, the index's own position along every other dim."""
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise ShapeError("Index tensor must have the same number of dimensions as input tensor",
                         hint=f"the input has {x.ndim} dimensions and the index {index.ndim}")
    for k, (n, m) in enumerate(zip(index.shape, x.shape)):
        if k != d and n > m:
            raise ShapeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be smaller "
                             f"than self {list(x.shape)} apart from dimension {d}",
                             hint="the index may not be larger than the input outside dim")
    if index.size and (index.min() < -x.shape[d] or index.max() >= x.shape[d]):
        raise ShapeError(f"index {int(index.max())} is out of bounds for dimension {d} with size {x.shape[d]}",
                         hint=f"indices along dim {d} run from 0 to {x.shape[d] - 1}")
    grids = list(np.indices(index.shape, sparse=True))
    grids[d] = index
    return tuple(grids)


def gather(x: Any, dim: int, index: Any) -> Tensor:
    x = _tensor_arg(x, "gather")
    d = _dim(dim, x.ndim)
    return apply(O.INDEX, x, key=_along_key(x, _index_array(index, "gather"), d, "gather"), name="GatherBackward0")


def scatter(x: Any, dim: int, index: Any, src: Any = None, value: Any = None) -> Tensor:
    x = _tensor_arg(x, "scatter")
    d = _dim(dim, x.ndim)
    key = _along_key(x, _index_array(index, "scatter"), d, "scatter")
    source = value if src is None else src
    if isinstance(source, Tensor):
        return apply(O.SCATTER, x, source, key=key)
    return apply(O.SCATTER, x, _number(source, "scatter's value"), key=key, name="ScatterBackward1")


def scatter_add(x: Any, dim: int, index: Any, src: Any) -> Tensor:
    x = _tensor_arg(x, "scatter_add")
    d = _dim(dim, x.ndim)
    return apply(O.SCATTER_ADD, x, _tensor_arg(src, "scatter_add"),
                 key=_along_key(x, _index_array(index, "scatter_add"), d, "scatter_add"))


def index_select(x: Any, dim: int, index: Any) -> Tensor:
    x = _tensor_arg(x, "index_select")
    d = _dim(dim, x.ndim)
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise ShapeError("index_select(): Index is supposed to be a vector", hint="pass a 1-D index")
    if idx.size and (idx.min() < -x.shape[d] or idx.max() >= x.shape[d]):
        raise ShapeError("index out of range in self", hint=f"indices along dim {d} run from 0 to {x.shape[d] - 1}")
    return apply(O.INDEX, x, key=(slice(None),) * d + (idx.reshape(-1),), name="IndexSelectBackward0")


def _mask_arg(mask: Any, x: Tensor, fn: str) -> np.ndarray:
    data = _tensor_arg(mask, fn)._data
    if data.dtype != bool:
        raise ArgumentError(f"{fn} only supports boolean masks, but got mask with dtype {data.dtype}",
                            hint="compare to make a mask, e.g. x > 0")
    broadcast_shape(fn, data.shape, x.shape)
    return data


def masked_fill(x: Any, mask: Any, value: Any) -> Tensor:
    x = _tensor_arg(x, "masked_fill")
    m = _mask_arg(mask, x, "masked_fill")
    if broadcast_shape("masked_fill", m.shape, x.shape) != x.shape:
        raise ShapeError(f"masked_fill: the mask of shape {m.shape} must broadcast to the input's shape {x.shape}",
                         hint="the mask may not add dimensions to the input")
    if isinstance(value, Tensor) and value.ndim:
        raise ShapeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                         "dimension(s).", hint="fill with a number, or a 0-d tensor such as v[0]")
    fill = value if isinstance(value, Tensor) else _number(value, "masked_fill's value")
    return apply(O.WHERE, _wrap(np.broadcast_to(m, x.shape)), fill, x,
                 name="MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0")


def masked_select(x: Any, mask: Any) -> Tensor:
    x = _tensor_arg(x, "masked_select")
    m = _mask_arg(mask, x, "masked_select")
    shape = broadcast_shape("masked_select", m.shape, x.shape)
    if shape != x.shape:
        x = expand(x, shape)
    return apply(O.INDEX, x, key=(np.broadcast_to(m, shape),), name="MaskedSelectBackward0")


def take(x: Any, index: Any) -> Tensor:
    x = _tensor_arg(x, "take")
    idx = _index_array(index, "take")
    n = x.numel()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise ShapeError(f"out of range: tried to access index {int(idx.max())} on a tensor of {n} elements.",
                         hint=f"take counts the elements of the flattened tensor, 0 to {n - 1}")
    return apply(O.INDEX, x, key=np.unravel_index(idx % builtins.max(n, 1), x.shape), name="TakeBackward0")


_EINSUM_OPERANDS = 8


def einsum(equation: str, *operands: Any) -> Tensor:
    """Explicit or implicit subscripts, with '...'; repeated letters for diagonals and traces."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = [_tensor_arg(x, "einsum") for x in operands]
    if not 1 <= len(xs) <= _EINSUM_OPERANDS:
        raise ArgumentError(f"einsum(): gradcli takes 1 to {_EINSUM_OPERANDS} tensors, got {len(xs)}",
                            hint="split a longer contraction into several einsums")
    eq = _explicit_einsum(str(equation).replace(" ", ""), xs)
    try:
        # NumPy's check of the subscripts against the shapes, computing nothing (views of one number)
        np.einsum_path(eq, *[np.broadcast_to(np.empty(()), x.shape) for x in xs], optimize=False)
    except ValueError as exc:
        raise ShapeError(f"einsum(): {exc}", hint="each operand needs one letter per dimension; a letter used "
                                                  "twice must name dimensions of the same size") from None
    return apply(O.variadic(O.EINSUM, len(xs)), *xs, equation=eq)


def _explicit_einsum(eq: str, xs: list) -> str:
    """'ij,jk' → 'ij,jk->ik', and each '...' spelled out with letters the equation does not use."""
    ins, _, result = eq.partition("->")
    subs = ins.split(",")
    if len(subs) != len(xs):
        raise ArgumentError(f"einsum(): {len(subs)} operands in the equation but {len(xs)} tensors were given",
                            hint="one comma-separated subscript per tensor")
    if "->" not in eq:
        counts = {c: "".join(subs).count(c) for c in "".join(subs) if c != "."}
        result = ("..." if any("..." in s for s in subs) else "") + "".join(
            sorted(c for c, n in counts.items() if n == 1))
    if "..." in eq:
        spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in eq]
        widest = builtins.max(x.ndim - len(s.replace("...", "")) for s, x in zip(subs, xs) if "..." in s)
        letters = "".join(spare[:widest])
        subs = [s.replace("...", letters[widest - (x.ndim - len(s.replace("...", ""))):]) for s, x in zip(subs, xs)]
        result = result.replace("...", letters)
    return ",".join(subs) + "->" + result


def bmm(input: Any, mat2: Any) -> Tensor:
    a, b = _tensor_arg(input, "bmm"), _tensor_arg(mat2, "bmm")
    if a.ndim != 3 or b.ndim != 3:
        raise ShapeError("batch1 must be a 3D tensor" if a.ndim != 3 else "batch2 must be a 3D tensor",
                         hint="bmm multiplies two batches of matrices, shapes (b, n, m) and (b, m, p)")
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
                         f"but got: [{b.shape[0]}, {b.shape[1]}].", hint="both batches need the same size")
    if a.shape[2] != b.shape[1]:
        raise ShapeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
                         f"but got: [{b.shape[0]}, {b.shape[1]}].", hint="the inner matrix sizes must agree")
    return apply(O.MATMUL, a, b, name="BmmBackward0")


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


def cross(a: Any, b: Any, dim: Any = -1) -> Tensor:
    """`torch.linalg.cross`: along `dim` (default the last), which must have 3 elements."""
    a, b = _tensor_arg(a, "cross"), _tensor_arg(b, "cross")
    if a.ndim != b.ndim:
        raise ShapeError("linalg.cross: inputs must have the same number of dimensions.",
                         hint=f"the shapes are {tuple(a.shape)} and {tuple(b.shape)}; unsqueeze one to match")
    shape = broadcast_shape("linalg.cross", a.shape, b.shape)
    d = _dim(dim, len(shape))
    if shape[d] != 3:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                         f"{b.shape[d]}", hint="the cross product is of 3-vectors")
    return apply(O.CROSS, a, b, dim=d - len(shape))

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


# -- for the VJPs of torch.nn.functional under create_graph -----------------------------------
def gelu_backward(g: Tensor, x: Tensor, approximate: str) -> Tensor:
    return apply(O.GELU_BACKWARD, g, x, approximate=approximate)


def constant_pad_nd(x: Tensor, pad: tuple[int, ...], value: float = 0.0) -> Tensor:
    return apply(O.CONSTANT_PAD, x, pad=tuple(pad), value=float(value))


def im2col(x: Tensor, kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[tuple[int, int], ...],
           stride: tuple[int, ...]) -> Tensor:
    """Unfold (N, C, *spatial) into (N, C·∏kernel, ∏out): a convolution's and an unfold's primitive."""
    return apply(O.IM2COL, x, kernel=kernel, dilation=dilation, padding=padding, stride=stride)


def col2im(cols: Tensor, output_size: tuple[int, ...], kernel: tuple[int, ...], dilation: tuple[int, ...],
           padding: tuple[tuple[int, int], ...], stride: tuple[int, ...]) -> Tensor:
    """Fold columns back into (N, C, *output_size), adding overlaps: im2col's transpose."""
    return apply(O.COL2IM, cols, output_size=output_size, kernel=kernel, dilation=dilation, padding=padding,
                 stride=stride)
