"""Every public function is one declaration: each name gradcli offers as `torch.X`, `Tensor.X`, `F.X` or
`torch.linalg.X` is classified as derived from a declaration or written by hand, and the hand-written ones are
the short list below, each group with the reason it is no declaration. Then the oracle: every name gradcli
offers on those namespaces exists in torch 2.13 (gradcli's own extras are listed, with their reason).

Derived means the name is written once, beside what it computes, and the namespaces are made from it:
an op's `Names` (`torch.X`, `Tensor.X`, `X_`, `F.X`; `engine/ops/`), a `Composite` (`engine/functions/`,
`engine/rearranging.py`, and the `COMPOSITES` of each family of `gradcli/nn/`), a `Loss` (`nn/losses.py`),
or the logic table (`engine/logical.py`'s `FUNCTIONS`: tests and masks, no gradient, torch.X and Tensor.X
both made from it).
"""
from __future__ import annotations

import pytest

from gradcli.engine import functions as F
from gradcli.engine import logical as L
from gradcli.engine import ops as O
from gradcli.engine import rearranging as R
from gradcli.lang import builtins as B
from gradcli.lang.namespace import Namespace

# -- what is written by hand, and why -------------------------------------------------------------------------
HAND_WRITTEN_TORCH = {
    # factories: a tensor made from data or a shape, no input to differentiate (engine/creation.py)
    "tensor", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "ByteTensor", "as_tensor",
    "from_numpy", "ones", "zeros", "full", "eye", "arange", "linspace", "range", "empty", "ones_like", "zeros_like",
    "full_like", "empty_like",
    # the generator's draws and its seed (engine/random.py, distributions/): sampling, not a function to differentiate
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "normal", "bernoulli", "multinomial",
    "poisson", "binomial", "manual_seed", "initial_seed", "Generator",
    # state: gradient modes, anomaly mode, defaults, printing, devices, dtypes; context managers and switches
    "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "is_inference", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_default_dtype", "get_default_dtype",
    "set_default_device", "set_default_tensor_type", "set_printoptions", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "device", "finfo", "Size", "compile", "autocast",
    # questions answered with a Python bool or int, outside the graph
    "is_tensor", "numel", "equal", "allclose",
    # files (lang/stdlib/saved_files.py) and a torch.func transform (func/, deferred until it loads)
    "save", "load", "vmap",
    # torch.X of nn.functional's functions (declared in gradcli/nn/): the name must exist before gradcli.nn loads,
    # so lang/builtins.py's _TORCH_NN_FUNCTIONS lists it (checked against the declarations below)
    "selu", "celu", "cosine_similarity", "pairwise_distance", "layer_norm", "dropout",
    "binary_cross_entropy_with_logits", "kl_div",
}
HAND_WRITTEN_METHODS = {
    # add_ and sub_ with their alpha (engine/inplace.py): every optimizer's step, and `+=`, `-=`
    "add_", "sub_",
    # autograd on the tensor itself: backward, detaching, hooks, requires_grad
    "backward", "retain_grad", "detach", "detach_", "requires_grad_", "register_hook",
    "register_post_accumulate_grad_hook", "is_inference",
    # casts to a dtype given as an argument, devices and conversions out of the graph
    "type", "type_as", "to", "cpu", "cuda", "numpy", "tolist", "item",
    # shape and memory metadata
    "size", "dim", "numel", "nelement", "stride", "element_size", "data_ptr", "is_contiguous", "contiguous", "equal",
    # factories of a tensor's dtype (engine/creation.py)
    "new", "new_empty", "new_full", "new_ones", "new_tensor", "new_zeros",
    # random fills in place (engine/random.py) and writes that replace values (engine/inplace.py)
    "uniform_", "normal_", "bernoulli_", "random_", "exponential_", "cauchy_", "multinomial", "zero_", "fill_", "copy_",
    "index_put_", "put_",
    # in place forms that change the shape, whose version and view rules differ (engine/inplace.py, storage.py)
    "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_", "swapdims_", "resize", "resize_", "resize_as_",
    # bool reductions with no gradient, and two spellings of other primitives (expand, indexing)
    "all", "any", "expand_as", "select",
}
HAND_WRITTEN_FUNCTIONAL: set[str] = set()
HAND_WRITTEN_LINALG: set[str] = set()


