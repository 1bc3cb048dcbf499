"""`torch.nn.functional`: activations and losses over the op table, with PyTorch's checks and texts.

What PyTorch records as one node (`MseLossBackward0`, `NllLossBackward0`, `HardtanhBackward0`...)
is one primitive of `ops`; the rest are compositions PyTorch itself performs (`cross_entropy` is
`nll_loss(log_softmax(x))`, `l1_loss` is `abs(a - b).mean()`), so `--graph` shows PyTorch's nodes.
Targets, class weights and dropout masks are constants of the graph.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.ops.op import functional
from gradcli.engine.batched import NoRule, innermost, rewrap, unwrap
from gradcli.engine.tensor import Tensor, _wrap, apply, broadcast_shape
from gradcli.errors import ArgumentError, DtypeError, ShapeError, ValueDomainError

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_REDUCTIONS = ("mean", "sum", "none")


def _tensor(x: Any, fn: str) -> Tensor:
    return F._tensor_arg(x, fn)


def _no_inplace(inplace: bool, fn: str) -> None:
    if inplace:
        raise ArgumentError(f"{fn}(): inplace=True is not supported by gradcli",
                            hint=f"assign the result instead: y = F.{fn}(x)")


def _reduction(reduction: Any, fn: str, extra: tuple[str, ...] = ()) -> str:
    if reduction not in _REDUCTIONS + extra:
        raise ArgumentError(f"{reduction} is not a valid value for reduction",
                            hint=f"{fn}() takes reduction='mean', 'sum' or 'none'"
                                 + (f" or '{extra[0]}'" if extra else ""))
    return reduction


def legacy_reduction(size_average: Any, reduce: Any) -> str:
    """PyTorch's reading of the deprecated pair: both unset or true → 'mean'; reduce alone → 'sum'; else 'none'."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else "sum" if reduce else "none"


