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
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


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


def broadcast_axes(gshape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a gradient that `unbroadcast` sums away (`--explain` shows them too)."""
    lead = len(gshape) - len(shape)
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


def _pow_vjp_base(ns: Any, g: Any, out: Any, a: Any, b: Any) -> Any:
    if isinstance(b, (int, float)):
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
    return np.sum(x, axis=dim, keepdims=keepdim)


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
    if p == 2:
        return np.sqrt(np.sum(x * x, axis=dim, keepdims=keepdim))
    if p == 1:
        return np.sum(np.abs(x), axis=dim, keepdims=keepdim)
    if p == float("inf"):
        return np.max(np.abs(x), axis=dim, keepdims=keepdim)
    return np.sum(np.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(ns: Any, g: Any, out: Any, x: Any, p: float = 2.0, dim: tuple[int, ...] | None = None,
              keepdim: bool = False) -> Any:
    """PyTorch's subgradient: zero where the norm is zero."""
    gb = _back_to(ns, g, x, dim, keepdim)
    o = _back_to(ns, out, x, dim, keepdim)
    if p == 1:
        return gb * ns.sign(x)
    if p == float("inf"):
        mask = ns.where(ns.abs(x) == o, 1.0, 0.0)
        return gb * ns.sign(x) * mask / ns.sum(mask, dim=dim, keepdim=True)
    if p == 2:
        return gb * x / ns.where(o == 0, 1.0, o) * ns.where(o == 0, 0.0, 1.0)
    scale = ns.abs(x) ** (p - 1) / ns.where(o == 0, 1.0, o) ** (p - 1)
    return gb * ns.sign(x) * scale


def _softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_forward(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - np.max(x, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def _softplus_forward(x: np.ndarray) -> np.ndarray:
    """PyTorch's softplus (beta 1, threshold 20): linear above the threshold."""
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


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
    return x[key]


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


def _swap(x: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    return np.swapaxes(x, dim0, dim1)


def _relu_forward(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0) if x.dtype.kind == "f" else np.maximum(x, 0)


def _unary(name: str, node: str, forward: Callable, vjp: Callable, rule: str, saves: str = "x",
           sym: Callable | None = None, kink: Callable | None = None, nests: bool = True) -> Op:
    return Op(name=name, node=node, forward=forward, vjps=(vjp,), rule=rule, saves=(saves,) if saves else (),
              sym=sym, kink=kink, nests=nests, elementwise=True)


def _sym_map(fn_name: str) -> Callable:
    """The SymPy meaning of an elementwise function: apply `S.<fn_name>` to every element."""
    return lambda S, x: S.map(getattr(S, fn_name), x)


def _binary_sym(S: Any, fn: Callable, a: Any, b: Any) -> Any:
    return S.broadcast(fn, a, b)


ADD = Op(name="add", node="AddBackward0", forward=np.add,
         vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: g),
         rule="∂(a+b)/∂a = 1, ∂(a+b)/∂b = 1",
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.add, a, b))
SUB = Op(name="sub", node="SubBackward0", forward=np.subtract,
         vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g),
         rule="∂(a-b)/∂a = 1, ∂(a-b)/∂b = -1",
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.sub, a, b))
MUL = Op(name="mul", node="MulBackward0", forward=np.multiply,
         vjps=(lambda ns, g, o, a, b: g * b, lambda ns, g, o, a, b: g * a),
         rule="∂(a*b)/∂a = b, ∂(a*b)/∂b = a", saves=("b", "a"),
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.mul, a, b))
DIV = Op(name="div", node="DivBackward0", forward=np.true_divide,
         vjps=(lambda ns, g, o, a, b: g / b, lambda ns, g, o, a, b: -g * a / (b * b)),
         rule="∂(a/b)/∂a = 1/b, ∂(a/b)/∂b = -a/b²", saves=("b", "ab"),
         nests=False, elementwise=True, sym=lambda S, a, b: _binary_sym(S, S.div, a, b))
POW = Op(name="pow", node="PowBackward0", forward=np.power, vjps=(_pow_vjp_base, _pow_vjp_exponent),
         rule="∂(a**b)/∂a = b·a**(b-1), ∂(a**b)/∂b = a**b·log(a)", saves=("ab", "ao"),
         sym=lambda S, a, b: _binary_sym(S, S.pow, a, b),
         kink=lambda K, a, b: K.pow_kink(a, b), elementwise=True)
