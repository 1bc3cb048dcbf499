"""`torch.optim.LBFGS` with a closure, fixed steps and the strong-Wolfe line search: losses, final
parameters and PyTorch's counters (func_evals, n_iter), recorded from torch 2.13 and checked against
torch where it is installed. In float64 the arithmetic is PyTorch's to the last digits; in float32
the first steps agree to float32 precision (near convergence a last-bit difference in a dot
product may change where the tolerances stop it)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import run

FIT = """
import torch
torch.manual_seed(0)
X = torch.randn(20, 3)
y = X @ torch.tensor([1.5, -2.0, 0.5]) + 0.3 + 0.1 * torch.randn(20)
model = torch.nn.Linear(3, 1)
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=MAX_ITER, history_size=4, line_search_fn=SEARCH)
def closure():
    opt.zero_grad()
    loss = ((model(X).squeeze(1) - y) ** 2).mean() + 0.1 * (model.weight ** 4).sum()
    loss.backward()
    return loss
losses = [opt.step(closure).item() for i in range(4)]
w = model.weight.reshape(-1).tolist() + model.bias.tolist()
state = opt.state_dict()["state"][0]
counts = [state["func_evals"], state["n_iter"]]
"""

def test_lbfgs_follows_pytorch_step_for_step_in_float64():
    ran = run(FIT.replace("MAX_ITER", "2").replace("SEARCH", "None"), dtype="float64")
    # recorded from torch 2.13 (float64): losses, weight and bias, func_evals and n_iter
    assert np.allclose(ran["losses"], [5.291406042934952, 4.054688069932595, 1.4404011501589566, 1.0589306207349058],
                       rtol=1e-12)
    assert np.allclose(ran["w"], [1.0925269935839512, -1.384054695032026, 0.4007997460436463, 0.27022799113269935],
                       rtol=1e-12)
    assert ran["counts"] == [8, 4]


@pytest.mark.parametrize("search", [None, "'strong_wolfe'"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lbfgs_against_torch(search, dtype):
    torch = pytest.importorskip("torch")
    ran = run(FIT.replace("MAX_ITER", "2").replace("SEARCH", str(search)), dtype=dtype)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        torch.manual_seed(0)
        X = torch.randn(20, 3)
        y = X @ torch.tensor([1.5, -2.0, 0.5]) + 0.3 + 0.1 * torch.randn(20)
        model = torch.nn.Linear(3, 1)
        opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=2, history_size=4,
                                line_search_fn=None if search is None else "strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((model(X).squeeze(1) - y) ** 2).mean() + 0.1 * (model.weight ** 4).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure).item() for _ in range(4)]
        params = model.weight.reshape(-1).tolist() + model.bias.tolist()
    finally:
        torch.set_default_dtype(previous)
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    assert np.allclose(ran["losses"], losses, rtol=tolerance)
    assert np.allclose(ran["w"], params, rtol=tolerance, atol=tolerance)


ROSENBROCK = """
import torch
w = torch.tensor([-1.2, 1.0], requires_grad=True)
opt = torch.optim.LBFGS([w], lr=LR, line_search_fn=SEARCH)
def rosen():
    opt.zero_grad()
    loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
    loss.backward()
    return loss
losses = [opt.step(rosen).item() for i in range(3)]
found = w.tolist()
state = opt.state_dict()["state"][0]
counts = [state["func_evals"], state["n_iter"]]
"""


@pytest.mark.parametrize("lr, search, losses, found, counts", [
    # recorded from torch 2.13 (float64); Rosenbrock's minimum is at (1, 1)
    (1, "'strong_wolfe'", [24.199999999999996, 0.4234823024380289, 4.221457511263308e-10],
     [0.9999814210791366, 0.9999619651810989], [45, 36]),
    (0.1, "None", [24.199999999999996, 4.265336005782761, 4.0469829156153185],
     [-0.5499521730324247, 0.2825686431134047], [60, 60]),
])
def test_lbfgs_on_rosenbrock_as_pytorch(lr, search, losses, found, counts):
    ran = run(ROSENBROCK.replace("LR", str(lr)).replace("SEARCH", search), dtype="float64")
    assert np.allclose(ran["losses"], losses, rtol=1e-9)
    assert np.allclose(ran["found"], found, rtol=1e-12)
    assert ran["counts"] == counts


@pytest.mark.parametrize("source, words", [
    ("opt = torch.optim.LBFGS([w])\nopt.step()", "LBFGS requires a closure"),
    ("torch.optim.LBFGS([{'params': [w]}, {'params': [torch.zeros(1, requires_grad=True)]}])",
     "LBFGS doesn't support per-parameter options (parameter groups)"),
    ("torch.optim.LBFGS([w], lr=-1)", "Invalid learning rate: -1"),
    ("opt = torch.optim.LBFGS([w], line_search_fn='armijo')\ndef f():\n    loss = ((w - 1) ** 2).sum()\n"
     "    loss.backward()\n    return loss\nopt.step(f)", "only 'strong_wolfe' is supported"),
    ("opt = torch.optim.LBFGS([w])\nopt.step(lambda: ((w - 1) ** 2).sum().backward())",
     "float() argument must be a string or a real number, not 'NoneType'"),
    ("opt = torch.optim.LBFGS([w])\nopt.step(lambda: w * 1)", "only one element tensors can be converted"),
])
def test_bad_lbfgs_use_is_pytorchs_error(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nw = torch.zeros(2, requires_grad=True)\n{source}\n")
    assert words in info.value.message
