"""Differentiable draws: a gamma or Dirichlet draw as a function of its concentration.

The draw itself comes from the sampler (`distributions/samplers.py`) and enters as a constant second
input; the op passes it through and its VJP is PyTorch's implicit reparameterisation gradient
(`engine/implicit.py`). That gradient is an approximation with no closed form, so its kink rule covers
every element and `approximate` words the reason: `--check` reports what reaches through it as not
checked instead of comparing it with anything.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import implicit
from gradcli.engine.ops.op import Op


def _values(v: Any) -> np.ndarray:
    """An input's numbers, whether the VJP runs on arrays or (under create_graph) on tensors."""
    return v._data if hasattr(v, "_data") else np.asarray(v)


def _refuse_second_order(g: Any, what: str) -> None:
    """ATen has no derivative of these approximations: a gradient that is itself differentiated would
    silently miss a term, so under create_graph it is PyTorch's error instead."""
    if hasattr(g, "_data"):  # a tensor: the backward is being recorded
        from gradcli.errors import NotAllowedError
        raise NotAllowedError(f"the derivative for '{what}' is not implemented.",
                              hint="a gamma or Dirichlet draw's concentration gradient has no second derivative "
                                   "in PyTorch; take this backward without create_graph=True")


def _gamma_vjp(ns: Any, g: Any, out: Any, alpha: Any, draw: Any) -> Any:
    _refuse_second_order(g, "_standard_gamma_grad")
    return g * implicit.standard_gamma_grad(_values(alpha), _values(out))


def _dirichlet_vjp(ns: Any, g: Any, out: Any, alpha: Any, draw: Any) -> Any:
    """PyTorch's `_Dirichlet_backward`: each coordinate's beta gradient, then the simplex's projection."""
    _refuse_second_order(g, "_dirichlet_grad")
    x, a = _values(out), _values(alpha)
    total = np.broadcast_to(a.sum(-1, keepdims=True), a.shape)
    grad = implicit.dirichlet_grad(x, a, total)
    return grad * (g - ns.sum(g * x, -1, True))


def _gamma_jvp(op: Op, tangents: tuple, out: Any, alpha: Any, draw: Any) -> Any:
    t = tangents[0]
    if t is None:
        return np.zeros(out.shape, out.dtype)
    return np.broadcast_to(t, out.shape) * implicit.standard_gamma_grad(alpha, out)


def _dirichlet_jvp(op: Op, tangents: tuple, out: Any, alpha: Any, draw: Any) -> Any:
    """The VJP's matrix read the other way: (J t)_j = g_j t_j - x_j Σ_i g_i t_i."""
    t = tangents[0]
    if t is None:
        return np.zeros(out.shape, out.dtype)
    total = np.broadcast_to(alpha.sum(-1, keepdims=True), alpha.shape)
    gt = implicit.dirichlet_grad(out, alpha, total) * np.broadcast_to(t, out.shape)
    return gt - out * gt.sum(-1, keepdims=True)


_NOT_CHECKED = ("{} is PyTorch's implicit reparameterisation gradient, an approximation with no closed form: "
                "not checked")


def _passed(alpha: np.ndarray, draw: np.ndarray) -> np.ndarray:
    return np.array(draw, copy=True)


STANDARD_GAMMA = Op(name="_standard_gamma", node="StandardGammaBackward0", forward=_passed,
                    vjps=(_gamma_vjp, None), saves=("ao",), jvp=_gamma_jvp,
                    rule="∂x/∂α = -(∂F/∂α)/(∂F/∂x) at the draw's quantile",
                    sym=lambda S, alpha, draw: draw, kink=lambda K, alpha, draw: K.everywhere(alpha),
                    approximate=_NOT_CHECKED.format("StandardGammaBackward0"))
DIRICHLET = Op(name="_sample_dirichlet", node="_DirichletBackward", forward=_passed,
               vjps=(_dirichlet_vjp, None), saves=("ao",), jvp=_dirichlet_jvp,
               rule="each coordinate's beta quantile held, projected onto the simplex",
               sym=lambda S, alpha, draw: draw, kink=lambda K, alpha, draw: K.everywhere(alpha),
               approximate=_NOT_CHECKED.format("_DirichletBackward"))

OPS: tuple[Op, ...] = (STANDARD_GAMMA, DIRICHLET)
"""This family's primitives, in `TABLE` (the package joins the families)."""
