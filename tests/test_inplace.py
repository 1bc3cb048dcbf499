"""In-place updates and gradient modes in the engine: PyTorch's values, graphs and error texts."""
from __future__ import annotations

import numpy as np
import pytest

import gradcli
from gradcli.engine import creation as C
from gradcli.engine import ops as O
from gradcli.engine.inplace import VIEW_OF_LEAF
from gradcli.engine.modes import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from gradcli.engine.tensor import GradMode
from gradcli.errors import BackwardError, DtypeError, ShapeError
from language_helpers import run, torch_printed


def test_descent_under_no_grad_updates_the_leaf_in_place():
    w = C.tensor([1.0, -2.0], requires_grad=True)
    data = w._data
    for _ in range(3):
        (w * w).sum().backward()
        with no_grad():
            w -= 0.1 * w.grad
        w.grad.zero_()
    np.testing.assert_allclose(w.numpy() if not w.requires_grad else w.detach().numpy(), [0.512, -1.024])
    assert w.is_leaf and w.requires_grad and w._data is data


def test_in_place_on_a_leaf_that_requires_grad_is_pytorchs_error():
    w = C.ones(2, requires_grad=True)
    for update in (lambda: w.__isub__(1), lambda: w.add_(1), lambda: w.zero_(), lambda: w.exp_()):
        with pytest.raises(BackwardError, match="^a leaf Variable that requires grad is being used in an in-place "
                                                "operation.$"):
            update()
    with pytest.raises(BackwardError, match="a view of a leaf Variable"):
        w[0] = 2.0
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, 1.0])


def test_data_writes_reach_the_tensor_and_bump_no_version():
    x = C.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    x.data.mul_(100)
    x.data.sub_(C.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(x.detach().numpy(), [99.0, 199.0])
    y.backward()  # PyTorch does not see .data writes: the gradient uses the new values
    np.testing.assert_array_equal(x.grad.numpy(), [198.0, 398.0])


def test_a_view_of_data_bumps_no_version_but_the_tensor_itself_does():
    x = C.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    x.data[1:].mul_(2)  # a view of the .data alias: still unseen by autograd
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 8.0, 12.0])
    w = x.detach()  # a detached tensor is not .data: PyTorch counts its writes
    w.add_(1)
    with pytest.raises(BackwardError, match="modified by an inplace operation"):
        y.backward()


def test_in_place_on_a_non_leaf_rebases_its_history():
    x = C.ones(3, requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(3)
    assert y.grad_fn.name == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0, 6.0])


def test_modifying_a_saved_tensor_then_backward_is_pytorchs_version_error():
    x = C.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(BackwardError) as caught:
        y.sum().backward()
    assert caught.value.message == ("one of the variables needed for gradient computation has been modified by an "
                                    "inplace operation: [torch.DoubleTensor [2]], which is output 0 of Exp, is at "
                                    "version 1; expected version 0 instead.")
    w = C.ones(2, 3, requires_grad=True)
    z = (w * w).sum()
    with no_grad():
        w.mul_(2)
    with pytest.raises(BackwardError, match=r"\[torch.DoubleTensor \[2, 3\]\] is at version 1; expected version 0"):
        z.backward()


def test_a_graph_built_after_the_update_is_fine():
    w = C.tensor([3.0], requires_grad=True)
    with no_grad():
        w.mul_(2)
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [12.0])


def test_element_assignment_on_the_graph_is_copy_slices():
    a = C.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    b[1] = 10.0
    assert b.grad_fn.name == "CopySlices"
    np.testing.assert_array_equal(b.detach().numpy(), [1.0, 10.0, 3.0])
    (b * C.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.0, 3.0])
    v = C.tensor(5.0, requires_grad=True)
    c = C.zeros(3)
    c[0] = v * 2
    c[1:] = v
    c.sum().backward()
    assert v.grad.item() == 4.0 and c.grad_fn.name == "CopySlices"


