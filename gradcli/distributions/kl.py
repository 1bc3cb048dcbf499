"""`kl_divergence(p, q)`: PyTorch's closed forms for the pairs it registers within one family.

A pair PyTorch registers across families (Normal against Laplace, say) is refused with gradcli's
reason rather than PyTorch's "not implemented", since PyTorch does have an answer there. Where
PyTorch writes infinities into the result by mask (Bernoulli, Categorical, Uniform), gradcli uses
`where` with the same masks, so the values agree and the gradient is zero where PyTorch's is.
"""
from __future__ import annotations

from typing import Any, Callable

import gradcli.engine.functions as F
from gradcli.distributions.continuous import Exponential, Laplace, Normal, Uniform
from gradcli.distributions.discrete import Bernoulli, Categorical, OneHotCategorical
from gradcli.distributions.distribution import Distribution, sum_rightmost
from gradcli.distributions.gamma import Beta, Dirichlet, Gamma, Poisson
from gradcli.distributions.multivariate import Independent, MultivariateNormal, batch_mahalanobis, half_log_det
from gradcli.engine.tensor import Tensor
from gradcli.errors import NotAllowedError, ValueDomainError

_INF = float("inf")


def _masked(t: Tensor, mask: Any, value: float) -> Tensor:
    return F.where(mask, value, t)


def _normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = F.pow(p.scale / q.scale, 2)
    t1 = F.pow((p.loc - q.loc) / q.scale, 2)
    return 0.5 * (var_ratio + t1 - 1 - F.log(var_ratio))


def _bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _masked(_masked(t1, q.probs == 0, _INF), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _masked(_masked(t2, q.probs == 1, _INF), p.probs == 1, 0.0)
    return t1 + t2


def _categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _masked(_masked(t, q.probs == 0, _INF), p.probs == 0, 0.0)
    return F.sum(t, -1)


def _one_hot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _categorical(p._categorical, q._categorical)


def _uniform(p: Uniform, q: Uniform) -> Tensor:
    result = F.log((q.high - q.low) / (p.high - p.low))
    return _masked(result, (q.low > p.low) | (q.high < p.high), _INF)


def _laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = F.abs(p.loc - q.loc)
    t1 = -F.log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * F.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -F.log(rate_ratio) + rate_ratio - 1


def _gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * F.log(p.rate / q.rate)
    t2 = F.lgamma(q.concentration) - F.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * F.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


def _beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = F.lgamma(q.concentration1) + F.lgamma(q.concentration0) + F.lgamma(sum_p)
    t2 = F.lgamma(p.concentration1) + F.lgamma(p.concentration0) + F.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * F.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * F.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * F.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


def _dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = F.sum(p.concentration, -1)
    sum_q = F.sum(q.concentration, -1)
    t1 = F.lgamma(sum_p) - F.lgamma(sum_q)
    t2 = F.sum(F.lgamma(p.concentration) - F.lgamma(q.concentration), -1)
    t3 = p.concentration - q.concentration
    t4 = F.digamma(p.concentration) - F.unsqueeze(F.digamma(sum_p), -1)
    return t1 - t2 + F.sum(t3 * t4, -1)


def _poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (F.log(p.rate) - F.log(q.rate)) - (p.rate - q.rate)


def _multivariate_normal(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueDomainError("KL-divergence between two Multivariate Normals with different event shapes cannot "
                               "be computed", hint="both distributions need vectors of the same length")
    n = p.event_shape[0]
    q_tril, p_tril = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    term2 = F.sum(F.pow(F.matmul(F.inverse(q_tril), p_tril), 2), (-2, -1))
    term3 = batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_log_det(q_tril) - half_log_det(p_tril) + 0.5 * (term2 + term3 - n)


def _independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotAllowedError("No KL(p || q) is implemented",
                              hint="both Independent distributions must reinterpret the same number of dimensions")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


PAIRS: dict[type, Callable[..., Tensor]] = {
    Normal: _normal, Bernoulli: _bernoulli, Categorical: _categorical, OneHotCategorical: _one_hot,
    Uniform: _uniform, Laplace: _laplace, Exponential: _exponential, Gamma: _gamma, Beta: _beta,
    Dirichlet: _dirichlet, Poisson: _poisson, MultivariateNormal: _multivariate_normal, Independent: _independent,
}
"""Each family against itself: the pairs gradcli computes."""


def kl_divergence(p: Any, q: Any) -> Tensor:
    """KL(p ‖ q) by PyTorch's closed form for the pair."""
    if not isinstance(p, Distribution) or not isinstance(q, Distribution):
        raise NotAllowedError("kl_divergence takes two distributions", hint="e.g. kl_divergence(Normal(0., 1.), "
                                                                           "Normal(1., 2.))")
    if type(p) is type(q) and type(p) in PAIRS:
        return PAIRS[type(p)](p, q)
    raise NotAllowedError(f"No KL(p || q) is implemented for {type(p).__name__} and {type(q).__name__} in gradcli",
                          hint="gradcli computes KL between two distributions of the same family; "
                               "write the expectation yourself, e.g. (p.log_prob(x) - q.log_prob(x)).mean() over "
                               "draws x = p.sample((n,))")
