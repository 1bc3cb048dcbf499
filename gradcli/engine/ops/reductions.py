"""Reductions and scans: sum, mean, max/min, prod, var/std, norm, softmax, logsumexp, amax/amin,
median, cumsum/cumprod, and the helpers their VJPs share (`_back_to`, the product of the others)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from gradcli.engine.ops.elementwise import MAXIMUM, MINIMUM
from gradcli.engine.ops.op import Arg, Names, linear_jvp, Op, _public, reduced_shape, transposed_jvp

_INPUT = Arg("input", "tensor")
_KEEPDIM = Arg("keepdim", "flag", False)
_DIMS = (_INPUT, Arg("dim", "dims", None), _KEEPDIM)
"""A reduction's usual arguments: `torch.X(input, dim=None, keepdim=False)`."""
_DTYPE = Arg("dtype", "dtype", None, keyword=True)
"""`dtype=`: the input is cast first, as PyTorch accumulates in that type."""


def _written(name: str) -> Names:
    """`torch.<name>` and `Tensor.<name>` written by hand in `engine/functions/reductions.py` (they return
    indices too, or take a fast path), the names and tables still derived from here."""
    return _public(name, "written")


def _corrected(values: dict) -> dict:
    """var's and std's `unbiased` (the old spelling) and `correction`: the degrees of freedom taken away."""
    unbiased, correction = values.pop("unbiased"), values.pop("correction")
    values["correction"] = (0 if unbiased is False else 1) if correction is None else correction
    return values


_SPREAD = (_INPUT, Arg("dim", "dims", None), Arg("unbiased", "any", None), _KEEPDIM, Arg("correction", "count", None))
"""var's and std's arguments, both PyTorch's spellings: `var(x, dim, unbiased, keepdim)` and `correction=`."""


def _extreme(name: str) -> Names:
    """amax and amin: over `dim` (every dimension by default), of a tensor that has elements."""
    return _public(name, "reduction", _INPUT, Arg("dim", "dims", ()), _KEEPDIM, checks=("nonempty",))


def _extremes(name: str, pair: Op, indices: Callable) -> Names:
    """max and min: `max(input)`, `max(input, dim, keepdim=False)` with the indices, and `max(input, other)`."""
    return _public(name, "extremum", _INPUT, Arg("dim", "any", None), _KEEPDIM, pair=pair, indices=indices)


def _normalised(name: str) -> Names:
    """softmax and log_softmax: along `dim`, which a tensor of at most one dimension may leave out."""
    return _public(name, "scan", _INPUT, Arg("dim", "implicit_dim", None), functional=(name,))


def _scan(name: str) -> Names:
    """cumsum and cumprod: along one dim, which must be given, accumulated in `dtype=` when given."""
    return _public(name, "scan", _INPUT, Arg("dim", "dim"), _DTYPE, in_place=True)


def _back_to(ns: Any, g: Any, x: Any, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    """Reshape a reduced gradient (or value) to broadcast against the reduction's input."""
    if keepdim and dim is not None:
        return g
    return ns.reshape(g, reduced_shape(x.shape, dim))


def _accumulator(x: np.ndarray) -> Any:
    """PyTorch sums and multiplies every integer and bool type in int64; NumPy does too, except an unsigned
    type, which it accumulates in uint64 (a uint8 image's sum)."""
    return np.int64 if x.dtype.kind == "u" else None


def _sum_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
    """`np.add.reduce` is what `np.sum` calls (same numbers, same integer upcast) minus two Python
    wrappers: sums and norms run every iteration of a training loop."""
    return np.add.reduce(x, axis=dim, keepdims=keepdim, dtype=_accumulator(x))


def _mean_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
    return np.mean(x, axis=dim, keepdims=keepdim)


def _per(count: int, scale: float = 1.0) -> float:
    """`scale / count`, and nan for no elements (or no degrees of freedom), as PyTorch gives."""
    return scale / count if count > 0 else float("nan")


def _count(x: Any, dim: tuple[int, ...] | None) -> int:
    if dim is None:
        return int(np.prod(x.shape, dtype=np.int64))
    return int(np.prod([x.shape[d] for d in dim], dtype=np.int64))


def _extremum_forward(fn: Callable) -> Callable:
    def forward(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
        return fn(x, axis=dim, keepdims=keepdim)
    return forward


def _extremum_vjp(ns: Any, g: Any, out: Any, x: Any, dim: tuple[int, ...] | None = None,
                  keepdim: bool = False) -> Any:
    """Whole-tensor max/min split ties evenly; with `dim` PyTorch picks the first index."""
    o = _back_to(ns, out, x, dim, keepdim)
    mask = ns.where(x == o, 1.0, 0.0)
    if dim is not None:
        mask = ns.first_along(mask, dim[0])
    count = ns.sum(mask, dim=dim, keepdim=True)
    return _back_to(ns, g, x, dim, keepdim) * mask / count


def _prod_vjp(ns: Any, g: Any, out: Any, x: Any, dim: tuple[int, ...] | None = None,
              keepdim: bool = False) -> Any:
    return _back_to(ns, g, x, dim, keepdim) * ns.prod_others(x, dim, out)


def _var_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, correction: int = 1,
                 keepdim: bool = False) -> np.ndarray:
    return np.var(x, axis=dim, ddof=correction, keepdims=keepdim)


def _std_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, correction: int = 1,
                 keepdim: bool = False) -> np.ndarray:
    return np.std(x, axis=dim, ddof=correction, keepdims=keepdim)


