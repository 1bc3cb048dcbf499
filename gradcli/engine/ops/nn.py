"""The primitives of torch.nn.functional: activations, addmm (linear), padding, layer and batch norm,
the losses, and the sliding windows (unfold/fold, convolution, pooling; their arithmetic is in
`engine/sliding.py`)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from gradcli.engine import ops  # the package, for NUMPY: read at call time, since every family builds it
from gradcli.engine import costs, sliding, special
from gradcli.engine.ops.op import Names, Signature, diagonal_jvp, linear_jvp, Op, transposed_jvp, _unary
from gradcli.engine.ops.elementwise import _sigmoid_forward, _softplus_forward
from gradcli.engine.ops.reductions import _count, _per


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
    return g if ns is ops.NUMPY else g + x * 0.0


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
    xhat, _ = _layer_norm_parts(ops.NUMPY, x, count, eps)
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
    return ns.constant(_per_channel(ops.NUMPY, (var + eps) ** -0.5, ndim))


def _batch_norm_stats(ns: Any, x: Any, eps: float, mean: np.ndarray | None, var: np.ndarray | None
                      ) -> tuple[Any, Any]:
    """x - mean, and rstd = 1/√(var + eps) per channel (keepdim): the batch's statistics (biased var)
    when training (`mean` None), else the running ones."""
    if mean is None:
        axes = _channel_axes(x)
        centred = x - ns.mean(x, dim=axes, keepdim=True)
        return centred, (ns.mean(centred * centred, dim=axes, keepdim=True) + eps) ** -0.5
    return x - ns.constant(_per_channel(ops.NUMPY, mean, x.ndim)), _eval_rstd(ns, var, eps, x.ndim)


def _batch_norm_forward(x: np.ndarray, w: Any, b: Any, eps: float, mean: np.ndarray | None = None,
                        var: np.ndarray | None = None) -> np.ndarray:
    centred, rstd = _batch_norm_stats(ops.NUMPY, x, eps, mean, var)
    return centred * (rstd * _per_channel(ops.NUMPY, w, x.ndim)) + _per_channel(ops.NUMPY, b, x.ndim)


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
    scaled = S.broadcast(S.mul, xhat, _per_channel(ops.NUMPY, w, x.ndim))
    return S.broadcast(S.add, scaled, _per_channel(ops.NUMPY, b, x.ndim))


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


def _written_activation(*functional: str) -> Names:
    """An activation of torch.nn.functional only whose arguments of its own (bounds, slopes, scales, the tanh
    approximation) `nn/functional.py` reads, by these names, with PyTorch's checks; the names and tables are
    derived from here. One primitive may carry several (relu6 is hardtanh on [0, 6], selu and celu are elu's)."""
    return Names(functional=functional, signature=Signature("written"))


HARDTANH = Op(names=_written_activation("hardtanh", "relu6"), name="hardtanh", batching="broadcast",
              node="HardtanhBackward0", forward=lambda x, min_val=-1.0, max_val=1.0:
              np.clip(x, min_val, max_val),
              vjps=(lambda ns, g, o, x, min_val=-1.0, max_val=1.0:
                    _kept_on(ns, g * _hardtanh_mask(ns, x, min_val, max_val), x),),
              jvp=diagonal_jvp, rule="∂hardtanh(x)/∂x = [min < x < max] (0 at the bounds)", saves=("x",),
              sym=lambda S, x, min_val=-1.0, max_val=1.0: S.map(lambda u: S.clamp(u, min_val, max_val), x),
              kink=lambda K, x, min_val=-1.0, max_val=1.0: K.clamp_kink(x, min_val, max_val))
LEAKY_RELU = Op(names=_written_activation("leaky_relu"), name="leaky_relu", batching="broadcast",
                node="LeakyReluBackward0",
                forward=lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope),
                vjps=(lambda ns, g, o, x, negative_slope=0.01: _kept_on(ns, g * ns.where(x > 0, 1.0, negative_slope), x),),
                jvp=diagonal_jvp, rule="∂leaky_relu(x)/∂x = 1 if x > 0 else slope (slope at 0)", saves=("x",),
                sym=lambda S, x, negative_slope=0.01: S.map(
                    lambda u: S.add(S.Max(u, 0), S.mul(S.number(negative_slope), S.Min(u, 0))), x),
                kink=lambda K, x, negative_slope=0.01: K.zero_kink(x) & (negative_slope != 1))
