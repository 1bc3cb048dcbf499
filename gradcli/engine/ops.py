"""THE op table: one entry per primitive, holding everything gradcli knows about it.

An entry is the NumPy forward, one VJP per differentiable input, the SymPy meaning used by
`--check`, PyTorch's node name and a one-line rule for `--explain` and `gradcli ops`. Everything
about an op's calculus lives here; the other places only give it a name a caller can reach.

Adding an op: its entry here (forward, `vjps`, `saves`, `sym`, `kink`, `rule`), listed in `TABLE`;
any array function its VJPs call on `ns` added to `_NumpyNamespace` and to `engine/functions.py`;
the user-facing function in `engine/functions.py` (`torch.X`), the method on `Tensor`
(`engine/tensor.py`) where PyTorch has one, and the name in `lang/builtins.py` (`FUNCTIONS`,
`TENSOR_METHODS`, and `OP_OF` for an alias); a new SymPy function its `sym` needs goes on `S` in
`check/meaning.py`, a new kink test its `kink` needs on `K` in `check/kinks.py`.
`tests/test_op_table.py` fails when the two `ns` namespaces or the parser and interpreter disagree.

VJPs are written once against a namespace `ns` that is either `NUMPY` (plain arrays, the fast
path) or the tensor functions (so `create_graph=True` records a differentiable backward graph
from the very same lines). Broadcasting is never undone here: the engine calls `unbroadcast`.

SymPy meanings receive `S`, the symbolic namespace of `gradcli.check.meaning`, so this module
never imports SymPy.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gradcli.engine import costs, sliding, special


@dataclass(frozen=True, eq=False, kw_only=True)
class Op:
    """One primitive. `vjps[i]` is called as `vjps[i](ns, g, out, *inputs, **params)`.

    `saves[i]` names the values `vjps[i]` reads: its input names (`args`, by default `x` for one
    input and `ab` for two) and `o` for the output. A node keeps only what the VJPs of inputs that
    require grad read, as PyTorch does: anything else is passed to the VJP as the input's graph
    node (shape, ndim and dtype, no data), so a long chain does not hold every intermediate.

    `nests` is False when the SymPy meaning only adds, multiplies or rearranges its operands'
    expressions (SymPy flattens those into one Add or Mul) and True when it wraps them in a
    function (exp, Max, a power): `--check` bounds how deep such functions nest, because SymPy's
    derivatives and printing recurse through every level.

    `elementwise` is True when each output element depends only on the input elements at its own
    (broadcast) position: `gradcli plot` sweeps a program built only of such ops in one batch.

    `cost` estimates the seconds the forward takes, from its input arrays and params (`engine/costs.py`), for an
    op that can run for minutes within the element cap: `apply` refuses it when that is more than the time left.

    `jvp` is forward mode's rule, `jvp(op, tangents, out, *inputs, **params)` on arrays (a tangent
    per input, None where an input has none), giving the output's tangent: one of the rules below
    (`diagonal_jvp`, `linear_jvp`, `sum_linear_jvp`, `product_jvp`, `transposed_jvp`) or the op's own.
    None: forward AD refuses the op, as PyTorch refuses an op with no forward derivative.
    """

    name: str
    node: str
    forward: Callable[..., Any]
    vjps: tuple[Callable[..., Any] | None, ...]
    rule: str
    saves: tuple[str, ...] = ()
    sym: Callable[..., Any] | None = None
    kink: Callable[..., Any] | None = None
    args: str = ""
    nests: bool = True
    elementwise: bool = False
    plans: tuple = field(default=(), repr=False)
    jvp: Callable[..., Any] | None = None
    cost: Callable[..., float] | None = None

    def __post_init__(self) -> None:
        if len(self.vjps) <= 3:
            names = self.args or ("x" if len(self.vjps) == 1 else "ab")
            plans = []
            for mask in range(1 << len(self.vjps)):
                read = "".join(s for i, s in enumerate(self.saves) if mask >> i & 1)
                plans.append((_kept(tuple(n in read for n in names)), "o" in read) if read else None)
            object.__setattr__(self, "plans", tuple(plans))

    def plan(self, mask: int) -> tuple[Any, bool] | None:
        """Which inputs (and whether the output) a node keeps when the inputs in bit `mask` require grad.

        None when nothing is read: such a node can run backward again after its graph is freed, as
        in PyTorch (`(x + x).sum()` twice works, `(x * 2).sum()` twice does not). `plans` holds the
        answers by mask, precomputed for up to three inputs (cat and stack read nothing). The
        inputs part is in `_kept`'s shorthand, which `Node` reads without looping.
        """
        return self.plans[mask] if self.plans else None


def _kept(keep: tuple[bool, ...]) -> Any:
    """Which inputs a node keeps, in the shorthand that costs `Node` the fewest steps per op: None
    for none of them, True for all, the position of the one kept input of two, else one flag per input."""
    if not any(keep):
        return None
    if all(keep):
        return True
    return keep.index(True) if len(keep) == 2 else keep


def unbroadcast(ns: Any, g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a gradient back to the shape its input had before broadcasting."""
    if g.shape == shape:
        return g
    axes = broadcast_axes(g.shape, shape)
    if axes:
        g = ns.sum(g, dim=axes, keepdim=True)
    return ns.reshape(g, shape)


def diagonal_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An elementwise op's Jacobian is diagonal, so it is its own transpose: the VJP applied to the tangent
    (broadcast to the output) is the JVP."""
    total = None
    for vjp, t in zip(op.vjps, tangents):
        if t is not None and vjp is not None:
            term = vjp(NUMPY, np.broadcast_to(t, out.shape), out, *args, **params)
            total = term if total is None else total + term
    return np.zeros(out.shape, out.dtype) if total is None else np.broadcast_to(total, out.shape)


def linear_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in its one tensor input (a view, a sum): the forward of the tangent."""
    return op.forward(tangents[0], *args[1:], **params)


def sum_linear_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in all its tensor inputs together (cat, stack, scatter): the forward of the tangents,
    zeros standing in for an input without one."""
    parts = [t if t is not None else np.zeros_like(a) if type(a) is np.ndarray and (i < len(op.vjps) or not op.vjps)
             else a for i, (a, t) in enumerate(zip(args, tangents))]
    return op.forward(*parts, **params)


def product_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in each input separately (matmul, cross, einsum): the product rule, one term per tangent."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = op.forward(*args[:i], t, *args[i + 1:], **params)
            total = term if total is None else total + term
    return np.zeros(out.shape, out.dtype) if total is None else total


def transposed_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """Any op whose VJPs are written against `ns`: a VJP is linear in the gradient g, so J·t is the gradient
    by g of ⟨VJP(g), t⟩, taken through the VJPs' own recorded ops (double backward)."""
    from gradcli.engine import functions as F
    from gradcli.engine.autograd import grad
    from gradcli.engine.tensor import GradMode, Tensor, _wrap
    g = _wrap(np.zeros(out.shape, out.dtype)).requires_grad_(True)
    inputs = tuple(_wrap(a) if type(a) is np.ndarray else a for a in args)
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        total = None
        for i, t in enumerate(tangents):
            if t is None or op.vjps[i] is None:
                continue
            v = unbroadcast(F, op.vjps[i](F, g, _wrap(out), *inputs, **params), np.shape(args[i]))
            term = (v * _wrap(np.asarray(t, dtype=out.dtype))).sum()
            total = term if total is None else total + term
        found = None if total is None or not isinstance(total, Tensor) or not total.requires_grad else \
            grad(total, g, allow_unused=True)[0]
    finally:
        GradMode.enabled = previous
    return np.zeros(out.shape, out.dtype) if found is None else found._data


