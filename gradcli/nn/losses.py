"""The losses of metric learning, ranking and probabilistic regression (`F.margin_ranking_loss`,
`F.triplet_margin_loss`, `F.hinge_embedding_loss`, `F.soft_margin_loss`, `F.multilabel_soft_margin_loss`,
`F.multi_margin_loss`, `F.poisson_nll_loss`, `F.gaussian_nll_loss`) and their modules, composed of the
differentiable ops in PyTorch's own formulas; and the deprecated `size_average=` / `reduce=` arguments
every loss still takes, turned into `reduction` as PyTorch's `_Reduction.legacy_get_string` does.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.nn import functional as NF
from gradcli.nn.ctc import ctc_loss
from gradcli.nn.modules import _module


def accepting_legacy(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """`fn` that also takes `size_average=` and `reduce=` (keywords), which then decide `reduction`."""
    @functools.wraps(fn)
    def call(*args: Any, size_average: Any = None, reduce: Any = None, **kwargs: Any) -> Tensor:
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = NF.legacy_reduction(size_average, reduce)
        return fn(*args, **kwargs)
    return call


def _reduced(loss: Tensor, reduction: str, fn: str) -> Tensor:
    reduction = NF._reduction(reduction, fn)
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


def _tensors(fn: str, *values: Any) -> list[Tensor]:
    return [NF._tensor(v, fn) for v in values]


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0, reduction: str = "mean") -> Tensor:
    """max(0, −y·(x1 − x2) + margin): y = 1 asks x1 to rank above x2, y = −1 below."""
    fn = "margin_ranking_loss"
    a, b, y = _tensors(fn, input1, input2, target)
    if not a.ndim == b.ndim == y.ndim:
        raise ShapeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
                         f"{_size(a)}, input2: {_size(b)}, target: {_size(y)} ",
                         hint="one target (1 or -1) per pair of scores")
    loss = F.clamp(-y * (a - b) + F.number_arg(margin, fn, "margin"), min=0)
    return _reduced(loss, reduction, fn)


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def _triplet_dims(a: Tensor, p: Tensor, n: Tensor) -> None:
    if not a.ndim == p.ndim == n.ndim:
        raise ShapeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                         f"dimensions, but got: anchor {a.ndim}D, positive {p.ndim}D, and negative {n.ndim}D inputs",
                         hint="give each as (batch, features), or each as (features,)")


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2, eps: float = 1e-06,
                        swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) − d(a, n)), d the p-norm distance (`pairwise_distance`); `swap` takes the smaller
    of d(a, n) and d(p, n)."""
    fn = "triplet_margin_loss"
    a, pos, neg = _tensors(fn, anchor, positive, negative)
    _triplet_dims(a, pos, neg)
    positive_distance = NF.pairwise_distance(a, pos, p, eps)
    negative_distance = NF.pairwise_distance(a, neg, p, eps)
    if swap:
        negative_distance = F.minimum(negative_distance, NF.pairwise_distance(pos, neg, p, eps))
    loss = F.clamp(F.number_arg(margin, fn, "margin") + positive_distance - negative_distance, min=0)
    return _reduced(loss, reduction, fn)


def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *, distance_function: Any = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    fn = "triplet_margin_with_distance_loss"
    a, pos, neg = _tensors(fn, anchor, positive, negative)
    _triplet_dims(a, pos, neg)
    margin = F.number_arg(margin, fn, "margin")
    if margin <= 0:
        raise ValueDomainError(f"{fn}: expected margin to be greater than 0, got {margin} instead",
                               hint="the margin is how much farther the negative must be")
    if distance_function is not None and (not callable(distance_function) or isinstance(distance_function, Tensor)):
        raise ArgumentError(f"{fn}(): distance_function must be a function of two tensors, not "
                            f"{type(distance_function).__name__}", hint="e.g. distance_function=lambda a, b: "
                                                                        "1 - F.cosine_similarity(a, b)")
    distance = NF.pairwise_distance if distance_function is None else distance_function

    def measured(u: Tensor, v: Tensor) -> Tensor:
        try:
            d = distance(u, v)
        except TypeError as exc:  # a builtin that does not take two tensors
            raise ArgumentError(f"{fn}(): distance_function failed on two tensors: {exc}",
                                hint="give a function of two tensors, e.g. F.pairwise_distance") from None
        return NF._tensor(d, fn)
    positive_distance, negative_distance = measured(a, pos), measured(a, neg)
    if swap:
        negative_distance = F.minimum(negative_distance, measured(pos, neg))
    return _reduced(F.clamp(positive_distance - negative_distance + margin, min=0), reduction, fn)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, reduction: str = "mean") -> Tensor:
    """x where the target is 1, max(0, margin − x) where it is −1 (PyTorch sums both parts for other targets)."""
    fn = "hinge_embedding_loss"
    x, y = _tensors(fn, input, target)
    zeros = _wrap(np.zeros(np.broadcast_shapes(x.shape, y.shape), x.dtype))
    below = F.where(y._data != 1, F.clamp(F.number_arg(margin, fn, "margin") - x, min=0), zeros)
    return _reduced(below + F.where(y._data != -1, x, zeros), reduction, fn)


