"""The comparison live-PyTorch tests use: a float may differ from PyTorch's by one unit of its last
printed digit (CPUs round float32 differently), nothing else may."""
from __future__ import annotations

import pytest

from tests.printed_numbers import differences


@pytest.mark.parametrize("got, want", [
    ("Accuracy: 20.3%, Avg loss: 1.376067 \n", "Accuracy: 20.3%, Avg loss: 1.376068 \n"),
    ("tensor([ 0.5000, -1.2499])", "tensor([ 0.5000, -1.2500])"),
    ("loss 2.5e-03", "loss 2.6e-03"),
    ("-0.0000", "0.0000"),
])
def test_one_unit_of_the_last_digit_is_the_same_text(got, want):
    assert differences(got, want) == []


@pytest.mark.parametrize("got, want, why", [
    ("Avg loss: 1.376066", "Avg loss: 1.376068", "1.376066 where PyTorch printed 1.376068"),
    ("loss 1.38", "loss 1.376", "1.38 where PyTorch printed 1.376"),
    ("loss 1.0e-03", "loss 0.0010", "1.0e-03 where PyTorch printed 0.0010"),
    ("epoch 2: 0.5", "epoch 3: 0.5", "the text around the numbers differs"),
    ("loss: 0.5", "loss= 0.5", "the text around the numbers differs"),
    ("0.5 0.5", "0.5", "the text around the numbers differs"),
])
def test_anything_else_differs(got, want, why):
    found = differences(got, want)
    assert len(found) == 1 and found[0].startswith(why)
