"""Elementwise functions: arithmetic (+ - * / **, maximum, where), the functions of one input
(exp ... sinc, each declared with its public names and element meaning), the clamps, the steps and the
binary ones (atan2 ... addcdiv). A new elementwise function is one `_unary(...)` here, listed in `OPS`."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from gradcli.engine import ops  # the package, for NUMPY: read at call time, since every family builds it
from gradcli.engine import special
from gradcli.engine.ops.op import Arg, _binary_sym, diagonal_jvp, Element, Names, Op, _public, _sym_map, transposed_jvp, _unary


def _two(name: str, first: str = "tensor", other: str = "tensor", **options: Any) -> Names:
    """`torch.<name>(input, other)` and `Tensor.<name>(other)`: `tensor` operands must be (or become) tensors,
    an `operand` may be a number (at least one of the two is a tensor)."""
    aliases = options.pop("aliases", ())
    return _public(name, "binary", Arg("input", first), Arg("other", other), aliases=aliases, **options)


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
        if b == 2 and ns is ops.NUMPY:  # a ** 1 is a copy of a: the same numbers, one kernel fewer on x.pow(2)'s
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


def _relu_forward(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0) if x.dtype.kind == "f" else np.maximum(x, 0)

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
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True, names=_two("maximum"))
MINIMUM = Op(name="minimum", node="MinimumBackward0", forward=np.minimum,
             vjps=(lambda ns, g, o, a, b: g * ns.where(a <= b, 1.0, 0.0) * _tie_mask(ns, a, b),
                   lambda ns, g, o, a, b: g * ns.where(b <= a, 1.0, 0.0) * _tie_mask(ns, a, b)),
             jvp=diagonal_jvp, rule="∂min(a,b)/∂a = [a<b] (+½ on a tie)", saves=("ab", "ab"),
             sym=lambda S, a, b: _binary_sym(S, S.Min, a, b),
             kink=lambda K, a, b: K.tie_kink(a, b), elementwise=True, names=_two("minimum"))
WHERE = Op(name="where", node="WhereBackward0", forward=_where_forward,
           vjps=(None, lambda ns, g, o, c, a, b: ns.where(c, g, 0.0), lambda ns, g, o, c, a, b: ns.where(c, 0.0, g)),
           jvp=diagonal_jvp, rule="∂where(c,a,b)/∂a = [c], ∂/∂b = [not c]", saves=("", "c", "c"), args="cab",
           nests=False, elementwise=True, sym=lambda S, c, a, b: S.where(c, a, b))
NEG = _unary(name="neg", node="NegBackward0", forward=np.negative, vjp=lambda ns, g, o, x: -g, rule="∂(-x)/∂x = -1",
             saves="", in_place=True,
             nests=False, sym=lambda S, x: S.map(lambda u: -u, x))
EXP = _unary(name="exp", node="ExpBackward0", forward=np.exp, vjp=lambda ns, g, o, x: g * o,
             rule="∂exp(x)/∂x = exp(x)", saves="o", in_place=True, element=Element(math.exp, lambda sp: sp.exp))
LOG = _unary(name="log", node="LogBackward0", forward=np.log, vjp=lambda ns, g, o, x: g / x, rule="∂log(x)/∂x = 1/x",
             in_place=True, element=Element(math.log, lambda sp: sp.log),
             domain=((lambda x: x < 0, "log is nan below 0"), (lambda x: x == 0, "log is -inf at 0")))
LOG1P = _unary(name="log1p", in_place=True,
               node="Log1PBackward0", forward=np.log1p, vjp=lambda ns, g, o, x: g / (x + 1.0),
               rule="∂log1p(x)/∂x = 1/(1+x)",
               sym=lambda S, x: S.map(lambda u: S.log(u + 1), x),
               domain=((lambda x: x < -1, "log1p is nan below -1"), (lambda x: x == -1, "log1p is -inf at -1")))
SQRT = _unary(name="sqrt", node="SqrtBackward0", forward=np.sqrt, vjp=lambda ns, g, o, x: g / (o * 2.0),
              rule="∂√x/∂x = 1/(2√x)", saves="o", in_place=True,
              element=Element(math.sqrt, lambda sp: sp.sqrt), kink=lambda K, x: K.zero_kink(x),
              domain=((lambda x: x < 0, "sqrt is nan below 0"),))
ABS = _unary(name="abs", node="AbsBackward0", forward=np.abs, vjp=lambda ns, g, o, x: g * ns.sign(x),
             rule="∂|x|/∂x = sign(x) (0 at 0)", in_place=True,
             sym=_sym_map("Abs"), kink=lambda K, x: K.zero_kink(x))
SIGN = _unary(name="sign", in_place=True, node="SignBackward0", forward=np.sign, vjp=lambda ns, g, o, x: g * 0.0,
              rule="∂sign(x)/∂x = 0", saves="",
              sym=_sym_map("sign"), kink=lambda K, x: K.zero_kink(x))
SIN = _unary(name="sin", in_place=True, node="SinBackward0", forward=np.sin, vjp=lambda ns, g, o, x: g * ns.cos(x),
             rule="∂sin(x)/∂x = cos(x)",
             element=Element(math.sin, lambda sp: sp.sin))
COS = _unary(name="cos", in_place=True, node="CosBackward0", forward=np.cos, vjp=lambda ns, g, o, x: -g * ns.sin(x),
             rule="∂cos(x)/∂x = -sin(x)",
             element=Element(math.cos, lambda sp: sp.cos))
TAN = _unary(name="tan", in_place=True, node="TanBackward0", forward=np.tan, vjp=lambda ns, g, o, x: g * (o * o + 1.0),
             rule="∂tan(x)/∂x = 1 + tan²(x)", saves="o",
             element=Element(math.tan, lambda sp: sp.tan))
TANH = _unary(name="tanh", node="TanhBackward0", forward=np.tanh, vjp=lambda ns, g, o, x: g * (1.0 - o * o),
              rule="∂tanh(x)/∂x = 1 - tanh²(x)",
              saves="o", in_place=True, functional=True, element=Element(math.tanh, lambda sp: sp.tanh))
SIGMOID = _unary(name="sigmoid", node="SigmoidBackward0", forward=_sigmoid_forward,
                 vjp=lambda ns, g, o, x: g * o * (1.0 - o),
                 rule="∂σ(x)/∂x = σ(x)(1-σ(x))", saves="o", in_place=True, functional=True,
                 sym=lambda S, x: S.map(lambda u: 1 / (1 + S.exp(-u)), x))


def _relu_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    """Read from the result, as PyTorch's threshold_backward(g, result, 0) is: under create_graph the
    gradient stays on the result's graph with a zero derivative, so every further derivative passes
    through relu's node again and still requires grad (0 with a grad_fn at each order, as PyTorch's)."""
    if ns is ops.NUMPY:
        # a product with the mask, not np.where (whose random branches cost 10x); + 0.0 turns the -0.0 of a
        # negative g into PyTorch's 0; a Python float keeps g's dtype (a float32 gradient stays float32)
        return g * (o > 0) + 0.0
    return ns.where(o > 0, g, o * 0.0)

RELU = _unary(name="relu", node="ReluBackward0", forward=_relu_forward,
              vjp=_relu_vjp, rule="∂relu(x)/∂x = [x>0] (0 at 0)", saves="o", sym=lambda S, x: S.map(lambda u: S.Max(u, 0), x),
              kink=lambda K, x: K.zero_kink(x), in_place=True, functional=True)
SOFTPLUS = _unary(name="softplus", node="SoftplusBackward0", forward=_softplus_forward,
                  vjp=lambda ns, g, o, x, beta=1.0, threshold=20.0:
                  g * ns.where(x * beta > threshold, 1.0, ns.sigmoid(x * beta)),
                  rule="∂softplus(x)/∂x = σ(βx)", function=False, method=False, functional=True,
                  sym=lambda S, x, beta=1.0, threshold=20.0: S.map(
                      lambda u: S.div(S.log(1 + S.exp(S.mul(u, S.number(beta)))), S.number(beta)), x))
CLAMP = Op(name="clamp", node="ClampBackward1", forward=_clamp_forward,
           vjps=(lambda ns, g, o, x, min=None, max=None: g * _clamp_mask(ns, x, min, max),),
           jvp=transposed_jvp, rule="∂clamp(x,lo,hi)/∂x = [lo ≤ x ≤ hi]", saves=("x",),
           sym=lambda S, x, min=None, max=None: S.map(lambda u: S.clamp(u, min, max), x),
           kink=lambda K, x, min=None, max=None: K.clamp_kink(x, min, max), elementwise=True)
CLAMP_TENSOR = Op(name="clamp_tensor", batching="broadcast", node="ClampBackward0", forward=_clamp_tensor_forward,
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


def _step(name: str, node: str, forward: Callable, kink: Callable, aliases: tuple[str, ...] = ()) -> Op:
    return _unary(name=name, node=node, forward=forward, vjp=_zero_vjp, rule=f"∂{name}(x)/∂x = 0 (0 at the jumps too)",
                  saves="", sym=_sym_map(name), kink=kink, aliases=aliases, in_place=True)


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

ASIN = _unary(name="asin", in_place=True,
              node="AsinBackward0", forward=np.arcsin, vjp=lambda ns, g, o, x: g / ns.sqrt(1.0 - x * x),
              rule="∂asin(x)/∂x = 1/√(1-x²)", aliases=("arcsin",), element=Element(math.asin, lambda sp: sp.asin),
               domain=((lambda x: np.abs(x) > 1, "asin is nan outside [-1, 1]"),))
ACOS = _unary(name="acos", in_place=True,
              node="AcosBackward0", forward=np.arccos, vjp=lambda ns, g, o, x: -g / ns.sqrt(1.0 - x * x),
              rule="∂acos(x)/∂x = -1/√(1-x²)", aliases=("arccos",), element=Element(math.acos, lambda sp: sp.acos),
               domain=((lambda x: np.abs(x) > 1, "acos is nan outside [-1, 1]"),))
ATAN = _unary(name="atan", in_place=True,
              node="AtanBackward0", forward=np.arctan, vjp=lambda ns, g, o, x: g / (x * x + 1.0),
              rule="∂atan(x)/∂x = 1/(1+x²)", aliases=("arctan",), element=Element(math.atan, lambda sp: sp.atan))
SINH = _unary(name="sinh", in_place=True, node="SinhBackward0", forward=np.sinh, vjp=lambda ns, g, o, x: g * ns.cosh(x),
              rule="∂sinh(x)/∂x = cosh(x)", element=Element(math.sinh, lambda sp: sp.sinh))
COSH = _unary(name="cosh", in_place=True, node="CoshBackward0", forward=np.cosh, vjp=lambda ns, g, o, x: g * ns.sinh(x),
              rule="∂cosh(x)/∂x = sinh(x)", element=Element(math.cosh, lambda sp: sp.cosh))
ASINH = _unary(name="asinh", node="AsinhBackward0", forward=np.arcsinh,
               vjp=lambda ns, g, o, x: g / ns.sqrt(x * x + 1.0), rule="∂asinh(x)/∂x = 1/√(x²+1)",
               aliases=("arcsinh",), element=Element(math.asinh, lambda sp: sp.asinh))
ACOSH = _unary(name="acosh", node="AcoshBackward0", forward=np.arccosh,
               vjp=lambda ns, g, o, x: g / ns.sqrt(x * x - 1.0), rule="∂acosh(x)/∂x = 1/√(x²-1)",
               aliases=("arccosh",), element=Element(math.acosh, lambda sp: sp.acosh),
               domain=((lambda x: x < 1, "acosh is nan below 1"),))
ATANH = _unary(name="atanh",
               node="AtanhBackward0", forward=np.arctanh, vjp=lambda ns, g, o, x: g / (1.0 - x * x),
               rule="∂atanh(x)/∂x = 1/(1-x²)", aliases=("arctanh",), element=Element(math.atanh, lambda sp: sp.atanh),
               domain=((lambda x: np.abs(x) > 1, "atanh is nan outside [-1, 1]"),
                       (lambda x: np.abs(x) == 1, "atanh is infinite at ±1")))
LOG2 = _unary(name="log2", in_place=True, node="Log2Backward0", forward=np.log2, vjp=lambda ns, g, o, x: g / (x * _LN2),
              rule="∂log₂(x)/∂x = 1/(x·ln 2)", element=Element(of=lambda S, u: S.div(S.log(u), S.log(S.number(2)))),
              domain=((lambda x: x < 0, "log2 is nan below 0"), (lambda x: x == 0, "log2 is -inf at 0")))
LOG10 = _unary(name="log10", in_place=True,
               node="Log10Backward0", forward=np.log10, vjp=lambda ns, g, o, x: g / (x * _LN10),
               rule="∂log₁₀(x)/∂x = 1/(x·ln 10)", element=Element(of=lambda S, u: S.div(S.log(u), S.log(S.number(10)))),
               domain=((lambda x: x < 0, "log10 is nan below 0"), (lambda x: x == 0, "log10 is -inf at 0")))
EXP2 = _unary(name="exp2", in_place=True, node="Exp2Backward0", forward=np.exp2, vjp=lambda ns, g, o, x: g * o * _LN2,
              rule="∂2ˣ/∂x = 2ˣ·ln 2", saves="o", element=Element(of=lambda S, u: S.pow(S.number(2), u)))
EXPM1 = _unary(name="expm1", in_place=True,
               node="Expm1Backward0", forward=np.expm1, vjp=lambda ns, g, o, x: g * (o + 1.0),
               rule="∂(eˣ-1)/∂x = eˣ", saves="o", element=Element(of=lambda S, u: S.sub(S.exp(u), S.number(1))))
ERF = _unary(name="erf", in_place=True, node="ErfBackward0", forward=special.erf,
             vjp=lambda ns, g, o, x: g * _TWO_OVER_ROOT_PI * ns.exp(-(x * x)),
             rule="∂erf(x)/∂x = 2/√π·e^(-x²)", element=Element(math.erf, lambda sp: sp.erf))
ERFC = _unary(name="erfc", in_place=True, node="ErfcBackward0", forward=special.erfc,
              vjp=lambda ns, g, o, x: g * -_TWO_OVER_ROOT_PI * ns.exp(-(x * x)),
              rule="∂erfc(x)/∂x = -2/√π·e^(-x²)", element=Element(math.erfc, lambda sp: sp.erfc))
ERFINV = _unary(name="erfinv", in_place=True, node="ErfinvBackward0", forward=special.erfinv,
                vjp=lambda ns, g, o, x: g * _ROOT_PI_OVER_TWO * ns.exp(o * o),
                rule="∂erfinv(x)/∂x = √π/2·e^(erfinv(x)²)", saves="o",
                element=Element(lambda v: float(special.erfinv(np.float64(v))), lambda sp: sp.erfinv))
RSQRT = _unary(name="rsqrt", in_place=True, node="RsqrtBackward0", forward=lambda x: 1.0 / np.sqrt(x),
               vjp=lambda ns, g, o, x: g * -0.5 * o * o * o, rule="∂x^(-1/2)/∂x = -½·x^(-3/2)", saves="o",
               element=Element(of=lambda S, u: S.pow(u, S.div(S.number(-1), S.number(2)))), kink=lambda K, x: K.zero_kink(x),
               domain=((lambda x: x < 0, "rsqrt is nan below 0"), (lambda x: x == 0, "rsqrt is inf at 0")))
RECIPROCAL = _unary(name="reciprocal", in_place=True, node="ReciprocalBackward0", forward=lambda x: 1.0 / x,
                    vjp=lambda ns, g, o, x: -g * o * o, rule="∂(1/x)/∂x = -1/x²", saves="o",
                    element=Element(of=lambda S, u: S.div(S.number(1), u)))
LGAMMA = _unary(name="lgamma", in_place=True, node="LgammaBackward0", forward=special.lgamma,
                vjp=lambda ns, g, o, x: g * ns.digamma(x), rule="∂log|Γ(x)|/∂x = ψ(x)",
                element=Element(lambda v: float(special.lgamma(np.float64(v))), lambda sp: sp.loggamma))
DIGAMMA = _unary(name="digamma", in_place=True, node="DigammaBackward0", forward=special.digamma,
                 vjp=lambda ns, g, o, x: g * ns.polygamma(1, x), rule="∂ψ(x)/∂x = ψ⁽¹⁾(x)",
                 element=Element(lambda v: float(special.digamma(np.float64(v))), lambda sp: sp.digamma))
POLYGAMMA = Op(name="polygamma", batching="broadcast", node="PolygammaBackward0", forward=lambda x, n: special.polygamma(n, x),
               vjps=(lambda ns, g, o, x, n: g * ns.polygamma(n + 1, x),),
               jvp=diagonal_jvp, rule="∂ψ⁽ⁿ⁾(x)/∂x = ψ⁽ⁿ⁺¹⁾(x)",
               saves=("x",), sym=lambda S, x, n: S.map(lambda u: S.polygamma(n, u), x))
LOGIT = Op(name="logit", batching="broadcast", node="LogitBackward0", forward=_logit_forward, vjps=(_logit_vjp,),
           jvp=diagonal_jvp, rule="∂log(x/(1-x))/∂x = 1/(x(1-x)) (0 outside [eps, 1-eps])", saves=("x",),
           sym=lambda S, x, eps=None: S.map(lambda u: S.logit(u, eps), x),
           kink=lambda K, x, eps=None: K.clamp_kink(x, eps, None if eps is None else 1.0 - eps))
FLOOR = _step("floor", "FloorBackward0", np.floor, lambda K, x: K.jump_kink(x, 0.0))
CEIL = _step("ceil", "CeilBackward0", np.ceil, lambda K, x: K.jump_kink(x, 0.0))
TRUNC = _step("trunc", "TruncBackward0", np.trunc, lambda K, x: K.jump_kink(x, 0.0), aliases=("fix",))
ROUND = Op(name="round", batching="broadcast", node="RoundBackward0", forward=_round_forward, vjps=(_zero_vjp,),
           jvp=diagonal_jvp, rule="∂round(x)/∂x = 0 (0 at the jumps too)", sym=lambda S, x, decimals=0: S.map(
               lambda u: S.round(u, decimals), x), kink=lambda K, x, decimals=0: K.jump_kink(x * 10.0 ** decimals, 0.5))
FRAC = _unary(name="frac", in_place=True,
              node="FracBackward0", forward=lambda x: x - np.trunc(x), vjp=lambda ns, g, o, x: g,
              rule="∂(x - trunc(x))/∂x = 1", saves="", element=Element(of=lambda S, u: S.sub(u, S.trunc(u))), kink=lambda K, x: K.jump_kink(x, 0.0))


def _sinc_vjp(ns: Any, g: Any, o: Any, x: Any) -> Any:
    """PyTorch's formula, (πx·cos(πx) - sin(πx))/(πx²), with 0 at x = 0, where it reads 0/0 (so a second
    derivative there is nan, as PyTorch's is)."""
    px = x * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        return g * ns.where(x == 0, 0.0, (px * ns.cos(px) - ns.sin(px)) / (px * x))