def broadcast_axes(gshape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a gradient that `unbroadcast` sums away (`--explain` shows them too)."""
    lead = len(gshape) - len(shape)
    if not shape:  # a scalar parameter's gradient: every axis (each training step, per parameter)
        return tuple(range(lead))
    return tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)


def reduced_shape(shape: tuple[int, ...], dim: tuple[int, ...] | None) -> tuple[int, ...]:
    """The keepdim shape of a reduction, so a reduced gradient can broadcast back."""
    if dim is None:
        return (1,) * len(shape)
    return tuple(1 if i in dim else n for i, n in enumerate(shape))


def _back_to(ns: Any, g: Any, x: Any, dim: tuple[int, ...] | None, keepdim: bool) -> Any:
    """Reshape a reduced gradient (or value) to broadcast against the reduction's input."""
    if keepdim and dim is not None:
        return g
    return ns.reshape(g, reduced_shape(x.shape, dim))


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


def _nonzero(ns: Any, x: Any) -> Any:
    return ns.where(x == 0, 1.0, x)


def _pow_forward(a: Any, b: Any) -> Any:
    """PyTorch's integer-power fast paths: `x**2` is x*x and `x**3` is x*x*x, numerically as PyTorch
    computes them, and several times faster than NumPy's general `power` on small float arrays."""
    if (type(b) is int or type(b) is float) and type(a) is np.ndarray and a.dtype.kind == "f":
        if b == 2:
            return np.multiply(a, a)
        if b == 3:
            return np.multiply(np.multiply(a, a), a)
    return np.power(a, b)


def _pow_vjp_base(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    if isinstance(b, (int, float)):
        if b == 2 and ns is NUMPY:  # a ** 1 is a copy of a: the same numbers, one kernel fewer on x.pow(2)'s
            return g * b * a         # every backward; under create_graph PyTorch records a.pow(1), and so must we
        return g * b * a ** (b - 1) if b != 0 else g * 0.0
    return g * b * a ** ns.where(b == 0, 1.0, b - 1)


def _pow_vjp_exponent(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    """HIPS autograd's guard: log(0) never reaches the gradient, 0**b contributes 0."""
    if isinstance(a, (int, float)):
        return g * out * float(np.log(a)) if a != 0 else g * 0.0
    return g * out * ns.log(_nonzero(ns, a))


def _where_forward(cond: np.ndarray, a: Any, b: Any) -> np.ndarray:
    return np.where(cond, a, b)


def _tie_mask(ns: Any, x: Any, other: Any) -> Any:
    """PyTorch's maximum/minimum: the whole gradient to the winner, half to each on a tie."""
    return ns.where(x == other, 0.5, 1.0)


def _sum_forward(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
    """`np.add.reduce` is what `np.sum` calls (same numbers, same integer upcast) minus two Python
    wrappers: sums and norms run every iteration of a training loop."""
    return np.add.reduce(x, axis=dim, keepdims=keepdim)


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


def _softplus_forward(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    """PyTorch's softplus: log(1 + exp(beta·x))/beta, and x itself where beta·x passes the threshold."""
    bx = x * beta if beta != 1 else x
    soft = np.log1p(np.exp(np.minimum(bx, threshold)))
    return np.where(bx > threshold, x, soft / beta if beta != 1 else soft)


def _sigmoid_forward(x: np.ndarray) -> np.ndarray:
    """1/(1+e^-x) without overflow, and exact in relative terms for large negative x (which
    0.5·(tanh(x/2)+1) is not: it cancels to four digits at x = -30)."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _clamp_forward(x: np.ndarray, min: float | None = None, max: float | None = None) -> np.ndarray:
    return np.clip(x, min, max)


def _clamp_tensor_forward(x: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    """Tensor bounds broadcast against x; where lo > hi the result is hi, as in PyTorch."""
    return np.minimum(np.maximum(x, lo), hi)


def _clamp_mask(ns: Any, x: Any, min: float | None, max: float | None) -> Any:
    """PyTorch passes the gradient where min <= x <= max, boundaries included."""
    lo = ns.where(x >= min, 1.0, 0.0) if min is not None else 1.0
    hi = ns.where(x <= max, 1.0, 0.0) if max is not None else 1.0
    return lo * hi


def _index_forward(x: np.ndarray, key: Any) -> np.ndarray:
    """x[key]; where NumPy would give a scalar (every dimension indexed by an integer), the 0-d view of
    the same element, since PyTorch's `x[0]` is a view that an in-place update writes through."""
    out = x[key]
    return out if type(out) is np.ndarray else x[(key if isinstance(key, tuple) else (key,)) + (Ellipsis,)]


def _index_put_forward(g: np.ndarray, shape: tuple[int, ...], key: Any) -> np.ndarray:
    """Scatter-add `g` into zeros of `shape`: repeated integer indices accumulate."""
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def _cat_forward(*xs: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.concatenate(xs, axis=dim)


def _stack_forward(*xs: np.ndarray, dim: int = 0) -> np.ndarray:
    return np.stack(xs, axis=dim)


def _piece(ns: Any, g: Any, xs: tuple, i: int, dim: int) -> Any:
    start = sum(x.shape[dim] for x in xs[:i])
    key = (slice(None),) * dim + (slice(start, start + xs[i].shape[dim]),)
    return ns.index(g, key)


def _cat_vjps(count: int) -> tuple[Callable, ...]:
    return tuple((lambda i: lambda ns, g, out, *xs, dim=0: _piece(ns, g, xs, i, dim))(i) for i in range(count))


def _stack_vjps(count: int) -> tuple[Callable, ...]:
    return tuple((lambda i: lambda ns, g, out, *xs, dim=0: ns.index(g, (slice(None),) * dim + (i,)))(i)
                 for i in range(count))


def _expand_forward(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only broadcast view; where nothing is repeated (only sizes of 1 added), a writeable view,
    since PyTorch writes an in-place update of that one through to the input."""
    return np.reshape(x, shape) if math.prod(shape) == x.size else np.broadcast_to(x, shape)


def _swap(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    return np.swapaxes(x, dim0, dim1)


def _relu_forward(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0) if x.dtype.kind == "f" else np.maximum(x, 0)


def _unary(name: str, node: str, forward: Callable, vjp: Callable, rule: str, saves: str = "x",
           sym: Callable | None = None, kink: Callable | None = None, nests: bool = True) -> Op:
    """An elementwise op of one input; its JVP is therefore `diagonal_jvp`."""
    return Op(name=name, node=node, forward=forward, vjps=(vjp,), rule=rule, saves=(saves,) if saves else (),
              sym=sym, kink=kink, nests=nests, elementwise=True, jvp=diagonal_jvp)


def _sym_map(fn_name: str) -> Callable:
    """The SymPy meaning of an elementwise function: apply `S.<fn_name>` to every element."""
    return lambda S, x: S.map(getattr(S, fn_name), x)


def _binary_sym(S: Any, fn: Callable, a: Any, b: Any) -> Any:
    return S.broadcast(fn, a, b)


ADD = Op(name="add", node="AddBackward0", forward=np.add,
         vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: g),
         jvp=diagonal_jvp, rule="∂(a+b)/∂a = 1, ∂(a+b)/∂b = 1",
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.add, a, b))
SUB = Op(name="sub", node="SubBackward0", forward=np.subtract,
         vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g),
         jvp=diagonal_jvp, rule="∂(a-b)/∂a = 1, ∂(a-b)/∂b = -1",
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.sub, a, b))
ADD_ALPHA = Op(name="add_alpha", node="AddBackward0", forward=lambda a, b, alpha: np.add(a, b * alpha),
               vjps=(lambda ns, g, o, a, b, alpha: g, lambda ns, g, o, a, b, alpha: g * alpha),
               jvp=diagonal_jvp, rule="∂(a+α·b)/∂a = 1, ∂(a+α·b)/∂b = α", nests=False, elementwise=True,
               sym=lambda S, a, b, alpha: _binary_sym(S, lambda u, v: S.add(u, S.mul(v, S.number(alpha))), a, b))
SUB_ALPHA = Op(name="sub_alpha", node="SubBackward0",
               forward=lambda a, b, alpha: np.subtract(a, b * alpha),
               vjps=(lambda ns, g, o, a, b, alpha: g, lambda ns, g, o, a, b, alpha: -g * alpha),
               jvp=diagonal_jvp, rule="∂(a-α·b)/∂a = 1, ∂(a-α·b)/∂b = -α", nests=False, elementwise=True,
               sym=lambda S, a, b, alpha: _binary_sym(S, lambda u, v: S.sub(u, S.mul(v, S.number(alpha))), a, b))
MUL = Op(name="mul", node="MulBackward0", forward=np.multiply,
         vjps=(lambda ns, g, o, a, b: g * b, lambda ns, g, o, a, b: g * a),
         jvp=diagonal_jvp, rule="∂(a*b)/∂a = b, ∂(a*b)/∂b = a", saves=("b", "a"),
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.mul, a, b))
DIV = Op(name="div", node="DivBackward0", forward=np.true_divide,
         vjps=(lambda ns, g, o, a, b: g / b, lambda ns, g, o, a, b: -g * a / (b * b)),
         jvp=diagonal_jvp, rule="∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = -a/b²", saves=("b", "ab"),
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.div, a, b))
POW = Op(name="pow", node="PowBackward0", forward=_pow_forward, vjps=(_pow_vjp_base, _pow_vjp_exponent),
         jvp=diagonal_jvp, rule="∂(a**b)/∂a = b·a**(b-1), ∂(a**b)/∂b = a**b·log(a)", saves=("ab", "ao"),
         sym=lambda S, a, b: _binary_sym(S, S.pow, a, b),
         kink=lambda K, a, b: K.pow_kink(a, b), elementwise=True)
MAXIMUM = Op(name="maximum", node="MaximumBackward0", forward=np.maximum,
             vjps=(lambda ns, g, o, a, b: g * ns.where(a >= b, 1.0, 0.0) * _tie_mask(ns, a, b),
                   lambda ns, g, o, a, b: g * ns.where(b >= a, 1.0, 0.0) * _tie_mask(ns, a, b)),
             jvp=diagonal_jvp, rule="∂max(a,b)/∂a = [a>b] (+½ on a tie)", saves=("ab", "ab"),
             sym=lambda S, a, b: _binary_sym(S, S.Max, a, b),
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True)
MINIMUM = Op(name="minimum", node="MinimumBackward0", forward=np.minimum,
             vjps=(lambda ns, g, o, a, b: g * ns.where(a <= b, 1.0, 0.0) * _tie_mask(ns, a, b),
                   lambda ns, g, o, a, b: g * ns.where(b <= a, 1.0, 0.0) * _tie_mask(ns, a, b)),
             jvp=diagonal_jvp, rule="∂min(a,b)/∂a = [a<b] (+½ on a tie)", saves=("ab", "ab"),
             sym=lambda S, a, b: _binary_sym(S, S.Min, a, b),
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True)
WHERE = Op(name="where", node="WhereBackward0", forward=_where_forward,
           vjps=(None, lambda ns, g, o, c, a, b: ns.where(c, g, 0.0), lambda ns, g, o, c, a, b: ns.where(c, 0.0, g)),
           jvp=diagonal_jvp, rule="∂where(c,a,b)/∂a = [c], ∂/∂b = [not c]", saves=("", "c", "c"), args="cab",
           nests=False, elementwise=True, sym=lambda S, c, a, b: S.where(c, a, b))
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
CHOLESKY = Op(name="cholesky", node="LinalgCholeskyExBackward0", forward=_factorising(np.linalg.cholesky),
              vjps=(_cholesky_vjp,),
              jvp=transposed_jvp, rule="L = chol(A): Ā = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, symmetrised", saves=("o",),
              sym=lambda S, x: S.matrices(x, S.cholesky_of), kink=lambda K, x: K.asymmetric_kink(x),
              cost=costs.cubic)


NEG = _unary(name="neg", node="NegBackward0", forward=np.negative, vjp=lambda ns, g, o, x: -g, rule="∂(-x)/∂x = -1",
             saves="",
             nests=False, sym=lambda S, x: S.map(lambda u: -u, x))
EXP = _unary(name="exp", node="ExpBackward0", forward=np.exp, vjp=lambda ns, g, o, x: g * o,
             rule="∂exp(x)/∂x = exp(x)", saves="o",
             sym=_sym_map("exp"))
LOG = _unary(name="log", node="LogBackward0", forward=np.log, vjp=lambda ns, g, o, x: g / x, rule="∂log(x)/∂x = 1/x",
             sym=_sym_map("log"))
LOG1P = _unary(name="log1p", node="Log1PBackward0", forward=np.log1p, vjp=lambda ns, g, o, x: g / (x + 1.0),
               rule="∂log1p(x)/∂x = 1/(1+x)",
               sym=lambda S, x: S.map(lambda u: S.log(u + 1), x))
SQRT = _unary(name="sqrt", node="SqrtBackward0", forward=np.sqrt, vjp=lambda ns, g, o, x: g / (o * 2.0),
              rule="∂√x/∂x = 1/(2√x)", saves="o",
              sym=_sym_map("sqrt"), kink=lambda K, x: K.zero_kink(x))
ABS = _unary(name="abs", node="AbsBackward0", forward=np.abs, vjp=lambda ns, g, o, x: g * ns.sign(x),
             rule="∂|x|/∂x = sign(x) (0 at 0)",
             sym=_sym_map("Abs"), kink=lambda K, x: K.zero_kink(x))
SIGN = _unary(name="sign", node="SignBackward0", forward=np.sign, vjp=lambda ns, g, o, x: g * 0.0,
              rule="∂sign(x)/∂x = 0", saves="",
              sym=_sym_map("sign"), kink=lambda K, x: K.zero_kink(x))
SIN = _unary(name="sin", node="SinBackward0", forward=np.sin, vjp=lambda ns, g, o, x: g * ns.cos(x),
             rule="∂sin(x)/∂x = cos(x)",
             sym=_sym_map("sin"))
COS = _unary(name="cos", node="CosBackward0", forward=np.cos, vjp=lambda ns, g, o, x: -g * ns.sin(x),
             rule="∂cos(x)/∂x = -sin(x)",
             sym=_sym_map("cos"))
TAN = _unary(name="tan", node="TanBackward0", forward=np.tan, vjp=lambda ns, g, o, x: g * (o * o + 1.0),
             rule="∂tan(x)/∂x = 1 + tan²(x)", saves="o",
             sym=_sym_map("tan"))
TANH = _unary(name="tanh", node="TanhBackward0", forward=np.tanh, vjp=lambda ns, g, o, x: g * (1.0 - o * o),
              rule="∂tanh(x)/∂x = 1 - tanh²(x)",
              saves="o", sym=_sym_map("tanh"))
SIGMOID = _unary(name="sigmoid", node="SigmoidBackward0", forward=_sigmoid_forward,
                 vjp=lambda ns, g, o, x: g * o * (1.0 - o),
                 rule="∂σ(x)/∂x = σ(x)(1-σ(x))", saves="o", sym=lambda S, x: S.map(lambda u: 1 / (1 + S.exp(-u)), x))
def _relu_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    """Read from the result, as PyTorch's threshold_backward(g, result, 0) is: under create_graph the
    gradient stays on the result's graph with a zero derivative, so every further derivative passes
    through relu's node again and still requires grad (0 with a grad_fn at each order, as PyTorch's)."""
    if ns is NUMPY:
        # a product with the mask, not np.where (whose random branches cost 10x); + 0.0 turns the -0.0 of a
        # negative g into PyTorch's 0; a Python float keeps g's dtype (a float32 gradient stays float32)
        return g * (o > 0) + 0.0
    return ns.where(o > 0, g, o * 0.0)


RELU = _unary(name="relu", node="ReluBackward0", forward=_relu_forward,
              vjp=_relu_vjp, rule="∂relu(x)/∂x = [x>0] (0 at 0)", saves="o", sym=lambda S, x: S.map(lambda u: S.Max(u, 0), x),
              kink=lambda K, x: K.zero_kink(x))
SOFTPLUS = _unary(name="softplus", node="SoftplusBackward0", forward=_softplus_forward,
                  vjp=lambda ns, g, o, x, beta=1.0, threshold=20.0:
                  g * ns.where(x * beta > threshold, 1.0, ns.sigmoid(x * beta)),
                  rule="∂softplus(x)/∂x = σ(βx)",
                  sym=lambda S, x, beta=1.0, threshold=20.0: S.map(
                      lambda u: S.div(S.log(1 + S.exp(S.mul(u, S.number(beta)))), S.number(beta)), x))
CLAMP = Op(name="clamp", node="ClampBackward1", forward=_clamp_forward,
           vjps=(lambda ns, g, o, x, min=None, max=None: g * _clamp_mask(ns, x, min, max),),
           jvp=transposed_jvp, rule="∂clamp(x,lo,hi)/∂x = [lo ≤ x ≤ hi]", saves=("x",),
           sym=lambda S, x, min=None, max=None: S.map(lambda u: S.clamp(u, min, max), x),
           kink=lambda K, x, min=None, max=None: K.clamp_kink(x, min, max), elementwise=True)

CLAMP_TENSOR = Op(name="clamp_tensor", node="ClampBackward0", forward=_clamp_tensor_forward,
                  vjps=(lambda ns, g, o, x, lo, hi: g * ns.where(x >= lo, 1.0, 0.0) * ns.where(x <= hi, 1.0, 0.0),
                        lambda ns, g, o, x, lo, hi: g * ns.where(x < lo, 1.0, 0.0) * ns.where(lo < hi, 1.0, 0.0),
                        lambda ns, g, o, x, lo, hi: g * ns.where(x > hi, 1.0, ns.where(hi < lo, 1.0, 0.0))),
                  jvp=diagonal_jvp, rule="∂clamp(x,lo,hi)/∂x = [lo ≤ x ≤ hi], ∂/∂lo = [x < lo], ∂/∂hi = [x > hi]",
                  saves=("xab", "xab", "xab"), args="xab",
                  sym=lambda S, x, lo, hi: _binary_sym(S, S.Min, _binary_sym(S, S.Max, x, lo), hi),
                  kink=lambda K, x, lo, hi: K.tie_kink(x, lo) | K.tie_kink(x, hi))

# -- more elementwise functions (torch.asin ... torch.addcdiv) ---------------------------------
_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))
_TWO_OVER_ROOT_PI, _ROOT_PI_OVER_TWO = float(2 / np.sqrt(np.pi)), float(np.sqrt(np.pi) / 2)


def _zero_vjp(ns: Any, g: Any, o: Any, x: Any, **params: Any) -> Any:
    """Steps (floor, round, ...): PyTorch's gradient is zero everywhere, the jumps included."""
    return g * 0.0


def _step(name: str, node: str, forward: Callable, kink: Callable) -> Op:
    return _unary(name=name, node=node, forward=forward, vjp=_zero_vjp, rule=f"∂{name}(x)/∂x = 0 (0 at the jumps too)",
                  saves="", sym=_sym_map(name), kink=kink)


def _round_forward(x: np.ndarray, decimals: int = 0) -> np.ndarray:
    return np.round(x, decimals)


def _logit_forward(x: np.ndarray, eps: float | None = None) -> np.ndarray:
    z = x if eps is None else np.clip(x, eps, 1.0 - eps)
    return np.log(z / (1.0 - z))


def _logit_vjp(ns: Any, g: Any, o: Any, x: Any, eps: float | None = None) -> Any:
    """PyTorch's: zero outside [eps, 1-eps] when eps is given."""
    d = g / (x * (1.0 - x))
    return d if eps is None else d * _clamp_mask(ns, x, eps, 1.0 - eps)


def _xlogy_forward(a: Any, b: Any) -> np.ndarray:
    """x·log(y), and 0 where x is 0 (unless y is nan), as PyTorch defines it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((np.asarray(a) == 0) & ~np.isnan(b), 0.0, a * np.log(b))


def _lerp_forward(a: Any, b: Any, w: Any) -> np.ndarray:
    """PyTorch's two-sided formula: exact at both ends (weight 0 gives start, 1 gives end)."""
    return np.where(np.asarray(w) < 0.5, a + w * (b - a), b - (b - a) * (1.0 - np.asarray(w)))


def _fmax_winner(ns: Any, a: Any, b: Any, pick: Callable) -> Any:
    """Where fmax/fmin takes `a`: it wins ties and beats a nan `b` (PyTorch's rule)."""
    return ns.where(b != b, 1.0, ns.where(pick(a, b), 1.0, 0.0))


def _inverse_square_radius(ns: Any, a: Any, b: Any) -> Any:
    """1/(a²+b²) for atan2's gradient, and 0 at the origin as PyTorch gives."""
    r2 = a * a + b * b
    return ns.where(r2 == 0, 0.0, 1.0 / ns.where(r2 == 0, 1.0, r2))


def _nan_free_binary(forward: Callable) -> Callable:
    def run(a: Any, b: Any) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return forward(a, b)
    return run


ASIN = _unary(name="asin", node="AsinBackward0", forward=np.arcsin, vjp=lambda ns, g, o, x: g / ns.sqrt(1.0 - x * x),
              rule="∂asin(x)/∂x = 1/√(1-x²)", sym=_sym_map("asin"))
ACOS = _unary(name="acos", node="AcosBackward0", forward=np.arccos, vjp=lambda ns, g, o, x: -g / ns.sqrt(1.0 - x * x),
              rule="∂acos(x)/∂x = -1/√(1-x²)", sym=_sym_map("acos"))
ATAN = _unary(name="atan", node="AtanBackward0", forward=np.arctan, vjp=lambda ns, g, o, x: g / (x * x + 1.0),
              rule="∂atan(x)/∂x = 1/(1+x²)", sym=_sym_map("atan"))
SINH = _unary(name="sinh", node="SinhBackward0", forward=np.sinh, vjp=lambda ns, g, o, x: g * ns.cosh(x),
              rule="∂sinh(x)/∂x = cosh(x)", sym=_sym_map("sinh"))
COSH = _unary(name="cosh", node="CoshBackward0", forward=np.cosh, vjp=lambda ns, g, o, x: g * ns.sinh(x),
              rule="∂cosh(x)/∂x = sinh(x)", sym=_sym_map("cosh"))
ASINH = _unary(name="asinh", node="AsinhBackward0", forward=np.arcsinh,
               vjp=lambda ns, g, o, x: g / ns.sqrt(x * x + 1.0), rule="∂asinh(x)/∂x = 1/√(x²+1)", sym=_sym_map("asinh"))
ACOSH = _unary(name="acosh", node="AcoshBackward0", forward=np.arccosh,
               vjp=lambda ns, g, o, x: g / ns.sqrt(x * x - 1.0), rule="∂acosh(x)/∂x = 1/√(x²-1)", sym=_sym_map("acosh"))
ATANH = _unary(name="atanh", node="AtanhBackward0", forward=np.arctanh, vjp=lambda ns, g, o, x: g / (1.0 - x * x),
               rule="∂atanh(x)/∂x = 1/(1-x²)", sym=_sym_map("atanh"))
LOG2 = _unary(name="log2", node="Log2Backward0", forward=np.log2, vjp=lambda ns, g, o, x: g / (x * _LN2),
              rule="∂log₂(x)/∂x = 1/(x·ln 2)", sym=_sym_map("log2"))
LOG10 = _unary(name="log10", node="Log10Backward0", forward=np.log10, vjp=lambda ns, g, o, x: g / (x * _LN10),
               rule="∂log₁₀(x)/∂x = 1/(x·ln 10)", sym=_sym_map("log10"))
EXP2 = _unary(name="exp2", node="Exp2Backward0", forward=np.exp2, vjp=lambda ns, g, o, x: g * o * _LN2,
              rule="∂2ˣ/∂x = 2ˣ·ln 2", saves="o", sym=_sym_map("exp2"))
EXPM1 = _unary(name="expm1", node="Expm1Backward0", forward=np.expm1, vjp=lambda ns, g, o, x: g * (o + 1.0),
               rule="∂(eˣ-1)/∂x = eˣ", saves="o", sym=_sym_map("expm1"))
ERF = _unary(name="erf", node="ErfBackward0", forward=special.erf,
             vjp=lambda ns, g, o, x: g * _TWO_OVER_ROOT_PI * ns.exp(-(x * x)),
             rule="∂erf(x)/∂x = 2/√π·e^(-x²)", sym=_sym_map("erf"))
ERFC = _unary(name="erfc", node="ErfcBackward0", forward=special.erfc,
              vjp=lambda ns, g, o, x: g * -_TWO_OVER_ROOT_PI * ns.exp(-(x * x)),
              rule="∂erfc(x)/∂x = -2/√π·e^(-x²)", sym=_sym_map("erfc"))
ERFINV = _unary(name="erfinv", node="ErfinvBackward0", forward=special.erfinv,
                vjp=lambda ns, g, o, x: g * _ROOT_PI_OVER_TWO * ns.exp(o * o),
                rule="∂erfinv(x)/∂x = √π/2·e^(erfinv(x)²)", saves="o", sym=_sym_map("erfinv"))
RSQRT = _unary(name="rsqrt", node="RsqrtBackward0", forward=lambda x: 1.0 / np.sqrt(x),
               vjp=lambda ns, g, o, x: g * -0.5 * o * o * o, rule="∂x^(-1/2)/∂x = -½·x^(-3/2)", saves="o",
               sym=_sym_map("rsqrt"), kink=lambda K, x: K.zero_kink(x))
RECIPROCAL = _unary(name="reciprocal", node="ReciprocalBackward0", forward=lambda x: 1.0 / x,
                    vjp=lambda ns, g, o, x: -g * o * o, rule="∂(1/x)/∂x = -1/x²", saves="o",
                    sym=_sym_map("reciprocal"))
LGAMMA = _unary(name="lgamma", node="LgammaBackward0", forward=special.lgamma,
                vjp=lambda ns, g, o, x: g * ns.digamma(x), rule="∂log|Γ(x)|/∂x = ψ(x)", sym=_sym_map("lgamma"))
DIGAMMA = _unary(name="digamma", node="DigammaBackward0", forward=special.digamma,
                 vjp=lambda ns, g, o, x: g * ns.polygamma(1, x), rule="∂ψ(x)/∂x = ψ⁽¹⁾(x)", sym=_sym_map("digamma"))
POLYGAMMA = Op(name="polygamma", node="PolygammaBackward0", forward=lambda x, n: special.polygamma(n, x),
               vjps=(lambda ns, g, o, x, n: g * ns.polygamma(n + 1, x),),
               jvp=diagonal_jvp, rule="∂ψ⁽ⁿ⁾(x)/∂x = ψ⁽ⁿ⁺¹⁾(x)",
               saves=("x",), sym=lambda S, x, n: S.map(lambda u: S.polygamma(n, u), x))
LOGIT = Op(name="logit", node="LogitBackward0", forward=_logit_forward, vjps=(_logit_vjp,),
           jvp=diagonal_jvp, rule="∂log(x/(1-x))/∂x = 1/(x(1-x)) (0 outside [eps, 1-eps])", saves=("x",),
           sym=lambda S, x, eps=None: S.map(lambda u: S.logit(u, eps), x),
           kink=lambda K, x, eps=None: K.clamp_kink(x, eps, None if eps is None else 1.0 - eps))
FLOOR = _step("floor", "FloorBackward0", np.floor, lambda K, x: K.jump_kink(x, 0.0))
CEIL = _step("ceil", "CeilBackward0", np.ceil, lambda K, x: K.jump_kink(x, 0.0))
TRUNC = _step("trunc", "TruncBackward0", np.trunc, lambda K, x: K.jump_kink(x, 0.0))
ROUND = Op(name="round", node="RoundBackward0", forward=_round_forward, vjps=(_zero_vjp,),
           jvp=diagonal_jvp, rule="∂round(x)/∂x = 0 (0 at the jumps too)", sym=lambda S, x, decimals=0: S.map(
               lambda u: S.round(u, decimals), x), kink=lambda K, x, decimals=0: K.jump_kink(x * 10.0 ** decimals, 0.5))
FRAC = _unary(name="frac", node="FracBackward0", forward=lambda x: x - np.trunc(x), vjp=lambda ns, g, o, x: g,
              rule="∂(x - trunc(x))/∂x = 1", saves="", sym=_sym_map("frac"), kink=lambda K, x: K.jump_kink(x, 0.0))

ATAN2 = Op(name="atan2", node="Atan2Backward0", forward=np.arctan2,
           vjps=(lambda ns, g, o, a, b: g * b * _inverse_square_radius(ns, a, b),
                 lambda ns, g, o, a, b: -g * a * _inverse_square_radius(ns, a, b)),
           jvp=diagonal_jvp, rule="∂atan2(a,b)/∂a = b/(a²+b²), ∂/∂b = -a/(a²+b²)", saves=("ab", "ab"),
           sym=lambda S, a, b: _binary_sym(S, S.atan2, a, b), kink=lambda K, a, b: K.origin_kink(a, b))
HYPOT = Op(name="hypot", node="HypotBackward0", forward=np.hypot,
           vjps=(lambda ns, g, o, a, b: g * a / o, lambda ns, g, o, a, b: g * b / o),
           jvp=diagonal_jvp, rule="∂√(a²+b²)/∂a = a/√(a²+b²)", saves=("ao", "bo"),
           sym=lambda S, a, b: _binary_sym(S, S.hypot, a, b), kink=lambda K, a, b: K.origin_kink(a, b))
FMOD = Op(name="fmod", node="FmodBackward1", forward=_nan_free_binary(np.fmod),
          vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g * ns.trunc(a / b)),
          jvp=diagonal_jvp, rule="∂fmod(a,b)/∂a = 1, ∂/∂b = -trunc(a/b)", saves=("", "ab"),
          sym=lambda S, a, b: _binary_sym(S, S.fmod, a, b), kink=lambda K, a, b: K.divides_kink(a, b))
REMAINDER = Op(name="remainder", node="RemainderBackward1", forward=_nan_free_binary(np.remainder),
               vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g * ns.floor(a / b)),
               jvp=diagonal_jvp, rule="∂remainder(a,b)/∂a = 1, ∂/∂b = -floor(a/b)", saves=("", "ab"),
               sym=lambda S, a, b: _binary_sym(S, S.remainder, a, b), kink=lambda K, a, b: K.divides_kink(a, b))

def _rounded_division(rounding: Callable[[np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    """a / b rounded; integers divide into integers, as PyTorch's `div(..., rounding_mode=)` does."""
    def forward(a: Any, b: Any) -> np.ndarray:
        kind = np.result_type(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            quotient = rounding(np.true_divide(a, b))
        return quotient.astype(kind) if kind.kind in "iu" else quotient
    return forward


def _rounded_div(mode: str, rounding: Callable[[np.ndarray], np.ndarray]) -> Op:
    return Op(name=f"div_{mode}", node="DivBackward2", forward=_rounded_division(rounding),
              vjps=(lambda ns, g, o, a, b: g * 0.0, lambda ns, g, o, a, b: g * 0.0),
              jvp=diagonal_jvp, rule=f"∂{mode}(a/b)/∂a = ∂/∂b = 0 (0 at the jumps too)",
              sym=lambda S, a, b: _binary_sym(S, lambda u, v: getattr(S, mode)(S.div(u, v)), a, b),
              kink=lambda K, a, b: K.divides_kink(a, b), elementwise=True)


DIV_TRUNC = _rounded_div("trunc", np.trunc)
DIV_FLOOR = _rounded_div("floor", np.floor)


XLOGY = Op(name="xlogy", node="XlogyBackward0", forward=_xlogy_forward,
           vjps=(lambda ns, g, o, a, b: g * ns.where(a == 0, ns.where(b <= 0, 0.0, ns.log(b)), ns.log(b)),
                 lambda ns, g, o, a, b: g * a / b),
           jvp=diagonal_jvp, rule="∂(a·log b)/∂a = log b (0 where a = 0 and b ≤ 0), ∂/∂b = a/b", saves=("ab", "ab"),
           sym=lambda S, a, b: _binary_sym(S, S.xlogy, a, b), kink=lambda K, a, b: K.zero_first_kink(a, b))
FMAX = Op(name="fmax", node="FmaxBackward0", forward=np.fmax,
          vjps=(lambda ns, g, o, a, b: g * _fmax_winner(ns, a, b, lambda u, v: u >= v),
                lambda ns, g, o, a, b: g * (1.0 - _fmax_winner(ns, a, b, lambda u, v: u >= v))),
          jvp=diagonal_jvp, rule="∂fmax(a,b)/∂a = [a ≥ b or b is nan]", saves=("ab", "ab"),
          sym=lambda S, a, b: _binary_sym(S, S.Max, a, b), kink=lambda K, a, b: K.tie_kink(a, b))
FMIN = Op(name="fmin", node="FminBackward0", forward=np.fmin,
          vjps=(lambda ns, g, o, a, b: g * _fmax_winner(ns, a, b, lambda u, v: u <= v),
                lambda ns, g, o, a, b: g * (1.0 - _fmax_winner(ns, a, b, lambda u, v: u <= v))),
          jvp=diagonal_jvp, rule="∂fmin(a,b)/∂a = [a ≤ b or b is nan]", saves=("ab", "ab"),
          sym=lambda S, a, b: _binary_sym(S, S.Min, a, b), kink=lambda K, a, b: K.tie_kink(a, b))
LERP = Op(name="lerp", node="LerpBackward1", forward=_lerp_forward,
          vjps=(lambda ns, g, o, a, b, w: g * (1.0 - w), lambda ns, g, o, a, b, w: g * w,
                lambda ns, g, o, a, b, w: g * (b - a)),
          jvp=diagonal_jvp, rule="∂lerp(a,b,w)/∂a = 1-w, ∂/∂b = w, ∂/∂w = b-a", saves=("w", "w", "ab"), args="abw",
          nests=False, sym=lambda S, a, b, w: S.lerp(a, b, w))
ADDCMUL = Op(name="addcmul", node="AddcmulBackward0", forward=lambda x, a, b, value=1.0: x + value * a * b,
             vjps=(lambda ns, g, o, x, a, b, value=1.0: g, lambda ns, g, o, x, a, b, value=1.0: g * b * value,
                   lambda ns, g, o, x, a, b, value=1.0: g * a * value),
             jvp=diagonal_jvp, rule="∂(x + v·a·b)/∂a = v·b", saves=("", "b", "a"), args="xab",
             nests=False, sym=lambda S, x, a, b, value=1.0: S.addc(S.mul, x, a, b, value))
ADDCDIV = Op(name="addcdiv", node="AddcdivBackward0", forward=lambda x, a, b, value=1.0: x + value * a / b,
             vjps=(lambda ns, g, o, x, a, b, value=1.0: g, lambda ns, g, o, x, a, b, value=1.0: g * value / b,
                   lambda ns, g, o, x, a, b, value=1.0: -g * value * a / (b * b)),
             jvp=diagonal_jvp, rule="∂(x + v·a/b)/∂a = v/b, ∂/∂b = -v·a/b²", saves=("", "b", "ab"), args="xab",
             nests=False, sym=lambda S, x, a, b, value=1.0: S.addc(S.div, x, a, b, value))


SUM = Op(name="sum", node="SumBackward1", forward=_sum_forward,
         vjps=(lambda ns, g, o, x, dim=None, keepdim=False: ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape),),
         jvp=linear_jvp, rule="∂Σx/∂xᵢ = 1",
         nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.add_all, x, dim, keepdim))
MEAN = Op(name="mean", node="MeanBackward1", forward=_mean_forward,
          vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
           ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape) * _per(_count(x, dim)),),
          jvp=linear_jvp, rule="∂mean(x)/∂xᵢ = 1/n",
          nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mean_all, x, dim, keepdim))
MAX = Op(name="max", node="MaxBackward0", forward=_extremum_forward(np.max), vjps=(_extremum_vjp,),
         jvp=transposed_jvp, rule="∂max(x)/∂xᵢ = [xᵢ is the max] (ties share)", saves=("xo",),
         sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.max_all, x, dim, keepdim),
         kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.max))
MIN = Op(name="min", node="MinBackward0", forward=_extremum_forward(np.min), vjps=(_extremum_vjp,),
         jvp=transposed_jvp, rule="∂min(x)/∂xᵢ = [xᵢ is the min] (ties share)", saves=("xo",),
         sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.min_all, x, dim, keepdim),
         kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.min))
