"""What stopped fresh published code on first contact (the corpus measured in docs/fresh_corpus.md), each
as a minimal program of our own in the published style: gradcli prints what Python with PyTorch prints (the
oracle skips without torch), and the values are also asserted by hand so the tests bite without it."""
from __future__ import annotations

import pytest

from gradcli.errors import ArgumentError
from language_helpers import fails, run, torch_printed

SNIPPETS = {
    "x.new(x.size()) is a shape, x.new((2, 2)) is data":
        "import torch\nlv = torch.zeros(2, 3)\nstd = lv.mul(0.5).exp_()\n"
        "eps = std.data.new(std.size()).normal_()\nprint(eps.shape, eps.dtype)\n"
        "print(lv.new(torch.Size([4])).shape, lv.new((2, 2)), lv.new([1, 3]), lv.new(2, 1).shape)\n",
    "ones_like and zeros_like take a dtype":
        "import torch\nx = torch.randn(2, 3)\nprint(torch.ones_like(x, dtype=torch.int32))\n"
        "print(torch.zeros_like(x, dtype=torch.float64).dtype, torch.ones_like(x).dtype)\n",
    "full_like and empty_like":
        "import torch\nx = torch.ones(2, 2, dtype=torch.float64)\nprint(torch.full_like(x, 7))\n"
        "print(torch.empty_like(x).shape, torch.full_like(x, 2, dtype=torch.int64))\n",
    "a NumPy scalar's item()":
        "import numpy as np\neps = np.finfo(np.float32).eps.item()\nprint(eps, type(eps).__name__)\n"
        "s = np.sum(np.ones(3))\nprint(s.item(), s.dtype, s.shape, s.ndim, np.int64(3).item() + 1, np.float64(2.5).round())\n",
    "sliding windows with x.unfold":
        "import torch\nx = torch.arange(12.).view(2, 6).requires_grad_()\nw = x.unfold(1, 3, 2)\n"
        "print(w.shape, w.detach())\n(w * torch.arange(6.).view(3, 2).T.unsqueeze(0)).sum().backward()\n"
        "print(x.grad)\nprint(torch.arange(5.).unfold(0, 2, 1), torch.tensor(3.).unfold(0, 1, 1))\n"
        "print(torch.zeros(2, 3, 4).unfold(0, 1, 1).shape, torch.zeros(4, 5).unfold(-1, 5, 3).shape)\n",
    "pairwise distances with torch.cdist":
        "import torch\na = torch.tensor([[0., 0.], [1., 1.]], requires_grad=True)\nb = torch.tensor([[0., 0.], [3., 1.]])\n"
        "d = torch.cdist(a, b)\nprint(d.detach())\nd.sum().backward()\nprint(a.grad)\n"
        "print(torch.cdist(a, b, p=1).detach(), torch.cdist(a.detach(), b, p=0))\n"
        "print(torch.cdist(torch.ones(3, 2, 4), torch.zeros(3, 5, 4)).shape)\n",
    "torch.searchsorted":
        "import torch\ns = torch.tensor([1., 2., 3.])\nprint(torch.searchsorted(s, torch.tensor([2.5, 2.0])))\n"
        "print(torch.searchsorted(s, torch.tensor([2.0]), right=True), torch.searchsorted(s, torch.tensor([2.0]), side='right'))\n"
        "print(torch.searchsorted(torch.tensor([[1., 3.], [2., 4.]]), torch.tensor([[2.], [5.]])))\n"
        "print(torch.searchsorted(torch.tensor([1, 5]), 3), torch.searchsorted(s, s, out_int32=True).dtype)\n"
        "u = torch.tensor([3., 1., 2.])\nprint(torch.searchsorted(u, torch.tensor([2.5]), sorter=torch.tensor([1, 2, 0])))\n"
        "for bad in [torch.tensor([1., 2., 0.]), torch.tensor([[1, 2, 0]]), torch.tensor([5, 2, 0])]:\n"
        "    try:\n        torch.searchsorted(u, torch.tensor([2.5]), sorter=bad)\n"
        "    except RuntimeError as e:\n        print(e)\n",
    "index_put_ with and without accumulate":
        "import torch\nx = torch.zeros(3)\nx.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([1., 2., 5.]), accumulate=True)\n"
        "print(x)\nw = torch.ones(2, 3, requires_grad=True)\nv = torch.tensor([2., 3.], requires_grad=True)\ny = w * 1\n"
        "y.index_put_((torch.tensor([0, 0]), torch.tensor([1, 1])), v, accumulate=True)\nprint(y)\n"
        "(y * torch.arange(6.).view(2, 3)).sum().backward()\nprint(w.grad, v.grad)\nz = torch.zeros(2, 2)\n"
        "z.index_put_((torch.tensor([1]),), torch.tensor(7.))\nprint(z)\n",
    "torch.index_put and torch.index_put_ as functions":
        "import torch\nx = torch.zeros(4, requires_grad=True)\nv = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "y = torch.index_put(x * 1, (torch.tensor([0, 2]),), v, accumulate=True)\nprint(y, x)\n"
        "z = torch.index_put_(y, (torch.tensor([1]),), torch.tensor(5.0))\nprint(z, z is y)\n"
        "(z * torch.arange(4.)).sum().backward()\nprint(x.grad, v.grad)\n",
    # the second corpus (docs/fresh_corpus.md, round 2)
    "a list indexed by NumPy's integer and by an integer tensor":
        "import numpy as np\nimport torch\nwords = ['a', 'b', 'c']\nw = np.array([0.1, 0.7, 0.2])\n"
        "print(words[np.argmax(w)], words[torch.tensor([0.2, 0.1, 0.9]).argmax()], words[torch.tensor([[1]])])\n"
        "words[np.int64(0)] = 'z'\nprint(words, words[torch.tensor(True)])\n",
    "permute with dims=":
        "import torch\nx = torch.arange(24.).view(2, 3, 4)\nprint(x.permute(dims=(2, 0, 1)).shape, "
        "torch.permute(x, dims=(1, 2, 0)).shape, x.permute(dims=[1, 0, 2])[0, 1])\n",
    "type() with a tensor type":
        "import numpy as np\nimport torch\nx = torch.from_numpy(np.array([0, 1])).type(torch.LongTensor)\n"
        "print(x, x.dtype, torch.ones(2).type(torch.DoubleTensor), torch.ones(2).type(torch.FloatTensor).dtype)\n"
        "print(torch.ones(2).type('torch.DoubleTensor').dtype, torch.tensor([1.7]).type(torch.IntTensor), torch.IntTensor([3]))\n",
    "a parameter's .data replaced by a tensor of another shape":
        "import torch\nimport torch.nn as nn\nb = nn.Embedding(1, 2, dtype=torch.float64)\n"
        "b.weight.data = torch.tensor([[0.3]], dtype=torch.float64).t()\nprint(b.weight, b.weight.shape)\n"
        "y = (b.weight * 2).sum()\ny.backward()\nprint(b.weight.grad)\n",
    "an array updated in place is seen through torch.from_numpy":
        "import numpy as np\nimport torch\na = np.array([[1, 2], [3, 4]])\nt = torch.from_numpy(a)\nb = a\n"
        "a *= 2\nprint(t, b)\nnp.multiply(a, 2, out=a)\nprint(t)\nf = np.ones(3)\nf += np.arange(3)\nf -= 1\nf /= 2\nf **= 2\n"
        "print(f, a)\nnp.add(f, 1.0, out=f)\nprint(f)\n",
    "a tensor hook that changes its gradient in place":
        "import torch\ndef double(grad):\n    grad *= 2\nx = torch.tensor([2., 2., 2., 2.], requires_grad=True)\n"
        "h = x.register_hook(double)\ntorch.mean(torch.pow(x, 2)).backward()\nprint(x.grad)\nh.remove()\n"
        "y = x * 3\ny.register_hook(lambda g: g.add_(1))\n(y * torch.tensor([1., 2., 3., 4.])).sum().backward()\nprint(x.grad)\n",
}