MAXIMUM = Op(name="maximum", node="MaximumBackward0", forward=np.maximum,
             vjps=(lambda ns, g, o, a, b: g * ns.where(a >= b, 1.0, 0.0) * _tie_mask(ns, a, b),
                   lambda ns, g, o, a, b: g * ns.where(b >= a, 1.0, 0.0) * _tie_mask(ns, a, b)),
             rule="∂max(a,b)/∂a = [a>b] (+½ on a tie)", saves=("ab", "ab"),
             sym=lambda S, a, b: _binary_sym(S, S.Max, a, b),
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True)
MINIMUM = Op(name="minimum", node="MinimumBackward0", forward=np.minimum,
             vjps=(lambda ns, g, o, a, b: g * ns.where(a <= b, 1.0, 0.0) * _tie_mask(ns, a, b),
                   lambda ns, g, o, a, b: g * ns.where(b <= a, 1.0, 0.0) * _tie_mask(ns, a, b)),
             rule="∂min(a,b)/∂a = [a<b] (+½ on a tie)", saves=("ab", "ab"),
             sym=lambda S, a, b: _binary_sym(S, S.Min, a, b),
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True)
WHERE = Op(name="where", node="WhereBackward0", forward=_where_forward,
           vjps=(None, lambda ns, g, o, c, a, b: ns.where(c, g, 0.0), lambda ns, g, o, c, a, b: ns.where(c, 0.0, g)),
           rule="∂where(c,a,b)/∂a = [c], ∂/∂b = [not c]", saves=("", "c", "c"), args="cab",
           nests=False, elementwise=True, sym=lambda S, c, a, b: S.where(c, a, b))
MATMUL = Op(name="matmul", node="MmBackward0", forward=_matmul_forward, vjps=(_matmul_vjp_a, _matmul_vjp_b),
            rule="∂(A@B)/∂A = G@Bᵀ, ∂(A@B)/∂B = Aᵀ@G", saves=("b", "a"),
            nests=False, sym=lambda S, a, b: S.matmul(a, b))

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
RELU = _unary(name="relu", node="ReluBackward0", forward=_relu_forward,
              vjp=lambda ns, g, o, x: g * ns.where(x > 0, 1.0, 0.0),
              rule="∂relu(x)/∂x = [x>0] (0 at 0)", sym=lambda S, x: S.map(lambda u: S.Max(u, 0), x),
              kink=lambda K, x: K.zero_kink(x))
SOFTPLUS = _unary(name="softplus", node="SoftplusBackward0", forward=_softplus_forward,
                  vjp=lambda ns, g, o, x: g * ns.where(x > 20, 1.0, ns.sigmoid(x)), rule="∂softplus(x)/∂x = σ(x)",
                  sym=lambda S, x: S.map(lambda u: S.log(1 + S.exp(u)), x))
CLAMP = Op(name="clamp", node="ClampBackward1", forward=_clamp_forward,
           vjps=(lambda ns, g, o, x, min=None, max=None: g * _clamp_mask(ns, x, min, max),),
           rule="∂clamp(x,lo,hi)/∂x = [lo ≤ x ≤ hi]", saves=("x",),
           sym=lambda S, x, min=None, max=None: S.map(lambda u: S.clamp(u, min, max), x),
           kink=lambda K, x, min=None, max=None: K.clamp_kink(x, min, max), elementwise=True)

CLAMP_TENSOR = Op(name="clamp_tensor", node="ClampBackward0", forward=_clamp_tensor_forward,
                  vjps=(lambda ns, g, o, x, lo, hi: g * ns.where(x >= lo, 1.0, 0.0) * ns.where(x <= hi, 1.0, 0.0),
                        lambda ns, g, o, x, lo, hi: g * ns.where(x < lo, 1.0, 0.0) * ns.where(lo < hi, 1.0, 0.0),
                        lambda ns, g, o, x, lo, hi: g * ns.where(x > hi, 1.0, ns.where(hi < lo, 1.0, 0.0))),
                  rule="∂clamp(x,lo,hi)/∂x = [lo ≤ x ≤ hi], ∂/∂lo = [x < lo], ∂/∂hi = [x > hi]",
                  saves=("xab", "xab", "xab"), args="xab",
                  sym=lambda S, x, lo, hi: _binary_sym(S, S.Min, _binary_sym(S, S.Max, x, lo), hi),
                  kink=lambda K, x, lo, hi: K.tie_kink(x, lo) | K.tie_kink(x, hi))