ELU = Op(names=_written_activation("elu", "selu", "celu"), name="elu", batching="broadcast", node="EluBackward0",
         forward=_elu_forward, vjps=(_elu_vjp,),
         jvp=diagonal_jvp,
         rule="∂elu(x)/∂x = scale if x > 0 else scale·α·exp(x) (left branch at 0)", saves=("x",), sym=_elu_sym,
         kink=lambda K, x, alpha=1.0, scale=1.0, input_scale=1.0: K.zero_kink(x) & (alpha * input_scale != 1))
GELU = Op(names=_written_activation("gelu"), name="gelu", batching="broadcast", node="GeluBackward0",
          forward=_gelu_forward,
          vjps=(lambda ns, g, o, x, approximate="none": ns.gelu_backward(g, x, approximate),),
          jvp=diagonal_jvp, rule="∂gelu(x)/∂x = Φ(x) + x·φ(x)", saves=("x",),
          sym=lambda S, x, approximate="none": S.map(lambda u: _gelu_sym(S, u, approximate), x))
GELU_BACKWARD = Op(name="gelu_backward", batching="broadcast", node="GeluBackwardBackward0",
                   forward=lambda g, x, approximate="none": g * _gelu_slope(x, approximate),
                   vjps=(lambda ns, gg, o, g, x, approximate="none": ns.gelu_backward(gg, x, approximate),
                         lambda ns, gg, o, g, x, approximate="none": gg * g * _gelu_curvature(ns, x, approximate)),
                   jvp=diagonal_jvp,
                   rule="∂(g·gelu'(x))/∂g = gelu'(x), ∂/∂x = g·gelu''(x)", saves=("b", "ab"), args="ab",
                   sym=lambda S, g, x, approximate="none": S.broadcast(
                       lambda v, u: S.mul(v, _gelu_slope_sym(S, u, approximate)), g, x))


def _activation(**declaration: Any) -> Op:
    """An elementwise function of torch.nn.functional only (no `torch.X`, no `Tensor.X`): `F.X`, with its
    `inplace` argument, is made from the declaration by `nn/functional.py`."""
    return _unary(function=False, method=False, functional=True, **declaration)


SILU = _activation(name="silu", node="SiluBackward0", forward=lambda x: x * _sigmoid_forward(x), vjp=_silu_vjp,
              rule="∂silu(x)/∂x = σ(x)(1 + x(1-σ(x)))",
              sym=lambda S, x: S.map(lambda u: S.div(u, S.add(1, S.exp(S.mul(S.number(-1), u)))), x))
MISH = _activation(name="mish", node="MishBackward0", forward=lambda x: x * np.tanh(_softplus_forward(x)), vjp=_mish_vjp,
              rule="∂mish(x)/∂x = tanh(sp(x)) + x·σ(x)·(1 - tanh²(sp(x)))",
              sym=lambda S, x: S.map(lambda u: S.mul(u, S.tanh(S.log(S.add(1, S.exp(u))))), x))
HARDSIGMOID = _activation(name="hardsigmoid", node="HardsigmoidBackward0",
                     forward=lambda x: np.clip(x + 3.0, 0.0, 6.0) / 6.0,
                     vjp=lambda ns, g, o, x: _kept_on(ns, g * _hardtanh_mask(ns, x, -3.0, 3.0) * _SIXTH_F32, x),
                     rule="∂hardsigmoid(x)/∂x = 1/6 on (-3, 3), else 0",
                     sym=lambda S, x: S.map(lambda u: _hard_step(S, u), x), kink=lambda K, x: K.clamp_kink(x, -3, 3))
