"""Where PyTorch defines its classes, as programs import them (`from torch.nn.modules.linear import Linear`,
`torch.nn.parameter.Parameter`, `torch.utils.data.dataset.Dataset`), and `nn.init.trunc_normal_` with PyTorch
2.13's rejection sampling. Each line is what torch printed; `test_the_texts_are_torchs_own` reruns it."""
from __future__ import annotations

import pytest

from gradcli.errors import NameLookupError, ValueDomainError
from gradcli.lang.module_paths import NN_MODULE_FILES
from language_helpers import fails, run, torch_printed

SOURCE = """import torch
from torch.nn.modules.linear import Linear
from torch.nn.modules.rnn import LSTM
import torch.nn.modules.activation as act
from torch.nn.parameter import Parameter
from torch.utils.data.dataset import Dataset, random_split
from torch.utils.data.dataloader import DataLoader
torch.manual_seed(0)
layer = torch.nn.modules.linear.Linear(2, 1)
print(layer, isinstance(layer, Linear), isinstance(layer, torch.nn.Linear), act.ReLU())
p = Parameter(torch.ones(2))
print(p, isinstance(p, torch.nn.parameter.Parameter))
print(torch.nn.parallel.DataParallel(Linear(1, 1)).device_ids, LSTM(2, 3), torch.nn.modules.Sequential())
print(isinstance(torch.nn.Conv2d(1, 1, 1), torch.nn.modules.conv.Conv2d), isinstance(layer, torch.nn.modules.module.Module))
torch.manual_seed(0)
w = torch.empty(3, 4)
torch.nn.init.trunc_normal_(w, std=0.02)
print(w)
torch.manual_seed(1)
v = torch.empty(6)
torch.nn.init.trunc_normal_(v, mean=0.0, std=1.0, a=1.0, b=1.5)
print(v)
g = torch.Generator().manual_seed(3)
print(torch.nn.init.trunc_normal_(torch.empty(2, 3, dtype=torch.float64), mean=1.0, std=2.0, a=-1.0, b=1.5, generator=g))
"""


@pytest.fixture(scope="module")
def printed() -> list[str]:
    return "\n".join(run(SOURCE).printed).splitlines()


def test_each_prints_what_torch_printed(printed: list[str]) -> None:
    assert printed == EXPECTED


def test_the_texts_are_torchs_own() -> None:
    assert torch_printed(SOURCE) == EXPECTED


def test_every_path_names_the_file_pytorch_defines_the_class_in() -> None:
    torch = pytest.importorskip("torch")
    for file, names in NN_MODULE_FILES.items():
        for name in names:
            assert getattr(torch.nn, name).__module__ == f"torch.nn.modules.{file}", name


def test_a_class_gradcli_lacks_is_not_in_its_path() -> None:
    error = fails("from torch.nn.modules.linear import Bilinear\n", NameLookupError)
    assert "Bilinear" in str(error)


def test_an_interval_with_almost_no_mass_is_refused_not_spun_on() -> None:
    error = fails("import torch\ntorch.nn.init.trunc_normal_(torch.empty(2), mean=0.0, std=1.0, a=30.0, b=1e9)\n",
                  ValueDomainError)
    assert "10,000 rounds" in str(error)


EXPECTED = """Linear(in_features=2, out_features=1, bias=True) True True ReLU()
Parameter containing:
tensor([1., 1.], requires_grad=True) True
[] LSTM(2, 3) Sequential()
True True
tensor([[ 0.0308, -0.0059, -0.0436,  0.0114],
        [-0.0217, -0.0280,  0.0081,  0.0168],
        [-0.0144, -0.0081, -0.0119,  0.0036]])
tensor([1.3788, 1.1397, 1.2015, 1.3673, 1.0146, 1.3999])
tensor([[-0.7293,  1.3497,  1.1780],
        [-0.2274,  1.0924,  1.4778]], dtype=torch.float64)
""".splitlines()


STATICS = """import torch
import torch.nn as nn
torch.manual_seed(0)
w = torch.tensor([[1., 2.], [3., 4.]])
e = nn.Embedding.from_pretrained(w)
print(e, e.weight, e(torch.tensor([1])), isinstance(e, nn.Embedding))
e2 = nn.Embedding.from_pretrained(w, freeze=False)
print(e2.weight.requires_grad, torch.rand(1))
print(nn.Transformer.generate_square_subsequent_mask(3))
m = nn.Embedding(3, 2)
print(m, type(m).__name__, isinstance(m, nn.Embedding))
"""


def test_a_class_methods_called_on_the_class_print_what_torch_printed() -> None:
    """from_pretrained draws nothing (the rand after it is the seed's first number), as in PyTorch."""
    assert "\n".join(run(STATICS).printed).splitlines() == torch_printed(STATICS)


def test_the_deprecated_initialiser_names_are_torchs_and_draw_the_same() -> None:
    source = ("import torch\ntorch.manual_seed(0)\nw = torch.empty(2, 3)\ntorch.nn.init.normal(w, 0.0, 0.5)\n"
              "torch.nn.init.xavier_uniform(w)\ntorch.nn.init.kaiming_normal(w)\nprint(w)\n"
              "torch.nn.init.constant(w, 0.25)\nprint(w)\n")
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)
