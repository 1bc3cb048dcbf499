"""PyTorch's random numbers, bit for bit: gradcli replays draws recorded from torch (no torch needed here).

tests/fixtures/record_torch_random.py wrote tests/fixtures/torch_random.json with torch; its `run`
takes the same steps here through gradcli's `torch` namespace (the names a program reaches), and
every step is compared by a hash of all its bytes.
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradcli.engine.creation as C
import gradcli.nn.init as I
from gradcli.errors import GradcliError
from gradcli.lang.builtins import TORCH, Namespace
from gradcli.program.evaluation import Settings, engine_settings

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE = json.loads((FIXTURES / "torch_random.json").read_text())
CASES = FIXTURE["cases"]
_spec = importlib.util.spec_from_file_location("record_torch_random", FIXTURES / "record_torch_random.py")
recorder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(recorder)


class Names:
    """A namespace of the language as Python attributes (`torch.nn.init.uniform_`), for the recorder's steps."""

    def __init__(self, namespace: Namespace) -> None:
        self._namespace = namespace

    def __getattr__(self, name: str) -> Any:
        value = self._namespace.lookup(name)
        if value is None:
            raise AttributeError(f"gradcli's {self._namespace.name} has no {name}")
        return Names(value) if isinstance(value, Namespace) else value


GRADCLI_TORCH = Names(TORCH)


def run(step: list) -> Any:
    return recorder.run(step, GRADCLI_TORCH)


summary = recorder.summary


def _case_id(case: dict) -> str:
    kinds = sorted({step[0] for step in case["steps"]})
    dtypes = sorted({s for step in case["steps"] for s in step if s in ("float32", "float64")})
    return f"seed{case['seed']}-{'+'.join(kinds)[:40]}-{'+'.join(dtypes)}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_draws_match_pytorch_bit_for_bit(case):
    with engine_settings(Settings()):
        C.manual_seed(case["seed"])
        got = [summary(run(step)) for step in case["steps"]]
    for step, mine, torchs in zip(case["steps"], got, case["results"]):
        assert mine == torchs, f"step {step}"


def test_fixture_covers_sizes_both_sides_of_16_and_every_draw():
    sizes = {math.prod(step[1]) for case in CASES for step in case["steps"] if step[0] == "randn"}
    assert {1, 3, 15, 16, 17, 100, 1000} <= sizes
    kinds = {step[0] for case in CASES for step in case["steps"]}
    assert {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "normal", "uniform_", "normal_",
            "bernoulli_", "bernoulli", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
            "xavier_normal_", "linear", "random_", "exponential_"} <= kinds


def test_randn3_after_manual_seed_0_is_pytorchs():
    with engine_settings(Settings()):
        C.manual_seed(0)
        x = C.randn(3, dtype="float32")
    assert x.tolist() == [np.float32(v) for v in (1.5409960746765137, -0.293428897857666, -2.1787893772125244)]
    assert np.round(x._data.astype(np.float64), 4).tolist() == [1.5410, -0.2934, -2.1788]


def test_a_normal_pair_carries_its_second_sample_into_the_next_call():
    """Below 16 elements Box-Muller makes pairs; PyTorch keeps the odd one for the next normal draw."""
    with engine_settings(Settings()):
        C.manual_seed(3)
        four = C.randn(4)._data
        C.manual_seed(3)
        three_then_one = np.concatenate([C.randn(3)._data, C.randn(1)._data])
        C.manual_seed(3)
        C.randn(3)
        C.rand(1)
        one = C.randn(1)._data
    np.testing.assert_array_equal(four, three_then_one)
    assert one[0] == four[3]  # a uniform draw in between does not clear the cached sample


def test_manual_seed_takes_64_bit_seeds_as_pytorch_does():
    with engine_settings(Settings()):
        C.manual_seed(-1)
        negative = C.rand(3)._data
        C.manual_seed(2 ** 64 - 1)
        assert np.array_equal(C.rand(3)._data, negative)
        assert C.initial_seed() == 2 ** 64 - 1
        with pytest.raises(GradcliError, match="Overflow when unpacking long long"):
            C.manual_seed(2 ** 64)
        with pytest.raises(GradcliError, match="must be an integer"):
            C.manual_seed(1.5)


def test_randint_takes_pytorchs_positional_and_keyword_forms():
    with engine_settings(Settings()):
        draws = []
        for call in (lambda: C.randint(10, (3,)), lambda: C.randint(10, size=(3,)), lambda: C.randint(high=10, size=[3]),
                     lambda: C.randint(2, 10, (3,)), lambda: C.randint(low=2, high=10, size=(3,))):
            C.manual_seed(0)
            draws.append(call().tolist())
    assert draws == [[4, 9, 3]] * 3 + [[6, 9, 7]] * 2  # torch.manual_seed(0) and the same calls