SUM = Op(name="sum", node="SumBackward1", forward=_sum_forward,
         vjps=(lambda ns, g, o, x, dim=None, keepdim=False: ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape),),
         rule="∂Σx/∂xᵢ = 1",
         nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.add_all, x, dim, keepdim))
MEAN = Op(name="mean", node="MeanBackward1", forward=_mean_forward,
          vjps=(lambda ns, g, o, x, dim=None, keepdim=False:
           ns.expand(_back_to(ns, g, x, dim, keepdim), x.shape) * _per(_count(x, dim)),),
          rule="∂mean(x)/∂xᵢ = 1/n",
          nests=False, sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mean_all, x, dim, keepdim))
MAX = Op(name="max", node="MaxBackward0", forward=_extremum_forward(np.max), vjps=(_extremum_vjp,),
         rule="∂max(x)/∂xᵢ = [xᵢ is the max] (ties share)", saves=("xo",),
         sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.max_all, x, dim, keepdim),
         kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.max))
MIN = Op(name="min", node="MinBackward0", forward=_extremum_forward(np.min), vjps=(_extremum_vjp,),
         rule="∂min(x)/∂xᵢ = [xᵢ is the min] (ties share)", saves=("xo",),
         sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.min_all, x, dim, keepdim),
         kink=lambda K, x, dim=None, keepdim=False: K.extremum_kink(x, dim, np.min))
PROD = Op(name="prod", node="ProdBackward1", forward=lambda x, dim=None,
          keepdim=False: np.prod(x, axis=dim, keepdims=keepdim),
          vjps=(_prod_vjp,), rule="∂Πx/∂xᵢ = Π_{j≠i} xⱼ", saves=("xo",),
          sym=lambda S, x, dim=None, keepdim=False: S.reduce(S.mul_all, x, dim, keepdim))
VAR = Op(name="var", node="VarBackward0", forward=_var_forward, vjps=(_var_vjp,),
         rule="∂var(x)/∂xᵢ = 2(xᵢ-x̄)/(n-c)", saves=("x",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.var_all(v, correction), x, dim, keepdim))
STD = Op(name="std", node="StdBackward0", forward=_std_forward, vjps=(_std_vjp,),
         rule="∂std(x)/∂xᵢ = (xᵢ-x̄)/((n-c)·std)", saves=("xo",),
         sym=lambda S, x, dim=None, correction=1, keepdim=False: S.reduce(
             lambda v: S.sqrt(S.var_all(v, correction)), x, dim, keepdim))
NORM = Op(name="norm", node="LinalgVectorNormBackward0", forward=_norm_forward, vjps=(_norm_vjp,),
          rule="∂‖x‖₂/∂xᵢ = xᵢ/‖x‖₂ (0 at 0)",
          saves=("xo",),
          sym=lambda S, x, p=2.0, dim=None, keepdim=False: S.reduce(lambda v: S.norm_all(v, p), x, dim, keepdim),
          kink=lambda K, x, p=2.0, dim=None, keepdim=False: K.norm_kink(x, p, dim))
SOFTMAX = Op(name="softmax", node="SoftmaxBackward0", forward=_softmax_forward,
             vjps=(lambda ns, g, o, x, dim: o * (g - ns.sum(g * o, dim=(dim,), keepdim=True)),),
             rule="∂softmax(x)ᵢ/∂xⱼ = sᵢ(δᵢⱼ - sⱼ)", saves=("o",),
             sym=lambda S, x, dim: S.along(S.softmax_1d, x, dim))
LOG_SOFTMAX = Op(name="log_softmax", node="LogSoftmaxBackward0", forward=_log_softmax_forward,
                 vjps=(lambda ns, g, o, x, dim: g - ns.exp(o) * ns.sum(g, dim=(dim,), keepdim=True),),
                 rule="∂log_softmax(x)ᵢ/∂xⱼ = δᵢⱼ - sⱼ", saves=("o",),
                 sym=lambda S, x, dim: S.along(S.log_softmax_1d, x, dim))

