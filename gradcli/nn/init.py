"""`torch.nn.init`: PyTorch's weight initialisers, with its formulas, so `nn.Linear` starts from PyTorch's numbers.

Each bound or standard deviation is computed in Python floats exactly as torch/nn/init.py does
(same operations, same order), then handed to the in-place fills, which draw PyTorch's own
numbers. The fills run with gradient recording off, as PyTorch's do, so a leaf parameter that
requires grad can be initialised.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

from gradcli.engine.tensor import GradMode, Tensor
from gradcli.errors import ArgumentError, ShapeError

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The gain that keeps activations' variance steady through `nonlinearity`."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ArgumentError(f"negative_slope {param} not a valid number", hint="pass a number, e.g. a=0.01")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"Unsupported nonlinearity {nonlinearity}",
                        hint="one of: linear, sigmoid, tanh, relu, leaky_relu, selu")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """Inputs and outputs one weight connects: dims 1 and 0, times the receptive field (dims 2 on)."""
    if tensor.dim() < 2:
        raise ShapeError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
                         hint="initialise a weight matrix (out_features, in_features); fill a bias with uniform_")
    receptive_field = 1
    for size in tensor.shape[2:]:
        receptive_field *= size
    return tensor.size(1) * receptive_field, tensor.size(0) * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ArgumentError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']",
                            hint="mode='fan_in' keeps the forward pass's variance, 'fan_out' the backward's")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


@contextlib.contextmanager
def _no_grad() -> Iterator[None]:
    previous, GradMode.enabled = GradMode.enabled, False
    try:
        yield
    finally:
        GradMode.enabled = previous


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """N(mean, std²) cut to [a, b], drawn as PyTorch 2.13 draws it, and so with its numbers: when the interval holds
    over 0.3 of the mass, normal draws redrawn where they fall outside; otherwise uniform proposals on [a, b], each
    kept when log U is at most its log density below the peak, the rejected ones proposed again."""
    import numpy as np
    from gradcli.engine.tensor import _wrap

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    def fresh(fill: str, *args: float) -> np.ndarray:
        return getattr(_wrap(np.empty_like(tensor._data)), fill)(*args, generator=generator)._data

    def log_density(x: np.ndarray) -> np.ndarray:
        return ((x - mean) / std) ** 2 * -0.5 - log_peak

    with _no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            low, high = (float(np.asarray(v, dtype=tensor.dtype)) for v in (a, b))
            result = tensor.normal_(mean, std, generator=generator)._data.copy()
            for _ in _rounds():
                outside = (result < low) | (result > high)
                if not outside.any():
                    break
                result = np.where(outside, fresh("normal_", mean, std), result)
        else:
            log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
            result = tensor.uniform_(a, b, generator=generator)._data.copy()
            pending = np.log(fresh("uniform_")) > log_density(result)
            for _ in _rounds():
                if not pending.any():
                    break
                candidates = fresh("uniform_", a, b)
                result = np.where(pending, candidates, result)
                pending = np.where(pending, np.log(fresh("uniform_")) > log_density(candidates), pending)
        tensor._data[...] = result
        return tensor


def _rounds() -> range:
    """PyTorch redraws until every value is accepted; gradcli stops after as many rounds as no sensible interval
    needs, with the reason, rather than spin on one that holds almost no probability."""
    from gradcli.errors import ValueDomainError
    yield from range(10_000)
    raise ValueDomainError("trunc_normal_: 10,000 rounds of redrawing left values outside [a, b]: the interval holds "
                           "almost none of N(mean, std²)", hint="widen [a, b] or move mean toward it")


def constant_(tensor: Tensor, val: float) -> Tensor:
    with _no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """He initialisation; `nn.Linear` uses a=sqrt(5), which makes the bound 1/sqrt(fan_in)."""
    if 0 in tensor.shape:
        return tensor
    bound = math.sqrt(3.0) * (calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode)))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    if 0 in tensor.shape:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode)))


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix, as PyTorch makes it: QR of a standard normal draw (transposed when wide),
    Q's columns signed by R's diagonal so the result is unique, times `gain`."""
    import numpy as np
    from gradcli.engine.tensor import _wrap
    if tensor.dim() < 2:
        raise ShapeError("Only tensors with 2 or more dimensions are supported",
                         hint="orthogonal_ fills a weight matrix (or a stack of kernels viewed as one)")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with _no_grad():
        flattened = _wrap(np.empty((rows, cols), dtype=tensor.dtype)).normal_(0, 1, generator=generator)._data
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    tensor._data[...] = (q.reshape(tensor.shape) * gain).astype(tensor.dtype)
    return tensor