SINC = _unary(name="sinc", node="SincBackward0", forward=np.sinc, vjp=_sinc_vjp,
              rule="∂sinc(x)/∂x = (cos(πx) - sinc(x))/x (0 at 0)", in_place=True,
              element=Element(lambda v: 1.0 if v == 0 else math.sin(math.pi * v) / (math.pi * v),
                              lambda sp: lambda u, evaluate=True: sp.Piecewise(
                                  (sp.Integer(1), sp.Eq(u, 0)), (sp.sin(sp.pi * u) / (sp.pi * u), True))))
ATAN2 = Op(name="atan2", batching="broadcast", node="Atan2Backward0", forward=np.arctan2,
           vjps=(lambda ns, g, o, a, b: g * b * _inverse_square_radius(ns, a, b),
                 lambda ns, g, o, a, b: -g * a * _inverse_square_radius(ns, a, b)),
           jvp=diagonal_jvp, rule="∂atan2(a,b)/∂a = b/(a²+b²), ∂/∂b = -a/(a²+b²)", saves=("ab", "ab"),
           element=Element(math.atan2, lambda sp: sp.atan2), kink=lambda K, a, b: K.origin_kink(a, b),
           names=_two("atan2", aliases=("arctan2",), in_place=True))
HYPOT = Op(name="hypot", batching="broadcast", node="HypotBackward0", forward=np.hypot,
           vjps=(lambda ns, g, o, a, b: g * a / o, lambda ns, g, o, a, b: g * b / o),
           jvp=diagonal_jvp, rule="∂√(a²+b²)/∂a = a/√(a²+b²)", saves=("ao", "bo"),
           element=Element(of=lambda S, u, v: S.sqrt(S.add(S.mul(u, u), S.mul(v, v)))), kink=lambda K, a, b: K.origin_kink(a, b),
           names=_two("hypot", in_place=True))