@pytest.mark.parametrize("call, message", [
    (lambda: C.ones(3, requires_grad=True).uniform_(), "a leaf Variable that requires grad is being used in an "
                                                        "in-place operation."),
    (lambda: C.ones(3, requires_grad=True).normal_(), "a leaf Variable that requires grad"),
    (lambda: C.ones(3).uniform_(1, 0), r"uniform_ expects to return a \[from, to\) range, but found from=1 > to=0"),
    (lambda: C.ones(3).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda: C.ones(3).bernoulli_(1.5), r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"),
    (lambda: C.ones(3).random_(5, 3), "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda: C.ones(3, dtype="float32").random_(2 ** 30), r"to - 1=1073741823 must lie in \[-\(2\^24\), 2\^24\]"),
    (lambda: C.ones(3).exponential_(0), r"exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: C.ones(3, dtype="int64").exponential_(), "Exponential distribution is a continuous probability "
                                                       "distribution. dtype must be a floating point but you specified "
                                                       "Long"),
    (lambda: C.bernoulli(C.tensor([0.5, 2.0])), "Expected p_in >= 0 && p_in <= 1 to be true"),
    (lambda: C.randint(5, 3, (2,)), "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    (lambda: C.randint(3), r"randint\(\) takes \(high, size\) or \(low, high, size\)"),
    (lambda: C.rand(3, dtype="int64"), "\"check_uniform_bounds\" not implemented for 'Long'"),
    (lambda: C.randn(3, dtype="int64"), "\"normal_kernel_cpu\" not implemented for 'Long'"),
    (lambda: C.normal(0.0, 1.0), "needs a size"),
    (lambda: C.normal(C.zeros(3), -1.0), "normal expects std >= 0.0, but found std -1"),
    (lambda: I.kaiming_uniform_(C.zeros(3)), "Fan in and fan out can not be computed for tensor with fewer than 2"),
    (lambda: I.kaiming_uniform_(C.zeros(3, 2), mode="fan"), r"Mode fan not supported, please use one of \['fan_in'"),
    (lambda: I.calculate_gain("foo"), "Unsupported nonlinearity foo"),
])
def test_refusals_use_pytorchs_words(call, message):
    with engine_settings(Settings()), pytest.raises(GradcliError, match=message) as info:
        call()
    assert info.value.hint


def test_init_fills_a_leaf_that_requires_grad_and_keeps_it_a_leaf():
    with engine_settings(Settings()):
        w = C.zeros(4, 3, requires_grad=True)
        assert I.kaiming_uniform_(w, a=math.sqrt(5)) is w
    bound = math.sqrt(3.0) * (math.sqrt(2.0 / (1 + 5)) / math.sqrt(3))
    assert w.is_leaf and w.requires_grad and np.all(np.abs(w._data) <= bound) and np.any(w._data != 0)
    I.zeros_(w)
    I.ones_(w)
    assert w._data.tolist() == [[1.0] * 3] * 4 and I.constant_(w, 0.5)._data[0, 0] == 0.5


def test_calculate_gain_is_pytorchs_table():
    assert I.calculate_gain("linear") == 1 and I.calculate_gain("sigmoid") == 1
    assert I.calculate_gain("tanh") == 5.0 / 3 and I.calculate_gain("relu") == math.sqrt(2.0)
    assert I.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01 ** 2))
    assert I.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2.0 / 6) and I.calculate_gain("selu") == 0.75
    assert I._calculate_fan_in_and_fan_out(C.zeros(4, 3, 2, 5)) == (30, 40)


def test_a_program_reaches_the_generator_and_the_init_functions(cli, tmp_path):
    script = tmp_path / "init.grad"
    script.write_text("import torch\ntorch.manual_seed(0)\nw = torch.empty(2, 3)\n"
                      "torch.nn.init.kaiming_uniform_(w, a=5 ** 0.5)\nb = torch.randint(0, 10, (4,))\n"
                      "p = torch.randperm(4)\nassert w.abs().max() < 3 ** -0.5\n"
                      "x = torch.ones(3, requires_grad=True)\nx.uniform_()\n")
    result = cli("run", str(script))
    assert result.exit_code == 2
    assert "a leaf Variable that requires grad is being used in an in-place operation." in result.stderr
    assert "torch.no_grad()" in result.stderr
