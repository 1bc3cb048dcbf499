"""torch.autograd.graph: saved-tensor hooks, node hooks, post-accumulate hooks, next_functions, metadata,
saved-tensor identity. Orders and values are PyTorch 2.13's (recorded here; the oracle test re-derives them)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import BackwardError, LimitError, ShapeError
from tests.language_helpers import fails, run


# -- hostile input first ----------------------------------------------------------------------------------
def test_a_node_hook_that_never_returns_hits_the_step_cap() -> None:
    fails("x = torch.ones(2, requires_grad=True)\ns = (x * 2).sum()\n"
          "def h(gi, go):\n    while True:\n        pass\ns.grad_fn.register_hook(h)\ns.backward()\n",
          LimitError, max_steps=1000)


def test_a_pack_hook_that_never_returns_hits_the_step_cap() -> None:
    fails("x = torch.ones(2, requires_grad=True)\ndef pack(t):\n    while True:\n        pass\n"
          "with torch.autograd.graph.saved_tensors_hooks(pack, lambda p: p):\n    y = x.exp()\n", LimitError,
          max_steps=1000)


def test_an_unpack_hook_returning_junk_is_pytorchs_error() -> None:
    err = fails("x = torch.ones(2, requires_grad=True)\n"
                "with torch.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: 'junk'):\n    y = x.exp()\n"
                "y.sum().backward()\n", BackwardError)
    assert err.message == "Output of saved tensor unpack_hook expected to be a Tensor but got result of type str"


def test_an_unpack_hook_returning_another_shape_is_refused_not_a_wrong_number() -> None:
    err = fails("x = torch.ones(2, requires_grad=True)\n"
                "with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: torch.ones(5)):\n"
                "    y = x.exp()\ny.sum().backward()\n", ShapeError)
    assert "shape (5,)" in err.message


def test_node_hooks_returning_the_wrong_thing_are_refused() -> None:
    assert "must return a tuple of 1 gradients" in fails(
        "x = torch.ones(2, requires_grad=True)\ns = (x * 2).sum()\ns.grad_fn.register_hook(lambda gi, go: 3)\n"
        "s.backward()\n", BackwardError).message
    fails("x = torch.ones(2, requires_grad=True)\ns = (x * 2).sum()\n"
          "s.grad_fn.register_prehook(lambda go: (torch.ones(3),))\ns.backward()\n", ShapeError)


def test_a_non_leaf_refuses_a_post_accumulate_hook() -> None:
    assert "non-leaf" in fails("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                               "y.register_post_accumulate_grad_hook(lambda t: None)\n", BackwardError).message


def test_hooks_leave_with_the_with_block() -> None:
    ran = run("x = torch.ones(2, requires_grad=True)\nseen = []\ndef pack(t):\n    seen.append(1)\n    return t\n"
              "with torch.autograd.graph.saved_tensors_hooks(pack, lambda p: p):\n    y = x.exp()\nz = x.exp()\n")
    assert ran["seen"] == [1]


# -- what hooks see, and in which order -------------------------------------------------------------------
ORDER = """
x = torch.tensor([1.0, 2.0], requires_grad=True)
s = (x * 2).sum()
s.grad_fn.register_hook(lambda gi, go: print("post", gi, go))
s.grad_fn.register_prehook(lambda go: print("pre", go))
s.grad_fn.next_functions[0][0].register_hook(lambda gi, go: print("mulpost", gi, go))
acc = s.grad_fn.next_functions[0][0].next_functions[0][0]
acc.register_hook(lambda gi, go: print("accpost", gi, go))
acc.register_prehook(lambda go: print("accpre", go))
x.register_post_accumulate_grad_hook(lambda t: print("postacc", t.grad))
x.register_hook(lambda g: print("tensorhook", g))
s.backward()
"""
# PyTorch 2.13's output for ORDER
ORDER_PRINTED = ["pre (tensor(1.),)", "post (tensor([1., 1.]),) (tensor(1.),)",
                 "mulpost (tensor([2., 2.]), None) (tensor([1., 1.]),)", "tensorhook tensor([2., 2.])",
                 "accpre (tensor([2., 2.]),)", "postacc tensor([2., 2.])", "accpost () (tensor([2., 2.]),)"]


def test_hooks_run_in_pytorchs_order_and_see_pytorchs_gradients() -> None:
    assert run(ORDER).printed == ORDER_PRINTED


def test_node_hooks_replace_gradients() -> None:
    ran = run("x = torch.tensor([1.0, 2.0], requires_grad=True)\ns = (x * 2).sum()\n"
              "s.grad_fn.register_prehook(lambda go: (go[0] * 10,))\n"
              "s.grad_fn.register_hook(lambda gi, go: (gi[0] * 100,))\ns.backward()\n")
    np.testing.assert_allclose(ran["x"].grad._data, [2000, 2000])


SAVED = """
a = torch.ones(3, requires_grad=True)
b = torch.ones(3, requires_grad=True) * 2
def pack(x):
    print("Packing", x)
    return x
def unpack(x):
    print("Unpacking", x)
    return x
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = a * b
    z = y.exp()