PROD = Op(name="prod", node="ProdBackward1", forward=lambda x, dim=None,
          keepdim=False: np.prod(x, axis=dim, keepdims=keepdim),
          vjps=(_prod_vjp,), jvp=transposed_jvp, rule="∂Πx/∂xᵢ = Π_{j≠i} xⱼ", saves=("xo",),
          sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mul_all, x, dim, keepdim))
VAR = Op(name="var", node="VarBackward0", forward=_var_forward, vjps=(_var_vjp,),
         jvp=transposed_jvp, rule="∂var(x)/∂xᵢ = 2(xᵢ-x̄)/(n-c)", saves=("x",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.var_all(v, correction), x, dim, keepdim))
STD = Op(name="std", node="StdBackward0", forward=_std_forward, vjps=(_std_vjp,),
         jvp=transposed_jvp, rule="∂std(x)/∂xᵢ = (xᵢ-x̄)/((n-c)·std)", saves=("xo",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.sqrt(S.var_all(v, correction)), x, dim, keepdim))
NORM = Op(name="norm", node="LinalgVectorNormBackward0", forward=_norm_forward, vjps=(_norm_vjp,),
          jvp=transposed_jvp, rule="∂‖x‖₂/∂xᵢ = xᵢ/‖x‖₂ (0 at 0)",
          saves=("xo",),
          sym=lambda S, x, p=2.0, dim=None, keepdim=False: S.reduce(lambda v: S.norm_all(v, p), x, dim, keepdim),
          kink=lambda K, x, p=2.0, dim=None, keepdim=False: K.norm_kink(x, p, dim))
