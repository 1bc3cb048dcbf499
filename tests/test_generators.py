"""`generator=` on every draw (rand, randn, randint, randperm, normal, the in-place fills, nn.init,
bernoulli, multinomial, DataLoader, random_split): a `torch.Generator().manual_seed(s)` gives
PyTorch's numbers and leaves the global generator alone. Recorded from torch 2.13; oracle where
torch is installed."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from language_helpers import run

# Karpathy's makemore (bigram lecture) samples names this way
MAKEMORE = """
import torch
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g)
first = W[0, :4].tolist()
p = torch.rand(3, generator=g)
p = p / p.sum()
many = torch.multinomial(p, num_samples=20, replacement=True, generator=g).tolist()
ix = 0
walk = []
for i in range(10):
    probs = W[ix].exp()
    probs = probs / probs.sum()
    ix = torch.multinomial(probs, num_samples=1, replacement=True, generator=g).item()
    walk.append(ix)
rows = torch.multinomial(torch.tensor([[0.1, 0.5, 0.4], [1., 2., 3.]]), 2, generator=g).tolist()
doubles = torch.multinomial(torch.tensor([0.1, 0.5, 0.4], dtype=torch.float64), 5, replacement=True,
                            generator=g).tolist()
ints = torch.randint(0, 10, (5,), generator=g).tolist()
perm = torch.randperm(6, generator=g).tolist()
normal = torch.normal(0., 1., size=(3,), generator=g).tolist()
filled = torch.empty(4).uniform_(generator=g).tolist()
init = torch.nn.init.normal_(torch.empty(3), generator=g).tolist()
coins = torch.bernoulli(torch.full((4,), 0.5), generator=g).tolist()
method = torch.tensor([1., 3.]).multinomial(4, replacement=True, generator=g).tolist()
seed = g.initial_seed()
torch.manual_seed(0)
untouched = torch.rand(2).tolist()
"""


def test_makemore_draws_are_pytorchs():
    ran = run(MAKEMORE)
    # recorded from torch 2.13 running the same program
    assert ran["first"] == [1.5673619508743286, -0.2372923195362091, -0.027384605258703232, -1.100779414176941]
    assert ran["many"] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 2, 1, 1, 1]
    assert ran["walk"] == [26, 0, 15, 26, 9, 4, 19, 25, 7, 4]
    assert ran["rows"] == [[2, 1], [1, 0]]
    assert ran["doubles"] == [0, 2, 2, 2, 1]
    assert (ran["ints"], ran["perm"]) == ([7, 4, 6, 8, 2], [1, 5, 2, 4, 3, 0])
    assert ran["normal"] == [-1.1362800598144531, -2.152312994003296, -0.5652375221252441]
    assert ran["filled"] == [0.4024032950401306, 0.08170515298843384, 0.9793413281440735, 0.3310192823410034]
    assert ran["init"] == [2.3255228996276855, 0.3431486487388611, -0.1887742131948471]
    assert ran["coins"] == [1.0, 0.0, 0.0, 1.0]
    assert ran["seed"] == 2147483647
    assert ran["untouched"] == [0.49625658988952637, 0.7682217955589294]  # g's draws never moved the global one


def test_makemore_draws_against_torch():
    torch = pytest.importorskip("torch")
    ran = run(MAKEMORE)
    g = torch.Generator().manual_seed(2147483647)
    W = torch.randn((27, 27), generator=g)
    assert ran["first"] == W[0, :4].tolist()
    p = torch.rand(3, generator=g)
    assert ran["many"] == torch.multinomial(p / p.sum(), num_samples=20, replacement=True, generator=g).tolist()
    ix, walk = 0, []
    for _ in range(10):
        probs = W[ix].exp()
        ix = torch.multinomial(probs / probs.sum(), num_samples=1, replacement=True, generator=g).item()
        walk.append(ix)
    assert ran["walk"] == walk


@pytest.mark.parametrize("weights, n, replacement", [
    ("[[0.0, 1.0, 3.0, 0.5], [2.0, 2.0, 2.0, 2.0], [1e-3, 1.0, 0.0, 7.0]]", 3, False),
    ("[[0.0, 1.0, 3.0, 0.5], [2.0, 2.0, 2.0, 2.0], [1e-3, 1.0, 0.0, 7.0]]", 9, True),
    ("[0.2, 0.3, 0.5]", 1, False),
    ("[5.0, 0.0, 1.0, 2.0, 9.0, 4.0]", 6, False),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_against_torch(weights, n, replacement, dtype):
    torch = pytest.importorskip("torch")
    ran = run(f"import torch\ntorch.manual_seed(3)\nw = torch.tensor({weights}, dtype=torch.{dtype})\n"
              f"a = torch.multinomial(w, {n}, {replacement}).tolist()\nb = torch.multinomial(w, {n}, {replacement})"
              ".tolist()\nafter = torch.rand(2).tolist()\n")
    torch.manual_seed(3)
    w = torch.tensor(_numbers(weights), dtype=getattr(torch, dtype))
    want = [torch.multinomial(w, n, replacement).tolist() for _ in range(2)] + [torch.rand(2).tolist()]
    assert [ran["a"], ran["b"], ran["after"]] == want


def _numbers(text: str) -> list:
    """The weights above as numbers, read by the JSON parser (no evaluation)."""
    import json
    return json.loads(text)


@pytest.mark.parametrize("call, words", [
    ("torch.multinomial(torch.tensor([1, 2]), 1)", "multinomial only supports floating-point dtypes for input, got: Long"),
    ("torch.multinomial(torch.ones(2, 2, 2), 1)", "prob_dist must be 1 or 2 dim"),
    ("torch.multinomial(torch.ones(3), 0)", "cannot sample n_sample <= 0 samples"),
    ("torch.multinomial(torch.ones(3), 4)", "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("torch.multinomial(torch.tensor([1., -1.]), 1)", "probability tensor contains either `inf`, `nan` or element < 0"),
    ("torch.multinomial(torch.tensor([0., 0.]), 1)", "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("torch.multinomial(torch.tensor([1., -1.]), 3, True)",
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("torch.multinomial(torch.tensor([1., float('nan')]), 3, True)",
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("torch.multinomial(torch.tensor([1., float('inf')]), 3, True)",
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ("torch.multinomial(torch.tensor([0., 0.]), 3, True)", "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("torch.randn(2, generator=3)", "generator must be a torch.Generator, not int"),
    ("torch.ones(2).normal_(generator='g')", "generator must be a torch.Generator, not str"),
    ("torch.multinomial(torch.ones(2), 1, generator=[1])", "multinomial(): generator must be a torch.Generator"),
])
def test_bad_draws_are_pytorchs_errors(call, words):
    with pytest.raises(GradcliError) as info:
        run(f"import torch\n{call}\n")
    assert words in info.value.message