FMOD = Op(name="fmod", batching="broadcast", node="FmodBackward1", forward=_nan_free_binary(np.fmod),
          vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g * ns.trunc(a / b)),
          jvp=diagonal_jvp, rule="∂fmod(a,b)/∂a = 1, ∂/∂b = -trunc(a/b)", saves=("", "ab"),
          element=Element(of=lambda S, u, v: S.sub(u, S.mul(v, S.trunc(S.div(u, v))))), kink=lambda K, a, b: K.divides_kink(a, b),
          names=_two("fmod", other="operand", scalar_node="FmodBackward0", in_place=True))
REMAINDER = Op(name="remainder", batching="broadcast", node="RemainderBackward1", forward=_nan_free_binary(np.remainder),
               vjps=(lambda ns, g, o, a, b: g, lambda ns, g, o, a, b: -g * ns.floor(a / b)),
               jvp=diagonal_jvp, rule="∂remainder(a,b)/∂a = 1, ∂/∂b = -floor(a/b)", saves=("", "ab"),
               element=Element(of=lambda S, u, v: S.sub(u, S.mul(v, S.floor(S.div(u, v))))), kink=lambda K, a, b: K.divides_kink(a, b),
               names=_two("remainder", "operand", "operand", scalar_node="RemainderBackward0", in_place=True))


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
XLOGY = Op(name="xlogy", batching="broadcast", node="XlogyBackward0", forward=_xlogy_forward,
           vjps=(lambda ns, g, o, a, b: g * ns.where(a == 0, ns.where(b <= 0, 0.0, ns.log(b)), ns.log(b)),
                 lambda ns, g, o, a, b: g * a / b),
           jvp=diagonal_jvp, rule="∂(a·log b)/∂a = log b (0 where a = 0 and b ≤ 0), ∂/∂b = a/b", saves=("ab", "ab"),
           element=Element(of=lambda S, u, v: S.zero_where_zero(u, lambda: S.mul(u, S.log(v)))), kink=lambda K, a, b: K.zero_first_kink(a, b),
           names=_two("xlogy", "operand", "operand", in_place=True))