def _public() -> dict[str, set[str]]:
    B.load_library()

    def callables(space: Namespace) -> set[str]:
        return {name for name, v in space.members.items() if callable(v) and not isinstance(v, Namespace)}
    return {"torch": callables(B.TORCH), "Tensor": set(B.TENSOR_METHODS), "F": callables(B.NN_FUNCTIONAL),
            "linalg": callables(B.LINALG)}


def _declared() -> dict[str, set[str]]:
    from gradcli.nn import losses
    composites = F.COMPOSITES + R.COMPOSITES + B.nn_composites()
    return {"torch": set(O.named("functions")) | {n for c in composites for n in c.functions} | set(L.FUNCTIONS),
            "Tensor": set(O.named("methods")) | set(O.named("in_place_methods")) | set(L.FUNCTIONS)
            | {n for c in composites for n in c.methods + c.in_place_methods},
            "F": set(O.named("functional")) | {n for c in composites for n in c.functional}
            | {loss.function.__name__ for loss in losses.LOSSES},
            "linalg": {n for c in composites for n in c.linalg}}


HAND_WRITTEN = {"torch": HAND_WRITTEN_TORCH, "Tensor": HAND_WRITTEN_METHODS, "F": HAND_WRITTEN_FUNCTIONAL,
                "linalg": HAND_WRITTEN_LINALG}


@pytest.mark.parametrize("space", sorted(HAND_WRITTEN))
def test_every_public_name_is_declared_or_in_the_short_hand_written_list(space: str) -> None:
    public, declared = _public()[space], _declared()[space]
    assert sorted(public - declared) == sorted(HAND_WRITTEN[space])  # a new hand-written name fails here
    assert not declared & HAND_WRITTEN[space]  # and a name declared since leaves the list


def test_most_of_what_a_program_calls_is_declared() -> None:
    public, declared = _public(), _declared()
    counts = {space: (len(public[space] & declared[space]), len(public[space])) for space in public}
    assert counts["F"][0] == counts["F"][1] and counts["linalg"][0] == counts["linalg"][1] and counts["Tensor"][0] > 240 and counts["torch"][0] > 190, counts


def test_the_activations_and_the_arithmetic_are_declared() -> None:
    declared = _declared()
    assert {"relu", "relu6", "hardtanh", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
            "hardsigmoid", "hardswish", "logsigmoid", "softmax", "log_softmax", "sigmoid", "tanh"} <= declared["F"]
    assert {"add", "sub", "subtract", "mul", "multiply", "div", "true_divide", "pow", "floor_divide", "median",
            "remainder", "neg"} <= declared["torch"] & declared["Tensor"]
    assert {"mul_", "div_", "pow_", "multiply_", "true_divide_"} <= declared["Tensor"]
    assert B.OP_OF["relu6"] is O.HARDTANH and B.OP_OF["selu"] is O.ELU and B.OP_OF["conv2d"] is O.CONVOLUTION


def test_the_deferred_torch_names_of_nn_functions_are_declared_there() -> None:
    declared_f = _declared()["F"]
    assert set(B._TORCH_NN_FUNCTIONS) <= declared_f
    for name in B._TORCH_NN_FUNCTIONS:  # once gradcli.nn loads, torch.X is F.X itself
        assert B.TORCH.members[name] is B.NN_FUNCTIONAL.members[name] or name in ("kl_div",
                                                                                  "binary_cross_entropy_with_logits")


# -- the torch oracle: nothing gradcli offers is missing from torch -------------------------------------------
OWN_EXTRAS = {("Tensor", "creator")}
"""gradcli's own names on torch's namespaces: `x.creator`, PyTorch 0.x's name for grad_fn, which old tutorials read."""


