"""`torch.nn.utils`: gradient clipping and flattening parameters, with PyTorch's arithmetic.

`clip_grad_norm_` computes the total norm as the norm of the per-parameter norms and scales every
gradient by min(1, max_norm / (total + 1e-6)) in place, as PyTorch's foreach path does; it returns
the total norm as a tensor.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ValueDomainError


def _params(parameters: Any, fn: str) -> list[Tensor]:
    iterable = hasattr(parameters, "__iter__") and not isinstance(parameters, (str, dict))
    if not isinstance(parameters, Tensor) and not iterable:
        raise ArgumentError(f"{fn}(): parameters must be a tensor or an iterable of tensors, got "
                            f"{type(parameters).__name__}", hint="pass model.parameters()")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise ArgumentError(f"{fn}(): parameters must be tensors, got {type(p).__name__}",
                                hint="pass model.parameters()")
    return params


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    grads = [p.grad for p in _params(parameters, "clip_grad_norm_") if p.grad is not None]
    max_norm = float(F.number_arg(max_norm, "clip_grad_norm_", "max_norm"))
    norm_type = float(F.number_arg(norm_type, "clip_grad_norm_", "norm_type"))
    if not grads:
        return _wrap(np.array(0.0, dtype=np.float32))
    dtype = grads[0]._data.dtype
    norms = np.array([_norm(g._data, norm_type) for g in grads], dtype=dtype)
    total = dtype.type(_norm(norms, norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise ValueDomainError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               f"so it cannot be clipped.", hint="look for an inf or nan gradient")
    coef = np.minimum(dtype.type(max_norm) / (total + dtype.type(1e-6)), dtype.type(1.0))
    for g in grads:
        g._data[...] = g._data * coef.astype(g._data.dtype)
    return _wrap(np.asarray(total))


def _norm(x: np.ndarray, p: float) -> Any:
    a = np.abs(x)
    if p == float("inf"):
        return a.max() if a.size else x.dtype.type(0)
    if p == 2:
        return np.sqrt(np.sum(a * a))
    return np.sum(a ** x.dtype.type(p)) ** x.dtype.type(1 / p)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    clip = float(F.number_arg(clip_value, "clip_grad_value_", "clip_value"))
    for p in _params(parameters, "clip_grad_value_"):
        if p.grad is not None:
            np.clip(p.grad._data, -clip, clip, out=p.grad._data)


def parameters_to_vector(parameters: Any) -> Tensor:
    return F.cat([F.reshape(p, -1) for p in _params(parameters, "parameters_to_vector")])


def vector_to_parameters(vec: Any, parameters: Any) -> None:
    v = F._tensor_arg(vec, "vector_to_parameters")
    params = _params(parameters, "vector_to_parameters")
    if v.ndim != 1 or v.shape[0] != sum(p.numel() for p in params):
        raise ArgumentError("vector_to_parameters: the vector's length must equal the parameters' total size",
                            hint=f"expected {sum(p.numel() for p in params)} numbers")
    start = 0
    for p in params:
        p._data[...] = v._data[start:start + p.numel()].reshape(p.shape)
        start += p.numel()


NAMES = ("clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters")