def test_element_assignment_off_the_graph_writes_in_place():
    x = C.zeros(2, 3)
    x[0] = C.tensor([1.0, 2.0, 3.0])
    x[:, 2] = 7
    x[x > 5] = -1
    np.testing.assert_array_equal(x.numpy(), [[1.0, 2.0, -1.0], [0.0, 0.0, -1.0]])
    with pytest.raises(ShapeError, match="shape mismatch"):
        x[0] = C.ones(2)


def test_in_place_keeps_the_shape_and_the_dtype():
    with pytest.raises(ShapeError, match=r"output with shape \[2\] doesn't match the broadcast shape \[2, 2\]"):
        C.zeros(2).add_(C.ones(2, 2))
    counts = gradcli.tensor([1, 2])
    with pytest.raises(DtypeError, match="result type Double can't be cast to the desired output type Long"):
        counts.add_(0.5)


def test_fill_copy_clamp_and_friends():
    x = C.tensor([-1.0, 0.5, 2.0])
    x.clamp_(0.0, 1.0)
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.5, 1.0])
    x.fill_(3.0).pow_(2).neg_()
    np.testing.assert_array_equal(x.numpy(), [-9.0, -9.0, -9.0])
    x.copy_(C.tensor([1.0, 4.0, 9.0])).sqrt_()
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    src = C.tensor([2.0], requires_grad=True)
    y = C.zeros(3)
    y.copy_(src)
    assert y.grad_fn.name == "CopyBackwards"
    y.sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), [3.0])


def test_gradient_modes_switch_and_restore():
    x = C.ones(2, requires_grad=True)
    with no_grad():
        assert not is_grad_enabled() and not (x * 2).requires_grad
        with enable_grad():
            assert (x * 2).requires_grad
        assert not is_grad_enabled()
    assert is_grad_enabled()
    with inference_mode():
        assert not (x * 2).requires_grad
    set_grad_enabled(False)
    assert not GradMode.enabled
    set_grad_enabled(True)
    with set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert GradMode.enabled


# The arguments each in-place method of a program takes below: every one the builtins list must be here, so a
# new in-place method cannot skip the version counter unnoticed.
IN_PLACE_CALLS = {
    "add_": (1.0,), "sub_": (1.0,), "mul_": (2.0,), "div_": (2.0,), "pow_": (2,), "neg_": (), "zero_": (),
    "multiply_": (2.0,), "true_divide_": (2.0,),
    "fill_": (2.0,), "copy_": (C.tensor([1.0, 2.0, 3.0]),), "clamp_": (0.0, 1.0), "clip_": (0.0, 1.0), "exp_": (),
    "log_": (), "sqrt_": (), "abs_": (), "sigmoid_": (), "tanh_": (), "relu_": (), "sinc_": (), "uniform_": (),
    "normal_": (), "bernoulli_": (0.5,), "random_": (10,), "exponential_": (), "cauchy_": (),
    "masked_fill_": (C.tensor([True, False, True]), 0.0), "scatter_": (0, C.tensor([2, 0]), 1.0),
    "scatter_add_": (0, C.tensor([1, 1]), C.tensor([1.0, 2.0])),
    "index_add_": (0, C.tensor([0, 0]), C.tensor([1.0, 2.0])),
    "index_put_": ((C.tensor([0, 0]),), C.tensor([1.0, 2.0]), True), "put_": (C.tensor([0, 2]), C.tensor([1.0, 2.0])),
    **{name: () for name in O.named("in_place_methods", unary=True)},  # sin_, floor_, ... (test_in_place_declared)
    **{name: (C.tensor([1.0, 1.0, 1.0]),) for name in ("atan2_", "arctan2_", "fmod_", "hypot_", "remainder_", "xlogy_")},
    "cumsum_": (0,), "cumprod_": (0,), "lerp_": (C.tensor([1.0, 1.0, 1.0]), 0.5), "logit_": (), "round_": (),
    "square_": (), "addcmul_": (C.ones(3), C.ones(3)), "addcdiv_": (C.ones(3), C.ones(3)),
}


SHAPE_CALLS = {"squeeze_": (), "unsqueeze_": (0,), "t_": (), "transpose_": (0, -1), "swapaxes_": (0, 0),
               "swapdims_": (-1, 0), "resize_": (3,), "resize_as_": (C.tensor([1.0, 2.0, 3.0]),)}