FMAX = Op(name="fmax", batching="broadcast", node="FmaxBackward0", forward=np.fmax,
          vjps=(lambda ns, g, o, a, b: g * _fmax_winner(ns, a, b, lambda u, v: u >= v),
                lambda ns, g, o, a, b: g * (1.0 - _fmax_winner(ns, a, b, lambda u, v: u >= v))),
          jvp=diagonal_jvp, rule="∂fmax(a,b)/∂a = [a ≥ b or b is nan]", saves=("ab", "ab"),
          sym=lambda S, a, b: _binary_sym(S, S.Max, a, b), kink=lambda K, a, b: K.tie_kink(a, b),
          names=_two("fmax"))
FMIN = Op(name="fmin", batching="broadcast", node="FminBackward0", forward=np.fmin,
          vjps=(lambda ns, g, o, a, b: g * _fmax_winner(ns, a, b, lambda u, v: u <= v),
                lambda ns, g, o, a, b: g * (1.0 - _fmax_winner(ns, a, b, lambda u, v: u <= v))),
          jvp=diagonal_jvp, rule="∂fmin(a,b)/∂a = [a ≤ b or b is nan]", saves=("ab", "ab"),
          sym=lambda S, a, b: _binary_sym(S, S.Min, a, b), kink=lambda K, a, b: K.tie_kink(a, b),
          names=_two("fmin"))
