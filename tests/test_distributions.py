"""torch.distributions: PyTorch's values, gradients, draws, printed text and errors, family by family.

The programs in fixtures/distributions print densities, draws from seeded generators, gradients,
moments, KL divergences and the text of PyTorch's validation errors; `*.torch.txt` is what torch 2.13
printed for each, and gradcli must print exactly that. The oracle test reruns torch (skipped without it)
so the recording cannot drift from PyTorch.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from gradcli.errors import ArgumentError, NotAllowedError, ShapeError, ValueDomainError
from language_helpers import fails, run, torch_printed

FIXTURES = Path(__file__).parent / "fixtures" / "distributions"
FAMILIES = sorted(p.stem for p in FIXTURES.glob("*.py"))
DTYPES = {"float32": "", "float64": ".float64"}
"""Each program runs as written (float32) and with float64 as the default dtype, recorded apart."""


def _program(family: str, dtype: str) -> tuple[str, list[str]]:
    source = (FIXTURES / f"{family}.py").read_text()
    if dtype == "float64":
        source = source.replace("import torch\n", "import torch\ntorch.set_default_dtype(torch.float64)\n", 1)
    return source, (FIXTURES / f"{family}{DTYPES[dtype]}.torch.txt").read_text().splitlines()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_prints_what_torch_printed(family: str, dtype: str) -> None:
    source, recorded = _program(family, dtype)
    assert "\n".join(run(source, dtype=dtype).printed).splitlines() == recorded


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("family", FAMILIES)
def test_the_recordings_are_torchs_own(family: str, dtype: str) -> None:
    source, recorded = _program(family, dtype)
    assert torch_printed(source) == recorded


def test_normal_log_prob_and_its_gradient_by_hand() -> None:
    # log N(1; μ=0, σ=1) = -1/2 - log √(2π) = -1.41894; ∂/∂μ = (x - μ)/σ² = 1
    ran = run("import torch\nfrom torch.distributions import Normal\nmu = torch.tensor(0.0, requires_grad=True)\n"
              "lp = Normal(mu, 1.0).log_prob(torch.tensor(1.0))\nlp.backward()\n"
              "print(round(lp.item(), 4), mu.grad.item(), lp.grad_fn.name())\n")
    assert ran.printed == ["-1.4189 1.0 SubBackward0"]
    assert float(ran["lp"].item()) == pytest.approx(-0.5 - math.log(math.sqrt(2 * math.pi)), rel=1e-6)


def test_rsample_is_loc_plus_scale_times_the_seeded_standard_normal() -> None:
    ran = run("import torch\nloc = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "scale = torch.tensor([0.5, 3.0], requires_grad=True)\ntorch.manual_seed(7)\n"
              "x = torch.distributions.Normal(loc, scale).rsample()\nx.sum().backward()\n"
              "torch.manual_seed(7)\neps = torch.randn(2)\n", dtype="float64")
    eps = ran["eps"]._data
    assert np.allclose(ran["x"]._data, [1.0, 2.0] + eps * [0.5, 3.0])
    assert np.allclose(ran["loc"].grad._data, [1.0, 1.0])
    assert np.allclose(ran["scale"].grad._data, eps)  # ∂x/∂σ = ε


def test_float64_parameters_keep_their_dtype() -> None:
    ran = run("import torch\nd = torch.distributions.Gamma(torch.tensor([2.0], dtype=torch.float64), 3.0)\n"
              "lp = d.log_prob(torch.tensor([0.5], dtype=torch.float64))\n")
    assert ran["lp"].dtype == np.float64
    # Gamma(2, 3) at 0.5: 2 log 3 + log 0.5 - 1.5 - lgamma(2)
    assert ran["lp"]._data[0] == pytest.approx(2 * math.log(3) + math.log(0.5) - 1.5)


def test_an_uncaught_validation_error_is_a_user_error_with_pytorchs_text(cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text("import torch\nd = torch.distributions.Normal(0.0, -1.0)\n")
    result = cli("run", str(path))
    assert result.exit_code == 2
    text = result.stdout + result.stderr
    assert "Traceback" not in text
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0)" in text
    assert "a scale, rate or concentration is positive" in text


@pytest.mark.parametrize("source, kind, words", [
    ("torch.distributions.Bernoulli(0.5).rsample()", ValueDomainError, "REINFORCE"),
    ("a = torch.tensor(2., requires_grad=True)\n"
     "torch.autograd.grad(torch.distributions.Gamma(a, 1.).rsample(), a, create_graph=True)", NotAllowedError,
     "the derivative for '_standard_gamma_grad' is not implemented."),
    ("torch.distributions.kl_divergence(torch.distributions.Laplace(0., 1.), torch.distributions.Poisson(1.))",
     ValueDomainError, "No KL(p || q) is implemented for p type Laplace and q type Poisson"),
    ("torch.distributions.TransformedDistribution(torch.distributions.Normal(0., 1.), 3)", ValueDomainError,
     "transforms must be a Transform or list, but was 3"),
    ("torch.distributions.TransformedDistribution(torch.distributions.Normal(0., 1.), "
     "[torch.distributions.ExpTransform(), 3])", ValueDomainError,
     "transforms must be a Transform or a list of Transforms"),
    ("torch.distributions.transforms.TanhTransform(cache_size=2)", ValueDomainError, "cache_size must be 0 or 1"),
    ("torch.linalg.solve_triangular(torch.eye(2), torch.ones(2, 1))", ArgumentError,
     'linalg_solve_triangular() missing 1 required positional arguments: "upper"'),
    ("torch.linalg.solve_triangular(torch.eye(2), torch.ones(3, 1), upper=False)", ShapeError,
     "Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)"),
    ("torch.linalg.solve_triangular(torch.eye(2), torch.ones(2), upper=False)", ShapeError,
     "The input tensor B must have at least 2 dimensions."),
    ("torch.linalg.solve_triangular(torch.eye(2), torch.ones(2, 1), upper=False, left=False)", NotAllowedError,
     "left=False"),
    ("torch.binomial(torch.tensor([3.0]), torch.tensor([0.5, 0.5]))", ValueDomainError, "differ"),
    ("torch.distributions.Geometric(torch.tensor([0.0, 0.5]))", ValueDomainError, "to be positive"),
    ("torch.distributions.StudentT(torch.tensor([-1.0]))", ValueDomainError,
     "Expected parameter df (Tensor of shape (1,))"),
    ("torch.distributions.Chi2(torch.tensor([-1.0]))", ValueDomainError, "Expected parameter df"),
    ("torch.distributions.register_kl(torch.distributions.Normal, 3)", ArgumentError,
     "Expected type_q to be a Distribution subclass but got 3"),
    ("torch.distributions.Normal([0., 1.], 1.)", ValueDomainError, "instances of Number, torch.Tensor"),
    ("torch.distributions.Normal(0., 1.).sample(3)", ArgumentError, "'int' object is not iterable"),
    ("torch.distributions.Normal(0., 1.).log_prob(0.5)", ValueDomainError, "must be a Tensor"),
    ("torch.distributions.Categorical(torch.tensor([0.5, 0.5])).log_prob(torch.tensor(1.5))", ValueDomainError,
     "IntegerInterval(lower_bound=0, upper_bound=1)"),
    ("torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2), scale_tril=torch.eye(2))",
     ValueDomainError, "Exactly one of"),
])
def test_misuse_is_refused_with_the_reason(source: str, kind: type, words: str) -> None:
    error = fails("import torch\n" + source + "\n", kind)
    assert words in str(error) + (error.hint or "")


def test_a_gamma_rsample_under_no_grad_is_the_same_draw_as_sample() -> None:
    ran = run("import torch\na = torch.tensor(2.0, requires_grad=True)\ntorch.manual_seed(0)\n"
              "with torch.no_grad():\n    x = torch.distributions.Gamma(a, 1.0).rsample()\n"
              "torch.manual_seed(0)\ny = torch.distributions.Gamma(a, 1.0).sample()\n")
    assert ran["x"]._data == ran["y"]._data and ran["x"]._data > 0 and ran["x"].grad_fn is None
    assert ran["x"].shape == ()


def test_a_scalar_rate_draws_a_scalar_count() -> None:
    ran = run("import torch\nn = torch.distributions.Poisson(torch.tensor(3.0)).sample()\n"
              "m = torch.poisson(torch.tensor(3.0))\n")
    assert ran["n"].shape == () and ran["m"].shape == ()


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 0.0), (np.float64, 1e-15)])
def test_the_implicit_gamma_gradient_is_atens_in_every_branch(dtype: type, rtol: float) -> None:
    """Small x (Taylor), large alpha near and far from the mean (Rice), the rational fit between."""
    torch = pytest.importorskip("torch")
    from gradcli.engine import implicit
    a, x = np.meshgrid([0.05, 0.3, 0.9, 1.0, 2.5, 7.9, 8.5, 12.0, 40.0, 200.0],
                       [1e-4, 0.05, 0.5, 0.79, 0.81, 1.5, 3.0, 7.0, 10.0, 11.0, 12.5, 14.0, 36.5, 40.0, 45.0, 230.0])
    a, x = a.astype(dtype), x.astype(dtype)
    theirs = torch._standard_gamma_grad(torch.from_numpy(a), torch.from_numpy(x)).numpy()
    assert np.allclose(implicit.standard_gamma_grad(a, x), theirs, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-15)])
def test_the_implicit_dirichlet_gradient_is_atens_in_every_branch(dtype: type, rtol: float) -> None:
    """x near 0 and near 1 (series), both concentrations above 6 (Rice), the rational correction elsewhere;
    float32 steps in float32 as ATen's scalar_t does (a few ulps from C's own logf and powf)."""
    torch = pytest.importorskip("torch")
    from gradcli.engine import implicit
    x, alpha, total = (v.ravel() for v in np.meshgrid([1e-4, 0.01, 0.1, 0.3, 0.5, 0.6, 0.9, 0.99, 0.9999],
                                                      [0.2, 1.0, 3.0, 7.0, 20.0], [0.5, 2.0, 6.0, 15.0, 50.0]))
    keep = alpha < total
    x, alpha, total = (v[keep].astype(dtype) for v in (x, alpha, total))
    theirs = torch._dirichlet_grad(*(torch.from_numpy(v) for v in (x, alpha, total))).numpy()
    assert np.allclose(implicit.dirichlet_grad(x, alpha, total), theirs, rtol=rtol, atol=0)


def test_gamma_rsample_gradient_by_hand_in_the_taylor_branch() -> None:
    """For x < 0.8 ATen's dx/dα is -(∂P/∂α)/p(x) from the series of the lower incomplete gamma; at α = 1 the
    draw is exponential, P = 1 - e^-x, and ∂P/∂α = (log x - ψ(1))·P - x·Σ(-x)^k/(k!(k+1)²)."""
    ran = run("import torch\na = torch.tensor(1.0, requires_grad=True)\ntorch.manual_seed(5)\n"
              "x = torch.distributions.Gamma(a, 1.0).rsample()\nx.backward()\n", dtype="float64")
    x = float(ran["x"]._data)
    assert x < 0.8
    cdf = sum((-x) ** k / (math.factorial(k) * (k + 1)) for k in range(6)) * x
    series2 = sum((-x) ** k / (math.factorial(k) * (k + 1) ** 2) for k in range(6)) * x
    expected = -((math.log(x) + 0.5772156649015329) * cdf - series2) / math.exp(-x)
    assert float(ran["a"].grad._data) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("mode", ["", "numeric"])
def test_check_says_the_implicit_gradient_is_not_checked_and_proves_the_rest(cli, mode: str) -> None:
    result = cli("eval", "out = torch.distributions.Gamma(a, r).rsample((2,)).sum()", "a=[0.5, 3.0]",
                 "r=[1.0, 2.0]", "--check", *([mode] if mode else []), "--json")
    assert result.exit_code == 0, result.stdout
    import json
    check = json.loads(result.stdout)["check"]
    assert check["inputs"]["a"]["status"] == "undefined" and check["inputs"]["r"]["status"] == "pass"
    assert "StandardGammaBackward0 is PyTorch's implicit reparameterisation gradient, an approximation with no " \
           "closed form: not checked" in result.stdout


def test_uniform_outside_its_support_without_validation_is_minus_infinity() -> None:
    ran = run("import torch\nlp = torch.distributions.Uniform(0.0, 1.0, validate_args=False)"
              ".log_prob(torch.tensor([2.0, 0.5]))\n")
    assert ran["lp"]._data.tolist() == [-math.inf, 0.0]


def test_classes_print_and_test_as_pytorchs() -> None:
    ran = run("import torch\nfrom torch.distributions.normal import Normal\nn = Normal(0., 1.)\n"
              "print(type(n), isinstance(n, Normal), isinstance(n, torch.distributions.Laplace))\n"
              "print(torch.distributions.constraints.positive, torch.distributions.constraints.simplex)\n")
    assert ran.printed == ["<class 'torch.distributions.normal.Normal'> True False",
                           "GreaterThan(lower_bound=0.0) Simplex()"]


def test_check_proves_log_prob_and_rsample_gradients(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "dist.py", (
        "import torch\nfrom torch.distributions import Normal, Gamma, Dirichlet, MultivariateNormal\n"
        "torch.manual_seed(0)\nmu = torch.tensor([0.3, -0.2], requires_grad=True)\n"
        "a = torch.tensor([0.7, 2.5], requires_grad=True)\n"
        "cov = torch.tensor([[1.5, 0.2], [0.2, 0.8]], requires_grad=True)\n"
        "x = Normal(mu, a).rsample((3,))\n"
        "loss = x.pow(2).sum() + Gamma(a, 2.0).log_prob(torch.tensor([0.4, 1.1])).sum() \\\n"
        "    + Dirichlet(a.exp()).log_prob(torch.tensor([0.3, 0.7])) + MultivariateNormal(mu, cov).entropy() \\\n"
        "    + MultivariateNormal(mu, cov).log_prob(torch.tensor([0.1, 0.4]))\n"
        "loss.backward()\n"))
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}
    inputs = record["events"][0]["check"]["inputs"]
    assert {name: (entry["method"], entry["checked"]) for name, entry in inputs.items()} == \
        {"mu": ("symbolic", 2), "a": ("symbolic", 2), "cov": ("symbolic", 4)}


_AMBIGUOUS = ("import torch\nfrom torch.distributions import Chi2, Gamma, kl_divergence, register_kl\n"
              "@register_kl(Gamma, Chi2)\ndef kl_a(p, q):\n    return torch.tensor(1.0)\n"
              "@register_kl(Chi2, Gamma)\ndef kl_b(p, q):\n    return torch.tensor(2.0)\n"
              "print(kl_divergence(Chi2(3.0), Chi2(4.0)))\n")


def test_register_kl_finds_pytorchs_pair_and_warns_as_pytorch_when_the_orders_disagree() -> None:
    # (Gamma, Chi2) is first in the right-to-left order, (Chi2, Gamma) in the left-to-right one, which wins
    assert torch_printed(_AMBIGUOUS) == ["tensor(2.)"]
    assert run(_AMBIGUOUS).printed == ["RuntimeWarning: Ambiguous kl_divergence(Chi2, Chi2). "
                                       "Please register_kl(Chi2, Chi2)", "tensor(2.)"]


def test_a_programs_register_kl_and_validation_default_last_for_its_run_only() -> None:
    run("import torch\nfrom torch.distributions import Laplace, Poisson, register_kl\n"
        "@register_kl(Laplace, Poisson)\ndef mine(p, q):\n    return torch.tensor(0.0)\n"
        "torch.distributions.Distribution.set_default_validate_args(False)\n")
    fails("import torch\nfrom torch.distributions import Laplace, Poisson, kl_divergence\n"
          "kl_divergence(Laplace(0., 1.), Poisson(1.))\n", ValueDomainError)
    fails("import torch\ntorch.distributions.Normal(0., -1.)\n", ValueDomainError)


def test_an_unregistered_pair_is_pytorchs_not_implemented_error_a_program_can_catch(cli, tmp_path: Path) -> None:
    ran = run("import torch\nfrom torch.distributions import Normal, Poisson, kl_divergence\n"
              "try:\n    kl_divergence(Normal(0., 1.), Poisson(1.))\nexcept NotImplementedError as e:\n"
              "    print(type(e).__name__)\n")
    assert ran.printed == ["NotImplementedError"]
    path = tmp_path / "kl.py"
    path.write_text("import torch\nfrom torch.distributions import Normal, StudentT, kl_divergence\n"
                    "kl_divergence(Normal(0., 1.), StudentT(2.))\n")
    result = cli("run", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.stdout + result.stderr
    assert "No KL(p || q) is implemented for p type Normal and q type StudentT" in result.stdout + result.stderr


def test_forward_mode_through_a_gamma_draw_is_the_implicit_gradient() -> None:
    ran = run("import torch\nimport torch.autograd.forward_ad as fwAD\n"
              "a = torch.tensor([0.5, 3.0], requires_grad=True)\n"
              "torch.manual_seed(0)\nx = torch.distributions.Gamma(a, 1.0).rsample()\nx.sum().backward()\n"
              "torch.manual_seed(0)\nwith fwAD.dual_level():\n"
              "    d = torch.distributions.Gamma(fwAD.make_dual(a.detach(), torch.ones(2)), 1.0).rsample()\n"
              "    t = fwAD.unpack_dual(d).tangent\n", dtype="float64")
    assert np.array_equal(ran["t"]._data, ran["a"].grad._data)


def test_multivariate_normal_solves_with_its_triangular_factor_as_pytorch() -> None:
    ran = run("import torch\nfrom torch.distributions import MultivariateNormal\n"
              "cov = torch.tensor([[2.0, 0.3], [0.3, 1.0]], requires_grad=True)\n"
              "lp = MultivariateNormal(torch.zeros(2), cov).log_prob(torch.tensor([1.0, -1.0]))\n"
              "names = []\nstack = [lp.grad_fn]\nwhile stack:\n    f = stack.pop()\n"
              "    if f is not None:\n        names.append(f.name())\n"
              "        stack.extend(g for g, _ in f.next_functions)\n"
              "print('LinalgSolveTriangularBackward0' in names, 'LinalgInvExBackward0' in names)\n")
    assert ran.printed == ["True False"]
    # log N(x; 0, Σ) = -(log 2π + log det Σ + xᵀΣ⁻¹x)/2, with det Σ = 1.91 and xᵀΣ⁻¹x = (1 + 0.6 + 2)/1.91
    assert float(ran["lp"]._data) == pytest.approx(-0.5 * (2 * math.log(2 * math.pi) + math.log(1.91) + 3.6 / 1.91),
                                                   rel=1e-6)


def test_check_proves_the_new_families_and_cross_family_kl(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "families.py", (
        "import torch\nfrom torch.distributions import (Gamma, Gumbel, Laplace, LogNormal, LowRankMultivariateNormal, "
        "Normal, RelaxedBernoulli, StudentT, TransformedDistribution, Uniform, kl_divergence)\n"
        "from torch.distributions.transforms import TanhTransform\n"
        "torch.manual_seed(0)\nmu = torch.tensor([0.3, -0.2], requires_grad=True)\n"
        "s = torch.tensor([0.7, 1.5], requires_grad=True)\n"
        "w = torch.tensor([[0.5], [-0.4]], requires_grad=True)\n"
        "squashed = TransformedDistribution(Normal(mu, s), TanhTransform(cache_size=1))\n"
        "a = squashed.rsample()\n"
        "loss = squashed.log_prob(a).sum() + StudentT(4.0, mu, s).log_prob(torch.tensor([0.1, 0.9])).sum() \\\n"
        "    + LogNormal(mu, s).log_prob(torch.tensor([0.5, 2.0])).sum() + Gumbel(mu, s).entropy().sum() \\\n"
        "    + kl_divergence(Normal(mu, s), Laplace(0.0, 1.0)).sum() \\\n"
        "    + kl_divergence(Uniform(0.0, s), Gamma(2.0, 1.0)).sum() \\\n"
        "    + LowRankMultivariateNormal(mu, w, s).log_prob(torch.tensor([0.2, 0.2])) \\\n"
        "    + RelaxedBernoulli(0.5, logits=mu).rsample().sum()\n"
        "loss.backward()\n"))
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}
    inputs = record["events"][0]["check"]["inputs"]
    assert {name: (entry["method"], entry["status"]) for name, entry in inputs.items()} == \
        {"mu": ("symbolic", "pass"), "s": ("symbolic", "pass"), "w": ("symbolic", "pass")}


def test_check_proves_the_heavy_tailed_unit_interval_mixture_and_stick_breaking_gradients(cli, tmp_path: Path) -> None:
    record = cli.checked_file(tmp_path / "more.py", (
        "import torch\nfrom torch.distributions import (Categorical, Cauchy, ContinuousBernoulli, HalfCauchy, "
        "Kumaraswamy, MixtureSameFamily, Normal, Pareto, Weibull, biject_to, constraints)\n"
        "torch.manual_seed(0)\nmu = torch.tensor([0.3, -0.2], requires_grad=True)\n"
        "s = torch.tensor([0.7, 1.5], requires_grad=True)\n"
        "p = torch.tensor([0.2, 0.8], requires_grad=True)\n"
        "raw = torch.tensor([0.4, -0.3], requires_grad=True)\n"
        "gmm = MixtureSameFamily(Categorical(logits=mu), Normal(mu, s))\n"
        "loss = Cauchy(mu, s).log_prob(torch.tensor([0.1, 0.9])).sum() + Cauchy(mu, s).rsample().sum() \\\n"
        "    + HalfCauchy(s).log_prob(torch.tensor([0.5, 2.0])).sum() \\\n"
        "    + Pareto(s, s + 1).log_prob(torch.tensor([2.0, 3.0])).sum() + Weibull(s, s).rsample().sum() \\\n"
        "    + ContinuousBernoulli(probs=p).log_prob(torch.tensor([0.3, 0.6])).sum() \\\n"
        "    + ContinuousBernoulli(probs=p).rsample().sum() + Kumaraswamy(s, s + 1).rsample().sum() \\\n"
        "    + gmm.log_prob(torch.tensor([0.5, -1.0])).sum() + gmm.variance \\\n"
        "    + biject_to(constraints.simplex)(raw).pow(2).sum()\n"
        "loss.backward()\n"))
    assert record["checks"] == {"passed": 1, "failed": 0, "undefined": 0}
    inputs = record["events"][0]["check"]["inputs"]
    assert {name: (entry["method"], entry["status"]) for name, entry in inputs.items()} == \
        {"mu": ("symbolic", "pass"), "s": ("symbolic", "pass"), "p": ("symbolic", "pass"),
         "raw": ("symbolic", "pass")}


def test_cauchy_log_prob_gradient_by_hand() -> None:
    """d/dloc of -log π - log s - log1p(z²), z = (v - loc)/s, is 2z/(s(1 + z²)); d/ds is -1/s + 2z²/(s(1 + z²))."""
    ran = run("import torch\nloc = torch.tensor(0.5, requires_grad=True)\nscale = torch.tensor(2.0, requires_grad=True)\n"
              "torch.distributions.Cauchy(loc, scale).log_prob(torch.tensor(1.5)).backward()\n")
    z = 0.5
    assert ran["loc"].grad.item() == pytest.approx(2 * z / (2.0 * (1 + z * z)))
    assert ran["scale"].grad.item() == pytest.approx(-1 / 2.0 + 2 * z * z / (2.0 * (1 + z * z)))


@pytest.mark.parametrize(("source", "words"), [
    ("torch.distributions.MixtureSameFamily(torch.distributions.Normal(0., 1.), torch.distributions.Normal(0., 1.))",
     "needs to be an  instance of torch.distributions.Categorical"),
    ("torch.distributions.ComposeTransform(3)", "ComposeTransform takes a list of transforms"),
    ("torch.empty(2).cauchy_(0.0, -1.0)", "cauchy_ expects sigma > 0.0, but found sigma=-1"),
])
def test_new_misuse_is_refused_with_pytorchs_words(source: str, words: str) -> None:
    error = fails("import torch\n" + source.replace("torch.distributions.ComposeTransform",
                                                    "torch.distributions.transforms.ComposeTransform") + "\n")
    assert words in str(error)


def test_biject_to_refuses_a_constraint_it_has_no_transform_for_as_pytorch() -> None:
    ran = run("import torch\nfrom torch.distributions import biject_to, constraints\n"
              "try:\n    biject_to(constraints.boolean)\nexcept NotImplementedError as e:\n    print(e)\n")
    assert ran.printed == ["Cannot transform _Boolean constraints"]
