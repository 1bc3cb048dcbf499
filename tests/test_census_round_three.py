"""The census's next names: torch.compile, RandomSampler, numpy.matlib.repmat, numpy.bool, a module's __name__;
each against PyTorch's (or NumPy's) printed text, and their wrong uses told."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradcli.errors import GradcliError
from tests.language_helpers import fails, run, torch_printed

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", ["compiled_model.py", "random_sampler.py"])
def test_prints_what_torch_prints(name: str):
    source = (FIXTURES / name).read_text()
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


def test_numpy_matlib_bool_and_module_names_print_as_python_does():
    source = ("import numpy as np\nimport numpy.matlib\nimport torch\n"
              "print(np.matlib.repmat(np.array([1, 2]), 2, 3))\n"
              "print(numpy.matlib.repmat(5, 2, 2), np.bool(1), np.matlib.repmat(np.eye(2), 1, 2).shape)\n"
              "print(torch.optim.lr_scheduler.__name__, torch.__name__, np.__name__)\n")
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


@pytest.mark.parametrize("source, words", [
    ("import torch\ntorch.compile(3)", "A callable function is expected, but <class 'int'> is provided."),
    ("import torch\ntorch.compile(torch.nn.Linear(1, 1), mode='fast')", "Unrecognized mode=fast"),
    ("import numpy as np\nnp.matlib.repmat(np.ones((2, 2, 2)), 1, 1)", "at most 2 dimensions"),
    ("import torch\nfrom torch.utils.data import RandomSampler\nRandomSampler([1, 2], replacement=True)",
     "replacement= and num_samples= are not supported"),
    ("import torch\nfrom torch.utils.data import DataLoader, RandomSampler\n"
     "DataLoader([1, 2], sampler=RandomSampler([1, 2]), shuffle=True)", "mutually exclusive with shuffle"),
])
def test_wrong_uses_are_told(source: str, words: str):
    assert words in str(fails(source, GradcliError))


def test_mT_transposes_the_last_two_dimensions_as_torch():
    source = ("import torch\nx = torch.arange(12.).reshape(2, 2, 3).requires_grad_()\ny = x.mT\n"
              "print(y.shape, y[1].tolist())\ny.sum().backward()\nprint(x.grad.shape)\n")
    assert run(source).printed == torch_printed(source)
    assert run(source)["y"].grad_fn.name == "TransposeBackward0"
    error = fails("import torch\ntorch.ones(3).mT", GradcliError)
    assert "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor." in str(error)


def test_a_binary_ufunc_reduces_as_numpy_does():
    source = ("import numpy as np\n"
              "m = np.logical_or.reduce([np.array([True, False]), np.array([False, False]), np.array([False, True])])\n"
              "print(m, np.add.reduce(np.arange(6).reshape(2, 3), axis=1), np.maximum.reduce([3, 9, 2]))\n"
              "print(np.add(1, 2), np.add, np.add.__name__, np.multiply(np.ones(2), 3))\n")
    assert run(source).printed == torch_printed(source)
    assert "axis 2 is out of bounds" in str(fails("import numpy as np\nnp.add.reduce(np.ones((2, 2)), axis=2)",
                                                  GradcliError))
