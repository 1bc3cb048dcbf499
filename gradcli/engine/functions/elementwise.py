"""The elementwise functions of the functional API: arithmetic with PyTorch's promotion, clamps, the
binary functions (atan2 ... addcdiv), and `torch.X` for every one-input function the op table declares."""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.ops.op import Composite
from gradcli.errors import ArgumentError, BackwardError
from gradcli.engine.tensor import (ADD, DIV, MUL, POW, POW_TENSOR, RPOW, SUB, GradMode, Tensor, _elementwise1,
                                   _general_binary, _wrap, apply, broadcast_shape)
from gradcli.engine.functions.declared import declared, two_operands
from gradcli.engine.functions.arguments import as_operand, as_tensor, _int, _number, number_arg, _tensor_arg, _type_name


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
    return _general_binary(op, *two_operands(input, other, "div"), None)

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




def where(condition: Any, input: Any, other: Any) -> Tensor:
    """Select from `input` where `condition`, else `other`; the condition is never differentiated."""
    cond = as_tensor(condition)._data
    if cond.dtype != bool:
        cond = cond.astype(bool)
    a, b = as_operand(input, O.WHERE), as_operand(other, O.WHERE)
    shape = cond.shape
    for x in (a, b):
        if isinstance(x, Tensor):
            shape = broadcast_shape("where", shape, x.shape)
    return apply(O.WHERE, _wrap(cond), a, b)


_SOFTPLUS = _elementwise1(O.SOFTPLUS)
"""softplus with its defaults, the kernel a one-input elementwise method is (torch has no Tensor.softplus)."""


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """`F.softplus`, and the namespace's softplus that VJPs call under create_graph (mish's, BCE with logits')."""
    beta, threshold = number_arg(beta, "softplus", "beta"), number_arg(threshold, "softplus", "threshold")
    if beta == 1 and threshold == 20:
        return _SOFTPLUS(_tensor_arg(input, "softplus"))
    return apply(O.SOFTPLUS, _tensor_arg(input, "softplus"), beta=float(beta), threshold=float(threshold))


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

_DECLARED = {id(op): _unary_function(op) for op in O.named("functions", unary=True).values()}
globals().update({name: _DECLARED[id(op)] for name, op in O.named("functions", unary=True).items()})
"""`torch.X` for every function the op table declares (`exp`, `asin` and its alias `arcsin`, ...): the
same names `ops.NUMPY` has, so VJPs run against either namespace."""


def square(x: Any) -> Tensor:
    """PyTorch computes square as pow(x, 2) (its node is PowBackward0)."""
    return POW(_tensor_arg(x, "square"), 2)


def polygamma(n: int, input: Any) -> Tensor:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ArgumentError(f"polygamma(n, x) does not support negative n (got {n!r})",
                            hint="n is the order of the derivative of digamma: 0, 1, 2, ...")
    x = _tensor_arg(input, "polygamma")
    if n == 0:
        return digamma(x)
    return apply(O.POLYGAMMA, x, n=int(n))


def logit(x: Any, eps: float | None = None) -> Tensor:
    return apply(O.LOGIT, _tensor_arg(x, "logit"), eps=None if eps is None else _number(eps, "logit's eps"))


def round(x: Any, decimals: int = 0) -> Tensor:
    x = _tensor_arg(x, "round")
    decimals = _int(decimals, "round's decimals")
    return apply(O.ROUND, x, decimals=decimals, name="RoundBackward1" if decimals else None)










globals().update(declared(O.elementwise.OPS))
"""maximum, minimum, atan2 (arctan2), hypot, fmod, remainder, xlogy, fmax and fmin, from their declarations."""


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


COMPOSITES: tuple[Composite, ...] = (
    # arithmetic: the operators (`a + b`) are the kernels themselves (engine/tensor.py); add_ and sub_ with their
    # alpha are written in engine/inplace.py, the optimizers' every step
    Composite(add, ("add",), ("add",), O.ADD),
    Composite(sub, ("sub", "subtract"), ("sub", "subtract"), O.SUB),
    Composite(mul, ("mul", "multiply"), ("mul", "multiply"), O.MUL, in_place=True),
    Composite(div, ("div", "true_divide"), ("div", "true_divide"), O.DIV, in_place=True),
    Composite(pow, ("pow",), ("pow",), O.POW, in_place=True),
    Composite(floor_divide, ("floor_divide",), ("floor_divide",)),
    Composite(clamp, ("clamp", "clip"), ("clamp", "clip"), O.CLAMP, in_place=True),
    Composite(square, ("square",), ("square",), O.POW, in_place=True),
    Composite(logit, ("logit",), ("logit",), O.LOGIT, in_place=True),
    Composite(round, ("round",), ("round",), O.ROUND, in_place=True),
    Composite(lerp, ("lerp",), ("lerp",), O.LERP, in_place=True),
    Composite(addcmul, ("addcmul",), ("addcmul",), O.ADDCMUL, in_place=True),
    Composite(addcdiv, ("addcdiv",), ("addcdiv",), O.ADDCDIV, in_place=True),
    Composite(dist, ("dist",), ("dist",), O.NORM),
    Composite(where, ("where",), ("where",), O.WHERE, input_at=1),
    Composite(polygamma, ("polygamma",), ("polygamma",), O.POLYGAMMA, input_at=1),
)
"""The torch.X of this family that are also Tensor.X with the same arguments, declared with their names and the
primitive they record: Tensor.X and the language's tables are derived from these (`engine/tensor.py`,
`lang/builtins.py`)."""
