"""The losses of metric learning, ranking and probabilistic regression, and the deprecated size_average= / reduce=
arguments, against torch itself (the same seeded program: loss values, gradients, printed text, node names)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run

PROGRAM = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
a = torch.randn(4, 3, requires_grad=True); p = torch.randn(4, 3); n = torch.randn(4, 3, requires_grad=True)
y = torch.tensor([1.0, -1.0, 1.0, -1.0])
s1, s2 = torch.randn(4, requires_grad=True), torch.randn(4)
losses = [
    F.margin_ranking_loss(s1, s2, y, margin=0.3),
    nn.MarginRankingLoss(0.1, reduction='sum')(s1, s2, y),
    nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True)(a, p, n),
    F.triplet_margin_loss(a, p, n, reduction='none').sum(),
    nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v))(a, p, n),
    F.hinge_embedding_loss(s1, y, margin=0.5),
    nn.SoftMarginLoss()(s1, y),
    nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5]))(a, (p > 0).float()),
    F.multi_margin_loss(a, torch.tensor([0, 2, 1, 1]), p=2, margin=0.7, weight=torch.tensor([1.0, 0.5, 2.0])),
    nn.MultiMarginLoss()(a, torch.tensor([0, 2, 1, 1])),
    nn.PoissonNLLLoss(full=True)(a, p.abs() * 3),
    F.poisson_nll_loss(a.exp(), p.abs(), log_input=False),
    nn.GaussianNLLLoss()(a, p, n.exp()),
    F.gaussian_nll_loss(a, p, torch.tensor([0.5, 1e-9, 2.0, 1.0]).requires_grad_(), full=True),
    nn.MSELoss(size_average=False)(a, p),
    F.mse_loss(a, p, reduce=False).sum(),
    nn.CrossEntropyLoss(reduce=True, size_average=False)(a, torch.tensor([0, 1, 2, 0])),
    F.l1_loss(a, p, size_average=True),
]
total = sum(losses)
total.backward()
values = [l.item() for l in losses] + [a.grad.tolist(), n.grad.tolist(), s1.grad.tolist()]
texts = [str(nn.TripletMarginLoss()), str(nn.MarginRankingLoss(0.2)), str(nn.GaussianNLLLoss())]
nodes = [l.grad_fn.name() for l in losses[:3]]
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses_match_torch(dtype):
    source = PROGRAM.format(dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    tol = 1e-5 if dtype == "float32" else 1e-11
    for a, b in zip(mine["values"], torch_["values"]):
        assert np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=tol, atol=tol)
    assert mine["texts"] == torch_["texts"] == ["TripletMarginLoss()", "MarginRankingLoss()", "GaussianNLLLoss()"]
    assert mine["nodes"] == torch_["nodes"]


@pytest.mark.parametrize("size_average, reduce, expected", [
    (None, None, 2.5), (False, None, 5.0), (True, False, [1.0, 4.0]), (False, True, 5.0), (None, True, 2.5)])
def test_the_deprecated_pair_decides_the_reduction_as_pytorch(size_average, reduce, expected):
    ran = run("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "a, b = torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0])\n"
              f"f = F.mse_loss(a, b, size_average={size_average}, reduce={reduce}).tolist()\n"
              f"m = nn.MSELoss(size_average={size_average}, reduce={reduce})(a, b).tolist()\n")
    assert ran["f"] == ran["m"] == expected


@pytest.mark.parametrize("source, words", [
    ("F.margin_ranking_loss(torch.ones(3), torch.ones(3, 1), torch.ones(3))",
     "All input tensors should have same dimension"),
    ("F.triplet_margin_loss(torch.ones(2, 3), torch.ones(3), torch.ones(2, 3))",
     "anchor 2D, positive 1D, and negative 2D inputs"),
    ("F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 3]))", "target out of range"),
    ("F.multi_margin_loss(torch.ones(2, 3), torch.tensor([0, 1]), p=3)", "only p == 1 and p == 2 supported"),
    ("F.gaussian_nll_loss(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3, 2))", "var is of incorrect size"),
    ("F.gaussian_nll_loss(torch.ones(2), torch.ones(2), -torch.ones(2))", "var has negative entry/entries"),
    ("nn.SoftMarginLoss(reduction='avg')(torch.ones(2), torch.ones(2))", "avg is not a valid value for reduction"),
])
def test_bad_loss_calls_are_pytorch_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\ny = {source}\n")
    assert words in info.value.message


# -- each loss is one declaration (nn/losses.py's LOSSES) ------------------------------------------------
def test_a_loss_declaration_gives_its_function_module_and_tables() -> None:
    import inspect

    from gradcli.lang import builtins as B
    from gradcli.nn import losses as L
    assert len(L.LOSSES) == len({loss.module for loss in L.LOSSES}) == 20
    for loss in L.LOSSES:
        name, module = loss.function.__name__, L.LAYERS[loss.module]
        member = B.NN_FUNCTIONAL.members[name]
        assert getattr(member, "__wrapped__", member) is loss.function
        assert B.NN.members[loss.module].__wrapped__ is module and module.functional is loss.function
        assert B.OP_OF.get(name) is loss.op
        params = inspect.signature(module.__init__).parameters
        assert params["reduction"].default == "mean" and [p for p in params if p != "self"][:len(loss.positional)] == \
            list(loss.positional)
        assert (member is not loss.function) is loss.legacy  # wrapped to take size_average/reduce


def test_a_loss_without_the_deprecated_pair_refuses_it() -> None:
    # torch 2.13: F.gaussian_nll_loss(x, y, var, size_average=False) is a TypeError (unexpected keyword)
    with pytest.raises(GradcliError, match="size_average"):
        run("import torch\nimport torch.nn.functional as F\nx = torch.ones(2)\n"
            "l = F.gaussian_nll_loss(x, x, torch.ones(2), size_average=False)")
    ran = run("import torch\nimport torch.nn as nn\nx = torch.tensor([1.0, 3.0])\n"
              "a = nn.L1Loss(size_average=False)(x, x * 0)\nb = nn.HuberLoss(reduce=False)(x, x * 0)")
    assert float(ran["a"]._data) == 4.0 and ran["b"].tolist() == [0.5, 2.5]