SOFTMAX = Op(name="softmax", node="SoftmaxBackward0", forward=_softmax_forward,
             vjps=(lambda ns, g, o, x, dim: o * (g - ns.sum(g * o, dim=(dim,), keepdim=True)),),
             jvp=transposed_jvp, rule="∂softmax(x)ᵢ/∂xⱼ = sᵢ(δᵢⱼ - sⱼ)", saves=("o",),
             sym=lambda S, x, dim: S.along(S.softmax_1d, x, dim))
LOG_SOFTMAX = Op(name="log_softmax", node="LogSoftmaxBackward0", forward=_log_softmax_forward,
                 vjps=(lambda ns, g, o, x, dim: g - ns.exp(o) * ns.sum(g, dim=(dim,), keepdim=True),),
                 jvp=transposed_jvp, rule="∂log_softmax(x)ᵢ/∂xⱼ = δᵢⱼ - sⱼ", saves=("o",),
                 sym=lambda S, x, dim: S.along(S.log_softmax_1d, x, dim))

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


LOGSUMEXP = Op(name="logsumexp", node="LogsumexpBackward0", forward=_logsumexp_forward,
               vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
                     _back_to(ns, g, x, dim, keepdim) * ns.exp(x - _back_to(ns, o, x, dim, keepdim)),),
               jvp=transposed_jvp, rule="∂logΣexp(x)/∂xᵢ = exp(xᵢ - logΣexp(x))", saves=("xo",),
               sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.logsumexp_all, x, dim, keepdim))
AMAX = Op(name="amax", node="AmaxBackward0", forward=_extremum_forward(np.max), vjps=(_share_vjp,),
          jvp=transposed_jvp, rule="∂amax(x)/∂xᵢ = [xᵢ is the max] (ties share evenly)", saves=("xo",),
          sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.max_all, x, dim, keepdim),
          kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.max))
AMIN = Op(name="amin", node="AminBackward0", forward=_extremum_forward(np.min), vjps=(_share_vjp,),
          jvp=transposed_jvp, rule="∂amin(x)/∂xᵢ = [xᵢ is the min] (ties share evenly)", saves=("xo",),
          sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.min_all, x, dim, keepdim),
          kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.min))
MEDIAN = Op(name="median", node="MedianBackward0", forward=lambda x, at: x.reshape(-1)[at],
            vjps=(lambda ns, g, o, x, at: _share_vjp(ns, g, o, x),),
            jvp=transposed_jvp, rule="∂median(x)/∂xᵢ = [xᵢ is the median] (ties share evenly)", saves=("xo",),
            nests=False, sym=lambda S, x, at: S.as_array(x.reshape(-1)[at]), kink=lambda K, x, at: K.median_kink(x, at))
CUMSUM = Op(name="cumsum", node="CumsumBackward0", forward=lambda x, dim: np.cumsum(x, axis=dim),
            vjps=(lambda ns, g, o, x, dim: _reverse_cumsum(ns, g, dim),),
            jvp=linear_jvp, rule="∂(Σⱼ≤ᵢ xⱼ)/∂xₖ = [k ≤ i]: the gradient summed from the end",
            nests=False, sym=lambda S, x, dim: S.along(S.cumsum_1d, x, dim))
CUMPROD = Op(name="cumprod", node="CumprodBackward0", forward=lambda x, dim: np.cumprod(x, axis=dim),
             vjps=(_cumprod_vjp,), jvp=transposed_jvp, rule="∂(Πⱼ≤ᵢ xⱼ)/∂xₖ = Πⱼ≤ᵢ,ⱼ≠ₖ xⱼ for k ≤ i", saves=("xo",),
             nests=False, sym=lambda S, x, dim: S.along(S.cumprod_1d, x, dim))


RESHAPE = Op(name="reshape", node="ViewBackward0", forward=lambda x, shape: np.reshape(x, shape),
             vjps=(lambda ns, g, o, x, shape: ns.reshape(g, x.shape),),
             jvp=linear_jvp, rule="reshape back to the input's shape",
             nests=False, sym=lambda S, x, shape: x.reshape(shape))
TRANSPOSE = Op(name="transpose", node="TransposeBackward0", forward=_swap,
               vjps=(lambda ns, g, o, x, dim0, dim1: ns.transpose(g, dim0, dim1),),
               jvp=linear_jvp, rule="transpose the gradient back",
               nests=False, sym=lambda S, x, dim0, dim1: np.swapaxes(x, dim0, dim1))
PERMUTE = Op(name="permute", node="PermuteBackward0", forward=lambda x, dims: np.transpose(x, dims),
             vjps=(lambda ns, g, o, x, dims: ns.permute(g, tuple(np.argsort(dims))),),
             jvp=linear_jvp, rule="permute the gradient back",
             nests=False, sym=lambda S, x, dims: np.transpose(x, dims))
EXPAND = Op(name="expand", node="ExpandBackward0", forward=_expand_forward,
            vjps=(lambda ns, g, o, x, shape: g,), jvp=linear_jvp, rule="sum the gradient over the expanded axes",
            nests=False, sym=lambda S, x, shape: np.broadcast_to(x, shape))
INDEX = Op(name="index", node="IndexBackward0", forward=_index_forward,
           vjps=(lambda ns, g, o, x, key: ns.index_put(g, x.shape, key),),
           jvp=linear_jvp, rule="scatter the gradient back into zeros",
           nests=False, sym=lambda S, x, key: S.as_array(x[key]))
INDEX_PUT = Op(name="index_put", node="IndexPutBackward0", forward=_index_put_forward,
               vjps=(lambda ns, g, o, v, shape, key: ns.index(g, key),),
               jvp=linear_jvp, rule="gather the gradient at the indices",
               nests=False, sym=lambda S, v, shape, key: S.index_put(v, shape, key))