def _centered(ns: Any, x: Any, dim: tuple[int, ...] | None) -> Any:
    return x - ns.mean(x, dim=dim, keepdim=True)


def _var_vjp(ns: Any, g: Any, out: Any, x: Any, dim: tuple[int, ...] | None = None,
             correction: int = 1, keepdim: bool = False) -> Any:
    n = _count(x, dim) - correction
    return _back_to(ns, g, x, dim, keepdim) * _centered(ns, x, dim) * _per(n, 2.0)


def _std_vjp(ns: Any, g: Any, out: Any, x: Any, dim: tuple[int, ...] | None = None,
             correction: int = 1, keepdim: bool = False) -> Any:
    """PyTorch's subgradient: zero where the standard deviation is zero."""
    n = _count(x, dim) - correction
    o = _back_to(ns, out, x, dim, keepdim)
    return _back_to(ns, g, x, dim, keepdim) * _centered(ns, x, dim) / (ns.where(o == 0, 1.0, o) * n)


def _norm_forward(x: np.ndarray, p: float = 2.0, dim: tuple[int, ...] | None = None,
                  keepdim: bool = False) -> np.ndarray:
    if x.dtype.kind == "f" and (x.size if dim is None else math.prod(x.shape[d] for d in dim)) == 1:
        # PyTorch's norm of a single element is its magnitude, for any p: no power to underflow or
        # overflow ([1e-300].norm() is 1e-300, [1e200].norm() 1e200); two elements square as usual
        return np.add.reduce(np.abs(x), axis=dim, keepdims=keepdim)
    if p == 2:
        return np.sqrt(np.add.reduce(x * x, axis=dim, keepdims=keepdim))
    if p == 1:
        return np.sum(np.abs(x), axis=dim, keepdims=keepdim)
    if p == float("inf"):
        return np.max(np.abs(x), axis=dim, keepdims=keepdim)
    if p == -float("inf"):
        return np.min(np.abs(x), axis=dim, keepdims=keepdim)
    with np.errstate(divide="ignore"):
        return np.sum(np.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(ns: Any, g: Any, out: Any, x: Any, p: float = 2.0, dim: tuple[int, ...] | None = None,
              keepdim: bool = False) -> Any:
    """PyTorch's subgradient: zero where the norm is zero."""
    gb = _back_to(ns, g, x, dim, keepdim)
    o = _back_to(ns, out, x, dim, keepdim)
    if p == 1:
        return gb * ns.sign(x)
    if p in (float("inf"), -float("inf")):
        mask = ns.where(ns.abs(x) == o, 1.0, 0.0)
        return gb * ns.sign(x) * mask / ns.sum(mask, dim=dim, keepdim=True)
    if p == 2:
        return ns.where(o == 0, 0.0, gb * x / ns.where(o == 0, 1.0, o))  # a Python 0.0 keeps the dtype
    scale = ns.abs(x) ** (p - 1) / ns.where(o == 0, 1.0, o) ** (p - 1)
    if p < 0:  # a zero element makes the norm 0, and PyTorch's gradient 0 throughout
        scale = ns.where(o == 0, 0.0, scale)
    return gb * ns.sign(x) * scale


def _softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))