"""The in-place methods that change a tensor's shape, whose rules differ (checked against torch 2.13 below)."""
MATRIX_CALLS = {"tril_": (), "triu_": (-1,)}
"""The in-place methods of a matrix."""


def test_every_in_place_method_of_the_builtins_is_exercised():
    from gradcli.lang.builtins import TENSOR_METHODS
    assert set(IN_PLACE_CALLS) | set(SHAPE_CALLS) | set(MATRIX_CALLS) == \
        {name for name in TENSOR_METHODS if name.endswith("_")} - {"requires_grad_", "detach_"}  # they change no values


@pytest.mark.parametrize("name", ["squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_"])
def test_a_shape_change_in_place_bumps_the_version_as_in_pytorch(name):
    w = C.tensor([0.5, 2.0, 3.0], requires_grad=True)
    z = (w * w).sum()
    with no_grad():
        getattr(w, name)(*SHAPE_CALLS[name])
    with pytest.raises(BackwardError, match="is at version 1; expected version 0 instead"):
        z.backward()


@pytest.mark.parametrize("name", ["resize_", "resize_as_"])
def test_a_resize_of_a_tensor_that_requires_grad_is_refused_in_any_mode(name):
    """PyTorch refuses it, with gradients on or off; a resize of a tensor without grad leaves the version as is."""
    w = C.tensor([0.5, 2.0, 3.0], requires_grad=True)
    with no_grad(), pytest.raises(ShapeError, match="cannot resize variables that require grad"):
        getattr(w, name)(*SHAPE_CALLS[name])
    v = C.tensor([0.5, 2.0, 3.0])
    z = (w * v).sum()
    getattr(v, name)(*SHAPE_CALLS[name])
    z.backward()
    assert w.grad.tolist() == [0.5, 2.0, 3.0]


@pytest.mark.parametrize("name", sorted(IN_PLACE_CALLS))
def test_every_in_place_method_bumps_the_version_of_a_saved_value(name):
    w = C.tensor([0.5, 2.0, 3.0], requires_grad=True)
    z = (w * w).sum()  # saves w
    with no_grad():
        getattr(w, name)(*IN_PLACE_CALLS[name])
    with pytest.raises(BackwardError) as caught:
        z.backward()
    assert caught.value.message == ("one of the variables needed for gradient computation has been modified by an "
                                    "inplace operation: [torch.DoubleTensor [3]] is at version 1; expected version 0 "
                                    "instead.")
    y = C.tensor([0.5, 2.0, 3.0], requires_grad=True).exp()  # saves its output y
    getattr(y, name)(*IN_PLACE_CALLS[name])
    with pytest.raises(BackwardError, match=r"\[torch.DoubleTensor \[3\]\], which is output 0 of Exp, is at version 1; "
                                            r"expected version 0 instead.$"):
        y.sum().backward()


@pytest.mark.parametrize("name", sorted(MATRIX_CALLS))
def test_a_matrix_in_place_method_bumps_the_version_of_a_saved_value(name):
    w = C.tensor([[0.5, 2.0], [3.0, 4.0]], requires_grad=True)
    z = (w * w).sum()
    with no_grad():
        getattr(w, name)(*MATRIX_CALLS[name])
    with pytest.raises(BackwardError, match=r"\[torch.DoubleTensor \[2, 2\]\] is at version 1; expected version 0"):
        z.backward()


def test_initialisers_element_writes_and_optimizer_steps_bump_the_version():
    from gradcli.nn import init
    from gradcli.optim import optimizers as optim
    updates = [lambda w: init.constant_(w, 0.5), init.ones_, init.zeros_, lambda w: init.uniform_(w, -1, 1),
               lambda w: w.__setitem__(0, 7.0)]
    for update in updates:
        w = C.ones(2, 3, requires_grad=True)
        z = (w * w).sum()
        with no_grad():
            update(w)
        with pytest.raises(BackwardError, match=r"\[torch.DoubleTensor \[2, 3\]\] is at version 1; expected version 0"):
            z.backward()
    w = C.tensor([1.0, 2.0], requires_grad=True)
    step = optim.SGD([w], lr=0.5)
    first = (w * w).sum()
    (w * w).sum().backward()
    step.step()  # w = (1, 2) - 0.5 * (2, 4) = (0, 0)
    np.testing.assert_array_equal(w.detach().numpy(), [0.0, 0.0])
    with pytest.raises(BackwardError, match=r"\[torch.DoubleTensor \[2\]\] is at version 1; expected version 0"):
        first.backward()