def test_every_name_gradcli_offers_on_torch_namespaces_exists_in_torch() -> None:
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    homes = {"torch": torch, "Tensor": torch.Tensor, "F": TF, "linalg": torch.linalg}
    names = _public()
    names["Tensor"] |= set(B.TENSOR_ATTRIBUTES)
    missing = {(space, name) for space, found in names.items() for name in found if not hasattr(homes[space], name)}
    assert missing == OWN_EXTRAS


def test_softplus_is_no_tensor_method_as_in_torch(cli) -> None:
    torch = pytest.importorskip("torch")
    assert not hasattr(torch.Tensor, "softplus")
    result = cli("eval", "out = x.softplus().sum()", "x=[1.0, 2.0]")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "attribute 'softplus' is not available on a tensor" in result.output
    assert "write torch.nn.functional.softplus(x)" in result.output


@pytest.mark.parametrize("name, home", [("grad", "torch.autograd.grad(...)"), ("Variable", "torch.autograd.Variable(...)"),
                                        ("jacobian", "torch.autograd.functional.jacobian(...)"),
                                        ("hessian", "torch.autograd.functional.hessian(...)"),
                                        ("softplus", "torch.nn.functional.softplus(x)")])
def test_a_name_torch_does_not_have_is_refused_with_where_it_lives(cli, name, home) -> None:
    result = cli("eval", f"out = torch.{name}(x)", "x=[1.0, 2.0]")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"module 'torch' has no attribute '{name}'" in result.output and f"write {home}" in result.output


# -- a new activation of F is one declaration -------------------------------------------------------------------
def test_an_activation_declared_alone_makes_its_functional_with_inplace() -> None:
    import numpy as np

    from gradcli.engine.ops.nn import _activation
    from gradcli.engine.tensor import Tensor
    from gradcli.errors import ArgumentError
    from gradcli.nn.functional import _declared_activation
    op = _activation(name="twice", node="TwiceBackward0", forward=lambda x: 2.0 * x, vjp=lambda ns, g, o, x: 2.0 * g,
                     rule="d/dx 2x = 2", sym=lambda S, x: S.map(lambda u: S.mul(S.number(2), u), x))
    assert op.names.functional == ("twice",) and not op.names.functions and not op.names.methods
    twice = _declared_activation(op)
    x = Tensor([0.5, -1.5], dtype=np.float64, requires_grad=True)
    y = twice(x)
    y.sum().backward()
    assert y.tolist() == [1.0, -3.0] and x.grad.tolist() == [2.0, 2.0] and y.grad_fn.name == "TwiceBackward0"
    assert str(__import__("inspect").signature(twice)) == "(input: 'Any', inplace: 'bool' = False) -> 'Tensor'"
    with pytest.raises(ArgumentError, match="inplace=True is not supported"):
        twice(x, inplace=True)


def test_the_declared_arithmetic_methods_take_pytorchs_keywords() -> None:
    # torch 2.13: x.add(other=y, alpha=2) is x + 2y; x.subtract(y, alpha=2) is x - 2y; x.true_divide(other=y) is x / y
    from tests.language_helpers import run
    ran = run("import torch\nx = torch.tensor([1.0, 4.0])\ny = torch.tensor([2.0, 8.0])\n"
              "a = x.add(other=y, alpha=2)\nb = x.subtract(y, alpha=2)\nc = x.true_divide(other=y)\n"
              "d = x.multiply(y)\ne = x.pow(exponent=2)\nf = torch.multiply(x, y)\ng = x.clone()\ng.true_divide_(y)")
    assert ran["a"].tolist() == [5.0, 20.0] and ran["b"].tolist() == [-3.0, -12.0]
    assert ran["c"].tolist() == [0.5, 0.5] == ran["g"].tolist()
    assert ran["d"].tolist() == [2.0, 32.0] == ran["f"].tolist() and ran["e"].tolist() == [1.0, 16.0]