@pytest.mark.parametrize("source", SNIPPETS.values(), ids=SNIPPETS.keys())
def test_a_fresh_snippets_construct_prints_what_pytorch_prints(source):
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


def test_index_put_the_function_leaves_its_input_and_index_put__changes_it():
    ran = run("import torch\nx = torch.zeros(3)\ny = torch.index_put(x, (torch.tensor([1]),), torch.tensor(4.0))\n"
              "z = torch.index_put_(x, (torch.tensor([0, 0]),), torch.tensor([1.0, 2.0]), True)\n"
              "a = (x.tolist(), y.tolist(), z is x)\n")
    assert ran["a"] == ([3.0, 0.0, 0.0], [0.0, 4.0, 0.0], True)


def test_new_with_a_size_makes_a_tensor_of_that_shape_not_of_those_numbers():
    ran = run("import torch\nx = torch.zeros(2, 3)\na = x.new(x.size())\nb = x.new((2, 3))\nc = x.new(x.shape)")
    assert ran["a"].shape == (2, 3) and ran["c"].shape == (2, 3)
    assert ran["b"].shape == (2,) and ran["b"].tolist() == [2.0, 3.0]


def test_reparameterised_noise_from_new_broadcasts_against_its_mean():
    ran = run("import torch\nmu = torch.zeros(2, 3, requires_grad=True)\nlv = torch.zeros(2, 3, requires_grad=True)\n"
              "std = lv.mul(0.5).exp()\neps = std.data.new(std.size()).normal_()\nz = eps.mul(std).add_(mu)\n"
              "z.sum().backward()")
    assert ran["z"].shape == (2, 3)
    assert ran["mu"].grad.tolist() == [[1.0] * 3] * 2