def _extremum_op(name: str, node: str, keep: Callable, vjp: Callable, rule: str, names: Names,
                 batching: str = "along_dim") -> Op:
    """max, min, amax and amin differ only in the end they keep and how tied inputs share the gradient."""
    every = "max_all" if keep is np.max else "min_all"
    return Op(name=name, node=node, batching=batching, forward=_extremum_forward(keep), vjps=(vjp,), jvp=transposed_jvp, rule=rule,
              saves=("xo",), sym=lambda S, x, dim=None, keepdim=False: S.reduce(getattr(S, every), x, dim, keepdim),
              kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, keep), names=names)


SUM = Op(name="sum", batching="along_dim", node="SumBackward1", forward=_sum_forward,
         vjps=(lambda ns, g, o, x, dim=None, keepdim=False: ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape),),
         jvp=linear_jvp, rule="∂Σx/∂xᵢ = 1",
         nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.add_all, x, dim, keepdim),
         names=_public("sum", "reduction", *_DIMS, _DTYPE, numbered=True))
MEAN = Op(name="mean", batching="along_dim", node="MeanBackward1", forward=_mean_forward,
          vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
           ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape) * _per(_count(x, dim)),),
          jvp=linear_jvp, rule="∂mean(x)/∂xᵢ = 1/n",
          nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mean_all, x, dim, keepdim),
          names=_public("mean", "reduction", *_DIMS, _DTYPE, checks=("float",), numbered=True))
MAX = _extremum_op("max", "MaxBackward0", np.max, _extremum_vjp, "∂max(x)/∂xᵢ = [xᵢ is the max] (ties share)",
                   _extremes("max", MAXIMUM, np.argmax), "along_given_dim")
MIN = _extremum_op("min", "MinBackward0", np.min, _extremum_vjp, "∂min(x)/∂xᵢ = [xᵢ is the min] (ties share)",
                   _extremes("min", MINIMUM, np.argmin), "along_given_dim")
PROD = Op(name="prod", batching="along_dim", node="ProdBackward1", forward=lambda x, dim=None,
          keepdim=False: np.prod(x, axis=dim, keepdims=keepdim, dtype=_accumulator(x)),
          vjps=(_prod_vjp,), jvp=transposed_jvp, rule="∂Πx/∂xᵢ = Π_{j≠i} xⱼ", saves=("xo",),
          sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mul_all, x, dim, keepdim),
          names=_public("prod", "reduction", *_DIMS, numbered=True))
VAR = Op(name="var", batching="along_dim", node="VarBackward0", forward=_var_forward, vjps=(_var_vjp,),
         jvp=transposed_jvp, rule="∂var(x)/∂xᵢ = 2(xᵢ-x̄)/(n-c)", saves=("x",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.var_all(v, correction), x, dim, keepdim),
         names=_public("var", "reduction", *_SPREAD, prepare=_corrected))
STD = Op(name="std", batching="along_dim", node="StdBackward0", forward=_std_forward, vjps=(_std_vjp,),
         jvp=transposed_jvp, rule="∂std(x)/∂xᵢ = (xᵢ-x̄)/((n-c)·std)", saves=("xo",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.sqrt(S.var_all(v, correction)), x, dim, keepdim),
         names=_public("std", "reduction", *_SPREAD, prepare=_corrected))
NORM = Op(name="norm", batching="along_dim", node="LinalgVectorNormBackward0", forward=_norm_forward, vjps=(_norm_vjp,),
          jvp=transposed_jvp, rule="∂‖x‖₂/∂xᵢ = xᵢ/‖x‖₂ (0 at 0)",
          saves=("xo",),
          sym=lambda S, x, p=2.0, dim=None, keepdim=False: S.reduce(lambda v: S.norm_all(v, p), x, dim, keepdim),
          kink=lambda K, x, p=2.0, dim=None, keepdim=False: K.norm_kink(x, p, dim),
          names=_public("norm", "reduction", _INPUT, Arg("p", "norm_p", 2), Arg("dim", "dims", None), _KEEPDIM))
