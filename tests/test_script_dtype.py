"""Scripts run in PyTorch's default dtype (float32) and print what PyTorch prints; `eval` keeps float64.

The expected numbers and texts are PyTorch's (torch 2.13, printed by the same statements).
"""
from __future__ import annotations

import json

import numpy as np

from gradcli.program.scripts import run_file

SEEDED = """\
import torch
torch.manual_seed(0)
x = torch.randn(3)
print(x)
torch.set_default_dtype(torch.float64)
y = torch.randn(2)
print(y, torch.FloatTensor([1.5]))
assert allclose(x, [0.0, 0.0, 0.0])
"""


def _script(tmp_path, text: str):
    path = tmp_path / "seeded.grad"
    path.write_text(text)
    return path


def test_a_script_draws_and_prints_in_float32_as_pytorch(cli, tmp_path):
    result = cli("run", str(_script(tmp_path, SEEDED)))
    assert result.exit_code == 1  # the last assert fails on purpose, to show the values as PyTorch prints them
    assert "tensor([ 1.5410, -0.2934, -2.1788])\n" in result.stdout  # PyTorch's print of randn(3) after seed 0
    assert "tensor([ 0.5684, -1.0845]) tensor([1.5000], dtype=torch.float32)\n" in result.stdout
    assert "gradcli run · dtype float32" in result.stdout
    # After set_default_dtype(float64) PyTorch names float32 in the repr, exactly so.
    assert "x = tensor([ 1.5410, -0.2934, -2.1788], dtype=torch.float32)" in result.stderr


def test_set_default_dtype_switches_later_tensors_only(tmp_path):
    x_event, y_event = run_file(_script(tmp_path, SEEDED)).events
    x, = (v for _, v in x_event.items)
    y, floats = (v for _, v in y_event.items)
    assert x.dtype == np.float32 and floats.dtype == np.float32  # FloatTensor stays float32
    assert y.dtype == np.float64
    assert x.tolist() == [np.float32(v) for v in (1.5409960746765137, -0.293428897857666, -2.1787893772125244)]
    assert y.tolist() == [0.5684312772806678, -1.084522342424021]


def test_dtype_float64_option_and_json_summary(cli, tmp_path):
    result = cli("run", "--dtype", "float64", "--json", str(_script(tmp_path, SEEDED)))
    file, summary = (json.loads(line) for line in result.stdout.splitlines())
    first = file["events"][0]["items"][0]
    assert first["dtype"] == "float64"
    assert first["value"] == [1.5409961082440433, -0.2934289057609464, -2.1787893820745574]  # torch, float64
    assert summary["summary"]["dtype"] == "float64"
    assert file["error"]["values"]["x"] == "tensor([ 1.5410, -0.2934, -2.1788])"  # the default dtype: no suffix


def test_eval_keeps_float64_and_says_so(cli):
    result = cli("eval", "out = x.sum()", "x=randn(3)")
    assert result.exit_code == 0
    assert "· float64" in result.stdout and result.stdout.rstrip().endswith("seed 0 · dtype float64")


def test_set_default_dtype_refuses_integers(cli, tmp_path):
    result = cli("run", str(_script(tmp_path, "import torch\ntorch.set_default_dtype(torch.int64)\n")))
    assert result.exit_code == 2
    assert "only floating-point types are supported as the default type" in result.stderr


def test_a_gradient_keeps_its_inputs_float32_through_kinked_ops():
    """A VJP that builds its mask in float64 (max, clamp, leaky_relu, where) is cast back to the input's dtype,
    as PyTorch's engine casts each gradient: `autograd.grad` of a float32 program prints no float64."""
    from language_helpers import run
    printed = run("import torch\nx = torch.tensor([0.5, 2.0], requires_grad=True)\n"
                  "g, = torch.autograd.grad(x.max(), x)\n"
                  "h, = torch.autograd.grad(torch.nn.functional.leaky_relu(x - 1).sum(), x)\n"
                  "w, = torch.autograd.grad(torch.where(x > 1, x, x * 2).sum(), x)\n"
                  "y = torch.tensor([0.5, 2.0], requires_grad=True)\n"
                  "y.clamp(max=1.0).pow(2).sum().backward(create_graph=True)\n"
                  "print(g, h, w)\nprint(y.grad.dtype)\n").printed
    assert printed == ["tensor([0., 1.]) tensor([0.0100, 1.0000]) tensor([2., 1.])", "torch.float32"]