LERP = Op(name="lerp", batching="broadcast", node="LerpBackward1", forward=_lerp_forward,
          vjps=(lambda ns, g, o, a, b, w: g * (1.0 - w), lambda ns, g, o, a, b, w: g * w,
                lambda ns, g, o, a, b, w: g * (b - a)),
          jvp=diagonal_jvp, rule="∂lerp(a,b,w)/∂a = 1-w, ∂/∂b = w, ∂/∂w = b-a", saves=("w", "w", "ab"), args="abw",
          nests=False, sym=lambda S, a, b, w: S.lerp(a, b, w))
ADDCMUL = Op(name="addcmul", batching="broadcast", node="AddcmulBackward0", forward=lambda x, a, b, value=1.0: x + value * a * b,
             vjps=(lambda ns, g, o, x, a, b, value=1.0: g, lambda ns, g, o, x, a, b, value=1.0: g * b * value,
                   lambda ns, g, o, x, a, b, value=1.0: g * a * value),
             jvp=diagonal_jvp, rule="∂(x + v·a·b)/∂a = v·b", saves=("", "b", "a"), args="xab",
             nests=False, sym=lambda S, x, a, b, value=1.0: S.addc(S.mul, x, a, b, value))
ADDCDIV = Op(name="addcdiv", batching="broadcast", node="AddcdivBackward0", forward=lambda x, a, b, value=1.0: x + value * a / b,
             vjps=(lambda ns, g, o, x, a, b, value=1.0: g, lambda ns, g, o, x, a, b, value=1.0: g * value / b,
                   lambda ns, g, o, x, a, b, value=1.0: -g * value * a / (b * b)),
             jvp=diagonal_jvp, rule="∂(x + v·a/b)/∂a = v/b, ∂/∂b = -v·a/b²", saves=("", "b", "ab"), args="xab",
             nests=False, sym=lambda S, x, a, b, value=1.0: S.addc(S.div, x, a, b, value))