def test_random_fills_on_the_graph_are_pytorchs_nodes_with_a_zero_gradient():
    x = C.tensor([1.0, 2.0, 3.0], requires_grad=True)
    names = []
    for fill in (lambda t: t.uniform_(), lambda t: t.normal_(), lambda t: t.bernoulli_(0.5),
                 lambda t: t.bernoulli_(C.full((3,), 0.5)), lambda t: t.fill_(2.0), lambda t: t.zero_(),
                 lambda t: t.random_(), lambda t: t.random_(5), lambda t: t.random_(1, 5), lambda t: t.exponential_(),
                 lambda t: t.cauchy_()):
        y = x * 2
        fill(y)
        names.append(y.grad_fn.name)
        (y * 5).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    assert names == ["UniformBackward0", "NormalBackward0", "BernoulliBackward2", "BernoulliBackward1",
                     "FillBackward2", "ZeroBackward0", "RandomBackward2", "RandomBackward1", "RandomBackward0",
                     "ExponentialBackward0", "CauchyBackward0"]


def test_fill_with_a_tensor_that_requires_grad_passes_it_the_summed_gradient():
    x = C.ones(3, requires_grad=True)
    v = C.tensor(2.0, requires_grad=True)
    y = x * 1
    y.fill_(v)
    (y * C.tensor([1.0, 2.0, 3.0])).sum().backward()  # d/dv of v*1 + v*2 + v*3 = 6
    assert y.grad_fn.name == "FillBackward3" and v.grad.item() == 6.0
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(ShapeError, match="^fill_ only supports 0-dimension value tensor but got tensor with 1 "
                                         "dimensions.$"):
        C.zeros(3).fill_(C.ones(2))


INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode "
                   "in computation tracked by autograd. To work around this, you can make a clone to get a normal "
                   "tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
INFERENCE_IN_PLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                      "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                      "more details.")


def test_tensors_made_in_inference_mode_are_inference_tensors():
    from gradcli.engine.modes import is_inference_mode_enabled
    x = C.tensor([1.0, 2.0])
    w = C.ones(2, requires_grad=True)
    with inference_mode():
        a = C.ones(2)
        b = a * 2 + w  # no graph, even from a tensor that requires grad
        views_of_normal = [x[0], x.reshape(2, 1), x.detach(), x.data]
        assert is_inference_mode_enabled() and not is_grad_enabled()
    assert not is_inference_mode_enabled() and is_grad_enabled()
    assert a.is_inference() and b.is_inference() and not b.requires_grad and b.grad_fn is None
    assert [v.is_inference() for v in views_of_normal] == [False] * 4
    assert [v.is_inference() for v in (a[0], a[1:], a.reshape(2, 1), a.detach(), a.data)] == [True] * 5
    assert not any(v.is_inference() for v in (a.clone(), a * 2, C.tensor(a.tolist()), x))


def test_an_inference_tensor_saved_for_backward_is_pytorchs_error():
    with inference_mode():
        a = C.tensor([3.0, 4.0])
    w = C.tensor([1.0, 2.0], requires_grad=True)
    (a + w).sum().backward()  # addition saves nothing: allowed, as in PyTorch
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    for saving in (lambda: a * w, lambda: w.exp() * a[0], lambda: (w @ a)):
        with pytest.raises(BackwardError) as caught:
            saving()
        assert caught.value.message == INFERENCE_SAVED and "clone()" in caught.value.hint
    (a.clone() * w).sum().backward()  # the clone is a normal tensor
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 5.0])


