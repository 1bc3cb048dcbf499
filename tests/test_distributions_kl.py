"""kl_divergence against PyTorch's own registry: every pair torch registers among the families gradcli has.

fixtures/distributions/kl_registry.py computes KL(p ‖ q) for every ordered pair of the registered families, with
the gradient of every parameter (its recordings are checked with the other fixtures, in float32 and float64); this
test reads torch.distributions.kl._KL_REGISTRY so the fixture cannot fall behind PyTorch's list.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gradcli.distributions as DIST

FIXTURE = Path(__file__).parent / "fixtures" / "distributions" / "kl_registry.py"


def _fixture_families() -> list[str]:
    for node in ast.parse(FIXTURE.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "FAMILIES":
            return ast.literal_eval(node.value)
    raise AssertionError("the fixture lists its FAMILIES")


def _registered_pairs() -> set[tuple[str, str]]:
    torch = pytest.importorskip("torch")
    return {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY}


def test_every_pair_torch_registers_among_gradclis_families_is_registered_in_gradcli() -> None:
    ours = {name: cls for name, cls in DIST.CLASSES.items()}
    theirs = {pair for pair in _registered_pairs() if pair[0] in ours and pair[1] in ours}
    mine = {(p.__name__, q.__name__) for p, q in DIST.kl._BUILT_IN}
    assert theirs - mine == set()
    assert mine - _registered_pairs() == set()  # and none torch does not have
    assert len(theirs) >= 86


def test_the_fixture_computes_every_registered_pair_with_a_value() -> None:
    families = set(_fixture_families())
    registered = {pair for pair in _registered_pairs() if pair[0] in DIST.CLASSES and pair[1] in DIST.CLASSES}
    assert {name for pair in registered for name in pair} <= families
    recorded = (FIXTURE.parent / "kl_registry.float64.torch.txt").read_text().splitlines()
    valued = {tuple(line.split()[:2]) for line in recorded if line[0].isalpha() and " tensor(" in line}
    assert registered <= valued
    assert sum("NotImplementedError" in line for line in recorded) == len(families) ** 2 - len(valued)
