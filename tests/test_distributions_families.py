"""VonMises, FisherSnedecor, NegativeBinomial and LogisticNormal by hand (their torch recordings are the
fixture circle_and_gamma_mixtures.py; these pin the formulas to the textbook's)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.errors import ValueDomainError
from language_helpers import fails, run


def test_von_mises_density_is_the_textbooks_with_bessel_i0_from_the_polynomial_fit() -> None:
    # log p(x) = κ cos(x - μ) - log 2π - log I₀(κ); I₀(1) = 1.2660658777520082, the fit is good to ~1e-7
    ran = run("import torch\nk = torch.tensor(1.0, requires_grad=True)\n"
              "lp = torch.distributions.VonMises(0.5, k).log_prob(torch.tensor(1.5))\nlp.backward()\n", dtype="float64")
    assert float(ran["lp"]._data) == pytest.approx(math.cos(1.0) - math.log(2 * math.pi) - math.log(1.2660658777520082),
                                                   abs=1e-7)
    # d/dκ = cos(x - μ) - I₁(κ)/I₀(κ), I₁(1) = 0.5651591039924851
    assert float(ran["k"].grad._data) == pytest.approx(math.cos(1.0) - 0.5651591039924851 / 1.2660658777520082,
                                                       abs=1e-6)


def test_von_mises_draws_are_angles_around_loc() -> None:
    ran = run("import torch\ntorch.manual_seed(0)\nx = torch.distributions.VonMises(3.0, 50.0).sample((2000,))\n",
              dtype="float64")
    x = ran["x"]._data
    assert np.all((x >= -math.pi) & (x < math.pi))
    # wrapped around ±π: the circular mean is 3.0 and the spread about 1/√κ
    assert math.atan2(np.sin(x).mean(), np.cos(x).mean()) == pytest.approx(3.0, abs=0.02)
    assert 1 - np.hypot(np.sin(x).mean(), np.cos(x).mean()) == pytest.approx(0.0101, abs=0.003)


def test_negative_binomial_mass_by_hand() -> None:
    # Γ(k + r)/(k! Γ(r)) pᵏ (1 - p)ʳ at r = 2, p = 1/2, k = 1: 2 · 0.5 · 0.25 = 0.25; mean r p/(1 - p) = 2
    ran = run("import torch\nd = torch.distributions.NegativeBinomial(2.0, probs=torch.tensor(0.5))\n"
              "lp = d.log_prob(torch.tensor(1.0))\nm = d.mean\n", dtype="float64")
    assert float(ran["lp"]._data) == pytest.approx(math.log(0.25))
    assert float(ran["m"]._data) == pytest.approx(2.0)


def test_fisher_snedecor_density_by_hand() -> None:
    # F(d1 = 2, d2 = 4) at x = 1: (1 + d1 x/d2)^(-(d1 + d2)/2) · (d1/d2) / B(1, 2) = (1.5)^-3 · 0.5 · 2
    ran = run("import torch\nlp = torch.distributions.FisherSnedecor(2.0, 4.0).log_prob(torch.tensor(1.0))\n",
              dtype="float64")
    assert float(ran["lp"]._data) == pytest.approx(math.log(1.5 ** -3))


def test_logistic_normal_is_the_stick_broken_normal() -> None:
    # one normal coordinate z: y = (σ(z), 1 - σ(z)); log p(y) = log N(z) - log σ(z)(1 - σ(z))
    ran = run("import torch\nlp = torch.distributions.LogisticNormal(0.0, 1.0).log_prob(torch.tensor([0.25, 0.75]))\n",
              dtype="float64")
    z = math.log(0.25 / 0.75)
    assert float(ran["lp"]._data) == pytest.approx(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - math.log(0.25 * 0.75))


@pytest.mark.parametrize("source, words", [
    ("torch.distributions.VonMises(0.0, 0.0)", "GreaterThan(lower_bound=0.0)"),
    ("torch.distributions.NegativeBinomial(2.0, probs=1.0)", "HalfOpenInterval(lower_bound=0.0, upper_bound=1.0)"),
    ("torch.distributions.NegativeBinomial(2.0)", "Either `probs` or `logits` must be specified, but not both."),
    ("torch.distributions.FisherSnedecor(-1.0, 2.0)", "of distribution Gamma("),
])
def test_new_families_refuse_bad_parameters_with_pytorchs_words(source: str, words: str) -> None:
    assert words in str(fails("import torch\n" + source + "\n", ValueDomainError))


def test_what_pytorchs_class_lacks_is_its_not_implemented_error_a_program_can_catch() -> None:
    ran = run("import torch\nfrom torch.distributions import FisherSnedecor, NegativeBinomial, VonMises\n"
              "for d in (VonMises(0.0, 1.0), FisherSnedecor(2.0, 3.0), NegativeBinomial(2.0, 0.5)):\n"
              "    try:\n        d.entropy()\n    except NotImplementedError as e:\n"
              "        print(type(d).__name__, type(e).__name__)\n")
    assert ran.printed == ["VonMises NotImplementedError", "FisherSnedecor NotImplementedError",
                           "NegativeBinomial NotImplementedError"]
    error = fails("import torch\ntorch.distributions.VonMises(0.0, 1.0).cdf(torch.tensor(0.5))\n", ValueDomainError)
    assert str(error) == "PyTorch defines no VonMises.cdf" and "NotImplementedError here too" in error.hint