def test_in_place_on_an_inference_tensor_only_inside_inference_mode():
    with inference_mode():
        a = C.zeros(2)
        a.add_(1)
    for update in (lambda: a.add_(1), lambda: a.zero_(), lambda: a.__setitem__(0, 5.0), lambda: a[1:].mul_(2),
                   lambda: a.uniform_()):
        with pytest.raises(BackwardError) as caught:
            update()
        assert caught.value.message == INFERENCE_IN_PLACE
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0])
    with pytest.raises(BackwardError, match="^Setting requires_grad=True on inference tensor outside InferenceMode is "
                                            "not allowed.$"):
        a.requires_grad_()
    with inference_mode():
        a.mul_(3)
        h = C.ones(2, requires_grad=True)
    np.testing.assert_array_equal(a.numpy(), [3.0, 3.0])
    assert h.requires_grad and h.is_inference()


def test_inference_mode_false_and_the_decorator_forms():
    w = C.ones(2, requires_grad=True)
    with no_grad():
        with inference_mode(False):
            assert is_grad_enabled() and not C.ones(1).is_inference()
    with inference_mode():
        with inference_mode(False):
            normal = w * 2
        assert not is_grad_enabled()
    assert normal.requires_grad and not normal.is_inference()

    @inference_mode()
    def called(v):
        return v * 2

    @inference_mode
    def bare(v):
        return v * 3
    assert called(w).is_inference() and not called(w).requires_grad and bare(w).is_inference()
    assert is_grad_enabled() and (w * 2).requires_grad


def test_an_update_through_a_view_writes_the_base_and_its_history_is_copy_slices():
    leaf = C.zeros(3, requires_grad=True)
    w = C.tensor(3.0, requires_grad=True)
    x = leaf.clone()
    v = x[0]
    v.add_(1)
    v.mul_(w)  # x[0] = (leaf[0] + 1) * w
    np.testing.assert_array_equal(x.detach().numpy(), [3.0, 0.0, 0.0])
    assert x.grad_fn.name == "CopySlices" and v.item() == 3.0
    (x * C.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [3.0, 2.0, 3.0])  # ∂x[0]/∂leaf[0] = w
    assert w.grad.item() == 1.0  # ∂x[0]/∂w = leaf[0] + 1


def test_columns_rows_transposes_and_views_write_through():
    leaf = C.zeros(2, 3, requires_grad=True)
    w = C.tensor(3.0, requires_grad=True)
    x = leaf.clone()
    x[:, 0].add_(w)  # column 0 = w
    x[1:].mul_(2)  # row 1 doubled
    x.t().add_(1)
    x.view(6).mul_(w)
    x.reshape(3, 2).sub_(1)  # x = [[w(w+1)-1, w-1, w-1], [w(2w+1)-1, w-1, w-1]]
    np.testing.assert_array_equal(x.detach().numpy(), [[11.0, 2.0, 2.0], [20.0, 2.0, 2.0]])
    (x * C.arange(6.0).reshape(2, 3)).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [[0.0, 3.0, 6.0], [18.0, 24.0, 30.0]])  # rows scaled w, 2w
    assert w.grad.item() == 51.0  # 1 + 2 + 3(4w + 1) + 4 + 5 at w = 3


def test_every_live_view_of_the_base_reads_the_new_history():
    leaf = C.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    w = C.tensor(10.0, requires_grad=True)
    x = leaf * 1
    a, b = x[0:2], x[1:3]
    b.add_(w)
    np.testing.assert_array_equal(a.detach().numpy(), [1.0, 12.0])
    a.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [1.0, 1.0, 0.0, 0.0])
    assert w.grad.item() == 1.0
    inner = x[1:][0]  # a view of a view writes through to the same base
    inner.mul_(2)
    assert x[1].item() == 24.0 and x.grad_fn.name == "CopySlices"


def test_writes_off_the_graph_and_through_detach_reach_the_shared_memory():
    w = C.tensor([1.0, 2.0], requires_grad=True)
    with no_grad():
        w[0].add_(5)
    assert w.is_leaf and w.tolist() == [6.0, 2.0]
    y = C.tensor([1.0, 1.0], requires_grad=True) * 1
    d = y.detach()
    d.mul_(w)  # the values reach y; the history is d's alone, as detach promises
    assert y.tolist() == [6.0, 2.0] and d.grad_fn.name == "MulBackward0" and y.grad_fn.name == "MulBackward0"
    z = C.zeros(2, 2)
    z[0][1] = 7.0
    z.unbind(0)[1].add_(1)  # off the graph a piece of unbind writes through too
    np.testing.assert_array_equal(z.numpy(), [[0.0, 7.0], [1.0, 1.0]])


