"""The Python gaps and bugs issue 32 lists, each as the published snippet that met it: gradcli prints
what Python with PyTorch prints for the same program (the oracle skips without torch)."""
from __future__ import annotations

import pytest

from gradcli.errors import ArgumentError, NotAllowedError
from language_helpers import fails, run, torch_printed

SNIPPETS = {
    "enum": "from enum import Enum, auto\nclass Color(Enum):\n    RED = 1\n    GREEN = 2\n"
            "class Mode(Enum):\n    TRAIN = auto()\n    EVAL = auto()\n    def describe(self):\n"
            "        return self.name.lower()\n"
            "print(Color.RED, Color.RED.value, Color.GREEN.name, Color(2), repr(Color.RED), len(Color))\n"
            "print([c.name for c in Color], Mode.EVAL.value, Mode.TRAIN.describe(), Color.RED is Color(1))\n"
            "print(type(Color.RED).__name__, isinstance(Color.RED, Color), {Color.RED: 'r'}[Color.RED])\n"
            "try:\n    Color(5)\nexcept ValueError as e:\n    print(e)\n",
    "numpy.linalg imported": "from numpy.linalg import norm\nimport numpy.linalg as la\n"
                             "print(norm([3.0, 4.0]), la.det([[2.0, 0.0], [0.0, 2.0]]))\n",
    "pprint.PrettyPrinter": "import pprint\npp = pprint.PrettyPrinter(indent=2, width=20)\n"
                            "pp.pprint({'layers': [64, 128, 256], 'lr': 0.001, 'name': 'mlp'})\n"
                            "print(pp.pformat([1, 2]))\n",
    "next(model.parameters())": "import torch\nimport torch.nn as nn\nmodel = nn.Linear(2, 1)\n"
                                "p = next(model.parameters())\nprint(p.shape, len(list(model.parameters())))\n",
    "a new attribute on argparse's Namespace": "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--lr', type=float, default=0.1)\nargs = parser.parse_args([])\n"
        "args.cuda = False\nargs.extra = 3\nargs.lr = 0.5\nprint(args.lr, args.cuda, args.extra, vars(args))\n",
    "maximum of 0-d tensors": "import torch\nx = torch.tensor(-1.0, requires_grad=True)\n"
        "y = torch.maximum(x, torch.tensor(0.0)) + torch.minimum(x, torch.tensor(0.5)) * 2\ny.backward()\nprint(x.grad)\n",
    "grad through a part of the graph never run": "import torch\na = torch.tensor(2.0, requires_grad=True)\n"
        "b = a * 3\nc = b * b\ng, = torch.autograd.grad(b, a)\nh, = torch.autograd.grad(c, b)\nprint(g, h)\n",
    "size()[2:] is a torch.Size": "import torch\nt = torch.zeros(2, 3, 4, 5)\n"
        "print(t.size()[2:], t.size()[2:].numel(), t.shape[1:], t.shape[-1])\n",
    "to(dtype) positional": "import torch\nmask = torch.tensor([True, False])\nx = torch.ones(2, dtype=torch.float64)\n"
        "print(mask.to(x.dtype), torch.ones(1).to(torch.int64))\n",
    "a custom backward's broadcast gradient": "import torch\nclass Scale(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x, w):\n        ctx.save_for_backward(x, w)\n        return x * w\n"
        "    @staticmethod\n    def backward(ctx, g):\n        x, w = ctx.saved_tensors\n        return g * w, g * x\n"
        "x = torch.ones(2, 3, requires_grad=True)\nw = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "b = torch.ones(1, 3, requires_grad=True)\nScale.apply(x, w).sum().backward()\n"
        "Scale.apply(torch.ones(4, 3), b).sum().backward()\nprint(w.grad, x.grad, b.grad)\n",
    "item assignment on a Sequential": "import torch.nn as nn\n"
        "model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))\nmodel[2] = nn.Linear(2, 3)\n"
        "model[-2] = nn.Tanh()\nprint(model)\n",
    "ndarray and tensor together": "import torch\nimport numpy as np\nphase = np.linspace(0, 1, 3)\n"
        "x = torch.ones(3)\nprint(x + phase, torch.from_numpy(phase * 2), torch.FloatTensor([phase, phase]))\n"
        "w = np.random.randn(2) * 0.02\nprint(w.shape, type(w).__name__, torch.tensor(np.float32(2.0)))\n",
}


@pytest.mark.parametrize("source", SNIPPETS.values(), ids=SNIPPETS.keys())
def test_a_published_snippet_prints_what_pytorch_prints(source):
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


def test_a_pretty_printers_options_are_checked_as_pythons():
    assert fails("import pprint\npp = pprint.PrettyPrinter(indent=-1)", ArgumentError).message == \
        "PrettyPrinter: indent must be >= 0"


def test_a_generator_of_parameters_has_no_length_as_in_python():
    caught = fails("import torch.nn as nn\nn = len(nn.Linear(1, 1).parameters())", ArgumentError)
    assert caught.message == "object of type 'generator' has no len()"


@pytest.mark.parametrize("name", ["_secret", "program_vars", "program_set_attribute"])
def test_a_namespace_takes_new_settings_never_its_own_machinery(name):
    source = f"import argparse\nargs = argparse.ArgumentParser().parse_args([])\nargs.{name} = 1"
    assert "cannot assign to attribute" in fails(source, NotAllowedError).message


@pytest.mark.parametrize("source, words", [
    ("model[3] = nn.ReLU()", "index 3 is out of range"), ("model[0] = 1", "is not a Module subclass"),
    ("model['a'] = nn.ReLU()", "index a is out of range"),
])
def test_a_sequential_replaces_a_module_at_a_position_only(source, words):
    assert words in fails("import torch.nn as nn\nmodel = nn.Sequential(nn.ReLU())\n" + source, ArgumentError).message


def test_a_custom_backward_whose_gradient_cannot_be_summed_down_is_still_pytorchs_error():
    source = ("import torch\nclass Bad(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return torch.ones(4)\n"
              "x = torch.ones(3, requires_grad=True)\nBad.apply(x).sum().backward()\n")
    assert "returned an invalid gradient at index 0 - got [4] but expected shape compatible with [3]" in \
        fails(source).message