LOGADDEXP = Op(name="logaddexp", node="LogaddexpBackward0", forward=np.logaddexp,
               vjps=(lambda ns, g, o, a, b: g * ns.exp(a - o), lambda ns, g, o, a, b: g * ns.exp(b - o)),
               jvp=diagonal_jvp, rule="∂log(eᵃ+eᵇ)/∂a = eᵃ⁻ᵒ, ∂/∂b = eᵇ⁻ᵒ", saves=("ao", "bo"), elementwise=True,
               element=Element(of=lambda S, u, v: S.log(S.add(S.exp(u), S.exp(v)))),
               names=_two("logaddexp"))

OPS: tuple[Op, ...] = (
    ADD, SUB, MUL, DIV, POW, MAXIMUM, MINIMUM, WHERE, NEG, EXP, LOG, LOG1P, SQRT, ABS, SIGN, SIN, COS, TAN, TANH,
    SIGMOID, RELU, SOFTPLUS, CLAMP, CLAMP_TENSOR, ASIN, ACOS, ATAN, SINH, COSH, ASINH, ACOSH, ATANH, LOG2, LOG10,
    EXP2, EXPM1, ERF, ERFC, ERFINV, RSQRT, RECIPROCAL, LGAMMA, DIGAMMA, POLYGAMMA, LOGIT, FLOOR, CEIL, TRUNC, ROUND,
    FRAC, SINC, ATAN2, HYPOT, FMOD, REMAINDER, DIV_TRUNC, DIV_FLOOR, ADD_ALPHA, SUB_ALPHA, XLOGY, FMAX, FMIN, LERP,
    ADDCMUL, ADDCDIV, LOGADDEXP,
)
"""This family's primitives, in `TABLE` (the package joins the families)."""