SOFTMAX = Op(name="softmax", batching="along_dim", node="SoftmaxBackward0", forward=_softmax_forward,
             vjps=(lambda ns, g, o, x, dim: o * (g - ns.sum(g * o, dim=(dim,), keepdim=True)),),
             jvp=transposed_jvp, rule="∂softmax(x)ᵢ/∂xⱼ = sᵢ(δᵢⱼ - sⱼ)", saves=("o",),
             sym=lambda S, x, dim: S.along(S.softmax_1d, x, dim), names=_normalised("softmax"))
LOG_SOFTMAX = Op(name="log_softmax", batching="along_dim", node="LogSoftmaxBackward0", forward=_log_softmax_forward,
                 vjps=(lambda ns, g, o, x, dim: g - ns.exp(o) * ns.sum(g, dim=(dim,), keepdim=True),),
                 jvp=transposed_jvp, rule="∂log_softmax(x)ᵢ/∂xⱼ = δᵢⱼ - sⱼ", saves=("o",),
                 sym=lambda S, x, dim: S.along(S.log_softmax_1d, x, dim), names=_normalised("log_softmax"))


# -- more reductions and scans (torch.cumsum ... torch.median) --------------------------------------
def _share_vjp(ns: Any, g: Any, out: Any, x: Any, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> Any:
    """amax, amin and median: the gradient split evenly among the elements equal to the result."""
    mask = ns.where(x == _back_to(ns, out, x, dim, keepdim), 1.0, 0.0)
    return _back_to(ns, g, x, dim, keepdim) * mask / ns.sum(mask, dim=dim, keepdim=True)


def _logsumexp_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
    """log Σ exp(x), shifted by the maximum so nothing overflows (an all -inf slice gives -inf)."""
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _reverse_cumsum(ns: Any, g: Any, dim: int) -> Any:
    return ns.flip(ns.cumsum(ns.flip(g, (dim,)), dim), (dim,))


def _cumprod_vjp(ns: Any, g: Any, out: Any, x: Any, dim: int) -> Any:
    """Σⱼ≥ᵢ gⱼ·Πₖ≤ⱼ,ₖ≠ᵢ xₖ. Without zeros that is the reverse cumsum of g·out over x; with zeros
    each slice of n elements becomes n rows with xᵢ replaced by 1 (O(n²), exact, differentiable)."""
    if not np.any(np.asarray(x) == 0):
        return _reverse_cumsum(ns, g * out, dim) / x
    n = x.shape[dim]
    order = tuple(d for d in range(x.ndim) if d != dim) + (dim,)
    xm, gm = ns.permute(x, order), ns.permute(g, order)
    lead = xm.shape[:-1]
    rows = ns.expand(ns.reshape(xm, lead + (1, n)), lead + (n, n))
    partial = ns.cumprod(ns.where(np.eye(n, dtype=bool), 1.0, rows), -1)
    upper = np.triu(np.ones((n, n), dtype=x.dtype))
    gi = ns.sum(partial * upper * ns.reshape(gm, lead + (1, n)), dim=(len(lead) + 1,))
    return ns.permute(gi, tuple(np.argsort(order)))

LOGSUMEXP = Op(name="logsumexp", batching="along_dim", node="LogsumexpBackward0", forward=_logsumexp_forward,
               vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
                     _back_to(ns, g, x, dim, keepdim) * ns.exp(x - _back_to(ns, o, x, dim, keepdim)),),
               jvp=transposed_jvp, rule="∂logΣexp(x)/∂xᵢ = exp(xᵢ - logΣexp(x))", saves=("xo",),
               sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.logsumexp_all, x, dim, keepdim),
               names=_public("logsumexp", "reduction", _INPUT, Arg("dim", "dims"), _KEEPDIM))
AMAX = _extremum_op("amax", "AmaxBackward0", np.max, _share_vjp,
                   "∂amax(x)/∂xᵢ = [xᵢ is the max] (ties share evenly)", _extreme("amax"))
AMIN = _extremum_op("amin", "AminBackward0", np.min, _share_vjp,
                   "∂amin(x)/∂xᵢ = [xᵢ is the min] (ties share evenly)", _extreme("amin"))