def _probability(p: Any, fn: str) -> float:
    """A dropout probability: a number in [0, 1]."""
    p = F.number_arg(p, fn, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueDomainError(f"dropout probability has to be between 0 and 1, but got {p}",
                               hint="p is the probability of zeroing an element, e.g. p=0.2")
    return p


def _constant(x: Any, fn: str, what: str) -> np.ndarray | None:
    """A tensor argument PyTorch does not differentiate (class weights, pos_weight), as data."""
    if x is None:
        return None
    t = _tensor(x, fn)
    if t.requires_grad:
        raise ArgumentError(f"The function '{fn}' is not differentiable with respect to argument '{what}'. This "
                            "input cannot have requires_grad True.", hint=f"pass {what}.detach()")
    return t._data


# -- activations ---------------------------------------------------------------------------------
def _activation(op: O.Op, input: Any, inplace: bool, fn: str, name: str | None = None, **params: Any) -> Tensor:
    _no_inplace(inplace, fn)
    return apply(op, _tensor(input, fn), name=name, **params)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    min_val, max_val = F.number_arg(min_val, "hardtanh", "min_val"), F.number_arg(max_val, "hardtanh", "max_val")
    if min_val > max_val:
        raise ValueDomainError("min_val cannot be greater than max_val", hint="e.g. hardtanh(x, -1.0, 1.0)")
    return _activation(O.HARDTANH, input, inplace, "hardtanh", min_val=float(min_val), max_val=float(max_val))


def relu6(input: Any, inplace: bool = False) -> Tensor:
    return _activation(O.HARDTANH, input, inplace, "relu6", min_val=0.0, max_val=6.0)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    slope = F.number_arg(negative_slope, "leaky_relu", "negative_slope")
    return _activation(O.LEAKY_RELU, input, inplace, "leaky_relu", negative_slope=float(slope))


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    alpha = F.number_arg(alpha, "elu", "alpha")
    return _activation(O.ELU, input, inplace, "elu", alpha=float(alpha), scale=1.0, input_scale=1.0)


def selu(input: Any, inplace: bool = False) -> Tensor:
    return _activation(O.ELU, input, inplace, "selu", alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    alpha = F.number_arg(alpha, "celu", "alpha")
    if alpha == 0:
        raise ValueDomainError("ZeroDivisionError: celu's alpha cannot be 0", hint="celu(x) = max(0,x) + "
                               "min(0, alpha·(exp(x/alpha) - 1)); use any alpha other than 0")
    return _activation(O.ELU, input, inplace, "celu", "CeluBackward0", alpha=float(alpha), scale=1.0,
                       input_scale=1.0 / alpha)


def gelu(input: Any, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise ArgumentError(f"approximate argument must be either none or tanh, got {approximate!r}",
                            hint="gelu(x) is exact; gelu(x, approximate='tanh') is the tanh approximation")
    return apply(O.GELU, _tensor(input, "gelu"), approximate=approximate)


def _declared_activation(op: O.Op) -> Callable[..., Tensor]:
    """`F.X(input, inplace=False)` of an activation declared with no arguments of its own (`_activation` in
    `engine/ops/nn.py`): made from the declaration, so such an activation is written in one place."""
    def call(input: Any, inplace: bool = False) -> Tensor:
        return _activation(op, input, inplace, op.name)
    call.__name__ = call.__qualname__ = op.name
    return call


def logsigmoid(input: Any) -> Tensor:
    """Written, as PyTorch's takes no `inplace`."""
    return apply(O.LOGSIGMOID, _tensor(input, "logsigmoid"))


def softsign(input: Any) -> Tensor:
    x = _tensor(input, "softsign")
    return x / (x.abs() + 1)


softplus = F.softplus  # torch.nn.functional's, the same function the engine's VJPs call
globals().update({name: _declared_activation(op) for name, op in O.named("functional").items()
                  if not op.names.signature and not op.names.functions and name not in globals()})  # silu, mish, ...


def softmin(input: Any, dim: Any = None) -> Tensor:
    return F.softmax(-_tensor(input, "softmin"), dim)


# -- distances and normalisation -------------------------------------------------------------------
def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    x = _tensor(input, "normalize")
    return x / F.expand(F.clamp(F.norm(x, p, dim, keepdim=True), min=eps), x.shape)


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """PyTorch divides each by its norm first (clamped at eps), then sums the products."""
    a, b = _tensor(x1, "cosine_similarity"), _tensor(x2, "cosine_similarity")
    shape = broadcast_shape("cosine_similarity", a.shape, b.shape)
    a, b = (F.expand(t, shape) if t.shape != shape else t for t in (a, b))
    na = F.clamp(F.norm(a, 2, dim, keepdim=True), min=eps)
    nb = F.clamp(F.norm(b, 2, dim, keepdim=True), min=eps)
    return F.sum((a / na) * (b / nb), dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    a, b = _tensor(x1, "pairwise_distance"), _tensor(x2, "pairwise_distance")
    p, eps = F.number_arg(p, "pairwise_distance", "p"), F.number_arg(eps, "pairwise_distance", "eps")
    d = a - b + eps
    return apply(O.NORM, d, p=float(p), dim=(builtins.max(d.ndim - 1, 0),) if d.ndim else None,
                 keepdim=bool(keepdim), name="NormBackward1")


def linear(input: Any, weight: Any, bias: Any = None) -> Tensor:
    """y = x·Wᵀ + b. A 2-D input with a bias is one AddmmBackward0 node, as in PyTorch."""
    x, w = _tensor(input, "linear"), _tensor(weight, "linear")
    if bias is None:
        return F.matmul(x, F.t(w))
    b = _tensor(bias, "linear")
    if x.ndim == 2:
        F.matmul(x, F.t(w))  # PyTorch's shape errors before addmm's
        return apply(O.ADDMM, b, x, F.t(w))
    if x.ndim == 0 or w.ndim != 2:
        return F.matmul(x, F.t(w)) + b
    flat = apply(O.ADDMM, b, F.reshape(x, -1, x.shape[-1]), F.t(w))
    return F.reshape(flat, x.shape[:-1] + (w.shape[0],))


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    t = _tensor(tensor, "one_hot")
    if t.dtype.kind not in "iu":
        raise DtypeError("one_hot is only applicable to index tensor of type LongTensor.",
                         hint="class indices are integers, e.g. torch.tensor([0, 2, 1])")
    if t.numel() and t._data.min() < 0:
        raise ValueDomainError("Class values must be non-negative.", hint="class indices count from 0")
    n = int(t._data.max()) + 1 if num_classes == -1 and t.numel() else int(num_classes)
    if t.numel() and t._data.max() >= n:
        raise ValueDomainError("Class values must be smaller than num_classes.",
                               hint=f"the largest class index is {int(t._data.max())}; num_classes={n}")
    return _wrap((t._data[..., None] == np.arange(n)).astype(np.int64))


def pad(input: Any, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    x = _tensor(input, "pad")
    if mode != "constant":
        raise ArgumentError(f"pad(): mode={mode!r} is not supported by gradcli",
                            hint="gradcli pads with a constant only: pad(x, (1, 1), value=0.0)")
    widths = F.ints_arg(pad, "pad", "pad")
    if len(widths) % 2:
        raise ArgumentError("Padding length must be divisible by 2", hint="give (left, right) pairs, last dim first")
    if len(widths) > 2 * x.ndim:
        raise ArgumentError(f"Padding length should be less than or equal to two times the input dimension but got "
                            f"padding length {len(widths)} and input of dimension {x.ndim}",
                            hint="one (left, right) pair per dimension, from the last dimension backwards")
    for k, (lo, hi) in enumerate(zip(widths[::2], widths[1::2])):
        size = x.shape[x.ndim - 1 - k]
        if size + lo + hi < 0:
            raise ShapeError(f"The input size {size}, plus negative padding {lo} and {hi} resulted in a negative "
                             f"output size, which is invalid. Check dimension {x.ndim - 1 - k} of your input.",
                             hint="negative padding crops; it cannot remove more than the dimension holds")
    value = 0.0 if value is None else F.number_arg(value, "pad", "value")
    return apply(O.CONSTANT_PAD, x, pad=widths, value=float(value))


def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-05) -> Tensor:
    x = _tensor(input, "layer_norm")
    shape = F.ints_arg(normalized_shape, "layer_norm", "normalized_shape", single=True)
    if not shape or x.shape[x.ndim - len(shape):] != shape or len(shape) > x.ndim:
        raise ShapeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                         f"{', '.join(map(str, shape))}], but got input of size{list(x.shape)}",
                         hint="normalized_shape names the input's last dimensions, e.g. layer_norm(x, x.shape[-1:])")
    w = 1.0 if weight is None else _tensor(weight, "layer_norm")
    b = 0.0 if bias is None else _tensor(bias, "layer_norm")
    return apply(O.LAYER_NORM, x, w, b, count=len(shape), eps=float(F.number_arg(eps, "layer_norm", "eps")))


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """x·mask/(1-p) with PyTorch's Bernoulli(1-p) mask (the same draws after manual_seed); the input itself
    when not training."""
    _no_inplace(inplace, "dropout")
    x = _tensor(input, "dropout")
    p = _probability(p, "dropout")
    if not training or p == 0:
        return x
    if p == 1:
        return x * _wrap(np.zeros((), dtype=x.dtype))
    noise = _wrap(np.empty_like(x._data)).bernoulli_(1 - p)
    return x * (noise / (1 - p))


# -- losses --------------------------------------------------------------------------------------------
def _pair(input: Any, target: Any, fn: str) -> tuple[Tensor, Tensor]:
    a, b = _tensor(input, fn), _tensor(target, fn)
    broadcast_shape(fn, a.shape, b.shape)
    return a, b


def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    a, b = _pair(input, target, "mse_loss")
    return apply(O.MSE_LOSS, a, b, reduction=_reduction(reduction, "mse_loss"))


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    a, b = _pair(input, target, "l1_loss")
    loss = (a - b).abs()
    reduction = _reduction(reduction, "l1_loss")
    return loss if reduction == "none" else (loss.mean() if reduction == "mean" else loss.sum())


def smooth_l1_loss(input: Any, target: Any, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    beta = F.number_arg(beta, "smooth_l1_loss", "beta")
    if beta < 0:
        raise ValueDomainError("smooth_l1_loss does not support negative values for beta.",
                               hint="beta is where the loss turns from quadratic to linear, e.g. beta=1.0")
    if beta == 0:
        return l1_loss(input, target, reduction)
    a, b = _pair(input, target, "smooth_l1_loss")
    return apply(O.SMOOTH_L1_LOSS, a, b, reduction=_reduction(reduction, "smooth_l1_loss"), beta=float(beta))


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    delta = F.number_arg(delta, "huber_loss", "delta")
    if delta <= 0:
        raise ValueDomainError("huber_loss does not support non-positive values for delta.",
                               hint="delta is where the loss turns from quadratic to linear, e.g. delta=1.0")
    a, b = _pair(input, target, "huber_loss")
    return apply(O.HUBER_LOSS, a, b, reduction=_reduction(reduction, "huber_loss"), delta=float(delta))


def _class_target(x: Tensor, target: Any, fn: str) -> np.ndarray:
    """Class indices: integers, one per sample, of the batch's size, each a class or ignore_index."""
    t = _tensor(target, fn)
    if t.dtype.kind not in "iu":
        raise DtypeError(f"expected scalar type Long but found {_torch_dtype(t)}",
                         hint="class indices are integers, e.g. torch.tensor([0, 2, 1])")
    want = () if x.ndim == 1 else (x.shape[0],) + x.shape[2:]
    if t.shape != want:
        if x.ndim > 1 and t.ndim >= 1 and t.shape[0] != x.shape[0]:
            raise ShapeError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({t.shape[0]}).",
                             hint="one class index per row of the input")
        raise ShapeError(f"{fn}(): target of shape {tuple(t.shape)} does not fit input of shape {tuple(x.shape)}",
                         hint=f"expected a target of shape {want}: one class index per sample")
    return t._data


def _check_classes(x: Tensor, target: np.ndarray, ignore_index: int) -> None:
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    bad = target[(target != ignore_index) & ((target < 0) | (target >= classes))]
    if bad.size:
        raise ValueDomainError(f"Target {int(bad.flat[0])} is out of bounds.",
                               hint=f"the input has {classes} classes: targets run from 0 to {classes - 1}")


def _class_weight(weight: Any, x: Tensor, fn: str) -> np.ndarray | None:
    """Class weights: none, or one per class of the input (its dim 1, or dim 0 when 1-D)."""
    w = _constant(weight, fn, "weight")
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    if w is not None and w.shape != (classes,):
        raise ShapeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                         f"weight tensor of shape: {list(w.shape)}",
                         hint=f"pass one weight per class: a tensor of shape ({classes},)")
    return w


def _torch_dtype(t: Tensor) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}.get(t.dtype.name, t.dtype.name)


def nll_loss(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    x = _tensor(input, "nll_loss")
    if x.ndim == 0:
        raise ShapeError("input tensor should be 1D or 2D", hint="nll_loss takes log-probabilities of shape (N, C)")
    level = innermost((x, target))
    if level is not None and x.ndim <= 2:
        return _nll_batched(level, x, _tensor(target, "nll_loss"), weight, ignore_index, reduction)
    t = _class_target(x, target, "nll_loss")
    ignore_index = F.number_arg(ignore_index, "nll_loss", "ignore_index", integer=True)
    _check_classes(x, t, ignore_index)
    w = _class_weight(weight, x, "nll_loss_forward")
    reduction = _reduction(reduction, "nll_loss")
    if x.ndim < 3:
        return apply(O.NLL_LOSS, x, target=t, weight=w, ignore_index=int(ignore_index), reduction=reduction)
    if x.ndim == 4:
        return apply(O.NLL_LOSS, x, target=t, weight=w, ignore_index=int(ignore_index), reduction=reduction,
                     name="NllLoss2DBackward0")
    # PyTorch views other spatial inputs as (N, C, d, 1) for its 2-D kernel, and the loss back
    flat = F.reshape(x, x.shape[:2] + (-1, 1))
    loss = apply(O.NLL_LOSS, flat, target=t.reshape(flat.shape[:1] + flat.shape[2:]), weight=w,
                 ignore_index=int(ignore_index), reduction=reduction, name="NllLoss2DBackward0")
    return F.reshape(loss, t.shape) if reduction == "none" else loss


def _nll_batched(level: Any, x: Tensor, target: Tensor, weight: Any, ignore_index: int, reduction: str) -> Tensor:
    """nll_loss inside vmap: every example's samples in one loss with reduction='none', then each example's
    reduction (its mean divides by its own samples' weights, as each example's call would)."""
    size = level.size
    xs, ts = [unwrap(v, level) for v in (x, target)]
    xs = xs if xs is not x else F.expand(F.unsqueeze(x, 0), (size,) + tuple(x.shape))
    ts = ts if ts is not target else F.expand(F.unsqueeze(target, 0), (size,) + tuple(target.shape))
    if type(ts) is not Tensor:
        raise NoRule("a class target batched at another vmap level")
    rows = F.reshape(xs, (-1, xs.shape[-1]))
    picked = F.reshape(nll_loss(rows, F.reshape(ts, (-1,)), weight, ignore_index, "none"), (size, -1))
    reduction = _reduction(reduction, "nll_loss")
    if reduction == "none":
        return rewrap(F.reshape(picked, (size,) + tuple(target.shape)), [level])
    total = F.sum(picked, 1)
    if reduction == "sum":
        return rewrap(total, [level])
    t = ts._data.reshape(size, -1)
    kept = t != ignore_index
    w = np.ones(xs.shape[-1]) if weight is None else np.asarray(_tensor(weight, "nll_loss")._data)
    per = (w[np.where(kept, t, 0)] * kept).sum(axis=1).astype(picked.dtype)
    return rewrap(total / _wrap(per), [level])


def cross_entropy(input: Any, target: Any, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax then nll_loss for class indices; PyTorch's formulas for probabilities and smoothing."""
    x = _tensor(input, "cross_entropy")
    reduction = _reduction(reduction, "cross_entropy")
    label_smoothing = F.number_arg(label_smoothing, "cross_entropy", "label_smoothing")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueDomainError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}",
                               hint="e.g. label_smoothing=0.1")
    if x.ndim == 0:
        raise ShapeError("cross_entropy: input must have at least one dimension",
                         hint="the input holds one score per class, shape (C,) or (N, C)")
    class_dim = 0 if x.ndim == 1 else 1
    logp = F.log_softmax(x, class_dim)
    t = _tensor(target, "cross_entropy")
    if t.dtype.kind == "f":
        return _cross_entropy_probabilities(logp, t, weight, reduction, label_smoothing, class_dim)
    if label_smoothing == 0:
        return nll_loss(logp, t, weight, ignore_index, reduction)
    nll = nll_loss(logp, t, weight, ignore_index, reduction)
    target_data = _class_target(x, t, "cross_entropy")
    w = _class_weight(weight, x, "cross_entropy")
    shape = [1] * x.ndim
    shape[class_dim] = x.shape[class_dim]
    smooth = -F.sum(logp if w is None else logp * w.reshape(shape), class_dim)
    kept = target_data != ignore_index
    smooth = smooth * _wrap(kept.astype(x.dtype))
    if reduction == "mean":
        count = w[np.where(kept, target_data, 0)][kept].sum() if w is not None else kept.sum()
        smooth = smooth.sum() / float(count)
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / x.shape[class_dim])