def soft_margin_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:
    """log(1 + exp(−y·x)), the logistic loss for targets ±1."""
    x, y = _tensors("soft_margin_loss", input, target)
    return _reduced(F.log1p(F.exp(-y * x)), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Tensor:
    """−(y·logσ(x) + (1 − y)·logσ(−x)), weighted per class, averaged over the classes (the last dimension)."""
    fn = "multilabel_soft_margin_loss"
    x, y = _tensors(fn, input, target)
    loss = -(y * NF.logsigmoid(x) + (1 - y) * NF.logsigmoid(-x))
    if weight is not None:
        loss = loss * NF._tensor(weight, fn)
    classes = x.shape[-1] if x.ndim else 1
    return _reduced(F.sum(loss, x.ndim - 1) / classes if x.ndim else loss, reduction, fn)


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,
                      reduction: str = "mean") -> Tensor:
    """Σ_{i≠y} max(0, margin − x[y] + x[i])^p / C per sample (times weight[y]): the multi-class hinge loss."""
    fn = "multi_margin_loss"
    x = NF._tensor(input, fn)
    if p not in (1, 2):
        raise ArgumentError("only p == 1 and p == 2 supported", hint="p=1 (the hinge) or p=2 (its square)")
    if x.ndim not in (1, 2):
        raise ShapeError(f"multi_margin_loss: input should be (classes,) or (batch, classes), but got shape "
                         f"{list(x.shape)}", hint="one row of class scores per sample")
    squeeze = x.ndim == 1
    x = F.unsqueeze(x, 0) if squeeze else x
    labels = np.asarray(NF._tensor(target, fn)._data).reshape(-1).astype(np.int64)
    if x.ndim != 2 or labels.shape[0] != x.shape[0]:
        raise ShapeError(f"inconsistent target size, expected {x.shape[0]} but got {list(labels.shape)}",
                         hint="input (batch, classes) or (classes,), one class index per sample")
    if labels.size and (labels.min() < 0 or labels.max() >= x.shape[1]):
        raise ValueDomainError("target out of range", hint=f"class indices run from 0 to {x.shape[1] - 1}")
    chosen = F.gather(x, 1, _wrap(labels[:, None]))
    z = F.clamp(F.number_arg(margin, fn, "margin") - chosen + x, min=0)
    z = z * z if p == 2 else z
    if weight is not None:
        z = z * F.unsqueeze(F.index_select(NF._tensor(weight, fn), 0, _wrap(labels)), 1)
    others = _wrap((np.arange(x.shape[1])[None, :] != labels[:, None]).astype(x.dtype))
    loss = F.sum(z * others, 1) / x.shape[1]
    return _reduced(F.squeeze(loss, 0) if squeeze else loss, reduction, fn)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False, eps: float = 1e-08,
                     reduction: str = "mean") -> Tensor:
    """exp(x) − y·x for log rates (log_input), x − y·log(x + eps) for rates; `full` adds Stirling's term
    y·log y − y + ½·log(2πy) where y > 1."""
    fn = "poisson_nll_loss"
    x, y = _tensors(fn, input, target)
    loss = F.exp(x) - y * x if log_input else x - y * F.log(x + F.number_arg(eps, fn, "eps"))
    if full:
        t = y.detach()._data
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = np.where(t > 1, t * np.log(t) - t + 0.5 * np.log(2 * math.pi * t), 0.0)
        loss = loss + _wrap(stirling.astype(loss.dtype))
    return _reduced(loss, reduction, fn)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-06,
                      reduction: str = "mean") -> Tensor:
    """½·(log(var) + (x − y)²/var) (+ ½·log 2π with `full`); var is clamped to eps in value only (PyTorch clamps
    it in place without recording, so its gradient passes unchanged)."""
    fn = "gaussian_nll_loss"
    x, y = _tensors(fn, input, target)
    if not isinstance(var, Tensor):
        v = _wrap(np.full(x.shape[:-1] + (1,) if x.ndim else (), F.number_arg(var, fn, "var"), x.dtype))
    else:
        v = var
    if tuple(v.shape) != tuple(x.shape):
        if x.shape[:-1] == v.shape:
            v = F.unsqueeze(v, -1)
        elif not (x.shape[:-1] == v.shape[:-1] and v.shape[-1:] == (1,)):
            raise ShapeError("var is of incorrect size", hint="var has the input's shape, or it without (or with 1 "
                                                              "as) its last dimension")
    if np.any(v._data < 0):
        raise ValueDomainError("var has negative entry/entries", hint="variances are non-negative")
    floor = float(F.number_arg(eps, fn, "eps"))
    v = v + _wrap((np.maximum(v._data, floor) - v._data).astype(v.dtype))
    loss = 0.5 * (F.log(v) + (x - y) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduced(loss, reduction, fn)


@dataclass(frozen=True)
class Loss:
    """A loss declared once: its function (`F.<name>`), its module class `nn.<module>` and the primitive `gradcli ops`
    shows for it. The module takes `options` (with their defaults), `reduction='mean'` and the options PyTorch
    lists after it (`later`), the `positional` ones also by position; the function and the module take PyTorch's deprecated `size_average=` and `reduce=` too,
    unless not `legacy` (the losses added after PyTorch deprecated them)."""

    function: Callable[..., Tensor]
    module: str
    options: dict[str, Any] = field(default_factory=dict)
    positional: tuple[str, ...] = ()
    op: O.Op | None = None
    legacy: bool = True
    later: dict[str, Any] = field(default_factory=dict)


LOSSES: tuple[Loss, ...] = (
    Loss(NF.mse_loss, "MSELoss", op=O.MSE_LOSS),
    Loss(NF.l1_loss, "L1Loss", op=O.MEAN),
    Loss(NF.smooth_l1_loss, "SmoothL1Loss", op=O.SMOOTH_L1_LOSS, later={"beta": 1.0}),
    Loss(NF.huber_loss, "HuberLoss", op=O.HUBER_LOSS, later={"delta": 1.0}),
    Loss(NF.cross_entropy, "CrossEntropyLoss", {"weight": None, "ignore_index": -100}, ("weight",), O.NLL_LOSS,
         later={"label_smoothing": 0.0}),
    Loss(NF.nll_loss, "NLLLoss", {"weight": None, "ignore_index": -100}, ("weight",), O.NLL_LOSS),
    Loss(NF.binary_cross_entropy, "BCELoss", {"weight": None}, ("weight",), O.BINARY_CROSS_ENTROPY),
    Loss(NF.binary_cross_entropy_with_logits, "BCEWithLogitsLoss", {"weight": None}, ("weight",), O.BCE_WITH_LOGITS,
         later={"pos_weight": None}),
    Loss(NF.kl_div, "KLDivLoss", op=O.MEAN, later={"log_target": False}),
    Loss(NF.cosine_embedding_loss, "CosineEmbeddingLoss", {"margin": 0.0}, ("margin",), O.MEAN),
    Loss(margin_ranking_loss, "MarginRankingLoss", {"margin": 0.0}, ("margin",)),
    Loss(triplet_margin_loss, "TripletMarginLoss", {"margin": 1.0, "p": 2.0, "eps": 1e-06, "swap": False},
         ("margin", "p", "eps", "swap")),
    Loss(triplet_margin_with_distance_loss, "TripletMarginWithDistanceLoss",
         {"distance_function": None, "margin": 1.0, "swap": False}, legacy=False),
    Loss(hinge_embedding_loss, "HingeEmbeddingLoss", {"margin": 1.0}, ("margin",)),
    Loss(soft_margin_loss, "SoftMarginLoss"),
    Loss(multilabel_soft_margin_loss, "MultiLabelSoftMarginLoss", {"weight": None}, ("weight",)),
    Loss(multi_margin_loss, "MultiMarginLoss", {"p": 1, "margin": 1.0, "weight": None}, ("p", "margin", "weight")),
    Loss(poisson_nll_loss, "PoissonNLLLoss", {"log_input": True, "full": False, "eps": 1e-08}, ("log_input", "full")),
    Loss(gaussian_nll_loss, "GaussianNLLLoss", {"full": False, "eps": 1e-06}, legacy=False),
    Loss(ctc_loss, "CTCLoss", {"blank": 0}, ("blank",), legacy=False, later={"zero_infinity": False}),
)
"""Every loss, declared once: `F.X`, `nn.XLoss`, the language's tables and `gradcli ops` are derived from these."""

FUNCTIONS: dict[str, Callable[..., Tensor]] = {
    loss.function.__name__: accepting_legacy(loss.function) if loss.legacy else loss.function for loss in LOSSES}
"""`F.X` of every loss (with size_average/reduce where PyTorch still takes them)."""
LAYERS: dict[str, type] = {loss.module: _module(loss.module, loss.function,
                                                {**loss.options, "reduction": "mean", **loss.later}, loss.positional)
                           for loss in LOSSES}
"""The loss modules, by their `torch.nn` name."""
OPS: dict[str, O.Op] = {loss.function.__name__: loss.op for loss in LOSSES if loss.op}
"""The primitive behind each loss, for `gradcli ops` (the top node for a composition)."""
MEMBERS: dict[type, frozenset] = {}
