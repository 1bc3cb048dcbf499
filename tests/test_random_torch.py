"""gradcli's random draws against live torch, beyond the recorded fixture: other seeds, sizes and shapes.

Skipped without torch. Run with `PYTHONPATH=. /work/torchvenv/bin/python -m pytest tests/test_random_torch.py`.
Both sides take the fixture recorder's steps: through torch, and through gradcli's `torch` namespace.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcli.engine.creation as C  # noqa: E402  (after the skip)
from gradcli.program.evaluation import Settings, engine_settings  # noqa: E402
from test_random import recorder, run, summary  # noqa: E402

SEEDS = [3, 11, 12345, 2 ** 31 - 1, 987654321]
SIZES = [[2], [31], [32], [33], [64], [255], [257], [7, 9], [16, 3], [2, 3, 5]]


def _steps(dtype: str) -> list[list]:
    return ([["randn", size, dtype] for size in SIZES] + [["rand", size, dtype] for size in SIZES]
            + [["normal_", size, dtype, -1.5, 0.25] for size in SIZES[::2]]
            + [["uniform_", size, dtype, 2.0, 2.5] for size in SIZES[1::2]]
            + [["bernoulli_", size, dtype, 0.9] for size in SIZES[::3]]
            + [["exponential_", size, dtype, 0.4] for size in SIZES[::2]]
            + [["random_", size, dtype, -20, 2 ** 20] for size in SIZES[1::3]] + [["random_", SIZES[-1], dtype]]
            + [["linear", [33, 17], dtype], ["xavier_normal_", [17, 33], dtype, 0.5]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", SEEDS)
def test_draws_match_live_torch(seed, dtype):
    steps = _steps(dtype) + [["randint", 3, 1000, [7, 11]], ["randperm", 257]]
    torch.manual_seed(seed)
    expected = [summary(recorder.run(step, torch)) for step in steps]
    with engine_settings(Settings()):
        C.manual_seed(seed)
        got = [summary(run(step)) for step in steps]
    for step, mine, theirs in zip(steps, got, expected):
        assert mine == theirs, f"step {step}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_is_a_bernoulli_mask_scaled_by_the_kept_fraction(dtype):
    """How torch.nn.functional.dropout draws on CPU: empty_like(x).bernoulli_(1 - p), divided by 1 - p, times x."""
    for seed in SEEDS:
        torch.manual_seed(seed)
        x = torch.randn(40, dtype=getattr(torch, dtype))
        expected = torch.nn.functional.dropout(x, 0.3).numpy()
        with engine_settings(Settings()):
            C.manual_seed(seed)
            gx = C.randn(40, dtype=dtype)
            mask = C.zeros(40, dtype=dtype).bernoulli_(1 - 0.3)
            assert ((gx * (mask / (1 - 0.3)))._data == expected).all()


@pytest.mark.parametrize("shape", [[5, 3], [64, 100], [1, 1]])
def test_the_linear_recipe_is_nn_linears_initialisation(shape):
    """The fixture's `linear` step draws as torch.nn.Linear's reset_parameters does."""
    out_features, in_features = shape
    torch.manual_seed(4)
    layer = torch.nn.Linear(in_features, out_features)
    torch.manual_seed(4)
    recipe = recorder.linear_parameters(torch, shape, "float32")
    assert torch.equal(torch.cat([layer.weight.detach().reshape(-1), layer.bias.detach()]), recipe)
