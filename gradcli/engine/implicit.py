"""PyTorch's implicit reparameterisation gradients: how a gamma or Dirichlet draw moves with its concentration.

A rejection sampler is not a differentiable function of its concentration, but the draw x can be held
at a fixed quantile u = F(x; α) of its CDF, so that dx/dα = -(∂F/∂α)/(∂F/∂x). That derivative has no
closed form; ATen approximates it piece by piece (a Taylor series for small x, Rice's saddle point
expansion for large α, fitted rational functions elsewhere) in `standard_gamma_grad_one` and
`dirichlet_grad_one`. These are the same approximations, branch for branch, with the same float
arithmetic where ATen computes in the draw's own dtype (Dirichlet's `scalar_t` steps in float32), so
gradients equal PyTorch's numbers rather than the exact derivative they approximate.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

_PSI_10 = 2.25175258906672110764
_DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                   -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                   8.33333333333333333333E-2)
_F32 = np.float32


def _digamma(x: Any, T: type) -> Any:
    """ATen's `digamma_one<T, double>` for x > 0: the recurrence steps in T, the sum in double, rounded to T."""
    x = T(x)
    if x == 0:
        return T(math.inf)
    result = 0.0
    while x < 10:
        result -= float(T(1) / x)
        x = T(x + T(1))
    if x == 10:
        return T(result + _PSI_10)
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / float(x * x)
        poly = 0.0
        for c in _DIGAMMA_SERIES:
            poly = poly * z + c
        y = z * poly
    return T(result + float(np.log(x)) - float(T(0.5) / x) - y)


_GAMMA_RATIONAL = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)
_0_8F, _0_9F, _1_1F = float(_F32(0.8)), float(_F32(0.9)), float(_F32(1.1))


def standard_gamma_grad_one(alpha: float, x: float) -> float:
    """dx/dα for a standard gamma draw x, in double as ATen's CPU kernel computes it."""
    if x < _0_8F:
        numer, denom = 1.0, alpha
        series1, series2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            series1 += numer / denom
            series2 += numer / (denom * denom)
        pow_x_alpha = x ** alpha
        pdf = x ** (alpha - 1) * math.exp(-x)
        cdf = pow_x_alpha * series1
        cdf_alpha = (math.log(x) - _digamma(alpha, float)) * cdf - pow_x_alpha * series2
        with np.errstate(all="ignore"):
            result = float(np.float64(-cdf_alpha) / np.float64(pdf))
        return 0.0 if math.isnan(result) else result
    if alpha > 8.0:
        if _0_9F * alpha <= x <= _1_1F * alpha:
            numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
            numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
            return numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = (x - alpha - alpha * math.log(x / alpha)) ** -1.5
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = math.log(x / alpha) * term23 - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        return -stirling * x * term1 / denom
    u, v = math.log(x / alpha), math.log(alpha)
    coef = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_RATIONAL)]
    p = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]))
    q = coef[4] + v * (coef[5] + v * (coef[6] + v * coef[7]))
    return math.exp(p / q)


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """`torch._standard_gamma_grad(alpha, x)`, element by element, in the draw's dtype."""
    alpha, x = np.broadcast_arrays(alpha, x)
    out = [standard_gamma_grad_one(float(a), float(v)) for a, v in zip(alpha.ravel().tolist(), x.ravel().tolist())]
    return np.array(out, dtype=x.dtype).reshape(x.shape)


def _beta_grad_alpha_small(x: Any, alpha: Any, beta: Any, T: type) -> Any:
    """Near x = 0: a Taylor series, in T as ATen computes it."""
    with np.errstate(all="ignore"):
        factor = T(_digamma(alpha, T) - _digamma(T(alpha + beta), T) - T(np.log(x)))
        numer = T(1)
        series = T(numer / alpha * T(factor + T(1) / alpha))
        for i in range(1, 11):
            numer = T(numer * T(T(i) - beta) * x / T(i))
            denom = T(alpha + T(i))
            series = T(series + numer / denom * T(factor + T(1) / denom))
        result = T(x * T(np.power(T(1) - x, -beta)) * series)
    return T(0) if np.isnan(result) else result


def _beta_grad_beta_small(x: Any, alpha: Any, beta: Any, T: type) -> Any:
    with np.errstate(all="ignore"):
        factor = T(_digamma(T(alpha + beta), T) - _digamma(beta, T))
        numer, betas, dbetas, series = T(1), T(1), T(0), T(factor / alpha)
        for i in range(1, 9):
            numer = T(numer * T(-x / T(i)))
            dbetas = T(dbetas * T(beta - T(i)) + betas)
            betas = T(betas * T(beta - T(i)))
            series = T(series + numer / T(alpha + T(i)) * T(dbetas + factor * betas))
        result = T(-T(np.power(T(1) - x, T(1) - beta)) * series)
    return T(0) if np.isnan(result) else result


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    """Both concentrations large: Rice's saddle point expansion, in double."""
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:
        poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
        prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) \
        / (1 + 1 / (12 * total) + 1 / (288 * total * total))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (math.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx)
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))) ** -1.5
    return stirling * prefactor * (term1 + term2 * (term3 + (term4 if x < mean else -term4)))


_DIRICHLET_RATIONAL = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def dirichlet_grad_one(x: Any, alpha: Any, total: Any, T: type) -> Any:
    """ATen's scaled reparameterised gradient of a Beta(α, total - α) draw x with respect to α, over (1 - x)."""
    x, alpha, total = T(x), T(alpha), T(total)
    beta = T(total - alpha)
    beta_wide = float(total) - float(alpha)
    boundary = T(T(total * x) * T(T(1) - x))
    if x <= 0.5 and boundary < T(2.5):
        return _beta_grad_alpha_small(x, alpha, beta, T)
    if x >= 0.5 and boundary < T(0.75):
        return -_beta_grad_beta_small(T(T(1) - x), beta, alpha, T)
    if alpha > 6 and beta > 6:
        return T(_beta_grad_alpha_mid(float(x), float(alpha), beta_wide))
    u = math.log(float(x))
    a = math.log(float(alpha)) - u
    b = math.log(float(total)) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    sums = []
    for c in _DIRICHLET_RATIONAL:
        s = 0.0
        for i in range(3):
            for j in range(3):
                k = c[i][j]
                s += pow_u[i] * pow_a[j] * (k[0] + b * (k[1] + b * (k[2] + b * k[3])))
        sums.append(s)
    approx = float(x) * (float(_digamma(total, T)) - float(_digamma(alpha, T))) / beta_wide
    return T(sums[0] / sums[1] * approx)


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """`torch._dirichlet_grad(x, alpha, total)`, element by element, in x's dtype."""
    T = _F32 if x.dtype == np.float32 else np.float64
    x, alpha, total = np.broadcast_arrays(x, alpha, total)
    out = [dirichlet_grad_one(a, b, c, T) for a, b, c in zip(x.ravel().tolist(), alpha.ravel().tolist(),
                                                             total.ravel().tolist())]
    return np.array(out, dtype=x.dtype).reshape(x.shape)