z.sum().backward()
print(a.grad)
"""
SAVED_PRINTED = ["Packing tensor([2., 2., 2.], grad_fn=<MulBackward0>)", "Packing tensor([1., 1., 1.], requires_grad=True)",
                 "Packing tensor([7.3891, 7.3891, 7.3891], grad_fn=<ExpBackward0>)",
                 "Unpacking tensor([7.3891, 7.3891, 7.3891], grad_fn=<ExpBackward0>)",
                 "Unpacking tensor([2., 2., 2.], grad_fn=<MulBackward0>)",
                 "Unpacking tensor([1., 1., 1.], requires_grad=True)", "tensor([14.7781, 14.7781, 14.7781])"]


IDENTITY = """
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
m = a * 2
y = m ** 2
print(y.grad_fn._saved_self is m, y.grad_fn._saved_exponent, m.grad_fn._saved_self, m.grad_fn._saved_other.item())
e = m.exp()
r = m.relu()
print(e.grad_fn._saved_result is e, r.grad_fn._saved_result is r, r.grad_fn._saved_result.tolist())
z = a * m
d = m / b
print(z.grad_fn._saved_self is a, z.grad_fn._saved_other is m, d.grad_fn._saved_self is m, d.grad_fn._saved_other is b)
print(m.log().grad_fn._saved_self is m, m.dot(b).grad_fn._saved_tensor is b, m.sin().grad_fn._saved_self is m)
print((a + b).grad_fn._saved_alpha, (a - b).grad_fn._saved_alpha)
s = m.sum(dim=0)
k = m.mean(dim=0, keepdim=True)
print(s.grad_fn._saved_dim, s.grad_fn._saved_keepdim, k.grad_fn._saved_dim, k.grad_fn._saved_keepdim)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
    w = a.pow(2)
print(w.grad_fn._saved_self.equal(a), w.grad_fn._saved_self is a)
"""
IDENTITY_PRINTED = ["True 2 None 2", "False False [2.0, 4.0]", "True True True True", "True True True", "1 1",
                    "(0,) False (0,) True", "True False"]


def test_saved_tensors_are_the_inputs_themselves_as_in_pytorch() -> None:
    assert run(IDENTITY).printed == IDENTITY_PRINTED


def test_saved_tensor_hooks_see_what_pytorch_packs_and_unpacks() -> None:
    assert run(SAVED).printed == SAVED_PRINTED


def test_an_unpack_hook_changes_what_backward_reads() -> None:
    ran = run("x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 0 + 3, lambda p: p):\n    y = x * x\n"
              "y.sum().backward()\n")
    np.testing.assert_allclose(ran["x"].grad._data, [6, 6])  # PyTorch: both saved operands read as 3


def test_save_on_cpu_changes_nothing() -> None:
    ran = run("x = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.autograd.graph.save_on_cpu():\n"
              "    y = (x * x).sum()\ny.backward()\n")
    np.testing.assert_allclose(ran["x"].grad._data, [2, 4])


# -- inspection -----------------------------------------------------------------------------------------
def test_next_functions_walk_ends_at_accumulate_grad() -> None:
    ran = run("a = torch.tensor(1.0, requires_grad=True)\nnode = ((a * 2).exp() + 1).grad_fn\nnames = []\n"
              "while node is not None and len(names) < 10:\n    names.append(node.name())\n"
              "    node = node.next_functions[0][0] if node.next_functions else None\n")
    assert ran["names"] == ["AddBackward0", "ExpBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert run("a = torch.tensor(1.0, requires_grad=True)\nb = (a * 2).grad_fn.next_functions[0][0]\n"
               "print(b.next_functions)").printed == ["()"]


def test_metadata_is_a_dict_kept_by_the_node() -> None:
    ran = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\nv = y.grad_fn.metadata\nsame = v is y.grad_fn.metadata\n"
              "other = v is (x * 2).grad_fn.metadata")
    assert ran["v"] == {} and ran["same"] is True and ran["other"] is False


def test_saved_self_is_the_input_itself_and_saved_result_a_new_tensor() -> None:
    ran = run("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = x.pow(2)\nsame = y.grad_fn._saved_self is x\n"
              "e = x.exp()\nresult = e.grad_fn._saved_result is e\nequal = e.grad_fn._saved_result.equal(e)")
    assert ran["same"] is True and ran["result"] is False and ran["equal"] is True


def test_node_is_a_type_name() -> None:
    from gradcli.engine.tensor import Node
    assert run("import torch.autograd.graph as g\nN = g.Node")["N"] is Node


def test_isinstance_of_graph_node_covers_every_node_as_in_pytorch() -> None:
    ran = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\nacc = y.grad_fn.next_functions[0][0]\n"
              "r = (isinstance(y.grad_fn, torch.autograd.graph.Node), isinstance(acc, torch.autograd.graph.Node), "
              "isinstance(x, torch.autograd.graph.Node))\ny.grad_fn.metadata['k'] = 3\nm = y.grad_fn.metadata")
    assert ran["r"] == (True, True, False) and ran["m"] == {"k": 3}


def test_only_a_program_that_reads_saved_tensors_makes_ops_remember_their_outputs() -> None:
    import ast
    from gradcli.engine import saved
    from gradcli.lang.interpreter import _reads_saved_tensors
    assert _reads_saved_tensors(ast.parse("y = x * 2\nv = y.grad_fn._saved_self"))
    assert not _reads_saved_tensors(ast.parse("y = x * 2\nv = y.grad_fn.next_functions"))
    run(IDENTITY)
    from gradcli.engine.tensor import Observe
    assert not saved.OUTPUTS and saved._remember not in Observe.each
