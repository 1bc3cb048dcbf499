"""`torch.autograd.set_detect_anomaly` / `detect_anomaly`: backward stops at the first node that passes
an input a nan, with PyTorch's error; off (the default, and again for each program) nothing changes."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gradcli.errors import ArgumentError, BackwardError
from language_helpers import fails, run

SOURCE = """import torch
torch.autograd.set_detect_anomaly(True)
print(torch.is_anomaly_enabled())
x = torch.tensor([0.0, 1.0], requires_grad=True)
try:
    (torch.sqrt(x) * 0).sum().backward()
except RuntimeError as e:
    print("stopped:", e)
torch.autograd.set_detect_anomaly(False)
(torch.sqrt(x) * 0).sum().backward()
print(x.grad)
with torch.autograd.detect_anomaly():
    print(torch.is_anomaly_enabled())
    w = torch.tensor([-1.0], requires_grad=True)
    torch.log(w).sum().backward()
    print(w.grad)
print(torch.is_anomaly_enabled())
"""
TEXT = ["True", "stopped: Function 'SqrtBackward0' returned nan values in its 0th output.", "tensor([nan, 0.])",
        "True", "tensor([-1.])", "False"]


def test_a_nan_gradient_stops_backward_at_its_node() -> None:
    assert run(SOURCE).printed == TEXT


def test_uncaught_it_names_the_node_and_teaches() -> None:
    err = fails("import torch\ntorch.autograd.set_detect_anomaly(True)\nx = torch.tensor([0.0], requires_grad=True)\n"
                "y = (x / x).sum()\ny.backward()\n", BackwardError)
    assert err.message == "Function 'DivBackward0' returned nan values in its 0th output." and err.hint
    assert err.line == 5


def test_each_program_starts_without_it() -> None:
    run("import torch\ntorch.autograd.set_detect_anomaly(True)\n")
    ran = run("import torch\nx = torch.tensor([0.0], requires_grad=True)\ntorch.sqrt(x).sum().backward()\n"
              "on = torch.is_anomaly_enabled()\n")
    assert ran["on"] is False and np.isinf(ran["x"].grad._data).all()


def test_check_nan_false_lets_the_nan_through() -> None:
    ran = run("import torch\ntorch.autograd.set_detect_anomaly(True, check_nan=False)\n"
              "x = torch.tensor([0.0], requires_grad=True)\n(x / x).sum().backward()\n")
    assert np.isnan(ran["x"].grad._data).all()


def test_a_mode_must_be_a_boolean() -> None:
    assert fails("import torch\ntorch.autograd.set_detect_anomaly('yes')\n", ArgumentError).hint


def test_the_texts_are_pytorchs() -> None:
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", SOURCE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == TEXT