def _cross_entropy_probabilities(logp: Tensor, t: Tensor, weight: Any, reduction: str, label_smoothing: float,
                                 class_dim: int) -> Tensor:
    if t.shape != logp.shape:
        raise ShapeError(f"cross_entropy: class probabilities of shape {tuple(t.shape)} must have the input's shape "
                         f"{tuple(logp.shape)}", hint="give class indices (integers) or one probability per class")
    classes = logp.shape[class_dim]
    if label_smoothing > 0:
        t = t * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * t
    w = _class_weight(weight, logp, "cross_entropy")
    if w is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        terms = terms * _wrap(w.reshape(shape))
    if reduction == "none":
        return -F.sum(terms, class_dim)
    total = -terms.sum()
    if reduction == "sum":
        return total
    return apply(O.DIV, total, logp.numel() / classes, name="DivBackward1")


def _same_shape(a: Tensor, b: Tensor, message: str) -> None:
    if a.shape != b.shape:
        raise ShapeError(message, hint=f"the target must have the input's shape {tuple(a.shape)}")


def _size(t: Tensor) -> str:
    return f"torch.Size([{', '.join(map(str, t.shape))}])"


def binary_cross_entropy(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Tensor:
    x, y = _tensor(input, "binary_cross_entropy"), _tensor(target, "binary_cross_entropy")
    _same_shape(x, y, f"Using a target size ({_size(y)}) that is different to the input size ({_size(x)}) is "
                      "deprecated. Please ensure they have the same size.")
    if x.numel() and (np.any(x._data < 0) or np.any(x._data > 1) or np.any(np.isnan(x._data))):
        raise ValueDomainError("all elements of input should be between 0 and 1",
                               hint="binary_cross_entropy takes probabilities: apply torch.sigmoid first, or use "
                                    "binary_cross_entropy_with_logits on the raw scores")
    w = _constant(weight, "binary_cross_entropy", "weight")
    return apply(O.BINARY_CROSS_ENTROPY, x, y, weight=w, reduction=_reduction(reduction, "binary_cross_entropy"))


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Tensor:
    fn = "binary_cross_entropy_with_logits"
    x, y = _tensor(input, fn), _tensor(target, fn)
    _same_shape(x, y, f"Target size ({_size(y)}) must be the same as input size ({_size(x)})")
    w, pw = _constant(weight, fn, "weight"), _constant(pos_weight, fn, "pos_weight")
    for extra in (w, pw):
        if extra is not None:
            broadcast_shape(fn, x.shape, extra.shape)
    return apply(O.BCE_WITH_LOGITS, x, y, weight=w, pos_weight=pw, reduction=_reduction(reduction, fn))


def kl_div(input: Any, target: Any, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise target·(log target - input), reduced; 'batchmean' divides the sum by the batch size."""
    x, t = _pair(input, target, "kl_div")
    reduction = _reduction(reduction, "kl_div", ("batchmean",))
    if log_target:
        loss = t.exp() * (t - x)
    elif t.requires_grad:
        loss = t * F.where(t > 0, t, 1.0).log() - t * x
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = np.where(t._data == 0, 0.0, t._data * np.log(t._data)).astype(t.dtype)
        loss = _wrap(entropy) - t * x
    if reduction == "none":
        return loss
    if reduction == "batchmean":
        return loss.sum() / (x.shape[0] if x.ndim else 1)
    return loss.mean() if reduction == "mean" else loss.sum()


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0, reduction: str = "mean"
                          ) -> Tensor:
    """1 - cos(x1, x2) where the target is 1, max(0, cos - margin) where it is -1, 0 for any other target;
    cos = Σx1·x2 / √((Σx1² + 1e-12)(Σx2² + 1e-12)) along the last dimension, as PyTorch's kernel computes it."""
    fn = "cosine_embedding_loss"
    a, b, y = _tensor(input1, fn), _tensor(input2, fn), _tensor(target, fn)
    reduction = _reduction(reduction, fn)
    margin = F.number_arg(margin, fn, "margin")
    if y.ndim not in (0, 1):
        raise ShapeError("0D or 1D target tensor expected, multi-target not supported",
                         hint="one target (1 or -1) per pair of rows")
    if (a.ndim, b.ndim) != ((2, 2) if y.ndim else (1, 1)):
        raise ShapeError(f"{y.ndim}D target tensor expects {y.ndim + 1}D input tensors, but found inputs with sizes "
                         f"{list(a.shape)} and {list(b.shape)}.",
                         hint="rows of vectors with a target per row, or two vectors with one target")
    dim = y.ndim
    prod_sum = F.sum(a * b, dim)
    denom = F.sqrt((F.sum(a * a, dim) + 1e-12) * (F.sum(b * b, dim) + 1e-12))
    cos = prod_sum / denom
    zeros = _wrap(np.zeros(cos.shape, cos.dtype))
    loss = F.where(y._data == 1, 1 - cos, zeros) + F.where(y._data == -1, F.clamp(cos - margin, min=0), zeros)
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


COMPOSITES = (
    functional(softsign, O.DIV), functional(softmin, O.SOFTMAX), functional(normalize, O.DIV),
    functional(cosine_similarity, O.SUM), functional(pairwise_distance, O.NORM), functional(linear, O.ADDMM),
    functional(one_hot), functional(pad, O.CONSTANT_PAD), functional(layer_norm, O.LAYER_NORM),
    functional(dropout, O.MUL))
"""The compositions of this module, `F.X` (and `torch.nn.functional.X`), each with the primitive behind it (its top
node, for `gradcli ops`). The activations above are named by their primitives' declarations (`Names.functional`,
`engine/ops/`), the losses by `nn/losses.py`'s `LOSSES`."""
