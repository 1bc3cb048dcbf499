"""MultivariateNormal, LowRankMultivariateNormal and Independent: distributions whose events span dimensions.

MultivariateNormal keeps PyTorch's lower Cholesky factor of the covariance (`scale_tril`) and its
formulas, solving with the triangular factor (`solve_triangular`) as PyTorch does, so the graph shows
LinalgSolveTriangularBackward0 where PyTorch's does (PyTorch reshapes the batch around the solve; gradcli
broadcasts it, the same numbers to rounding). LowRankMultivariateNormal keeps W and D and factors only
the small capacitance matrix. Independent reinterprets a base distribution's rightmost batch dimensions
as event dimensions: its log_prob and entropy sum the base's over them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.continuous import _CentredOnLoc, _draw
from gradcli.distributions.distribution import Distribution, broadcast_all, sum_rightmost
from gradcli.distributions.gamma import Beta
from gradcli.engine.modes import no_grad
from gradcli.engine.tensor import Tensor, broadcast_shape
from gradcli.engine.tensor_str import Size
from gradcli.errors import ShapeError, ValueDomainError


def _batch_mv(matrix: Tensor, vector: Tensor) -> Tensor:
    return F.squeeze(F.matmul(matrix, F.unsqueeze(vector, -1)), -1)


def batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|L⁻¹ diff|² over the last dimension, broadcasting L's batch with diff's."""
    solved = F.solve_triangular(scale_tril, F.unsqueeze(diff, -1), upper=False)
    return F.sum(F.pow(F.squeeze(solved, -1), 2), -1)


def precision_to_scale_tril(precision: Tensor) -> Tensor:
    """PyTorch's: the Cholesky factor of the flipped precision, flipped back, inverted by a triangular solve."""
    flipped = F.cholesky(F.flip(precision, (-2, -1)))
    inverse_tril = F.transpose(F.flip(flipped, (-2, -1)), -2, -1)
    eye = C.eye(precision.shape[-1], dtype=precision.dtype)
    return F.solve_triangular(inverse_tril, eye, upper=False)


def half_log_det(scale_tril: Tensor) -> Tensor:
    return F.sum(F.log(F.diagonal(scale_tril, dim1=-2, dim2=-1)), -1)


_ONE_OF = "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."