def test_a_like_constructors_dtype_overrides_the_inputs():
    ran = run("import torch\nx = torch.randn(2, 3)\na = torch.ones_like(x, dtype=torch.int32)\n"
              "b = torch.full_like(x, 7)\nc = torch.empty_like(x, dtype=torch.float64)")
    assert str(ran["a"].dtype) == "int32" and ran["a"].tolist() == [[1] * 3] * 2
    assert ran["b"].tolist() == [[7.0] * 3] * 2 and str(ran["b"].dtype) == "float32"
    assert str(ran["c"].dtype) == "float64" and ran["c"].tolist() == [[0.0] * 3] * 2


def test_full_like_wants_a_number_to_fill_with():
    assert "fill_value" in fails("import torch\ny = torch.full_like(torch.ones(2), 'a')", ArgumentError).message


def test_a_numpy_scalars_item_is_a_python_number():
    ran = run("import numpy as np\na = np.finfo(np.float32).eps.item()\nb = np.mean([1.0, 2.0]).item()")
    assert ran["a"] == 2.0 ** -23 and type(ran["a"]) is float
    assert ran["b"] == 1.5


def test_unfold_windows_and_their_gradient_by_hand():
    ran = run("import torch\nx = torch.arange(5.).requires_grad_()\nw = x.unfold(0, 3, 1)\nw.sum().backward()")
    assert ran["w"].tolist() == [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]
    assert ran["x"].grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]  # each element counted once per window holding it


@pytest.mark.parametrize("call, words", [
    ("x.unfold(0, 6, 1)", "maximum size for tensor at dimension 0 is 5 but size is 6"),
    ("x.unfold(0, 2, 0)", "step is 0 but must be > 0"),
    ("x.unfold(1, 2, 1)", "Dimension out of range"),
])
def test_unfold_refuses_what_pytorch_refuses(call, words):
    assert words in fails(f"import torch\nx = torch.arange(5.)\ny = {call}").message


def test_cdist_at_a_zero_distance_has_a_zero_gradient_not_nan():
    ran = run("import torch\na = torch.zeros(1, 2, requires_grad=True)\nd = torch.cdist(a, torch.zeros(1, 2))\n"
              "d.sum().backward()")
    assert ran["d"].tolist() == [[0.0]] and ran["a"].grad.tolist() == [[0.0, 0.0]]


@pytest.mark.parametrize("call, words", [
    ("torch.cdist(torch.ones(2, 3), torch.ones(2, 4))", "X1 and X2 must have the same number of columns"),
    ("torch.cdist(torch.ones(3), torch.ones(2, 3))", "cdist only supports at least 2D tensors"),
    ("torch.cdist(torch.ones(2, 3), torch.ones(2, 3), p=-1)", "non-negative p"),
    ("torch.searchsorted(torch.ones(2, 3), torch.ones(3, 1))", "first N-1 dimensions"),
])
def test_cdist_and_searchsorted_refuse_mismatched_arguments(call, words):
    assert words in fails(f"import torch\ny = {call}").message


def test_index_put_adds_a_repeated_index_each_time_and_gathers_the_values_gradient():
    ran = run("import torch\nv = torch.tensor([1., 2., 4.], requires_grad=True)\ny = torch.zeros(2) * 1\n"
              "y.index_put_((torch.tensor([1, 1, 0]),), v, accumulate=True)\n(y * torch.tensor([10., 100.])).sum().backward()")
    assert ran["y"].tolist() == [4.0, 3.0]
    assert ran["v"].grad.tolist() == [100.0, 100.0, 10.0]


