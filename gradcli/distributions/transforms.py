"""`torch.distributions.transforms`: the bijections a TransformedDistribution pushes its base through.

Each transform is PyTorch's, formula for formula: its forward (`t(x)`), its inverse (`t.inv(y)`) and
the log of its Jacobian's absolute determinant (`log_abs_det_jacobian(x, y)`), the term the change
of variables subtracts from the base's log-density. With `cache_size=1` a transform remembers its
last pair, so `log_prob` of the very tensor `rsample` returned inverts nothing: the graph runs back
through the draw, and tanh's inverse at ±1 (where float32 rounds a large draw) is never taken, which
is why SAC code passes `TanhTransform(cache_size=1)`.
"""
from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.nn.functional as NF
import gradcli.distributions.constraints as constraints
from gradcli.distributions.distribution import broadcast_all, sum_rightmost
from gradcli.engine.tensor import Tensor
from gradcli.errors import ValueDomainError


class Transform:
    """PyTorch's `Transform`: an invertible map with its log-Jacobian, optionally caching its last pair."""

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    bijective = True
    sign = 1
    program_equality = True
    program_attributes = frozenset({"inv", "sign", "domain", "codomain", "bijective", "event_dim",
                                    "log_abs_det_jacobian", "with_cache", "forward_shape", "inverse_shape"})

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueDomainError("cache_size must be 0 or 1", hint="TanhTransform(cache_size=1) keeps the last pair")
        self._cache_size = cache_size
        self._cached: tuple[Any, Any] = (None, None)

    @property
    def event_dim(self) -> int:
        return self.domain.event_dim

    @property
    def inv(self) -> "Transform":
        return _Inverse(self)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of an output for an input of `shape` (a transform that changes it says how)."""
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(shape)

    def with_cache(self, cache_size: int = 1) -> "Transform":
        """The same transform remembering its last pair (or not): PyTorch's `with_cache`."""
        if self._cache_size == cache_size:
            return self
        made = copy.copy(self)
        Transform.__init__(made, cache_size)
        return made

    def __call__(self, x: Any) -> Tensor:
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y: Any) -> Tensor:
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        """PyTorch's: a parameterless transform equals any of its class; the base class, only itself."""
        return other is self if type(self) is Transform else type(other) is type(self)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


class _Inverse(Transform):
    """`t.inv`: the same pair read backwards (and the same cache, as PyTorch's `_InverseTransform` shares it)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def sign(self) -> int:  # type: ignore[override]
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._inv.forward_shape(shape)

    def __call__(self, x: Any) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Inverse) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return f"_InverseTransform({self._inv!r})"


class ExpTransform(Transform):
    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return F.exp(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return F.log(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return x


class AbsTransform(Transform):
    """|x|: not a bijection, so its inverse is the nonnegative branch and it has no log-Jacobian."""

    codomain = constraints.positive
    bijective = False

    def _call(self, x: Tensor) -> Tensor:
        return F.abs(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return y


class SigmoidTransform(Transform):
    codomain = constraints.unit_interval

    def _call(self, x: Tensor) -> Tensor:
        finfo = np.finfo(x.dtype)
        return F.clamp(F.sigmoid(x), min=float(finfo.tiny), max=1.0 - float(finfo.eps))

    def _inverse(self, y: Tensor) -> Tensor:
        finfo = np.finfo(y.dtype)
        y = F.clamp(y, min=float(finfo.tiny), max=1.0 - float(finfo.eps))
        return F.log(y) - F.log1p(-y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return -NF.softplus(-x) - NF.softplus(x)


class TanhTransform(Transform):
    codomain = constraints.Interval(-1.0, 1.0)

    def _call(self, x: Tensor) -> Tensor:
        return F.tanh(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return F.atanh(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        """2·(log 2 - x - softplus(-2x)): log(1 - tanh²x) without cancelling near ±1, as PyTorch writes it."""
        return 2.0 * (math.log(2.0) - x - NF.softplus(-2.0 * x))


class AffineTransform(Transform):
    """loc + scale·x; `event_dim` dimensions on the right are one event (their log-Jacobians summed)."""

    program_attributes = Transform.program_attributes | {"loc", "scale"}

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, int(event_dim)

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.real if not self._event_dim else constraints.IndependentConstraint(constraints.real,
                                                                                               self._event_dim)

    codomain = domain

    @property
    def sign(self) -> Any:  # type: ignore[override]
        return int(np.sign(self.scale)) if not isinstance(self.scale, Tensor) else F.sign(self.scale)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AffineTransform) and _same(self.loc, other.loc) and _same(self.scale, other.scale)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        shape = tuple(x.shape)
        if isinstance(self.scale, Tensor):
            result = F.log(F.abs(self.scale))
        else:
            result = C.full(tuple(x.shape), dtype=x.dtype, fill_value=math.log(abs(self.scale)))
        if self._event_dim:
            result = F.sum(result.reshape(*result.shape[:-self._event_dim], -1), -1)
            shape = shape[:-self._event_dim]
        return F.expand(result, *shape)


class PowerTransform(Transform):
    """x ** exponent on the positive half line (Weibull and Kumaraswamy push their draws through it)."""

    domain = constraints.positive
    codomain = constraints.positive
    program_attributes = Transform.program_attributes | {"exponent"}

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        (self.exponent,) = broadcast_all(exponent)

    @property
    def sign(self) -> Any:  # type: ignore[override]
        return F.sign(self.exponent)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and _same(self.exponent, other.exponent)

    __hash__ = Transform.__hash__

    def _call(self, x: Tensor) -> Tensor:
        return F.pow(x, self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return F.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return F.log(F.abs(self.exponent * y / x))


class SoftmaxTransform(Transform):
    """Unnormalised log-probabilities to the simplex; not a bijection (adding a constant changes nothing), so
    it has no log-Jacobian and its inverse is one of the preimages, the log."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Tensor) -> Tensor:
        probs = F.exp(x - F.max(x, -1, True)[0])
        return probs / F.sum(probs, -1, True)

    def _inverse(self, y: Tensor) -> Tensor:
        return F.log(y)


