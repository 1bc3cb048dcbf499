"""`print(...)` in a script writes what Python with PyTorch writes, so a pasted tutorial prints its own text.

A bare expression statement is gradcli's display (a titled table), and `--json` keeps each printed
argument's value beside the text. The oracle half runs the same programs under real PyTorch (skipped
where torch is absent) and compares every character but one documented difference: a node prints
without the memory address PyTorch adds (`<PowBackward0>`, not `<PowBackward0 object at 0x7f...>`).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.printed_numbers import assert_printed_like_torch

PROGRAMS = {
    "a gradient": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n(x ** 3).sum().backward()\n"
                  "print(x.grad)\n",
    "grad_fn and requires_grad": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x ** 3\n"
                                 "print(x)\nprint(y)\nprint(y.sum())\nprint(y.grad_fn)\n",
    "a matrix and None": "import torch\nx = torch.ones(2, 2, requires_grad=True)\nz = ((x + 2) ** 2 * 3).mean()\n"
                         "z.backward()\nprint(x.grad)\nprint((x + 2).grad)\n",
    "labels, sep and end": "import torch\nt = torch.tensor([0.5, -1.25])\nprint('grad:', t)\n"
                           "print('a', 'b', sep='-', end='!\\n')\nfor i in range(3):\n    print(i, end=' ')\n"
                           "print()\nprint(t, t * 2, sep=' | ')\n",
    "containers": "import torch\nprint([torch.tensor(1.0), torch.tensor([2.0, 3.0])])\n"
                  "print({'w': torch.zeros(2)}, (torch.tensor(1.5),))\n",
    "printoptions": "import torch\ntorch.set_printoptions(precision=2)\nprint(torch.tensor([1.23456, 2.0]))\n",
    "dtypes": "import torch\nx = torch.zeros(2, dtype=torch.float)\nprint(torch.float, torch.double, torch.long, [torch.int32])\n"
              "print(x.dtype, x.dtype == torch.float, x.dtype is torch.float32, x.dtype == torch.float64)\n"
              "print(f'{torch.int64}', str(torch.bool), repr(torch.float64), x.to(torch.double).dtype)\n",
    "types": "import torch\nimport torch.nn as nn\nprint(type(1), type([]), type('a'), type(2.5), type({}))\n"
             "print(type(torch.ones(1)), type(torch.ones(1)) is torch.Tensor, type(nn.Linear(2, 1)))\n"
             "print(type(nn.Sequential()), torch.optim.SGD, type(nn.ReLU()).__name__)\n",
    "classes to subclass and data": "import torch\nimport torch.nn as nn\nfrom torch.utils.data import DataLoader, Dataset, "
                                    "TensorDataset\nprint(nn.Module, torch.optim.Optimizer, torch.autograd.Function)\n"
                                    "print(Dataset, DataLoader, TensorDataset, torch.optim.lr_scheduler.StepLR)\n"
                                    "ds = TensorDataset(torch.ones(4, 2))\ndl = DataLoader(ds, batch_size=2)\n"
                                    "opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\n"
                                    "s = torch.optim.lr_scheduler.StepLR(opt, 1)\n"
                                    "print(isinstance(dl, DataLoader), isinstance(ds, TensorDataset), "
                                    "isinstance(s, torch.optim.lr_scheduler.StepLR), type(dl), type(s))\n",
    "a state_dict": "import torch\nimport torch.nn as nn\nfrom collections import OrderedDict\ntorch.manual_seed(0)\n"
                    "m = nn.Sequential(nn.Linear(2, 1), nn.ReLU())\nprint(m.state_dict())\nprint(OrderedDict(a=1))\n"
                    "print(list(m.state_dict().keys()), OrderedDict())\n",
    "a scalar loss and items": "import torch\nw = torch.tensor([2.0], requires_grad=True)\nloss = ((w * 3 - 1) ** 2).mean()\n"
                               "print(loss, loss.item(), round(loss.item(), 3))\n",
    "nan, inf and zeros": "import torch\nnan, inf = float('nan'), float('inf')\nprint(torch.tensor([nan, 0.]))\n"
                          "print(torch.zeros(3), torch.tensor([inf, 1.]), torch.tensor([-inf, 2.5, 0.]))\n"
                          "print(torch.tensor([[0., 100.], [nan, 1.]]), torch.tensor([1e-5, 0., nan]))\n",
    "bools and empty tensors": "import torch\nprint(torch.tensor([True, True]), torch.tensor([True, False]), "
                               "torch.ones(2, 2) > 0)\nprint(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), "
                               "torch.zeros(2, 0, dtype=torch.float64), torch.tensor([], dtype=torch.bool))\n",
    "optimizers": "import torch\np = [torch.ones(1, requires_grad=True)]\nprint(torch.optim.SGD(p, lr=0.1))\n"
                  "for o in (torch.optim.Adam(p), torch.optim.RMSprop(p), torch.optim.Adagrad(p), "
                  "torch.optim.Adadelta(p), torch.optim.LBFGS(p)):\n    print(list(o.param_groups[0]))\n"
                  "print(torch.optim.AdamW(p).state_dict()['param_groups'])\n"
                  "print(torch.optim.SGD([{'params': p, 'lr': 0.5}], lr=0.1, foreach=False).param_groups)\n",
    "rows that wrap": "import torch\ntorch.manual_seed(0)\nprint(torch.randn(3, 12))\nprint(torch.randn(2, 2, 11) * 100)\n"
                      "print(torch.arange(30), torch.arange(13.0) / 7)\ntorch.set_printoptions(precision=2, "
                      "sci_mode=True)\nprint(torch.randn(3) * 1000)\ntorch.set_printoptions(sci_mode=False, "
                      "precision=4, threshold=10, edgeitems=0)\nprint(torch.randn(30))\n"
                      "torch.set_printoptions(profile='default', linewidth=40, threshold=5, edgeitems=2)\n"
                      "print(torch.arange(10.0) / 3)\n",
    "integers meet floats": "import torch\na = torch.arange(4)\nprint(a / 2, a * 0.5, (a == 1).sum() / len(a))\n",
}


def run_texts(cli, tmp_path, source: str, name: str = "prog.py") -> tuple[str, dict]:
    path = tmp_path / name
    path.write_text(source)
    result = cli("run", "--json", str(path))
    assert result.exit_code == 0, result.stdout + result.stderr
    file = json.loads(result.stdout.splitlines()[0])
    return "".join(e["text"] for e in file["events"] if e["kind"] == "print"), file


def test_a_print_writes_pytorchs_text_not_a_table(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["a gradient"])
    assert text == "tensor([ 3., 12.])\n"
    text, _ = run_texts(cli, tmp_path, PROGRAMS["grad_fn and requires_grad"])
    assert text.split("\n")[:3] == ["tensor([1., 2.], requires_grad=True)", "tensor([1., 8.], grad_fn=<PowBackward0>)",
                                    "tensor(9., grad_fn=<SumBackward0>)"]


def test_dtypes_and_types_print_as_pytorchs(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["dtypes"])
    assert text.split("\n")[:2] == ["torch.float32 torch.float64 torch.int64 [torch.int32]", "torch.float32 True True False"]
    text, _ = run_texts(cli, tmp_path, PROGRAMS["types"])
    assert text.split("\n")[1] == "<class 'torch.Tensor'> True <class 'torch.nn.modules.linear.Linear'>"


def test_the_classes_a_program_subclasses_or_tests_print_where_pytorch_defines_them(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["classes to subclass and data"])
    assert text.split("\n")[:3] == [
        "<class 'torch.nn.modules.module.Module'> <class 'torch.optim.optimizer.Optimizer'> "
        "<class 'torch.autograd.function.Function'>",
        "<class 'torch.utils.data.dataset.Dataset'> <class 'torch.utils.data.dataloader.DataLoader'> "
        "<class 'torch.utils.data.dataset.TensorDataset'> <class 'torch.optim.lr_scheduler.StepLR'>",
        "True True True <class 'torch.utils.data.dataloader.DataLoader'> <class 'torch.optim.lr_scheduler.StepLR'>"]


def test_a_state_dict_prints_as_pytorchs_ordered_dict(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["a state_dict"])
    assert text.startswith("OrderedDict([('0.weight', tensor([[-0.0053,  0.3793]])), ('0.bias', tensor([-0.5820]))])\n")


def test_sep_and_end_are_pythons(cli, tmp_path):
    text, file = run_texts(cli, tmp_path, PROGRAMS["labels, sep and end"])
    assert text == ("grad: tensor([ 0.5000, -1.2500])\na-b!\n0 1 2 \n"
                    "tensor([ 0.5000, -1.2500]) | tensor([ 1.0000, -2.5000])\n")
    first = file["events"][0]
    assert first["items"][1] == {"source": "t", "shape": [2], "dtype": "float32", "value": [0.5, -1.25]}


def test_the_terminal_shows_the_text_and_closes_a_line_left_open(cli, tmp_path):
    path = tmp_path / "open.py"
    path.write_text("import torch\nprint('loss', torch.tensor(0.25), end='')\n")
    result = cli("run", str(path))
    assert result.exit_code == 0
    lines = result.stdout.split("\n")
    assert lines[1] == "loss tensor(0.2500)"
    assert lines[2].startswith("gradcli run · dtype float32")


def test_a_bare_expression_is_still_a_titled_table(cli, tmp_path):
    path = tmp_path / "shown.grad"
    path.write_text("import torch\nx = torch.tensor([1.0, 2.0])\nx * 2\n")
    result = cli("run", str(path))
    assert result.exit_code == 0
    assert "x * 2  shape (2,) · float32" in result.stdout and "tensor(" not in result.stdout


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_same_text_as_pytorch(name, cli, tmp_path):
    pytest.importorskip("torch")
    source = PROGRAMS[name]
    torch_run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert torch_run.returncode == 0, torch_run.stderr
    text, _ = run_texts(cli, tmp_path, source)
    assert_printed_like_torch(text, re.sub(r" object at 0x[0-9a-f]+>", ">", torch_run.stdout))


def test_an_ordered_dict_has_its_methods_whether_a_state_dict_or_collections_came_first():
    from tests.language_helpers import run
    first = run("import torch.nn as nn\nsd = nn.Linear(1, 1).state_dict()\nsd.move_to_end('weight')\nks = list(sd.keys())\n")
    assert first["ks"] == ["bias", "weight"]
    then = run("from collections import OrderedDict\nd = OrderedDict(a=1, b=2)\nd.move_to_end('a', last=False)\n"
               "d.move_to_end('b')\nks = list(d)\n")
    assert then["ks"] == ["a", "b"]


def test_a_module_method_run_for_its_effect_is_not_shown(cli, tmp_path):
    _, file = run_texts(cli, tmp_path, "import torch.nn as nn\nm = nn.Linear(1, 1)\nm.eval()\nm.train()\n"
                                       "m.apply(print)\nm.load_state_dict(m.state_dict())\nm.training\n", "prog.grad")
    shown = [e for e in file["events"] if e["kind"] == "display"]
    assert [e["items"][0]["source"] for e in shown] == ["m.training"]


def test_a_column_is_as_wide_as_its_nonzero_finite_numbers(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["nan, inf and zeros"])
    assert text.split("\n")[:2] == ["tensor([nan, 0.])", "tensor([0., 0., 0.]) tensor([inf, 1.]) tensor([  -inf, 2.5000, 0.0000])"]


def test_an_optimizer_keeps_and_prints_pytorchs_switches(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["optimizers"])
    lines = text.split("\n")
    assert lines[:6] == ["SGD (", "Parameter Group 0", "    dampening: 0", "    differentiable: False",
                         "    foreach: None", "    fused: None"]
    assert lines[12] == "['params', 'lr', 'betas', 'eps', 'weight_decay', 'amsgrad', 'maximize', 'foreach', " \
                        "'capturable', 'differentiable', 'fused', 'decoupled_weight_decay']"


def test_a_bare_call_is_shown_only_when_it_gives_tensors(cli, tmp_path):
    _, file = run_texts(cli, tmp_path, "import torch\nx = torch.ones(2, requires_grad=True)\nlen(x)\nx.sum().item()\n"
                                       "torch.autograd.grad((x * x).sum(), x)\nx * 2\nx.tolist()\n", "prog.grad")
    shown = [e["items"][0]["source"] for e in file["events"] if e["kind"] == "display"]
    assert shown == ["torch.autograd.grad((x * x).sum(), x)", "x * 2"]


def test_a_row_holds_as_many_values_as_fit_at_their_common_width(cli, tmp_path):
    text, _ = run_texts(cli, tmp_path, PROGRAMS["rows that wrap"])
    lines = text.split("\n")
    assert lines[0] == "tensor([[-1.1258, -1.1524, -0.2506, -0.4339,  0.8487,  0.6920, -0.3160, -2.1152,"
    assert lines[1] == "          0.3223, -1.2633,  0.3500,  0.3081],"
    assert "tensor([...], size=(30,))" in lines