@pytest.mark.parametrize("call, words", [
    ("x.index_put_(torch.tensor([0]), torch.ones(1))", "must be tuple of Tensors"),
    ("x.index_put_((torch.tensor([0, 1]),), torch.ones(3), accumulate=True)", "cannot be broadcast"),
    ("x.index_put_((torch.tensor([5]),), torch.ones(1), accumulate=True)", "out of bounds"),
    ("w.index_put_((torch.tensor([0]),), torch.ones(1), accumulate=True)", "leaf Variable that requires grad"),
])
def test_index_put_refuses_what_pytorch_refuses(call, words):
    source = f"import torch\nx = torch.zeros(3)\nw = torch.zeros(3, requires_grad=True)\n{call}"
    assert words in fails(source).message


def test_a_list_index_must_be_an_integer_not_a_float_tensor_or_number():
    assert "only integer tensors of a single element can be converted to an index" in \
        fails("import torch\nxs = [1, 2]\ny = xs[torch.tensor(1.0)]").message
    assert "only integer tensors of a single element" in fails("import torch\nxs = [1, 2]\ny = xs[torch.tensor([0, 1])]").message
    assert "list indices must be integers" in fails("import numpy as np\nxs = [1, 2]\ny = xs[np.float64(1.0)]").message


def test_numpy_integers_and_integer_tensors_index_lists():
    ran = run("import numpy as np\nimport torch\nxs = [10, 20, 30]\na = xs[np.argmax(np.array([1, 5, 2]))]\n"
              "b = xs[torch.tensor(2)]\nxs[torch.tensor(0)] = 5\nc = xs")
    assert ran["a"] == 20 and ran["b"] == 30 and ran["c"] == [5, 20, 30]


def test_type_with_a_tensor_type_casts_by_hand():
    ran = run("import torch\nx = torch.tensor([1.7, -2.2]).type(torch.LongTensor)\ny = x.type(torch.DoubleTensor)")
    assert ran["x"].tolist() == [1, -2] and str(ran["x"].dtype) == "int64"
    assert str(ran["y"].dtype) == "float64"


def test_data_of_another_shape_takes_that_shape_and_an_older_graph_refuses_its_gradient():
    ran = run("import torch\nw = torch.ones(2, requires_grad=True)\nw.data = torch.ones(3, dtype=torch.float64)\n"
              "(w * torch.arange(3.)).sum().backward()")
    assert ran["w"].shape == (3,) and str(ran["w"].dtype) == "float64" and ran["w"].grad.tolist() == [0.0, 1.0, 2.0]
    error = fails("import torch\nw = torch.ones(2, requires_grad=True)\ny = (w * 2).sum()\nw.data = torch.ones(3)\n"
                  "y.backward()")
    assert "its .data was given a new shape since" in error.message and "[3]" in error.message
    error = fails("import torch\nw = torch.ones(2, requires_grad=True)\n(w * 2).sum().backward()\nw.data = torch.ones(3)\n"
                  "(w * 3).sum().backward()")
    assert "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0" in error.message
    assert "must be floating point or complex dtype" in \
        fails("import torch\nw = torch.ones(2, requires_grad=True)\nw.data = torch.ones(2, dtype=torch.int64)").message


def test_augmented_assignment_updates_an_array_in_place_as_numpy_does():
    ran = run("import numpy as np\nimport torch\na = np.array([1.0, 2.0])\nb = a\nt = torch.from_numpy(a)\n"
              "a *= 3\na += np.array([1.0, 1.0])\nnp.subtract(a, 1.0, out=a)")
    assert ran["b"].tolist() == [3.0, 6.0] and ran["t"].tolist() == [3.0, 6.0] and ran["b"] is ran["a"]
    assert "Cannot cast ufunc 'multiply' output" in fails("import numpy as np\na = np.array([1, 2])\na *= 0.5").message
    assert "out=" in fails("import numpy as np\nimport torch\nt = torch.ones(2)\nnp.add(t.numpy(), 1.0, out=t)").message


def test_a_hook_that_changes_its_gradient_in_place_changes_what_backward_passes_on():
    ran = run("import torch\ndef halve(grad):\n    grad /= 2\nx = torch.ones(3, requires_grad=True)\n"
              "y = x * 4\ny.register_hook(halve)\n(y * torch.tensor([1., 2., 3.])).sum().backward()")
    assert ran["x"].grad.tolist() == [2.0, 4.0, 6.0]  # d/dx of sum(c * 4x) is 4c, halved in the hook