def test_views_pytorch_refuses_to_update_and_the_one_gradcli_cannot():
    x = C.zeros(4, 2, requires_grad=True) * 1
    cases = [
        (lambda: C.zeros(3).expand(2, 3).add_(1), "unsupported operation: more than one element of the written-to "
                                                  "tensor refers to a single memory location. Please clone() the "
                                                  "tensor before performing the operation."),
        (lambda: C.zeros(3, requires_grad=True)[0].add_(1), VIEW_OF_LEAF),
        (lambda: x.unbind(0)[1].add_(1), "Output 1 of Unbind is a view and is being modified inplace. This view is "
                                         "the output of a function that returns multiple views. Such functions do not "
                                         "allow the output views to be modified inplace. You should replace the "
                                         "inplace operation by an out-of-place one."),
        (lambda: x.split([1, 3])[1].mul_(2), "Output 1 of SplitWithSizes is a view"),
        (lambda: x.chunk(2)[0][0].mul_(2), "Output 0 of Split is a view"),
        (lambda: C.zeros(3).expand(2, 3)[0].add_(1), "an in-place update of a piece of an expand()ed tensor is not "
                                                     "supported by gradcli"),
        (lambda: (C.zeros(3, requires_grad=True) * 1).expand(2, 3)[1].mul_(3), "an in-place update of a piece of an "
                                                                              "expand()ed tensor"),
        (lambda: C.zeros(2, 2).diagonal().fill_(1), "gradcli cannot update the view that diagonal() returns in place: "
                                                    "PyTorch writes it through to the tensor it views, but gradcli's "
                                                    "diagonal() is a copy"),
    ]
    for update, message in cases:
        with pytest.raises(BackwardError) as caught:
            update()
        assert caught.value.message.startswith(message) and caught.value.hint
    np.testing.assert_array_equal(x.detach().numpy(), np.zeros((4, 2)))


def test_an_update_through_a_view_bumps_the_base_version():
    x = C.ones(3, requires_grad=True)
    y = x * 1
    z = (y * y).sum()
    y[0].add_(1)
    with pytest.raises(BackwardError) as caught:
        z.backward()
    assert caught.value.message == ("one of the variables needed for gradient computation has been modified by an "
                                    "inplace operation: [torch.DoubleTensor [3]], which is output 0 of "
                                    "torch::autograd::CopySlices, is at version 1; expected version 0 instead.")
    e = C.ones(3, requires_grad=True).exp()
    e[1:].add_(1)
    with pytest.raises(BackwardError, match=r"which is output 0 of Exp, is at version 1; expected version 0"):
        e.sum().backward()


def test_writes_through_a_view_of_data_bump_no_version_but_of_detach_do():
    x = C.ones(3, requires_grad=True)
    z = (x * x).sum()
    x.data[0].add_(1)
    x.data[1:] = 5.0
    z.backward()  # as in PyTorch, the gradient reads the new values: 2x
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 10.0, 10.0])
    y = C.ones(3, requires_grad=True).exp()
    y.detach()[0].add_(1)
    with pytest.raises(BackwardError, match="which is output 0 of Exp, is at version 1; expected version 0"):
        y.sum().backward()


def test_retain_grad_follows_the_tensor_through_its_in_place_updates():
    for update in (lambda y: y.add_(1), lambda y: y[0].mul_(5)):
        y = C.ones(2, requires_grad=True) * 2
        y.retain_grad()
        update(y)
        (y * 3).sum().backward()
        assert y.retains_grad
        np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])  # d(3y)/dy of the updated y, not of the old one