MEDIAN = Op(name="median", node="MedianBackward0", forward=lambda x, at: x.reshape(-1)[at],
            vjps=(lambda ns, g, o, x, at: _share_vjp(ns, g, o, x),),
            jvp=transposed_jvp, rule="∂median(x)/∂xᵢ = [xᵢ is the median] (ties share evenly)", saves=("xo",),
            nests=False, sym=lambda S, x, at: S.as_array(x.reshape(-1)[at]), kink=lambda K, x, at: K.median_kink(x, at),
            names=_written("median"))
CUMSUM = Op(name="cumsum", batching="along_dim", node="CumsumBackward0",
            forward=lambda x, dim: np.cumsum(x, axis=dim, dtype=_accumulator(x)),
            vjps=(lambda ns, g, o, x, dim: _reverse_cumsum(ns, g, dim),),
            jvp=linear_jvp, rule="∂(Σⱼ≤ᵢ xⱼ)/∂xₖ = [k ≤ i]: the gradient summed from the end",
            nests=False, sym=lambda S, x, dim: S.along(S.cumsum_1d, x, dim), names=_scan("cumsum"))
CUMPROD = Op(name="cumprod", batching="along_dim", node="CumprodBackward0",
             forward=lambda x, dim: np.cumprod(x, axis=dim, dtype=_accumulator(x)),
             vjps=(_cumprod_vjp,), jvp=transposed_jvp, rule="∂(Πⱼ≤ᵢ xⱼ)/∂xₖ = Πⱼ≤ᵢ,ⱼ≠ₖ xⱼ for k ≤ i", saves=("xo",),
             nests=False, sym=lambda S, x, dim: S.along(S.cumprod_1d, x, dim), names=_scan("cumprod"))


def _first_along(mask: np.ndarray, axis: int) -> np.ndarray:
    """Keep only the first 1 along `axis`: PyTorch's max(dim) sends the gradient to one index."""
    first = np.cumsum(mask, axis=axis)
    return np.where((first == 1) & (mask == 1), 1.0, 0.0).astype(mask.dtype)


def _prod_others(x: np.ndarray, dim: tuple[int, ...] | None, out: np.ndarray) -> np.ndarray:
    """Product of all other elements of each reduction slice, exact when some are zero."""
    if dim is None:
        flat = x.reshape(-1)
        return _exclusive_product(flat, 0).reshape(x.shape)
    moved = np.moveaxis(x, dim, tuple(range(-len(dim), 0)))
    lead = moved.shape[:moved.ndim - len(dim)]
    flat = moved.reshape(lead + (-1,))
    others = _exclusive_product(flat, -1).reshape(moved.shape)
    return np.moveaxis(others, tuple(range(-len(dim), 0)), dim)


def _exclusive_product(x: np.ndarray, axis: int) -> np.ndarray:
    ones = np.ones_like(np.take(x, [0], axis=axis))
    before = np.cumprod(np.concatenate([ones, x], axis=axis), axis=axis)
    after = np.flip(np.cumprod(np.flip(np.concatenate([x, ones], axis=axis), axis), axis=axis), axis)
    n = x.shape[axis]
    return np.take(before, range(n), axis=axis) * np.take(after, range(1, n + 1), axis=axis)


NANSUM = Op(name="nansum", batching="along_dim", node="NansumBackward0",
            forward=lambda x, dim=None, keepdim=False: np.nansum(x, axis=dim, keepdims=keepdim),
            vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
                  ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape) * ns.where(x != x, 0.0, 1.0),),
            jvp=transposed_jvp, rule="∂Σx/∂xᵢ = 1, 0 where xᵢ is nan", saves=("x",), nests=False,
            sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.add_all, x, dim, keepdim),
            names=_public("nansum", "reduction", *_DIMS, _DTYPE))

OPS: tuple[Op, ...] = (
    SUM, MEAN, MAX, MIN, PROD, VAR, STD, NORM, SOFTMAX, LOG_SOFTMAX, LOGSUMEXP, AMAX, AMIN, MEDIAN, CUMSUM, CUMPROD,
    NANSUM,
)
"""This family's primitives, in `TABLE` (the package joins the families)."""