HARDSWISH = _activation(name="hardswish", node="HardswishBackward0",
                   forward=lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0, vjp=_hardswish_vjp,
                   rule="∂hardswish(x)/∂x = x/3 + 1/2 on (-3, 3), 0 below, 1 above",
                   sym=lambda S, x: S.map(lambda u: S.mul(u, _hard_step(S, u)), x),
                   kink=lambda K, x: K.clamp_kink(x, -3, 3))
LOGSIGMOID = _activation(name="logsigmoid", node="LogSigmoidBackward0", forward=_logsigmoid_forward,
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


# -- weight normalisation: w = v·(g/‖v‖), the norm over every dim but `dim` (torch._weight_norm's fused kernel) --
def _weight_norm_of(ns: Any, v: Any, dim: int) -> Any:
    return ns.sum(v * v, dim=tuple(i for i in range(v.ndim) if i != dim), keepdim=True) ** 0.5


def _weight_norm_vjp_v(ns: Any, g: Any, o: Any, v: Any, gain: Any, dim: int) -> Any:
    n = _weight_norm_of(ns, v, dim)
    along = ns.sum(g * v, dim=tuple(i for i in range(v.ndim) if i != dim), keepdim=True)
    return (gain / n) * (g - v * (along / (n * n)))


def _weight_norm_vjp_g(ns: Any, g: Any, o: Any, v: Any, gain: Any, dim: int) -> Any:
    return ns.sum(g * v, dim=tuple(i for i in range(v.ndim) if i != dim), keepdim=True) / _weight_norm_of(ns, v, dim)


def _weight_norm_sym(S: Any, v: Any, gain: Any, dim: int) -> Any:
    moved = np.moveaxis(v, dim, 0)
    rows = moved.reshape(moved.shape[0], -1)
    gains = np.asarray(gain, dtype=object).reshape(-1)
    out = np.empty(rows.shape, dtype=object)
    for i, row in enumerate(rows):
        S.spend(2 * len(row))
        scale = S.div(gains[i], S.pow(S.total(S.mul(u, u) for u in row), S.number(0.5)))
        out[i] = [S.mul(u, scale) for u in row]
    return np.moveaxis(out.reshape(moved.shape), 0, dim)


WEIGHT_NORM = Op(name="weight_norm_interface", node="WeightNormInterfaceBackward0",
                 forward=lambda v, gain, dim: v * (gain / _weight_norm_of(ops.NUMPY, v, dim)),
                 vjps=(_weight_norm_vjp_v, _weight_norm_vjp_g), jvp=transposed_jvp,
                 rule="w = v·g/‖v‖: ∂/∂v = (g/‖v‖)·(G - v·Σ(G·v)/‖v‖²), ∂/∂g = Σ(G·v)/‖v‖ (Σ, ‖·‖ over all dims but dim)",
                 saves=("vg", "v"), args="vg", sym=_weight_norm_sym)


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


OPS: tuple[Op, ...] = (
    HARDTANH, LEAKY_RELU, ELU, GELU, GELU_BACKWARD, SILU, MISH, HARDSIGMOID, HARDSWISH, LOGSIGMOID, ADDMM,
    CONSTANT_PAD, LAYER_NORM, BATCH_NORM, MSE_LOSS, SMOOTH_L1_LOSS, HUBER_LOSS, NLL_LOSS, BINARY_CROSS_ENTROPY,
    BCE_WITH_LOGITS, IM2COL, COL2IM, CONVOLUTION, MAX_POOL, AVG_POOL, WEIGHT_NORM,
)
"""This family's primitives, in `TABLE` (the package joins the families)."""