class MultivariateNormal(_CentredOnLoc):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"loc", "covariance_matrix", "precision_matrix",
                                                            "scale_tril"}

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        loc = F._tensor_arg(loc, "MultivariateNormal")
        if loc.ndim < 1:
            raise ValueDomainError("loc must be at least one-dimensional.", hint="a mean vector: torch.zeros(2)")
        given = {name: value for name, value in (("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix),
                                                 ("scale_tril", scale_tril)) if value is not None}
        if len(given) != 1:
            raise ValueDomainError(_ONE_OF, hint="pass covariance_matrix=..., or precision_matrix=..., or "
                                                 "scale_tril=...")
        (name, matrix), = given.items()
        matrix = F._tensor_arg(matrix, "MultivariateNormal")
        if matrix.ndim < 2:
            raise ValueDomainError(f"{name} matrix must be at least two-dimensional, with optional leading batch "
                                   "dimensions", hint="an n-by-n matrix, e.g. torch.eye(2)")
        batch = broadcast_shape("MultivariateNormal", matrix.shape[:-2], loc.shape[:-1])
        self._lazy: dict[str, Tensor] = {name: F.expand(matrix, *batch, -1, -1)}
        self.loc = F.expand(loc, *batch, -1)
        super().__init__(batch, loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = F.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(matrix)

    def _holds_parameter(self, name: str) -> bool:
        return name == "loc" or name in self._lazy

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        n = self._event_shape[0]
        self.loc = F.expand(self.loc, *shape, n)
        self._lazy = {name: F.expand(value, *shape, n, n) for name, value in self._lazy.items()}

    def _matrix(self, name: str, make: Any) -> Tensor:
        if name not in self._lazy:
            self._lazy[name] = F.expand(make(), *self._batch_shape, *self._event_shape, *self._event_shape)
        return self._lazy[name]

    @property
    def scale_tril(self) -> Tensor:
        return self._matrix("scale_tril", lambda: self._unbroadcasted_scale_tril)

    def _tril_squared(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return F.matmul(tril, F.transpose(tril, -2, -1))

    @property
    def covariance_matrix(self) -> Tensor:
        return self._matrix("covariance_matrix", self._tril_squared)

    @property
    def precision_matrix(self) -> Tensor:
        return self._matrix("precision_matrix", lambda: F.inverse(self._tril_squared()))

    @property
    def variance(self) -> Tensor:
        variance = F.sum(F.pow(self._unbroadcasted_scale_tril, 2), -1)
        return F.expand(variance, *self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = _draw(self.loc, self._extended_shape(sample_shape)).normal_()
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        diff = value - self.loc
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - \
            half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return h if not self._batch_shape else F.expand(h, *self._batch_shape)


def _capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    """The Cholesky factor of I + Wᵀ D⁻¹ W: the small matrix the Woodbury identity leaves to factor."""
    k = F.matmul(F.transpose(w, -2, -1) / F.unsqueeze(d, -2), w)
    return F.cholesky(k + C.eye(w.shape[-1], dtype=w.dtype))


class LowRankMultivariateNormal(_CentredOnLoc):
    """Covariance W Wᵀ + diag(D): its log-density and entropy through the capacitance matrix (Woodbury and
    the matrix determinant lemma), never factoring the full covariance, as PyTorch computes them."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.IndependentConstraint(constraints.real, 2),
                       "cov_diag": constraints.IndependentConstraint(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    program_attributes = Distribution.program_attributes | {"loc", "cov_factor", "cov_diag", "scale_tril",
                                                            "covariance_matrix", "precision_matrix"}

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any, validate_args: bool | None = None) -> None:
        loc, cov_factor, cov_diag = (F._tensor_arg(v, "LowRankMultivariateNormal") for v in (loc, cov_factor, cov_diag))
        if loc.ndim < 1:
            raise ValueDomainError("loc must be at least one-dimensional.", hint="a mean vector: torch.zeros(2)")
        n = loc.shape[-1]
        if cov_factor.ndim < 2:
            raise ValueDomainError("cov_factor must be at least two-dimensional, with optional leading batch "
                                   "dimensions", hint="an n-by-rank matrix, e.g. torch.ones(2, 1)")
        if cov_factor.shape[-2] != n:
            raise ValueDomainError(f"cov_factor must be a batch of matrices with shape {n} x m",
                                   hint="one row per coordinate of loc")
        if cov_diag.ndim < 1 or cov_diag.shape[-1] != n:
            raise ValueDomainError(f"cov_diag must be a batch of vectors with shape {Size([n])}",
                                   hint="one variance per coordinate of loc")
        try:
            batch = broadcast_shape("LowRankMultivariateNormal", broadcast_shape(
                "LowRankMultivariateNormal", loc.shape[:-1], cov_factor.shape[:-2]), cov_diag.shape[:-1])
        except ShapeError:
            raise ValueDomainError(f"Incompatible batch shapes: loc {Size(loc.shape)}, cov_factor "
                                   f"{Size(cov_factor.shape)}, cov_diag {Size(cov_diag.shape)}",
                                   hint="the batch dimensions must broadcast") from None
        self.loc = F.expand(loc, *batch, n)
        self.cov_factor = F.expand(cov_factor, *batch, n, cov_factor.shape[-1])
        self.cov_diag = F.expand(cov_diag, *batch, n)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch, (n,), validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        n = self._event_shape[0]
        self.loc = F.expand(self.loc, *shape, n)
        self.cov_diag = F.expand(self.cov_diag, *shape, n)
        self.cov_factor = F.expand(self.cov_factor, *shape, n, self.cov_factor.shape[-1])

    def _full(self, matrix: Tensor) -> Tensor:
        return F.expand(matrix, *self._batch_shape, *self._event_shape, *self._event_shape)

    @property
    def variance(self) -> Tensor:
        variance = F.sum(F.pow(self._unbroadcasted_cov_factor, 2), -1) + self._unbroadcasted_cov_diag
        return F.expand(variance, *self._batch_shape, *self._event_shape)

    @property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        root = F.unsqueeze(F.sqrt(self._unbroadcasted_cov_diag), -1)
        scaled = self._unbroadcasted_cov_factor / root
        k = F.matmul(scaled, F.transpose(scaled, -2, -1)) + C.eye(n, dtype=scaled.dtype)
        return self._full(root * F.cholesky(k))

    @property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        return self._full(F.matmul(w, F.transpose(w, -2, -1)) + F.diag_embed(self._unbroadcasted_cov_diag))

    @property
    def precision_matrix(self) -> Tensor:
        a = F.solve_triangular(self._capacitance_tril, self.wt_dinv(), upper=False)
        return self._full(F.diag_embed(F.reciprocal(self._unbroadcasted_cov_diag)) -
                          F.matmul(F.transpose(a, -2, -1), a))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps_w = _draw(self.loc, shape[:-1] + self.cov_factor.shape[-1:]).normal_()
        eps_d = _draw(self.loc, shape).normal_()
        return self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w) + \
            F.sqrt(self._unbroadcasted_cov_diag) * eps_d

    def log_det(self) -> Tensor:
        """log|W Wᵀ + D| = log|capacitance| + log|D| (the matrix determinant lemma)."""
        return 2 * F.sum(F.log(F.diagonal(self._capacitance_tril, dim1=-2, dim2=-1)), -1) + \
            F.sum(F.log(self._unbroadcasted_cov_diag), -1)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self.log_det() +
                       self.mahalanobis(value - self.loc))

    def mahalanobis(self, x: Tensor) -> Tensor:
        """xᵀ(W Wᵀ + D)⁻¹x = xᵀD⁻¹x - |C⁻¹ Wᵀ D⁻¹ x|² (the Woodbury identity; C the capacitance factor)."""
        wt_dinv_x = _batch_mv(self.wt_dinv(), x)
        return F.sum(F.pow(x, 2) / self._unbroadcasted_cov_diag, -1) - \
            batch_mahalanobis(self._capacitance_tril, wt_dinv_x)

    def wt_dinv(self) -> Tensor:
        return F.transpose(self._unbroadcasted_cov_factor, -2, -1) / F.unsqueeze(self._unbroadcasted_cov_diag, -2)

    def entropy(self) -> Tensor:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self.log_det())
        return h if not self._batch_shape else F.expand(h, *self._batch_shape)


def _multivariate_lgamma(x: Tensor, p: int) -> Tensor:
    """log Γ_p(x) = p(p-1)/4 · log π + Σᵢ lgamma(x - i/2), i < p (`torch.mvlgamma`'s value)."""
    halves = C.arange(p, dtype=x.dtype) / 2
    return F.sum(F.lgamma(F.unsqueeze(x, -1) - halves), -1) + p * (p - 1) / 4 * math.log(math.pi)


class LKJCholesky(Distribution):
    """Cholesky factors of random correlation matrices, density ∝ det(C)^(concentration - 1); drawn by PyTorch's
    onion method (a Beta draw per row, a normal direction, the diagonal filling each row to unit length)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.CorrCholesky()
    program_attributes = Distribution.program_attributes | {"concentration", "dim"}

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueDomainError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.",
                                   hint="LKJCholesky(dim) draws dim x dim correlation factors, dim at least 2")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = F.cat([C.zeros(1, dtype=self.concentration.dtype),
                        C.arange(dim - 1, dtype=self.concentration.dtype)])
        self._beta = Beta(offset + 0.5, F.unsqueeze(marginal_conc, -1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        self.concentration = F.expand(self.concentration, *shape)
        self._beta = self._beta.expand(shape + (self.dim,))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            y = F.unsqueeze(self._beta.sample(sample_shape), -1)
            u_normal = F.tril(C.randn(*self._extended_shape(sample_shape), dtype=y.dtype), -1)
            u_hypersphere = u_normal / F.norm(u_normal, dim=-1, keepdim=True)
            u_hypersphere[..., 0, :] = 0.0  # the first row's 0/0
            w = F.sqrt(y) * u_hypersphere
            eps = float(np.finfo(w.dtype).tiny)
            diag_elems = F.sqrt(F.clamp(1 - F.sum(w ** 2, -1), min=eps))
            return w + F.diag_embed(diag_elems)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        diag_elems = F.diagonal(value, dim1=-1, dim2=-2)[..., 1:]
        order = C.arange(2, self.dim + 1)
        order = 2 * F.unsqueeze(self.concentration - 1, -1) + self.dim - order
        unnormalized_log_pdf = F.sum(order * F.log(diag_elems), -1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = F.lgamma(alpha) * dm1
        numerator = _multivariate_lgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)


class Independent(Distribution):
    arg_constraints: dict[str, Any] = {}
    program_attributes = Distribution.program_attributes | {"base_dist", "reinterpreted_batch_ndims"}

    def __init__(self, base_distribution: Any, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if not isinstance(base_distribution, Distribution):
            raise ValueDomainError("Independent takes a distribution to reinterpret",
                                   hint="e.g. Independent(Normal(torch.zeros(3, 2), 1.0), 1)")
        n = int(reinterpreted_batch_ndims)
        if n > len(base_distribution.batch_shape):
            raise ValueDomainError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                                   f"actual {n} vs {len(base_distribution.batch_shape)}",
                                   hint="only batch dimensions can become event dimensions")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        split = len(shape) - (n + len(base_distribution.event_shape))
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def _expand_parameters(self, shape: tuple[int, ...]) -> None:
        kept = tuple(self.base_dist.batch_shape)[len(self.base_dist.batch_shape) - self.reinterpreted_batch_ndims:]
        self.base_dist = self.base_dist.expand(shape + kept)

    @property
    def support(self) -> constraints.Constraint:
        support = self.base_dist.support
        n = self.reinterpreted_batch_ndims
        return constraints.IndependentConstraint(support, n) if n else support

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


CLASSES = {"MultivariateNormal": MultivariateNormal, "LowRankMultivariateNormal": LowRankMultivariateNormal,
           "Independent": Independent, "LKJCholesky": LKJCholesky}