CAT = Op(name="cat", node="CatBackward0", forward=_cat_forward, vjps=(),
         jvp=sum_linear_jvp, rule="split the gradient back along dim",
         nests=False, sym=lambda S, *xs, dim=0: np.concatenate(xs, axis=dim))
STACK = Op(name="stack", node="StackBackward0", forward=_stack_forward, vjps=(),
           jvp=sum_linear_jvp, rule="select each input's slice of the gradient",
           nests=False, sym=lambda S, *xs, dim=0: np.stack(xs, axis=dim))

# -- more shapes and indexing (flip ... einsum) ----------------------------------------------------
def _repeat_forward(x: np.ndarray, repeats: tuple[int, ...]) -> np.ndarray:
    return np.tile(x, repeats)


def _repeat_vjp(ns: Any, g: Any, out: Any, x: Any, repeats: tuple[int, ...]) -> Any:
    """Each output axis of size r·n splits into (r, n); summing the r copies gives the input's gradient."""
    lead = len(repeats) - x.ndim
    shape = (1,) * lead + tuple(x.shape)
    split = tuple(n for r, s in zip(repeats, shape) for n in (r, s))
    summed = ns.sum(ns.reshape(g, split), dim=tuple(range(0, 2 * len(repeats), 2)))
    return ns.reshape(summed, x.shape)


def _triangle(upper: bool) -> Callable:
    def forward(x: np.ndarray, diagonal: int = 0) -> np.ndarray:
        return np.triu(x, diagonal) if upper else np.tril(x, diagonal)
    return forward


def _triangle_mask(shape: tuple[int, ...], diagonal: int, upper: bool) -> np.ndarray:
    rows, cols = np.indices(shape[-2:], sparse=True)
    return cols - rows >= diagonal if upper else cols - rows <= diagonal