RESHAPE = Op(name="reshape", node="ViewBackward0", forward=lambda x, shape: np.reshape(x, shape),
             vjps=(lambda ns, g, o, x, shape: ns.reshape(g, x.shape),), rule="reshape back to the input's shape",
             nests=False, sym=lambda S, x, shape: x.reshape(shape))
TRANSPOSE = Op(name="transpose", node="TransposeBackward0", forward=_swap,
               vjps=(lambda ns, g, o, x, dim0, dim1: ns.transpose(g, dim0, dim1),),
               rule="transpose the gradient back",
               nests=False, sym=lambda S, x, dim0, dim1: np.swapaxes(x, dim0, dim1))
PERMUTE = Op(name="permute", node="PermuteBackward0", forward=lambda x, dims: np.transpose(x, dims),
             vjps=(lambda ns, g, o, x, dims: ns.permute(g, tuple(np.argsort(dims))),),
             rule="permute the gradient back",
             nests=False, sym=lambda S, x, dims: np.transpose(x, dims))
EXPAND = Op(name="expand", node="ExpandBackward0", forward=lambda x, shape: np.broadcast_to(x, shape),
            vjps=(lambda ns, g, o, x, shape: g,), rule="sum the gradient over the expanded axes",
            nests=False, sym=lambda S, x, shape: np.broadcast_to(x, shape))
INDEX = Op(name="index", node="IndexBackward0", forward=_index_forward,
           vjps=(lambda ns, g, o, x, key: ns.index_put(g, x.shape, key),),
           rule="scatter the gradient back into zeros",
           nests=False, sym=lambda S, x, key: S.as_array(x[key]))
INDEX_PUT = Op(name="index_put", node="IndexPutBackward0", forward=_index_put_forward,
               vjps=(lambda ns, g, o, v, shape, key: ns.index(g, key),), rule="gather the gradient at the indices",
               nests=False, sym=lambda S, v, shape, key: S.index_put(v, shape, key))
CAT = Op(name="cat", node="CatBackward0", forward=_cat_forward, vjps=(), rule="split the gradient back along dim",
         nests=False, sym=lambda S, *xs, dim=0: np.concatenate(xs, axis=dim))
STACK = Op(name="stack", node="StackBackward0", forward=_stack_forward, vjps=(),
           rule="select each input's slice of the gradient",
           nests=False, sym=lambda S, *xs, dim=0: np.stack(xs, axis=dim))

CLONE = _unary(name="clone", node="CloneBackward0", forward=np.array, vjp=lambda ns, g, o, x: g,
               rule="∂copy(x)/∂x = 1", saves="",
               nests=False, sym=lambda S, x: x)
CAST = Op(name="to", node="ToCopyBackward0", forward=lambda x, dtype: x.astype(dtype),
          vjps=(lambda ns, g, o, x, dtype: ns.cast(g, x.dtype),), rule="cast the gradient back to the input's dtype",
          nests=False, elementwise=True, sym=lambda S, x, dtype: x)


def variadic(op: Op, count: int) -> Op:
    """Cat and stack take any number of tensors: give this call one VJP per input."""
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


class _NumpyNamespace:
    """The fast path for VJPs: plain NumPy with the tensor functions' names and signatures."""

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
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

    @staticmethod
    def sum(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
        return np.sum(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def mean(x: np.ndarray, dim: tuple[int, ...] | None = None, keepdim: bool = False) -> np.ndarray:
        return np.mean(x, axis=dim, keepdims=keepdim)

    @staticmethod
    def expand(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return np.broadcast_to(x, shape)

    @staticmethod
    def index(x: np.ndarray, key: Any) -> np.ndarray:
        return x[key]

    @staticmethod
    def prod_others(x: np.ndarray, dim: tuple[int, ...] | None, out: np.ndarray) -> np.ndarray:
        return _prod_others(x, dim, out)


NUMPY = _NumpyNamespace()

TABLE: tuple[Op, ...] = (
    ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM, WHERE, MATMUL,
    NEG, EXP, LOG, LOG1P, SQRT, ABS, SIGN, SIN, COS, TAN, TANH, SIGMOID, RELU, SOFTPLUS, CLAMP, CLAMP_TENSOR,
    SUM, MEAN, MAX, MIN, PROD, VAR, STD, NORM, SOFTMAX, LOG_SOFTMAX,
    RESHAPE, TRANSPOSE, PERMUTE, EXPAND, INDEX, INDEX_PUT, CAT, STACK, CLONE, CAST,
)
