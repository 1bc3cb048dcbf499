"""`torch.distributions`: probability distributions with PyTorch's formulas, draws, validation and printed text.

One module per kind of family (location-scale, discrete, gamma-type, multivariate, transformed), the
base they share, the transforms, the constraints they validate against, PyTorch's samplers for the
gamma, Poisson and binomial draws,
and the KL pairs. The engine never imports this package; `lang/builtins.py` makes its names reachable.
"""
from __future__ import annotations

from typing import Any

import gradcli.distributions.constraints as constraints
from gradcli.distributions.continuous import CLASSES as _CONTINUOUS
from gradcli.distributions.discrete import CLASSES as _DISCRETE, binomial
from gradcli.distributions.distribution import Distribution, set_default_validate_args
from gradcli.distributions.gamma import CLASSES as _GAMMA, poisson
import gradcli.distributions.distribution as _distribution
import gradcli.distributions.kl as kl
from gradcli.distributions.kl import kl_divergence, register_kl
from gradcli.distributions.multivariate import CLASSES as _MULTIVARIATE
from gradcli.distributions.transformed import CLASSES as _TRANSFORMED
from gradcli.distributions.transforms import TRANSFORMS

CLASSES: dict[str, type] = {**_CONTINUOUS, **_DISCRETE, **_GAMMA, **_MULTIVARIATE, **_TRANSFORMED}
"""The distributions a program constructs, by PyTorch's name."""

FUNCTIONS: dict[str, Any] = {"kl_divergence": kl_divergence, "register_kl": register_kl}


def reset() -> None:
    """A program starts with PyTorch's defaults: validation on, PyTorch's KL pairs only."""
    _distribution.Validation.default = True
    kl.reset()

__all__ = ["CLASSES", "FUNCTIONS", "TRANSFORMS", "Distribution", "binomial", "constraints", "kl", "kl_divergence",
           "poisson",
           "register_kl", "reset",
           "set_default_validate_args"]