def _diagonal_forward(x: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(x, offset, dim1, dim2).copy()


def _diag_embed_forward(x: np.ndarray, offset: int = 0, dim1: int = -2, dim2: int = -1) -> np.ndarray:
    """The last axis of x on the `offset` diagonal of two new axes (dim1, dim2) of the output."""
    m = x.shape[-1]
    n = m + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    row, col = max(-offset, 0), max(offset, 0)
    np.einsum("...ii->...i", out[..., row:row + m, col:col + m])[...] = x
    ndim = out.ndim
    return np.moveaxis(out, (-2, -1), (dim1 % ndim, dim2 % ndim))


def _diag_embed_vjp(ns: Any, g: Any, out: Any, x: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    return ns.diagonal(g, offset, dim1 % g.ndim, dim2 % g.ndim)


def _scatter_forward(x: np.ndarray, src: Any, key: tuple) -> np.ndarray:
    out = np.array(x, copy=True)
    out[key] = _scattered(src, key)
    return out


def _scattered(src: Any, key: tuple) -> Any:
    """The source values that land at `key`: the leading block of src (index's shape), or a number."""
    src = np.asarray(src)
    if src.ndim == 0:
        return src
    shape = np.broadcast_shapes(*(np.shape(k) for k in key))
    return src[tuple(slice(0, n) for n in shape)]


def _scatter_add_forward(x: np.ndarray, src: np.ndarray, key: tuple) -> np.ndarray:
    out = np.array(x, copy=True)
    np.add.at(out, key, _scattered(src, key))
    return out


def _untouched(shape: tuple[int, ...], key: tuple, dtype: np.dtype) -> np.ndarray:
    """1 where scatter keeps the input, 0 where it writes over it."""
    mask = np.ones(shape, dtype=dtype)
    mask[key] = 0
    return mask


def _src_gradient(ns: Any, g: Any, src: Any, key: tuple) -> Any:
    """The gradient gathered at `key`, put back in src's shape (zeros past index's block)."""
    picked = ns.index(g, key)
    if picked.shape == src.shape:
        return picked
    pieces = tuple(slice(0, n) for n in picked.shape)
    return ns.index_put(picked, src.shape, pieces)


def _roll_forward(x: np.ndarray, shifts: tuple[int, ...], dims: tuple[int, ...] | None = None) -> np.ndarray:
    """Without dims, the flattened tensor rolls (by its one shift) and keeps its shape."""
    return np.roll(x, shifts[0] if dims is None else shifts, dims)


def _roll_vjp(ns: Any, g: Any, out: Any, x: Any, shifts: tuple[int, ...], dims: tuple[int, ...] | None) -> Any:
    return ns.roll(g, tuple(-s for s in shifts), dims)


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


FLIP = Op(name="flip", node="FlipBackward0", forward=lambda x, dims: np.flip(x, dims).copy(),  # a copy, as PyTorch's
          vjps=(lambda ns, g, o, x, dims: ns.flip(g, dims),), jvp=linear_jvp, rule="flip the gradient back",
          nests=False, sym=lambda S, x, dims: np.flip(x, dims))
ROLL = Op(name="roll", node="RollBackward0", forward=_roll_forward, vjps=(_roll_vjp,),
          jvp=linear_jvp,
          rule="roll the gradient back", nests=False, sym=lambda S, x, shifts, dims: _roll_forward(x, shifts, dims))
REPEAT = Op(name="repeat", node="RepeatBackward0", forward=_repeat_forward, vjps=(_repeat_vjp,),
            jvp=linear_jvp,
            rule="sum the gradient over the copies", nests=False, sym=lambda S, x, repeats: np.tile(x, repeats))
TRIL = Op(name="tril", node="TrilBackward0", forward=_triangle(upper=False),
          vjps=(lambda ns, g, o, x, diagonal=0: ns.tril(g, diagonal),),
          jvp=linear_jvp, rule="keep the gradient's lower triangle",
          nests=False, sym=lambda S, x, diagonal=0: S.masked(x, _triangle_mask(x.shape, diagonal, upper=False)))
TRIU = Op(name="triu", node="TriuBackward0", forward=_triangle(upper=True),
          vjps=(lambda ns, g, o, x, diagonal=0: ns.triu(g, diagonal),),
          jvp=linear_jvp, rule="keep the gradient's upper triangle",
          nests=False, sym=lambda S, x, diagonal=0: S.masked(x, _triangle_mask(x.shape, diagonal, upper=True)))
DIAG_EMBED = Op(name="diag_embed", node="DiagEmbedBackward0", forward=_diag_embed_forward, vjps=(_diag_embed_vjp,),
                jvp=linear_jvp, rule="take the gradient's diagonal", nests=False,
                sym=lambda S, x, offset=0, dim1=-2, dim2=-1: S.diag_embed(x, offset, dim1, dim2))
SCATTER = Op(name="scatter", node="ScatterBackward0", forward=_scatter_forward,
             vjps=(lambda ns, g, o, x, src, key: g * _untouched(g.shape, key, g.dtype),
                   lambda ns, g, o, x, src, key: _src_gradient(ns, g, src, key)),
             jvp=sum_linear_jvp, rule="∂/∂input = 1 where not written, ∂/∂src = the gradient at the index", args="xs",
             nests=False, sym=lambda S, x, src, key: S.scatter(x, _scattered(src, key), key, add=False))
SCATTER_ADD = Op(name="scatter_add", node="ScatterAddBackward0", forward=_scatter_add_forward,
                 vjps=(lambda ns, g, o, x, src, key: g, lambda ns, g, o, x, src, key: _src_gradient(ns, g, src, key)),
                 jvp=sum_linear_jvp, rule="∂/∂input = 1, ∂/∂src = the gradient at the index", args="xs",
                 nests=False, sym=lambda S, x, src, key: S.scatter(x, _scattered(src, key), key, add=True))
CROSS = Op(name="cross", node="LinalgCrossBackward0", forward=_cross_forward,
           vjps=(lambda ns, g, o, a, b, dim: ns.cross(b, g, dim), lambda ns, g, o, a, b, dim: ns.cross(g, a, dim)),
           jvp=product_jvp, rule="∂(a×b)ᵀg/∂a = b×g, ∂/∂b = g×a", saves=("b", "a"),
           nests=False, sym=lambda S, a, b, dim: S.cross(a, b, dim))
EINSUM = Op(name="einsum", node="ViewBackward0", forward=_einsum_forward, vjps=(),
            jvp=product_jvp, rule="∂/∂xᵢ: the einsum of the gradient with the other operands, into xᵢ's subscripts",
            nests=False, sym=lambda S, *xs, equation: S.einsum(equation, *xs), cost=costs.einsum)


CLONE = _unary(name="clone", node="CloneBackward0", forward=np.array, vjp=lambda ns, g, o, x: g,
               rule="∂copy(x)/∂x = 1", saves="",
               nests=False, sym=lambda S, x: x)
SEEN_THROUGH = _unary(name="detach", node="AliasBackward0", forward=lambda x: x, vjp=lambda ns, g, o, x: g,
                      rule="x.detach() or x.data inside a Function's forward, as --check records it: the identity",
                      saves="", nests=False, sym=lambda S, x: x)
"""Recorded only while `--check` records a Function's forward (`engine.function`): PyTorch runs that forward
with gradients off, so a detach there cuts nothing and the forward's math goes through it. Not in `OPS`:
no program calls it."""
CAST = Op(name="to", node="ToCopyBackward0", forward=lambda x, dtype: x.astype(dtype),
          vjps=(lambda ns, g, o, x, dtype: ns.cast(g, x.dtype),),
          jvp=diagonal_jvp, rule="cast the gradient back to the input's dtype",
          nests=False, elementwise=True, sym=lambda S, x, dtype: x)


# torch.nn.functional -------------------------------------------------------------------------
# Activations and losses PyTorch records as one node. Losses take `reduction` ('mean', 'sum' or
# 'none'); their targets, class weights and masks are constants of the graph (parameters).

_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_GELU_K = 0.7978845608028654  # sqrt(2/pi), the tanh approximation's scale
_GELU_C = 0.044715
_SIXTH_F32 = float(np.float32(1 / 6))  # PyTorch's hardsigmoid backward uses the float 1/6 in every dtype


def _reduce_loss(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    return np.sum(loss) if reduction == "sum" else np.mean(loss)


def _loss_grad(ns: Any, g: Any, x: Any, reduction: str) -> Any:
    """The upstream gradient of a reduced loss, per element of its (broadcast) input."""
    if reduction == "none":
        return g
    return g * _per(_count(x, None)) if reduction == "mean" else g


def _loss_sym(S: Any, per_element: Callable, a: Any, b: Any, reduction: str) -> Any:
    loss = S.broadcast(per_element, a, b)
    if reduction == "none":
        return loss
    return S.as_array(S.add_all(loss.reshape(-1)) if reduction == "sum" else S.mean_all(loss.reshape(-1)))


def _hardtanh_mask(ns: Any, x: Any, lo: float, hi: float) -> Any:
    """PyTorch passes the gradient strictly inside (min_val, max_val): 0 at either bound."""
    return ns.where(x > lo, 1.0, 0.0) * ns.where(x < hi, 1.0, 0.0)


def _kept_on(ns: Any, g: Any, x: Any) -> Any:
    """A piecewise-linear op's gradient as PyTorch's backward node gives it under create_graph: still on
    the input's graph (its `*_backward` node reads x), with a zero derivative by x; so the first
    derivative requires grad and the second does not, as PyTorch's."""
    return g if ns is NUMPY else g + x * 0.0


def _elu_forward(x: np.ndarray, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> np.ndarray:
    return np.where(x > 0, x * scale, np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale))


def _elu_vjp(ns: Any, g: Any, o: Any, x: Any, alpha: float = 1.0, scale: float = 1.0,
             input_scale: float = 1.0) -> Any:
    """PyTorch takes the left branch at 0: scale·alpha·input_scale·exp(0)."""
    left = ns.exp(ns.where(x > 0, 0.0, x) * input_scale) * (alpha * scale * input_scale)
    return g * ns.where(x > 0, scale, left)


def _elu_sym(S: Any, x: Any, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    a, s, i = S.number(alpha * scale), S.number(scale), S.number(input_scale)
    return S.map(lambda u: S.add(S.mul(s, S.Max(u, 0)), S.mul(a, S.sub(S.exp(S.mul(i, S.Min(u, 0))), 1))), x)


def _gelu_forward(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(_GELU_K * (x + _GELU_C * x * x * x)))
    return 0.5 * x * (1.0 + special.erf(x * _SQRT_HALF))


def _gelu_slope(x: np.ndarray, approximate: str) -> np.ndarray:
    """gelu'(x): Φ(x) + x·φ(x), or the derivative of the tanh approximation."""
    if approximate == "tanh":
        inner = _GELU_K * (x + _GELU_C * x * x * x)
        t = np.tanh(inner)
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_K * (1.0 + 3 * _GELU_C * x * x)
    cdf = 0.5 * (1.0 + special.erf(x * _SQRT_HALF))
    return cdf + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _gelu_curvature(ns: Any, x: Any, approximate: str) -> Any:
    """gelu''(x), for the backward of gelu's backward (exp and tanh only, so differentiable again)."""
    if approximate == "tanh":
        inner = (x + x * x * x * _GELU_C) * _GELU_K
        t = ns.tanh(inner)
        sech2 = 1.0 - t * t
        d_inner = (x * x * (3 * _GELU_C) + 1.0) * _GELU_K
        return sech2 * d_inner - x * sech2 * t * d_inner * d_inner + x * x * sech2 * (3 * _GELU_C * _GELU_K)
    return ns.exp(x * x * -0.5) * _INV_SQRT_2PI * (2.0 - x * x)


def _gelu_sym(S: Any, u: Any, approximate: str) -> Any:
    half = S.number(0.5)
    if approximate == "tanh":
        inner = S.mul(S.sqrt_2_over_pi, S.add(u, S.mul(S.number(_GELU_C), S.pow(u, 3))))
        return S.mul(S.mul(half, u), S.add(1, S.tanh(inner)))
    return S.mul(S.mul(half, u), S.add(1, S.erf(S.mul(u, S.sqrt_half))))


def _gelu_slope_sym(S: Any, u: Any, approximate: str) -> Any:
    half = S.number(0.5)
    if approximate == "tanh":
        k, c = S.sqrt_2_over_pi, S.number(_GELU_C)
        t = S.tanh(S.mul(k, S.add(u, S.mul(c, S.pow(u, 3)))))
        slope = S.mul(k, S.add(1, S.mul(S.mul(S.number(3), c), S.mul(u, u))))
        return S.add(S.mul(half, S.add(1, t)), S.mul(S.mul(S.mul(half, u), S.sub(1, S.mul(t, t))), slope))
    cdf = S.mul(half, S.add(1, S.erf(S.mul(u, S.sqrt_half))))
    density = S.mul(S.inv_sqrt_2pi, S.exp(S.mul(S.number(-0.5), S.mul(u, u))))
    return S.add(cdf, S.mul(u, density))


def _hardswish_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    """PyTorch: 0 up to -3, x/3 + 1/2 on (-3, 3), 1 from 3 on."""
    return g * ns.where(x <= -3.0, 0.0, ns.where(x < 3.0, x / 3.0 + 0.5, 1.0))


def _hard_step(S: Any, u: Any) -> Any:
    """min(max(u + 3, 0), 6) / 6: hardsigmoid."""
    return S.div(S.Min(S.Max(S.add(u, 3), 0), 6), 6)


def _logsigmoid_forward(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def _silu_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    s = ns.sigmoid(x)
    return g * s * (1.0 + x * (1.0 - s))


def _mish_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    t = ns.tanh(ns.softplus(x))
    return g * (t + x * ns.sigmoid(x) * (1.0 - t * t))


def _addmm_forward(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return c + a @ b


def _pad_widths(pad: tuple[int, ...], ndim: int) -> list[tuple[int, int]]:
    """PyTorch's pad lists (left, right) pairs from the last dimension backwards."""
    widths = [(0, 0)] * ndim
    for k in range(len(pad) // 2):
        widths[ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    return widths


def _constant_pad(x: Any, pad: tuple[int, ...], value: Any, fill: Callable) -> Any:
    """Crop by the negative widths, then pad by the positive ones (`fill` pads an array)."""
    widths = _pad_widths(pad, x.ndim)
    x = x[tuple(slice(-lo if lo < 0 else 0, n + hi if hi < 0 else n) for (lo, hi), n in zip(widths, x.shape))]
    return fill(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], value)


def _pad_forward(x: np.ndarray, pad: tuple[int, ...], value: float = 0.0) -> np.ndarray:
    return _constant_pad(x, pad, value, lambda a, w, v: np.pad(a, w, constant_values=v))


def _norm_axes(x: Any, count: int) -> tuple[int, ...]:
    return tuple(range(x.ndim - count, x.ndim))


def _layer_norm_parts(ns: Any, x: Any, count: int, eps: float) -> tuple[Any, Any]:
    """x̂ = (x - mean)·rstd over the last `count` dims, and rstd = 1/√(var + eps) (biased var)."""
    axes = _norm_axes(x, count)
    centred = x - ns.mean(x, dim=axes, keepdim=True)
    rstd = (ns.mean(centred * centred, dim=axes, keepdim=True) + eps) ** -0.5
    return centred * rstd, rstd


def _layer_norm_forward(x: np.ndarray, w: Any, b: Any, count: int, eps: float) -> np.ndarray:
    xhat, _ = _layer_norm_parts(NUMPY, x, count, eps)
    return xhat * w + b


def _layer_norm_vjp_x(ns: Any, g: Any, o: Any, x: Any, w: Any, b: Any, count: int, eps: float) -> Any:
    axes = _norm_axes(x, count)
    xhat, rstd = _layer_norm_parts(ns, x, count, eps)
    dxhat = g * w
    return (dxhat - ns.mean(dxhat, dim=axes, keepdim=True)
            - xhat * ns.mean(dxhat * xhat, dim=axes, keepdim=True)) * rstd


def _layer_norm_sym(S: Any, x: Any, w: Any, b: Any, count: int, eps: float) -> Any:
    lead = x.shape[:x.ndim - count]
    rows = x.reshape(lead + (-1,))
    out = np.empty(rows.shape, dtype=object)
    for idx in np.ndindex(*lead):
        row = rows[idx]
        S.spend(3 * len(row))
        mean = S.div(S.total(row), len(row))
        centred = [S.sub(u, mean) for u in row]
        var = S.div(S.total(S.mul(c, c) for c in centred), len(row))
        rstd = S.pow(S.add(var, S.number(eps)), S.number(-0.5))
        out[idx] = [S.mul(c, rstd) for c in centred]
    xhat = out.reshape(x.shape)
    return S.broadcast(S.add, S.broadcast(S.mul, xhat, w), b)


def _channel_axes(x: Any) -> tuple[int, ...]:
    """Batch norm's statistics run over every dimension but the channels (dim 1)."""
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(ns: Any, v: Any, ndim: int) -> Any:
    """A (C,) weight, bias or statistic as (1, C, 1, ...), so it broadcasts over an input of `ndim`
    dimensions; a number (weight or bias None, or its 0-d SymPy constant) stays as it is."""
    if getattr(v, "ndim", 0) != 1:
        return v
    return ns.reshape(v, (1, v.shape[0]) + (1,) * (ndim - 2))


def _eval_rstd(ns: Any, var: np.ndarray, eps: float, ndim: int) -> Any:
    """Eval mode's 1/√(running_var + eps): a constant of the graph, per channel."""
    return ns.constant(_per_channel(NUMPY, (var + eps) ** -0.5, ndim))


def _batch_norm_stats(ns: Any, x: Any, eps: float, mean: np.ndarray | None, var: np.ndarray | None
                      ) -> tuple[Any, Any]:
    """x - mean, and rstd = 1/√(var + eps) per channel (keepdim): the batch's statistics (biased var)
    when training (`mean` None), else the running ones."""
    if mean is None:
        axes = _channel_axes(x)
        centred = x - ns.mean(x, dim=axes, keepdim=True)
        return centred, (ns.mean(centred * centred, dim=axes, keepdim=True) + eps) ** -0.5
    return x - ns.constant(_per_channel(NUMPY, mean, x.ndim)), _eval_rstd(ns, var, eps, x.ndim)


def _batch_norm_forward(x: np.ndarray, w: Any, b: Any, eps: float, mean: np.ndarray | None = None,
                        var: np.ndarray | None = None) -> np.ndarray:
    centred, rstd = _batch_norm_stats(NUMPY, x, eps, mean, var)
    return centred * (rstd * _per_channel(NUMPY, w, x.ndim)) + _per_channel(NUMPY, b, x.ndim)


def _batch_norm_vjp_x(ns: Any, g: Any, o: Any, x: Any, w: Any, b: Any, eps: float, mean: np.ndarray | None = None,
                      var: np.ndarray | None = None) -> Any:
    """PyTorch's arrangement: (g - mean(g) - (x - mean)·k)·rstd·w with k = mean(g·(x - mean))·rstd², the
    per-channel factors taken before the full-size passes; in eval an affine map's g·rstd·w."""
    if mean is not None:
        return g * (_eval_rstd(ns, var, eps, x.ndim) * _per_channel(ns, w, x.ndim))
    axes = _channel_axes(x)
    centred, rstd = _batch_norm_stats(ns, x, eps, mean, var)
    k = ns.mean(g * centred, dim=axes, keepdim=True) * (rstd * rstd)
    return (g - ns.mean(g, dim=axes, keepdim=True) - centred * k) * (rstd * _per_channel(ns, w, x.ndim))


def _batch_norm_vjp_w(ns: Any, g: Any, o: Any, x: Any, w: Any, b: Any, eps: float, mean: np.ndarray | None = None,
                      var: np.ndarray | None = None) -> Any:
    """Σ g·x̂ per channel, as Σ g·(x - mean) times rstd."""
    centred, rstd = _batch_norm_stats(ns, x, eps, mean, var)
    return ns.sum(g * centred, dim=_channel_axes(x)) * ns.reshape(rstd, (x.shape[1],))


def _batch_norm_sym(S: Any, x: Any, w: Any, b: Any, eps: float, mean: np.ndarray | None = None,
                    var: np.ndarray | None = None) -> Any:
    """Per channel, its plane's mean and biased variance in SymPy (or the running ones as numbers)."""
    xhat = np.empty(x.shape, dtype=object)
    for c in range(x.shape[1]):
        plane = x[:, c].reshape(-1)
        S.spend(3 * len(plane))
        if mean is None:
            mu = S.div(S.total(plane), len(plane))
            centred = [S.sub(u, mu) for u in plane]
            v = S.div(S.total(S.mul(d, d) for d in centred), len(plane))
        else:
            centred = [S.sub(u, S.number(mean[c])) for u in plane]
            v = S.number(var[c])
        rstd = S.pow(S.add(v, S.number(eps)), S.number(-0.5))
        column = np.empty(len(plane), dtype=object)
        column[:] = [S.mul(d, rstd) for d in centred]
        xhat[:, c] = column.reshape(x[:, c].shape)
    scaled = S.broadcast(S.mul, xhat, _per_channel(NUMPY, w, x.ndim))
    return S.broadcast(S.add, scaled, _per_channel(NUMPY, b, x.ndim))


def _smooth_forward(a: np.ndarray, b: np.ndarray, delta: float) -> np.ndarray:
    """Huber with threshold delta: d²/2 inside, delta·(|d| - delta/2) outside."""
    d = np.abs(a - b)
    return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


def _smooth_sym(S: Any, u: Any, v: Any, delta: float) -> Any:
    """c·(d - c/2) with c = clamp(d, -delta, delta): the same function, written without branches."""
    d = S.sub(u, v)
    c = S.clamp(d, -delta, delta)
    return S.mul(c, S.sub(d, S.div(c, 2)))


def _huber_vjp(ns: Any, g: Any, o: Any, a: Any, b: Any, reduction: str = "mean", delta: float = 1.0) -> Any:
    d = a - b
    return _loss_grad(ns, g, d, reduction) * ns.where(d < -delta, -delta, ns.where(d > delta, delta, d))


def _smooth_l1_vjp(ns: Any, g: Any, o: Any, a: Any, b: Any, reduction: str = "mean", beta: float = 1.0) -> Any:
    return _huber_vjp(ns, g, o, a, b, reduction, beta) * (1.0 / beta)


def _class_weights(shape: tuple[int, ...], target: np.ndarray, weight: np.ndarray | None,
                   ignore_index: int) -> np.ndarray:
    """NLL's picking matrix: at each target class its weight (0 where ignored), zeros elsewhere."""
    c = shape[0] if len(shape) == 1 else shape[1]
    t = np.asarray(target)
    kept = t != ignore_index
    w = np.ones(c) if weight is None else np.asarray(weight, dtype=np.float64)
    onehot = (np.arange(c) == np.where(kept, t, 0)[..., None]) * (w * 1.0)
    onehot = onehot * kept[..., None]
    return np.moveaxis(onehot, -1, 1) if len(shape) > 1 else onehot


def _nll_forward(x: np.ndarray, target: np.ndarray, weight: np.ndarray | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> np.ndarray:
    """Picks by index (never 0·x, which is nan where a class not picked has log-probability -inf)."""
    t = np.asarray(target)
    kept = t != ignore_index
    class_dim = 0 if x.ndim == 1 else 1
    picked = np.squeeze(np.take_along_axis(x, np.expand_dims(np.where(kept, t, 0), class_dim), class_dim), class_dim)
    w = (np.ones(x.shape[class_dim]) if weight is None else np.asarray(weight))[np.where(kept, t, 0)] * kept
    loss = -(picked * w.astype(x.dtype))
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(np.sum(loss) / w.sum().astype(x.dtype))
    return _reduce_loss(loss, reduction)


def _nll_vjp(ns: Any, g: Any, o: Any, x: Any, target: np.ndarray, weight: np.ndarray | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Any:
    picks = _class_weights(x.shape, target, weight, ignore_index)
    if reduction == "none":
        g = ns.reshape(g, g.shape[:1] + (1,) + g.shape[1:]) if x.ndim > 1 else g
    elif reduction == "mean":
        g = g * (1.0 / float(np.sum(picks)) if np.sum(picks) else math.nan)
    return -(g * picks.astype(x.dtype))


def _nll_sym(S: Any, x: Any, target: np.ndarray, weight: np.ndarray | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Any:
    picks = _class_weights(x.shape, target, weight, ignore_index)
    terms = S.constant(-picks)  # picked by index as the forward is: a class not picked never enters
    for idx in zip(*np.nonzero(picks)):
        terms[idx] = S.mul(x[idx], terms[idx])
    terms = np.moveaxis(terms, 0 if x.ndim == 1 else 1, -1)
    loss = S.reduce(S.add_all, terms, (terms.ndim - 1,), False)
    if reduction == "none":
        return loss
    whole = S.add_all(loss.reshape(-1))
    return S.as_array(whole if reduction == "sum" else S.div(whole, S.number(float(np.sum(picks)))))


_LOG_FLOOR = -100.0  # PyTorch clamps BCE's logarithms here, so a probability of 0 or 1 costs 100, not inf


def _bce_forward(x: np.ndarray, y: np.ndarray, weight: Any = None, reduction: str = "mean") -> np.ndarray:
    with np.errstate(divide="ignore"):
        loss = -(y * np.maximum(np.log(x), _LOG_FLOOR) + (1 - y) * np.maximum(np.log1p(-x), _LOG_FLOOR))
    return _reduce_loss(loss if weight is None else loss * weight, reduction)


def _bce_vjp_x(ns: Any, g: Any, o: Any, x: Any, y: Any, weight: Any = None, reduction: str = "mean") -> Any:
    """PyTorch: (x - y) / max(x(1 - x), 1e-12)."""
    gr = _loss_grad(ns, g, x, reduction) * (x - y) / ns.where(x * (1.0 - x) > 1e-12, x * (1.0 - x), 1e-12)
    return gr if weight is None else gr * weight


def _bce_vjp_y(ns: Any, g: Any, o: Any, x: Any, y: Any, weight: Any = None, reduction: str = "mean") -> Any:
    gr = _loss_grad(ns, g, x, reduction) * (ns.log(1.0 - x) - ns.log(x))
    return gr if weight is None else gr * weight


def _bce_sym(S: Any, x: Any, y: Any, weight: Any = None, reduction: str = "mean") -> Any:
    def each(u: Any, v: Any) -> Any:
        return S.mul(S.number(-1), S.add(S.mul(v, S.log(u)), S.mul(S.sub(1, v), S.log(S.sub(1, u)))))
    return _weighted_loss_sym(S, each, x, y, weight, reduction)


def _weighted_loss_sym(S: Any, each: Callable, x: Any, y: Any, weight: Any, reduction: str) -> Any:
    loss = S.broadcast(each, x, y)
    if weight is not None:
        loss = S.broadcast(S.mul, loss, S.constant(weight))
    if reduction == "none":
        return loss
    return S.as_array(S.add_all(loss.reshape(-1)) if reduction == "sum" else S.mean_all(loss.reshape(-1)))


def _log_weight(y: Any, pos_weight: Any) -> Any:
    """PyTorch's 1 + (pos_weight - 1)·y, the weight of the positive term."""
    return 1.0 if pos_weight is None else (y * (pos_weight - 1.0) + 1.0)


def _bce_logits_forward(x: np.ndarray, y: np.ndarray, weight: Any = None, pos_weight: Any = None,
                        reduction: str = "mean") -> np.ndarray:
    loss = (1 - y) * x + _log_weight(y, pos_weight) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    return _reduce_loss(loss if weight is None else loss * weight, reduction)


def _bce_logits_vjp_x(ns: Any, g: Any, o: Any, x: Any, y: Any, weight: Any = None, pos_weight: Any = None,
                      reduction: str = "mean") -> Any:
    """(1 - y) - lw·σ(-x): σ(x) - y without pos_weight."""
    gr = _loss_grad(ns, g, x, reduction) * ((1.0 - y) - ns.sigmoid(-x) * _log_weight(y, pos_weight))
    return gr if weight is None else gr * weight


def _bce_logits_vjp_y(ns: Any, g: Any, o: Any, x: Any, y: Any, weight: Any = None, pos_weight: Any = None,
                      reduction: str = "mean") -> Any:
    slope = -x if pos_weight is None else ns.softplus(-x) * (pos_weight - 1.0) - x
    gr = _loss_grad(ns, g, x, reduction) * slope
    return gr if weight is None else gr * weight


def _bce_logits_sym(S: Any, x: Any, y: Any, weight: Any = None, pos_weight: Any = None,
                    reduction: str = "mean") -> Any:
    x, y, lw = np.broadcast_arrays(x, y, S.constant(1.0 if pos_weight is None else pos_weight))
    loss = np.empty(x.shape, dtype=object)
    S.spend(loss.size)
    for idx in np.ndindex(*x.shape):
        u, v, w = x[idx], y[idx], lw[idx]
        loss[idx] = S.add(S.mul(S.sub(1, v), u),
                          S.mul(S.add(1, S.mul(S.sub(w, 1), v)), S.log(S.add(1, S.exp(S.mul(S.number(-1), u))))))
    return _weighted_loss_sym(S, lambda u, _: u, loss, loss, weight, reduction)


HARDTANH = Op(name="hardtanh", node="HardtanhBackward0", forward=lambda x, min_val=-1.0, max_val=1.0:
              np.clip(x, min_val, max_val),
              vjps=(lambda ns, g, o, x, min_val=-1.0, max_val=1.0:
                    _kept_on(ns, g * _hardtanh_mask(ns, x, min_val, max_val), x),),
              jvp=diagonal_jvp, rule="∂hardtanh(x)/∂x = [min < x < max] (0 at the bounds)", saves=("x",),
              sym=lambda S, x, min_val=-1.0, max_val=1.0: S.map(lambda u: S.clamp(u, min_val, max_val), x),
              kink=lambda K, x, min_val=-1.0, max_val=1.0: K.clamp_kink(x, min_val, max_val))
LEAKY_RELU = Op(name="leaky_relu", node="LeakyReluBackward0",
                forward=lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope),
                vjps=(lambda ns, g, o, x, negative_slope=0.01: _kept_on(ns, g * ns.where(x > 0, 1.0, negative_slope), x),),
                jvp=diagonal_jvp, rule="∂leaky_relu(x)/∂x = 1 if x > 0 else slope (slope at 0)", saves=("x",),
                sym=lambda S, x, negative_slope=0.01: S.map(
                    lambda u: S.add(S.Max(u, 0), S.mul(S.number(negative_slope), S.Min(u, 0))), x),
                kink=lambda K, x, negative_slope=0.01: K.zero_kink(x) & (negative_slope != 1))
ELU = Op(name="elu", node="EluBackward0", forward=_elu_forward, vjps=(_elu_vjp,),
         jvp=diagonal_jvp,
         rule="∂elu(x)/∂x = scale if x > 0 else scale·α·exp(x) (left branch at 0)", saves=("x",), sym=_elu_sym,
         kink=lambda K, x, alpha=1.0, scale=1.0, input_scale=1.0: K.zero_kink(x) & (alpha * input_scale != 1))
GELU = Op(name="gelu", node="GeluBackward0", forward=_gelu_forward,
          vjps=(lambda ns, g, o, x, approximate="none": ns.gelu_backward(g, x, approximate),),
          jvp=diagonal_jvp, rule="∂gelu(x)/∂x = Φ(x) + x·φ(x)", saves=("x",),
          sym=lambda S, x, approximate="none": S.map(lambda u: _gelu_sym(S, u, approximate), x))
GELU_BACKWARD = Op(name="gelu_backward", node="GeluBackwardBackward0",
                   forward=lambda g, x, approximate="none": g * _gelu_slope(x, approximate),
                   vjps=(lambda ns, gg, o, g, x, approximate="none": ns.gelu_backward(gg, x, approximate),
                         lambda ns, gg, o, g, x, approximate="none": gg * g * _gelu_curvature(ns, x, approximate)),
                   jvp=diagonal_jvp,
                   rule="∂(g·gelu'(x))/∂g = gelu'(x), ∂/∂x = g·gelu''(x)", saves=("b", "ab"), args="ab",
                   sym=lambda S, g, x, approximate="none": S.broadcast(
                       lambda v, u: S.mul(v, _gelu_slope_sym(S, u, approximate)), g, x))
SILU = _unary(name="silu", node="SiluBackward0", forward=lambda x: x * _sigmoid_forward(x), vjp=_silu_vjp,
              rule="∂silu(x)/∂x = σ(x)(1 + x(1-σ(x)))",
              sym=lambda S, x: S.map(lambda u: S.div(u, S.add(1, S.exp(S.mul(S.number(-1), u)))), x))
MISH = _unary(name="mish", node="MishBackward0", forward=lambda x: x * np.tanh(_softplus_forward(x)), vjp=_mish_vjp,
              rule="∂mish(x)/∂x = tanh(sp(x)) + x·σ(x)·(1 - tanh²(sp(x)))",
              sym=lambda S, x: S.map(lambda u: S.mul(u, S.tanh(S.log(S.add(1, S.exp(u))))), x))
HARDSIGMOID = _unary(name="hardsigmoid", node="HardsigmoidBackward0",
                     forward=lambda x: np.clip(x + 3.0, 0.0, 6.0) / 6.0,
                     vjp=lambda ns, g, o, x: _kept_on(ns, g * _hardtanh_mask(ns, x, -3.0, 3.0) * _SIXTH_F32, x),
                     rule="∂hardsigmoid(x)/∂x = 1/6 on (-3, 3), else 0",
                     sym=lambda S, x: S.map(lambda u: _hard_step(S, u), x), kink=lambda K, x: K.clamp_kink(x, -3, 3))
HARDSWISH = _unary(name="hardswish", node="HardswishBackward0",
                   forward=lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0, vjp=_hardswish_vjp,
                   rule="∂hardswish(x)/∂x = x/3 + 1/2 on (-3, 3), 0 below, 1 above",
                   sym=lambda S, x: S.map(lambda u: S.mul(u, _hard_step(S, u)), x),
                   kink=lambda K, x: K.clamp_kink(x, -3, 3))
LOGSIGMOID = _unary(name="logsigmoid", node="LogSigmoidBackward0", forward=_logsigmoid_forward,
                    vjp=lambda ns, g, o, x: g * ns.sigmoid(-x), rule="∂logσ(x)/∂x = σ(-x)",
                    sym=lambda S, x: S.map(lambda u: S.mul(S.number(-1), S.log(S.add(1, S.exp(S.mul(S.number(-1), u))))), x))
ADDMM = Op(name="addmm", node="AddmmBackward0", forward=_addmm_forward,
           vjps=(lambda ns, g, o, c, a, b: g,
                 lambda ns, g, o, c, a, b: ns.matmul(g, ns.transpose(b, 0, 1)),
                 lambda ns, g, o, c, a, b: ns.matmul(ns.transpose(a, 0, 1), g)),
           jvp=transposed_jvp,
           rule="∂(c + A@B)/∂c = 1, ∂/∂A = G@Bᵀ, ∂/∂B = Aᵀ@G", saves=("", "b", "a"), args="cab", nests=False,
           sym=lambda S, c, a, b: S.broadcast(S.add, c, S.matmul(a, b)))
CONSTANT_PAD = Op(name="pad", node="ConstantPadNdBackward0", forward=_pad_forward,
                  vjps=(lambda ns, g, o, x, pad, value=0.0: ns.constant_pad_nd(g, tuple(-p for p in pad), 0.0),),
                  jvp=transposed_jvp, rule="crop the padding off the gradient", nests=False,
                  sym=lambda S, x, pad, value=0.0: _constant_pad(
                      x, pad, S.number(value), lambda a, w, v: np.pad(a, w, constant_values=v)))
BATCH_NORM = Op(name="batch_norm", node="NativeBatchNormBackward0", forward=_batch_norm_forward,
                vjps=(_batch_norm_vjp_x,
                      _batch_norm_vjp_w,
                      lambda ns, g, o, x, w, b, eps, mean=None, var=None: ns.sum(g, dim=_channel_axes(g))),
                jvp=transposed_jvp,
                rule="training: ∂BN(x)/∂x = rstd·w·(g - mean(g) - x̂·mean(g·x̂)) per channel (eval: g·rstd·w); "
                     "∂/∂w = Σ g·x̂; ∂/∂b = Σ g",
                saves=("xw", "x", ""), args="xwb", sym=_batch_norm_sym)
LAYER_NORM = Op(name="layer_norm", node="NativeLayerNormBackward0", forward=_layer_norm_forward,
                vjps=(_layer_norm_vjp_x,
                      lambda ns, g, o, x, w, b, count, eps: g * _layer_norm_parts(ns, x, count, eps)[0],
                      lambda ns, g, o, x, w, b, count, eps: g),
                jvp=transposed_jvp,
                rule="∂LN(x)/∂x = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)), ĝ = g·w; ∂/∂w = g·x̂; ∂/∂b = g",
                saves=("xw", "x", ""), args="xwb", sym=_layer_norm_sym)
MSE_LOSS = Op(name="mse_loss", node="MseLossBackward0",
              forward=lambda a, b, reduction="mean": _reduce_loss((a - b) * (a - b), reduction),
              vjps=(lambda ns, g, o, a, b, reduction="mean": _loss_grad(ns, g, a - b, reduction) * (a - b) * 2.0,
                    lambda ns, g, o, a, b, reduction="mean": _loss_grad(ns, g, a - b, reduction) * (b - a) * 2.0),
              jvp=transposed_jvp, rule="∂mse/∂a = 2(a-b)/n", saves=("ab", "ab"),
              sym=lambda S, a, b, reduction="mean": _loss_sym(
                  S, lambda u, v: S.pow(S.sub(u, v), 2), a, b, reduction))
SMOOTH_L1_LOSS = Op(name="smooth_l1_loss", node="SmoothL1LossBackward0",
                    forward=lambda a, b, reduction="mean", beta=1.0: _reduce_loss(
                        _smooth_forward(a, b, beta) / beta, reduction),
                    vjps=(_smooth_l1_vjp, lambda ns, g, o, a, b, reduction="mean", beta=1.0:
                          -_smooth_l1_vjp(ns, g, o, a, b, reduction, beta)),
                    jvp=transposed_jvp, rule="∂/∂a = (a-b)/β inside |a-b| < β, else sign(a-b)", saves=("ab", "ab"),
                    sym=lambda S, a, b, reduction="mean", beta=1.0: _loss_sym(
                        S, lambda u, v: S.div(_smooth_sym(S, u, v, beta), S.number(beta)), a, b, reduction))
HUBER_LOSS = Op(name="huber_loss", node="HuberLossBackward0",
                forward=lambda a, b, reduction="mean", delta=1.0: _reduce_loss(_smooth_forward(a, b, delta), reduction),
                vjps=(_huber_vjp, lambda ns, g, o, a, b, reduction="mean", delta=1.0:
                      -_huber_vjp(ns, g, o, a, b, reduction, delta)),
                jvp=transposed_jvp, rule="∂/∂a = a-b inside |a-b| ≤ δ, else δ·sign(a-b)", saves=("ab", "ab"),
                sym=lambda S, a, b, reduction="mean", delta=1.0: _loss_sym(
                    S, lambda u, v: _smooth_sym(S, u, v, delta), a, b, reduction))
NLL_LOSS = Op(name="nll_loss", node="NllLossBackward0", forward=_nll_forward, vjps=(_nll_vjp,),
              jvp=transposed_jvp,
              rule="∂nll/∂x[i,c] = -w[c]·[c = target[i]] (/Σw for mean)", saves=("",), nests=False, sym=_nll_sym)
BINARY_CROSS_ENTROPY = Op(name="binary_cross_entropy", node="BinaryCrossEntropyBackward0", forward=_bce_forward,
                          vjps=(_bce_vjp_x, _bce_vjp_y),
                          jvp=transposed_jvp, rule="∂bce/∂x = (x-y)/(x(1-x)), ∂/∂y = log((1-x)/x)",
                          saves=("ab", "a"), sym=_bce_sym)
BCE_WITH_LOGITS = Op(name="binary_cross_entropy_with_logits", node="BinaryCrossEntropyWithLogitsBackward0",
                     forward=_bce_logits_forward, vjps=(_bce_logits_vjp_x, _bce_logits_vjp_y),
                     jvp=transposed_jvp,
                     rule="∂/∂x = σ(x) - y (with pos_weight: (1-y) - lw·σ(-x)), ∂/∂y = -x", saves=("ab", "a"),
                     sym=_bce_logits_sym)


def variadic(op: Op, count: int) -> Op:
    """Cat, stack and einsum take any number of tensors: give this call one VJP per input."""
    if op is EINSUM:  # each operand's VJP reads all the others: a node keeps every input
        names = _FRESH.lower()[:count]
        return dataclasses.replace(op, vjps=_einsum_vjps(count), args=names, saves=(names,) * count,
                                   plans=(((True,) * count, False),) * (1 << count))
    vjps = _cat_vjps(count) if op is CAT else _stack_vjps(count)
    return dataclasses.replace(op, vjps=vjps, plans=())


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


_FILL_MAX = 1 << 12
"""Elements up to which a filled gradient, written and then read by the next VJP, costs less than
`np.broadcast_to`'s view (about 9 µs of Python, then read through a zero stride); measured: 1,000
elements 4.5 against 14 µs, 4,000 10 against 14, 16,000 28 against 15."""


# -- sliding windows: convolution, pooling, unfold/fold (the arithmetic is in engine/sliding.py) -------
def _conv_jvp(op: "Op", tangents: tuple, out: Any, x: Any, w: Any, b: Any, **params: Any) -> Any:
    """Bilinear in x and w (the product rule, each term without the bias), plus the bias's tangent at every position."""
    tx, tw, tb = (tuple(tangents) + (None, None, None))[:3]
    total = np.zeros(out.shape, out.dtype)
    if tx is not None:
        total = total + sliding.conv_forward(tx, w, None, **params)
    if tw is not None:
        total = total + sliding.conv_forward(x, tw, None, **params)
    if tb is not None and np.ndim(tb):
        total = total + np.reshape(tb, (-1,) + (1,) * (out.ndim - 2))
    return total


IM2COL = Op(name="unfold", node="Im2ColBackward0", forward=sliding.im2col,
            vjps=(lambda ns, g, o, x, kernel, dilation, padding, stride:
                  ns.col2im(g, tuple(x.shape[2:]), kernel, dilation, padding, stride),),
            rule="fold the gradient back (col2im): each entry added where it was read", jvp=linear_jvp, nests=False,
            sym=lambda S, x, kernel, dilation, padding, stride: sliding.im2col(x, kernel, dilation, padding, stride,
                                                                               S.number(0)))
COL2IM = Op(name="fold", node="Col2ImBackward0", forward=sliding.col2im,
            vjps=(lambda ns, g, o, x, output_size, kernel, dilation, padding, stride:
                  ns.im2col(g, kernel, dilation, padding, stride),),
            rule="unfold the gradient (im2col): each entry reads the position it was added to", jvp=linear_jvp, nests=False,
            sym=lambda S, x, output_size, kernel, dilation, padding, stride: sliding.col2im(
                x, output_size, kernel, dilation, padding, stride, S.number(0)))
CONVOLUTION = Op(name="convolution", node="ConvolutionBackward0", forward=sliding.conv_forward,
                 vjps=(sliding.conv_vjp_input, sliding.conv_vjp_weight, sliding.conv_vjp_bias),
                 rule="∂conv/∂x = fold(Wᵀ·G), ∂/∂W = G·unfold(x)ᵀ, ∂/∂b = ΣG", saves=("w", "x", ""), args="xwb",
                 jvp=_conv_jvp, nests=False, sym=sliding.conv_sym, cost=costs.convolution)
MAX_POOL = Op(name="max_pool", node="MaxPool2DWithIndicesBackward0",
              forward=lambda x, key, kernel, dilation, padding, stride: x.reshape(-1)[key],
              vjps=(lambda ns, g, o, x, key, kernel, dilation, padding, stride:
                    ns.reshape(ns.index_put(g, (math.prod(x.shape),), key), tuple(x.shape)),),
              rule="∂maxpool/∂xᵢ = [xᵢ is its window's first maximum]", saves=("",), jvp=linear_jvp, nests=False,
              sym=sliding.max_pool_sym, kink=sliding.max_pool_kink)
AVG_POOL = Op(name="avg_pool", node="AvgPool2DBackward0", forward=sliding.avg_pool_forward,
              vjps=(sliding.avg_pool_vjp,), rule="∂avgpool/∂xᵢ = Σ over the windows holding xᵢ of 1/|window|",
              saves=("",), jvp=linear_jvp, nests=False, sym=sliding.avg_pool_sym)


class _NumpyNamespace:
    """The fast path for VJPs: plain NumPy with the tensor functions' names and signatures."""

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    sinh = staticmethod(np.sinh)
    cosh = staticmethod(np.cosh)
    floor = staticmethod(np.floor)
    trunc = staticmethod(np.trunc)
    digamma = staticmethod(special.digamma)

    @staticmethod
    def cumsum(x: np.ndarray, dim: int) -> np.ndarray:
        return np.cumsum(x, axis=dim)

    @staticmethod
    def cumprod(x: np.ndarray, dim: int) -> np.ndarray:
        return np.cumprod(x, axis=dim)

    @staticmethod
    def flip(x: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
        return np.flip(x, dims)

    roll = staticmethod(_roll_forward)
    inverse = staticmethod(np.linalg.inv)
    det = staticmethod(np.linalg.det)
    solve = staticmethod(_solve_forward)
    tril = staticmethod(np.tril)
    triu = staticmethod(np.triu)
    diagonal = staticmethod(_diagonal_forward)  # the layout of functions.diagonal, which indexes
    diag_embed = staticmethod(_diag_embed_forward)
    cross = staticmethod(_cross_forward)

    @staticmethod
    def einsum(equation: str, *xs: np.ndarray) -> np.ndarray:
        return _einsum_forward(*xs, equation=equation)
    polygamma = staticmethod(special.polygamma)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sign = staticmethod(np.sign)
    abs = staticmethod(np.abs)
    matmul = staticmethod(np.matmul)
    sigmoid = staticmethod(_sigmoid_forward)
    permute = staticmethod(np.transpose)
    first_along = staticmethod(_first_along)
    index_put = staticmethod(_index_put_forward)

    @staticmethod
    def constant(value: np.ndarray) -> np.ndarray:
        return value

    @staticmethod
    def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        return x.astype(dtype)

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

    sum = staticmethod(_sum_forward)

    @staticmethod
    def mean(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
        return np.mean(x, axis=dim, keepdims=keepdim)

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
    tanh = staticmethod(np.tanh)
    softplus = staticmethod(_softplus_forward)
    constant_pad_nd = staticmethod(_pad_forward)
    im2col = staticmethod(sliding.im2col)
    col2im = staticmethod(sliding.col2im)

    @staticmethod
    def gelu_backward(g: np.ndarray, x: np.ndarray, approximate: str) -> np.ndarray:
        return g * _gelu_slope(x, approximate)


NUMPY = _NumpyNamespace()

TABLE: tuple[Op, ...] = (
    ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM, WHERE, MATMUL,
    DET, LOGABSDET, INVERSE, SOLVE, CHOLESKY,
    NEG, EXP, LOG, LOG1P, SQRT, ABS, SIGN, SIN, COS, TAN, TANH, SIGMOID, RELU, SOFTPLUS, CLAMP, CLAMP_TENSOR,
    ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH, LOG2, LOG10, EXP2, EXPM1, ERF, ERFC, ERFINV, RSQRT, RECIPROCAL,
    LGAMMA, DIGAMMA, POLYGAMMA, LOGIT, FLOOR, CEIL, TRUNC, ROUND, FRAC,
    ATAN2, HYPOT, FMOD, REMAINDER, DIV_TRUNC, DIV_FLOOR, ADD_ALPHA, SUB_ALPHA, XLOGY, FMAX, FMIN, LERP, ADDCMUL, ADDCDIV,
    SUM, MEAN, MAX, MIN, PROD, VAR, STD, NORM, SOFTMAX, LOG_SOFTMAX,
    LOGSUMEXP, AMAX, AMIN, MEDIAN, CUMSUM, CUMPROD,
    RESHAPE, TRANSPOSE, PERMUTE, EXPAND, INDEX, INDEX_PUT, CAT, STACK, CLONE, CAST,
    FLIP, ROLL, REPEAT, TRIL, TRIU, DIAG_EMBED, SCATTER, SCATTER_ADD, CROSS, EINSUM,
    HARDTANH, LEAKY_RELU, ELU, GELU, GELU_BACKWARD, SILU, MISH, HARDSIGMOID, HARDSWISH, LOGSIGMOID, ADDMM,
    CONSTANT_PAD, LAYER_NORM, BATCH_NORM, MSE_LOSS, SMOOTH_L1_LOSS, HUBER_LOSS, NLL_LOSS, BINARY_CROSS_ENTROPY,
    BCE_WITH_LOGITS, IM2COL, COL2IM, CONVOLUTION, MAX_POOL, AVG_POOL,
)