class StickBreakingTransform(Transform):
    """K - 1 reals to the K-simplex by breaking a stick: each sigmoid takes its share of what is left. The
    offsets log(K - i) make zeros map to the uniform point, as in PyTorch (and Stan)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    @staticmethod
    def _offset(x: Tensor, size: int) -> Tensor:
        return F.cumsum(C.ones(x.shape[-1], dtype=x.dtype), -1).neg().add(size)

    def _call(self, x: Tensor) -> Tensor:
        finfo = np.finfo(x.dtype)
        z = F.clamp(F.sigmoid(x - F.log(self._offset(x, x.shape[-1] + 1))), min=float(finfo.tiny),
                    max=1.0 - float(finfo.eps))
        z_cumprod = F.cumprod(1 - z, -1)
        return NF.pad(z, [0, 1], value=1) * NF.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_crop = y[..., :-1]
        offset = F.cumsum(C.ones(y_crop.shape[-1], dtype=y.dtype), -1).neg().add(y.shape[-1])
        sf = F.clamp(1 - F.cumsum(y_crop, -1), min=float(np.finfo(y.dtype).tiny))
        return F.log(y_crop) - F.log(sf) + F.log(offset)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return (*shape[:-1], shape[-1] - 1)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        x = x - F.log(self._offset(x, x.shape[-1] + 1))
        return F.sum(-x + NF.logsigmoid(x) + F.log(y[..., :-1]), -1)


def _tril_mask(n: int, diag: int) -> Tensor:
    """The lower-triangular places of an n x n matrix from diagonal `diag`, in row order (PyTorch's mask)."""
    arange = C.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    return mat[..., _tril_mask(mat.shape[-1], diag)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse for a vector of n(n-1)/2 elements below the diagonal (`diag=-1`, all CorrCholesky uses)."""
    n = round((1 + math.sqrt(1 + 8 * vec.shape[-1])) / 2)
    if n * (n - 1) // 2 != vec.shape[-1]:
        raise ValueDomainError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as the lower "
                               "triangular part of a square D x D matrix.", hint="D(D - 1)/2 numbers for D x D")
    mat = vec.new_zeros((*vec.shape[:-1], n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class CorrCholeskyTransform(Transform):
    """D(D - 1)/2 reals onto the Cholesky factor of a D x D correlation matrix: each row's tanh values
    stick-broken (signed) to unit length, as PyTorch's (and Stan's)."""

    domain = constraints.real_vector
    codomain = constraints.CorrCholesky()

    def _call(self, x: Tensor) -> Tensor:
        x = F.tanh(x)
        eps = float(np.finfo(x.dtype).eps)
        r = vec_to_tril_matrix(F.clamp(x, min=-1 + eps, max=1 - eps), diag=-1)
        z1m_cumprod_sqrt = F.cumprod(F.sqrt(1 - r ** 2), -1)
        r = r + C.eye(r.shape[-1], dtype=r.dtype)
        return r * NF.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y: Tensor) -> Tensor:
        y_cumsum = 1 - F.cumsum(y * y, -1)
        y_cumsum_shifted = NF.pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / F.sqrt(tril_matrix_to_vec(y_cumsum_shifted, diag=-1))
        return (F.log1p(t) - F.log1p(-t)) / 2

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        """Of x and y's flattened lower triangle (the two spaces differ in dimension)."""
        y1m_cumsum_tril = tril_matrix_to_vec(1 - F.cumsum(y * y, -1), diag=-2)
        stick_breaking_logdet = 0.5 * F.sum(F.log(y1m_cumsum_tril), -1)
        tanh_logdet = -2 * F.sum(x + NF.softplus(-2 * x) - math.log(2.0), -1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueDomainError("Input is not a flattened lower-diagonal number", hint="D(D - 1)/2 numbers")
        return (*shape[:-1], d, d)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        d = shape[-1]
        return (*shape[:-2], d * (d - 1) // 2)


class ComposeTransform(Transform):
    """Parts applied in order; its log-Jacobian sums theirs, each summed over the dimensions the composite's
    event has beyond its own. With `cache_size=1` every part caches, as PyTorch's `with_cache`."""

    program_attributes = Transform.program_attributes | {"parts"}

    def __init__(self, parts: Any, cache_size: int = 0) -> None:
        if not isinstance(parts, (list, tuple)) or not all(isinstance(p, Transform) for p in parts):
            raise ValueDomainError("ComposeTransform takes a list of transforms",
                                   hint="e.g. ComposeTransform([ExpTransform(), AffineTransform(0., 2.)])")
        super().__init__(cache_size)
        self.parts = [p.with_cache(cache_size) for p in parts] if cache_size else list(parts)
        self._inverse_of: ComposeTransform | None = None

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return _independent(domain, event_dim)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return _independent(codomain, event_dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    @property
    def sign(self) -> Any:  # type: ignore[override]
        sign: Any = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        if self._inverse_of is None:
            self._inverse_of = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inverse_of._inverse_of = self
        return self._inverse_of

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Any) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        if not self.parts:
            return C.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        event_dim = self.domain.event_dim
        total: Any = None
        for part, before, after in zip(self.parts, xs[:-1], xs[1:]):
            term = sum_rightmost(part.log_abs_det_jacobian(before, after), event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


class IndependentTransform(Transform):
    """A transform whose `reinterpreted_batch_ndims` rightmost batch dimensions become event dimensions: the
    values are the base's, the log-Jacobian is summed over them."""

    program_attributes = Transform.program_attributes | {"base_transform", "reinterpreted_batch_ndims"}

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.base_transform = base_transform.with_cache(cache_size) if cache_size else base_transform
        self.reinterpreted_batch_ndims = int(reinterpreted_batch_ndims)

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.IndependentConstraint(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.IndependentConstraint(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:  # type: ignore[override]
        return self.base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Tensor:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _independent(constraint: constraints.Constraint, event_dim: int) -> constraints.Constraint:
    extra = event_dim - constraint.event_dim
    return constraints.IndependentConstraint(constraint, extra) if extra > 0 else constraint


def _same(a: Any, b: Any) -> bool:
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return bool(a == b)
    return bool(np.all(np.asarray(getattr(a, "_data", a)) == np.asarray(getattr(b, "_data", b))))


TRANSFORMS: dict[str, type] = {cls.__name__: cls for cls in (
    Transform, AbsTransform, ExpTransform, SigmoidTransform, TanhTransform, AffineTransform, PowerTransform,
    SoftmaxTransform, StickBreakingTransform, ComposeTransform, IndependentTransform, CorrCholeskyTransform)}
"""The transforms a program constructs, by PyTorch's name."""
