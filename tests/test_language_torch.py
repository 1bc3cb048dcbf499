"""PyTorch's autograd idioms as programs write them: gradient modes, in-place updates, the functional API
with the program's own functions, imports, CPU device boilerplate. Numbers derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine.tensor import GradMode
from gradcli.errors import ArgumentError, BackwardError, NameLookupError, NotAllowedError, ValueDomainError
from tests.language_helpers import fails, run


def test_no_grad_keeps_a_term_out_of_the_gradient():
    # out = x**2 + 3x, but the 3x is computed under no_grad: d(out)/dx = 2x = 4, not 2x + 3 = 7
    ran = run("import torch\nx = torch.tensor(2.0, requires_grad=True)\ny = x ** 2\nwith torch.no_grad():\n"
              "    z = x * 3\nout = y + z\nout.backward()\nflags = (z.requires_grad, torch.is_grad_enabled())")
    assert ran["x"].grad.item() == 4.0 and ran["flags"] == (False, True)


def test_every_gradient_mode_as_a_with_block():
    ran = run("import torch\nx = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n"
              "    with torch.enable_grad():\n        a = x * 2\n    b = x * 2\nwith torch.set_grad_enabled(False):\n"
              "    c = x * 2\nwith torch.inference_mode():\n    d = x * 2\ntorch.set_grad_enabled(False)\ne = x * 2\n"
              "torch.set_grad_enabled(True)\nf = x * 2")
    assert [ran[k].requires_grad for k in "abcdef"] == [True, False, False, False, False, True]


def test_an_error_inside_a_with_block_restores_the_gradient_mode():
    fails("import torch\nwith torch.no_grad():\n    y = undefined_name")
    assert GradMode.enabled


def test_with_takes_only_a_gradient_mode():
    error = fails("import torch\nwith torch.no_grad:\n    pass", NotAllowedError)
    assert error.message == "'with' works only with a gradient mode" and "torch.no_grad()" in error.hint


def test_gradient_descent_as_tutorials_write_it():
    # each step multiplies w by (1 - 0.1 * 2) = 0.8: after 3 steps w = 0.512 * [1, -2], still a leaf
    ran = run("import torch\n\ndef loss_fn(w):\n    return (w * w).sum()\n\n"
              "w = torch.tensor([1.0, -2.0], requires_grad=True)\nfor step in range(3):\n    loss = loss_fn(w)\n"
              "    loss.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n    w.grad.zero_()\n"
              "print(f'final loss {loss_fn(w).item():.4f}')")
    np.testing.assert_allclose(ran["w"].detach().numpy(), [0.512, -1.024], rtol=1e-6)
    assert ran["w"].is_leaf and ran["w"].requires_grad
    assert ran.printed == ["final loss 1.3107"]


def test_descent_through_data_and_in_place_methods():
    ran = run("import torch\nb = torch.tensor([4.0], requires_grad=True)\nfor _ in range(2):\n"
              "    (b * b).sum().backward()\n    b.data.sub_(0.25 * b.grad.data)\n    b.grad = None\n"
              "x = torch.ones(2, requires_grad=True)\nx.data *= 100\nx.grad = None")
    assert ran["b"].item() == 1.0 and ran["b"].grad is None  # 4 -> 4 - 0.25 * 8 = 2 -> 2 - 0.25 * 4 = 1
    np.testing.assert_array_equal(ran["x"].detach().numpy(), [100.0, 100.0])


def test_in_place_outside_no_grad_is_pytorchs_leaf_error_with_the_fix():
    error = fails("import torch\nw = torch.ones(2, requires_grad=True)\nw -= 1", BackwardError)
    assert error.message == "a leaf Variable that requires grad is being used in an in-place operation."
    assert "torch.no_grad()" in error.hint and error.line == 3
    assert "view of a leaf" in fails("import torch\nw = torch.ones(2, requires_grad=True)\nw[0] += 1").message


def test_element_assignment_in_a_program():
    ran = run("import torch\nx = torch.zeros(3)\nx[0] = 2\nx[1:] += 1\nmask = x > 1.5\nx[mask] = -1.0\n"
              "a = torch.tensor([1.0, 2.0], requires_grad=True)\nb = a * 3\nb[0] = 0.0\nb.sum().backward()")
    np.testing.assert_array_equal(ran["x"].numpy(), [-1.0, 1.0, 1.0])
    assert ran["b"].grad_fn.name == "CopySlices"
    np.testing.assert_array_equal(ran["a"].grad.numpy(), [0.0, 3.0])


def test_functional_api_with_the_programs_own_functions():
    # f(v) = v**3 at (1, 2): J = diag(3, 12); vJ with v = 1 is (3, 12); Jv for (1, 0) is (3, 0); H = diag(6, 12)
    ran = run("import torch\nfrom torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp\n"
              "def f(v):\n    return v ** 3\nx = torch.tensor([1.0, 2.0])\n"
              "J = jacobian(f, x, vectorize=True, strict=False)\nH = hessian(lambda v: f(v).sum(), x)\n"
              "out, vj = vjp(f, x, torch.ones(2))\n_, jv = jvp(f, x, torch.tensor([1.0, 0.0]))\n"
              "_, hv = hvp(lambda v: f(v).sum(), x, torch.ones(2))\n_, vh = vhp(lambda v: f(v).sum(), x, torch.ones(2))\n"
              "Jab = jacobian(lambda a, b: a * b, (x, x * 2))")
    np.testing.assert_array_equal(ran["J"].numpy(), [[3.0, 0.0], [0.0, 12.0]])
    np.testing.assert_array_equal(ran["H"].numpy(), [[6.0, 0.0], [0.0, 12.0]])
    for name, want in (("out", [1.0, 8.0]), ("vj", [3.0, 12.0]), ("jv", [3.0, 0.0]), ("hv", [6.0, 12.0]),
                       ("vh", [6.0, 12.0])):
        np.testing.assert_array_equal(ran[name].numpy(), want)
    np.testing.assert_array_equal(ran["Jab"][1].numpy(), [[1.0, 0.0], [0.0, 2.0]])


def test_functional_api_refuses_what_pytorch_refuses():
    assert fails("import torch\nfrom torch.autograd.functional import vjp\nvjp(lambda v: v * 2, torch.ones(2))",
                 ArgumentError).message.startswith("The vector v can only be None")


def test_imports_of_math_functional_and_autograd():
    ran = run("import math\nimport torch\nimport torch.nn.functional as F\nfrom torch.autograd import grad, Variable\n"
              "x = torch.tensor([math.pi / 2], requires_grad=True)\ny = F.relu(x.sin() * math.sqrt(4.0))\n"
              "g, = grad(y.sum(), x)\nr = math.floor(math.e)")
    assert ran["y"].item() == pytest.approx(2.0) and abs(ran["g"].item()) < 1e-6 and ran["r"] == 2


def test_math_domain_errors_and_unknown_modules_are_user_errors():
    assert "math domain error" in fails("import math\ny = math.sqrt(-1)", ValueDomainError).message
    assert "import of 'os' is refused: it reaches files" in fails("import os", NotAllowedError).message
    assert fails("from torch.autograd.functional import jacobain", NameLookupError).hint == "did you mean 'jacobian'?"


def test_cpu_device_boilerplate_runs():
    ran = run("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.ones(2, device=device).to(device)\ny = torch.zeros(2, device='cpu').cpu().to(torch.float64)\n"
              "torch.set_default_device('cpu')\nprint(device)\nprint([device])")
    assert ran.printed == ["cpu", "[device(type='cpu')]"]
    assert str(ran["y"].dtype) == "float64"


@pytest.mark.parametrize("line", ["torch.ones(2).cuda()", "torch.ones(2, device='cuda')", "torch.ones(2).to('cuda:0')",
                                  "torch.set_default_device('cuda')"])
def test_asking_for_cuda_is_pytorchs_error(line):
    error = fails(f"import torch\n{line}", ArgumentError)
    assert error.message == "Torch not compiled with CUDA enabled" and "cpu" in error.hint


def test_shapes_print_as_torch_size_and_equal_compares_whole_tensors():
    ran = run("import torch\nx = torch.ones(3)\nprint(x.shape, x.size(), x[0].shape)\n"
              "same = (x.equal(torch.ones(3)), torch.equal(x, torch.zeros(3)), x.shape == (3,))")
    assert ran.printed == ["torch.Size([3]) torch.Size([3]) torch.Size([])"]
    assert ran["same"] == (True, False, True)


def test_set_default_dtype():
    ran = run("import torch\ntorch.set_default_dtype(torch.float64)\nx = torch.tensor([1.5])\nd = torch.get_default_dtype()")
    assert str(ran["x"].dtype) == "float64" and ran["d"] == "float64"


def test_hooks_see_and_may_replace_gradients():
    # y = 3x, loss = sum(y**2): dL/dy = 2y = (6, 12); the hook makes it 10x, so x.grad = 3 * (60, 120)
    ran = run("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x * 3\n"
              "h = y.register_hook(lambda g: g * 10)\nseen = []\nx.register_hook(lambda g: seen.append(g))\n"
              "(y ** 2).sum().backward(retain_graph=True)\nfirst = x.grad.tolist()\nh.remove()\nx.grad = None\n"
              "(y ** 2).sum().backward()")
    assert ran["first"] == [180.0, 360.0] and ran["x"].grad.tolist() == [18.0, 36.0]
    assert [g.tolist() for g in ran["seen"]] == [[180.0, 360.0], [18.0, 36.0]]
    assert "doesn't require gradient" in fails("import torch\ntorch.ones(2).register_hook(lambda g: g)").message


def test_saved_tensors_by_pytorchs_names_only():
    ran = run("import torch\nb = torch.ones(2, requires_grad=True)\ne = b.exp()\nr = e.grad_fn._saved_result\n"
              "m = (b * 3).grad_fn\nother = m._saved_other\nnone = m._saved_self\n"
              "nexts = [len((1 - b).grad_fn.next_functions), len((2 * b).grad_fn.next_functions)]")
    np.testing.assert_allclose(ran["r"].detach().numpy(), [np.e, np.e], rtol=1e-6)
    assert ran["r"].grad_fn.name == "ExpBackward0" and ran["other"].item() == 3 and ran["none"] is None
    assert ran["nexts"] == [1, 2]
    error = fails("import torch\nb = torch.ones(2, requires_grad=True)\nv = b.exp().grad_fn._saved_self", NameLookupError)
    assert error.message == "'ExpBackward0' object has no attribute '_saved_self'"
    assert error.hint == "ExpBackward0 keeps _saved_result"


def test_saved_names_agree_between_parser_table_and_nodes():
    """The parser lets a program name exactly the saved tensors the table maps and Node answers."""
    from gradcli.engine.saved import NAMES
    from gradcli.engine.tensor import Node, SavedTensor
    from gradcli.lang.parser import SAVED_ATTRIBUTES
    on_node = {name for name, value in vars(Node).items() if isinstance(value, SavedTensor)}
    assert SAVED_ATTRIBUTES == NAMES == on_node


def test_shapes_by_the_size_keyword():
    ran = run("import torch\na = torch.ones(size=(2, 3))\nb = torch.zeros(size=[4])\nc = torch.randn(size=())\n"
              "d = torch.rand(size=(1, 2))")
    assert [tuple(ran[k].shape) for k in "abcd"] == [(2, 3), (4,), (), (1, 2)]
    assert "given twice" in fails("import torch\nx = torch.ones(2, size=(2,))", ArgumentError).message


def test_a_random_fill_of_a_saved_value_stops_run_and_eval_with_pytorchs_error(cli, tmp_path):
    script = tmp_path / "refill.grad"
    script.write_text("import torch\nw = torch.ones(2, 3, requires_grad=True)\nz = (w * w).sum()\n"
                      "with torch.no_grad():\n    w.normal_()\nz.backward()\n")
    result = cli("run", str(script))
    assert result.exit_code == 2
    text = " ".join(result.stderr.split())
    assert ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [2, 3]] is at version 1; expected version 0 instead.") in text
    assert "| z.backward()" in text and "update it only after the backward that needs it" in text
    result = cli("eval", "y = x.exp(); y.uniform_(); out = y.sum()", "x=ones(2)")
    assert result.exit_code == 2 and result.stdout == ""
    assert ("[torch.DoubleTensor [2]], which is output 0 of Exp, is at version 1; expected version 0 instead."
            in " ".join(result.stderr.split()))


def test_inference_mode_in_a_program():
    ran = run("import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.inference_mode():\n"
              "    a = torch.ones(2) * 3\n    inside = torch.is_inference_mode_enabled()\n"
              "@torch.inference_mode()\ndef frozen(v):\n    return v * 2\n"
              "flags = (a.is_inference(), a.requires_grad, torch.is_inference(a), inside, "
              "torch.is_inference_mode_enabled(), frozen(w).is_inference(), a.clone().is_inference())\n"
              "(a + w).sum().backward()\n")
    assert ran["flags"] == (True, False, True, True, False, True, False)
    np.testing.assert_array_equal(ran["w"].grad.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("line, message", [
    ("y = a * w", "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                  "mode in computation tracked by autograd."),
    ("a.add_(1)", "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get "
                  "a normal tensor before doing inplace update."),
])
def test_inference_tensor_misuse_stops_run_with_pytorchs_error(cli, tmp_path, line, message):
    script = tmp_path / "inference.grad"
    script.write_text("import torch\nw = torch.ones(2, requires_grad=True)\nwith torch.inference_mode():\n"
                      f"    a = torch.ones(2)\n{line}\n")
    result = cli("run", str(script))
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and message in text and f"| {line}" in text and "clone()" in text


def test_in_place_through_views_in_a_program():
    # x[0] = (0 + 1) * w = 3 and x[:, 1] = w = 3; out = 1*x[0,0] + 2*x[0,1] + 3*x[1,0] + 4*x[1,1]
    ran = run("import torch\nw = torch.tensor(3.0, requires_grad=True)\nx = torch.zeros(2, 2, requires_grad=True).clone()\n"
              "v = x[0]\nv.add_(1)\nv.mul_(w)\nx.t()[1].copy_(w.expand(2))\n"
              "out = (x * torch.tensor([[1.0, 2.0], [3.0, 4.0]])).sum()\nout.backward()\n"
              "name = x.grad_fn.name()\n")
    np.testing.assert_array_equal(ran["x"].detach().numpy(), [[3.0, 3.0], [0.0, 3.0]])
    assert ran["name"] == "torch::autograd::CopySlices" and ran["v"].tolist() == [3.0, 3.0]
    assert ran["w"].grad.item() == 7.0  # 1 (x[0,0] = w) + 2 + 4 (the column copies w)


def test_writing_through_an_expanded_view_stops_run_with_pytorchs_error(cli, tmp_path):
    script = tmp_path / "expand.grad"
    script.write_text("import torch\nb = torch.zeros(3)\ne = b.expand(2, 3)\ne.add_(1)\n")
    result = cli("run", str(script))
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "| e.add_(1)" in text
    assert ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.") in text
    result = cli("eval", "y = x * 1; y.diagonal().mul_(2); out = y.sum()", "x=ones(2,2)")
    assert result.exit_code == 2 and "gradcli cannot update the view that diagonal() returns in place" in \
        " ".join(result.stderr.split())


@pytest.mark.parametrize("passes", [["[2, 3]"], ["[2]", "[2, 3]"]])
def test_a_method_call_names_wrong_arguments_alike_on_every_pass_of_a_loop(passes):
    """A site's later passes call the tensor method directly; its mistakes read as on the first pass."""
    error = fails(f"import torch\nx = torch.ones(2)\nfor args in [{', '.join(passes)}]:\n    y = x.pow(*args)\n",
                  ArgumentError)
    assert (error.message, error.hint) == ("x.pow(): too many positional arguments", "usage: pow(exponent)")
    assert (error.line, error.column, error.length) == (4, 9, len("x.pow(*args)"))


