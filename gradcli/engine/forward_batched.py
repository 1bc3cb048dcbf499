"""jacfwd's tangents for every basis direction at once: forward mode with a batch of directions.

A batched forward level (`forward_ad.Level(batch=n)`) keeps one tangent array per tensor whose leading
axis runs over n directions. Each op's output tangent is computed here in one vectorised step, by the kind
of forward rule the op table declares: an elementwise op's diagonal rule broadcasts over the directions,
and an op linear in its inputs (a view, a sum, cat, matmul) runs once on the batched tangents through its
vmap batching rule (`batched.RULES`, the rules vmap runs), as PyTorch's jacfwd is vmap over jvp. An op
whose rule cannot be batched raises `NoRule`; the level then runs the op's rule once per direction, which
gives the same numbers more slowly and is named in `--explain`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine import batched as B
from gradcli.engine import ops as O
from gradcli.engine.ops.op import diagonal_jvp, linear_jvp, product_jvp, sum_linear_jvp, transposed_jvp
from gradcli.engine.tensor import Tensor, _wrap


def _lined(t: np.ndarray, n: int, shape: tuple[int, ...]) -> np.ndarray:
    """A batch of tangents of an input of one example's `shape`, padded so it broadcasts against the output."""
    return np.reshape(t, (n,) + (1,) * (len(shape) - (t.ndim - 1)) + tuple(t.shape[1:]))


def _diagonal(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    """An elementwise op's VJP is pointwise in g: applied to every direction's tangent at once."""
    shape = (n,) + out.shape
    total = None
    for vjp, t in zip(op.vjps, tangents):
        if t is not None and vjp is not None:
            term = vjp(O.NUMPY, np.broadcast_to(_lined(t, n, out.shape), shape), out, *arrays, **params)
            total = term if total is None else total + term
    return np.zeros(shape, out.dtype) if total is None else total


def _tensor(a: Any) -> Any:
    return _wrap(a) if type(a) is np.ndarray else a


def _by_rule(op: O.Op, parts: list, batched: list[bool], params: dict, n: int) -> np.ndarray:
    """The op's forward on inputs of which `batched` ones carry the directions first, by its batching rule."""
    rule = B.rule_for(op)
    return rule(op, None, [_tensor(p) for p in parts], batched, params, n)._data


def _linear(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    return _by_rule(op, [tangents[0], *arrays[1:]], [True] + [False] * (len(arrays) - 1), params, n)


def _sum_linear(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    """Linear in all its tensor inputs together: the forward of the tangents, zeros for an input without one."""
    parts = [t if t is not None else np.zeros_like(a) if type(a) is np.ndarray and (i < len(op.vjps) or not op.vjps)
             else a for i, (a, t) in enumerate(zip(arrays, tangents))]
    return _by_rule(op, parts, [t is not None for t in tangents], params, n)


def _product(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    """Linear in each input separately: one batched forward per input with a tangent (the product rule)."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = _by_rule(op, [*arrays[:i], t, *arrays[i + 1:]], [j == i for j in range(len(arrays))], params, n)
            total = term if total is None else total + term
    return np.zeros((n,) + out.shape, out.dtype) if total is None else total


def _convolution(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    """Bilinear in input and kernel (one batched convolution per tangent, without the bias), plus the bias's
    tangent at every position."""
    x, w = arrays[:2]
    tx, tw, tb = (tuple(tangents) + (None, None, None))[:3]
    total = np.zeros((n,) + out.shape, out.dtype)
    if tx is not None:
        total = total + _by_rule(op, [tx, w, None], [True, False, False], params, n)
    if tw is not None:
        total = total + _by_rule(op, [x, tw, None], [False, True, False], params, n)
    if tb is not None and np.ndim(tb) > 1:
        total = total + np.reshape(tb, (n, 1, -1) + (1,) * (out.ndim - 2))
    return total


def _transposed(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> Any:
    """J·t as the gradient by g of ⟨VJP(g), t⟩ (see `transposed_jvp`), with g and t batched over the directions:
    the VJP's ops and the double backward run once, through the batching rules."""
    from gradcli.engine import functions as F
    from gradcli.engine.autograd import grad
    from gradcli.engine.tensor import GradMode
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        with B.Level(n) as level:
            g = B.wrap(_wrap(np.zeros((n,) + out.shape, out.dtype)).requires_grad_(True), level)
            inputs = tuple(_tensor(a) for a in arrays)
            total = None
            for i, t in enumerate(tangents):
                if t is None or op.vjps[i] is None:
                    continue
                v = O.unbroadcast(F, op.vjps[i](F, g, _wrap(out), *inputs, **params), np.shape(arrays[i]))
                term = (v * B.wrap(_wrap(np.asarray(t, dtype=out.dtype)), level)).sum()
                total = term if total is None else total + term
            if total is None or not isinstance(total, Tensor) or not total.requires_grad:
                return np.zeros((n,) + out.shape, out.dtype)
            found = grad(total, g, allow_unused=True)[0]
            if found is None:
                return np.zeros((n,) + out.shape, out.dtype)
            return B.physical(found)._data
    finally:
        GradMode.enabled = previous


KINDS: dict[Callable[..., Any], Callable[..., Any]] = {
    diagonal_jvp: _diagonal, linear_jvp: _linear, sum_linear_jvp: _sum_linear, product_jvp: _product,
    transposed_jvp: _transposed}
"""The vectorised form of each kind of forward rule the op table declares."""

OWN: dict[str, Callable[..., Any]] = {"convolution": _convolution}
"""The vectorised form of the forward rules ops declare for themselves, by op name."""


def tangents(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict, n: int) -> np.ndarray:
    """The output's tangent for all n directions at once (directions first); `NoRule` when it cannot be batched."""
    kind = KINDS.get(op.jvp) or OWN.get(op.name)
    if kind is None:
        raise B.NoRule(f"the forward rule of '{op.name}'")
    found = kind(op, tangents, out, arrays, params, n)
    shape = (n,) + out.shape
    if np.shape(found) != shape:
        try:
            found = np.broadcast_to(found, shape)
        except ValueError:
            raise B.NoRule(f"the forward rule of '{op.name}'") from None
    return np.array(found, dtype=out.dtype)
