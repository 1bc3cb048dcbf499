"""`torch.distributions`: probability distributions with PyTorch's formulas, draws, validation and printed text.

One module per kind of family (location-scale, discrete, gamma-type, multivariate, transformed, heavy-tailed,
on the unit interval, mixtures, on the circle), the base they share, the transforms, the constraints they validate against and
the registries from a constraint to its transform, PyTorch's samplers for the
gamma, Poisson and binomial draws,
and the KL pairs. The engine never imports this package; `lang/builtins.py` makes its names reachable.
"""
from __future__ import annotations

from typing import Any

import gradcli.distributions.constraints as constraints
from gradcli.distributions.circular import CLASSES as _CIRCULAR
from gradcli.distributions.continuous import CLASSES as _CONTINUOUS
from gradcli.distributions.discrete import CLASSES as _DISCRETE, binomial
from gradcli.distributions.distribution import Distribution, ExponentialFamily, set_default_validate_args
from gradcli.distributions.gamma import CLASSES as _GAMMA, poisson
from gradcli.distributions.heavy_tailed import CLASSES as _HEAVY_TAILED
from gradcli.distributions.mixture import CLASSES as _MIXTURE
from gradcli.distributions.constraint_registry import biject_to, transform_to
import gradcli.distributions.distribution as _distribution
import gradcli.distributions.kl as kl
from gradcli.distributions.kl import kl_divergence, register_kl
from gradcli.distributions.multivariate import CLASSES as _MULTIVARIATE
from gradcli.distributions.transformed import CLASSES as _TRANSFORMED
from gradcli.distributions.transforms import TRANSFORMS
from gradcli.distributions.unit_interval import CLASSES as _UNIT_INTERVAL

CLASSES: dict[str, type] = {**_CONTINUOUS, **_DISCRETE, **_GAMMA, **_MULTIVARIATE, **_TRANSFORMED, **_HEAVY_TAILED,
                             **_UNIT_INTERVAL, **_MIXTURE, **_CIRCULAR}
"""The distributions a program constructs, by PyTorch's name."""

FUNCTIONS: dict[str, Any] = {"kl_divergence": kl_divergence, "register_kl": register_kl, "biject_to": biject_to,
                             "transform_to": transform_to}


def reset() -> None:
    """A program starts with PyTorch's defaults: validation on, PyTorch's KL pairs and constraint registries only."""
    _distribution.Validation.default = True
    kl.reset()
    biject_to.reset()
    transform_to.reset()

__all__ = ["CLASSES", "FUNCTIONS", "TRANSFORMS", "Distribution", "ExponentialFamily", "binomial", "constraints", "kl", "kl_divergence",
           "poisson",
           "register_kl", "reset",
           "set_default_validate_args"]
