"""VonMises: the normal distribution of the circle, an angle around `loc` concentrated by `concentration`.

Its density needs log I₀(κ), the modified Bessel function's logarithm, which PyTorch evaluates with the
polynomial fits of Abramowitz and Stegun (9.8.1-9.8.4), one below κ = 3.75 and one above; gradcli writes the same
polynomials with the engine's tensor functions, so values, gradients and `--check` follow from those ops. A draw
is Best and Fisher's rejection sampler (1979) in float64, three uniforms per round for every element still
waiting, as PyTorch's loop draws them, so a seeded program gets PyTorch's angles.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.distributions.constraints as constraints
from gradcli.distributions.continuous import _CentredOnLoc
from gradcli.distributions.distribution import Distribution
from gradcli.engine.tensor import Tensor

_I0_SMALL = (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2)
_I0_LARGE = (0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
             -0.1647633e-1, 0.392377e-2)
_I1_SMALL = (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3)
_I1_LARGE = (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
             0.1787654e-1, -0.420059e-2)
_COEFFICIENTS = {0: (_I0_SMALL, _I0_LARGE), 1: (_I1_SMALL, _I1_LARGE)}


def _polynomial(y: Tensor, coefficients: tuple[float, ...]) -> Any:
    """Horner's rule from the highest coefficient, in PyTorch's order of operations."""
    result: Any = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def log_modified_bessel(x: Tensor, order: int) -> Tensor:
    """log I_order(x) for x > 0 and order 0 or 1."""
    small_coefficients, large_coefficients = _COEFFICIENTS[order]
    y = x / 3.75
    small = _polynomial(y * y, small_coefficients)
    if order == 1:
        small = F.abs(x) * small
    small = F.log(small)
    large = x - 0.5 * F.log(x) + F.log(_polynomial(3.75 / x, large_coefficients))
    return F.where(x < 3.75, small, large)


def _rejection_sample(loc: np.ndarray, concentration: np.ndarray, proposal_r: np.ndarray,
                      shape: tuple[int, ...]) -> np.ndarray:
    """PyTorch's `_rejection_sample` in float64: every round draws three uniforms for every element (accepted
    or not), and an element accepted again takes the later angle, as PyTorch's `where` writes it."""
    x = np.zeros(shape)
    done = np.zeros(shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = C.rand(size=(3, *shape), dtype=np.float64)._data
        z = np.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(f), x)
        done |= accept
    return np.mod(x + math.pi + loc, 2 * math.pi) - math.pi


class VonMises(_CentredOnLoc):  # its circular mean and its mode are loc
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    batch_parameters = ("loc", "concentration")
    support = constraints.real
    pytorch_lacks = frozenset({"entropy", "cdf", "icdf"})
    program_attributes = Distribution.program_attributes | {"loc", "concentration"}

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self._keep_parameters(loc, concentration, validate_args=validate_args)

    def log_prob(self, value: Any) -> Tensor:
        value = self.checked(value)
        log_prob = self.concentration * F.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - log_modified_bessel(self.concentration, 0)

    def _proposal_r(self) -> np.ndarray:
        kappa = self.concentration._data.astype(np.float64)
        tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        return np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Drawn in float64 whatever the dtype (PyTorch's guard against a hang for small concentrations)."""
        shape = self._extended_shape(sample_shape)
        angles = _rejection_sample(self.loc._data.astype(np.float64), self.concentration._data.astype(np.float64),
                                   self._proposal_r(), shape)
        return C.tensor(angles.astype(self.loc.dtype), dtype=self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        """The circular variance, 1 - I₁(κ)/I₀(κ)."""
        return 1 - F.exp(log_modified_bessel(self.concentration, 1) - log_modified_bessel(self.concentration, 0))


CLASSES = {"VonMises": VonMises}