def test_view_is_refused_where_it_would_copy_and_contiguous_makes_one_possible():
    x = C.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True) * 1
    with pytest.raises(ShapeError, match=r"^view size is not compatible with input tensor's size and stride \(at least "
                                         r"one dimension spans across two contiguous subspaces\). Use .reshape\(...\) "
                                         r"instead.$") as caught:
        x.t().view(6)
    assert "x.contiguous().view" in caught.value.hint
    c = x.t().contiguous()
    assert c.grad_fn.name == "CloneBackward0" and c.is_contiguous() and x.contiguous() is x
    assert c.view(6).tolist() == [1.0, 4.0, 2.0, 5.0, 3.0, 6.0] and x.t().reshape(6).tolist() == c.view(6).tolist()
    x.view(3, 2)[0].mul_(10)  # a view that is one writes through
    assert x.tolist() == [[10.0, 20.0, 3.0], [4.0, 5.0, 6.0]]


def test_an_expand_that_repeats_nothing_is_a_view_that_writes_through():
    w = C.tensor(2.0, requires_grad=True)
    x = C.ones(2, 3, requires_grad=True) * 1
    x.expand(1, 2, 3)[0, 1].mul_(w)  # row 1 becomes w
    assert x.tolist() == [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]] and x.grad_fn.name == "CopySlices"
    x.sum().backward()
    assert w.grad.item() == 3.0


def test_fill_takes_a_number_not_anything_numpy_would_convert():
    from gradcli.errors import ArgumentError
    for value, kind in [(None, "NoneType"), ("a", "str")]:
        with pytest.raises(ArgumentError) as caught:
            C.ones(2).fill_(value)
        assert caught.value.message == f"fill_(): argument 'value' must be a number, not {kind}"
    assert C.ones(2).fill_(True).tolist() == [1.0, 1.0]


ASSIGNMENT_NODES = """import torch
x = torch.tensor([[1.0, float("nan"), 3.0, 4.0], [5.0, 6.0, float("nan"), 8.0], [9.0, 10.0, 11.0, 12.0]],
                 requires_grad=True)
keys = ["nan", "mask", "list", "tensor", "row_list", "all_list", "ellipsis_mask", "none", "int", "int0d", "slice",
        "partial_slice_list"]
total = 0
for k in keys:
    y = x * 2
    if k == "nan":
        y[y != y] = 0
    elif k == "mask":
        y[y > 10] = -1.0
    elif k == "list":
        y[[0, 2]] = torch.tensor(7.0)
    elif k == "tensor":
        y[torch.tensor([0, 2])] = 0.0
    elif k == "row_list":
        y[0, [1, 2]] = 0.0
    elif k == "all_list":
        y[:, [1, 2]] = 0.0
    elif k == "ellipsis_mask":
        y[..., torch.tensor([True, False, True, False])] = 0.0
    elif k == "none":
        y[None, [0]] = 0.0
    elif k == "int":
        y[0] = 5.0
    elif k == "int0d":
        y[torch.tensor(1)] = 0.0
    elif k == "slice":
        y[1:] = 0.0
    else:
        y[1:, [0, 3]] = 0.0
    print(k, y.grad_fn.name())
    total = total + (y * torch.arange(12.0).reshape(3, 4)).sum()
total.backward()
print(x.grad)
"""


def test_an_indexed_assignment_on_the_graph_is_named_as_pytorch_names_it():
    """A mask, index list or tensor beside only `:` and `...` is the tensor's own IndexPutBackward0 (`x[x != x] = 0`);
    an int, a 0-d index, a partial slice or None first makes a view, whose write gives the tensor CopySlices."""
    printed = "\n".join(run(ASSIGNMENT_NODES).printed).splitlines()
    assert printed[:12] == [
        "nan IndexPutBackward0", "mask IndexPutBackward0", "list IndexPutBackward0", "tensor IndexPutBackward0",
        "row_list torch::autograd::CopySlices", "all_list IndexPutBackward0", "ellipsis_mask IndexPutBackward0",
        "none torch::autograd::CopySlices", "int torch::autograd::CopySlices", "int0d torch::autograd::CopySlices",
        "slice torch::autograd::CopySlices", "partial_slice_list torch::autograd::CopySlices"]
    assert printed == torch_printed(ASSIGNMENT_NODES)