def test_an_error_inside_a_method_called_on_a_later_pass_keeps_its_place_and_call_stack():
    error = fails("import torch\ndef first(n):\n    return torch.ones(n).item()\nfor n in [1, 3]:\n    y = first(n)\n",
                  ValueDomainError)
    assert (error.line, error.column, error.length) == (3, 12, len("torch.ones(n).item()"))
    assert error.calls == [(5, 9, len("first(n)"))]


def test_axis_is_read_as_dim_as_pytorchs_argument_parser_reads_it():
    """D2L writes y_hat.argmax(axis=1); recorded from torch 2.13 running the same line."""
    printed = run("import torch\nx = torch.tensor([[1., 5.], [3., 2.]])\nprint(x.sum(axis=0).tolist(), "
                  "torch.cat([x, x], axis=1).shape, x.argmax(axis=1).tolist(), "
                  "torch.mean(x, axis=1, keepdim=True).tolist(), x.softmax(axis=0).shape)\n").printed
    assert printed == ["[4.0, 7.0] torch.Size([2, 4]) [1, 0] [[3.0], [2.5]] torch.Size([2, 2])"]
    with pytest.raises(ArgumentError) as info:  # both given: PyTorch's TypeError too
        run("import torch\nx = torch.ones(2)\nx.sum(axis=0, dim=0)\n")
    assert "unexpected keyword argument 'axis'" in info.value.message
