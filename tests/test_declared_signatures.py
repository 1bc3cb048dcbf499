"""Functions with arguments of their own, declared once (`Signature` in `engine/ops/`): the calls a program makes
bind as Python binds them, wrong ones are the user's errors with the declared usage, and `torch.X`, `Tensor.X`
and the language's tables come from the one declaration. Numbers are PyTorch 2.13's (float64)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.functions.declared import declared_function
from gradcli.engine.ops.op import Arg, Op, _public
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.lang import builtins as B
from tests.language_helpers import fails, run

PRE = "import torch\nx = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64, requires_grad=True)\n"


# -- hostile calls first ------------------------------------------------------------------------------
@pytest.mark.parametrize("call, message, usage", [
    ("torch.logsumexp(x)", "torch.logsumexp(): missing a required argument: 'dim'",
     "usage: logsumexp(input, dim, keepdim=False)"),
    ("x.sum(0, True, 3)", "x.sum(): too many positional arguments", "usage: sum(dim=None, keepdim=False, dtype=None)"),
    ("x.sum(dims=0)", "x.sum(): got an unexpected keyword argument 'dims'",
     "usage: sum(dim=None, keepdim=False, dtype=None)"),
    ("torch.sum(x, 0, dim=0)", "torch.sum(): multiple values for argument 'dim'",
     "usage: sum(input, dim=None, keepdim=False, dtype=None)"),
    ("torch.cumsum(x)", "torch.cumsum(): missing a required argument: 'dim'", "usage: cumsum(input, dim, dtype=None)"),
    ("torch.atan2(x)", "torch.atan2(): missing a required argument: 'other'", "usage: atan2(input, other)"),
    ("torch.max(x, 0, True, 1)", "torch.max(): too many positional arguments",
     "usage: max(input, dim=None, keepdim=False)"),
    ("x.min(dims=0)", "x.min(): got an unexpected keyword argument 'dims'", "usage: min(dim=None, keepdim=False)"),
    ("x.softmax(0, 1)", "x.softmax(): too many positional arguments", "usage: softmax(dim=None)"),
    ("torch.log_softmax()", "torch.log_softmax(): missing a required argument: 'input'",
     "usage: log_softmax(input, dim=None)"),
])
def test_a_call_that_does_not_fit_the_declaration_is_the_users_error_with_its_usage(call, message, usage) -> None:
    error = fails(PRE + f"y = {call}", ArgumentError)
    assert error.message == message
    assert error.hint == usage


def test_a_wrong_argument_is_read_by_its_kind_with_pytorchs_words() -> None:
    assert fails(PRE + "y = x.var(0, correction=1.5)", ArgumentError).message == \
        "var(): argument 'correction' must be an integer, not float"
    assert fails(PRE + "y = x.sum(3)", ShapeError).message == \
        "Dimension out of range (expected to be in range of [-1, 0], but got 3)"
    assert fails(PRE + "y = torch.mean(torch.tensor([1, 2]))", ValueDomainError).message.startswith(
        "mean(): could not infer output dtype")
    assert fails(PRE + "y = torch.amax(torch.zeros(0))", ValueDomainError).message == \
        "amax(): Expected reduction dim to be specified for input.numel() == 0."
    assert fails(PRE + "y = torch.sum('a')", ArgumentError).message == "sum(): argument must be a tensor, not str"


def test_a_bad_call_exits_2_with_the_usage(cli) -> None:
    result = cli("eval", "out = x.sum(dims=0)", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    assert "got an unexpected keyword argument 'dims'" in result.output
    assert "usage: sum(dim=None, keepdim=False, dtype=None)" in result.output


# -- the same numbers as before, and as PyTorch ------------------------------------------------------
def test_keywords_positions_and_defaults_give_pytorchs_values() -> None:
    ran = run(PRE + "a = torch.sum(input=x, dim=0, keepdim=True)\nb = x.var(0, False)\nc = x.std(unbiased=False)\n"
                    "d = x.var(correction=2)\ne = torch.logsumexp(x, dim=0)\nf = x.cumprod(0)\n"
                    "g = torch.var(torch.tensor(2.0, dtype=torch.float64), 0, correction=0)\n"
                    "names = [t.grad_fn.name() for t in (a, x.sum(), x.mean((0,)), x.prod())]")
    np.testing.assert_allclose(ran["a"]._data, [7.0])
    assert ran["a"].shape == (1,)
    np.testing.assert_allclose(ran["b"]._data, 1.5555555555555556)  # torch 2.13: 1.5556
    np.testing.assert_allclose(ran["c"]._data, 1.247219128924647)  # torch 2.13: 1.2472
    np.testing.assert_allclose(ran["d"]._data, 4.666666666666667)  # torch 2.13: 4.6667
    np.testing.assert_allclose(ran["e"]._data, np.log(np.exp(1) + np.exp(2) + np.exp(4)))
    np.testing.assert_allclose(ran["f"]._data, [1.0, 2.0, 8.0])
    assert float(ran["g"]._data) == 0.0  # a 0-d input reduces over its one element, dim 0 or not (torch: 0.)
    assert ran["names"] == ["SumBackward1", "SumBackward0", "MeanBackward1", "ProdBackward0"]


def test_binary_functions_take_numbers_where_pytorch_does_and_name_the_scalar_node() -> None:
    ran = run(PRE + "a = torch.fmod(x, 3)\nb = torch.remainder(5.0, x)\nc = x.atan2(torch.ones(3))\n"
                    "names = [a.grad_fn.name(), torch.fmod(x, x).grad_fn.name(), torch.remainder(x, 2).grad_fn.name()]")
    np.testing.assert_allclose(ran["a"]._data, [1.0, 2.0, 1.0])
    np.testing.assert_allclose(ran["b"]._data, [0.0, 1.0, 1.0])
    np.testing.assert_allclose(ran["c"]._data, np.arctan2([1.0, 2.0, 4.0], 1.0))
    assert ran["names"] == ["FmodBackward0", "FmodBackward1", "RemainderBackward0"]
    error = fails(PRE + "y = torch.atan2(x, 'a')", ArgumentError)
    assert error.message == "atan2(): argument must be a tensor, not str"


# -- everything from one declaration -------------------------------------------------------------------
DECLARED = [op for op in O.TABLE if op.names and op.names.signature]


@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.name)
def test_a_declared_function_is_torch_x_tensor_x_and_in_the_languages_tables(op: O.Op) -> None:
    for name in op.names.functions:
        assert getattr(B.TORCH.members[name], "__wrapped__", B.TORCH.members[name]) is getattr(F, name)
        assert B.OP_OF[name] is op
    for name in op.names.methods:
        assert name in B.TENSOR_METHODS and B.OP_OF[name] is op
        assert getattr(Tensor, name) is getattr(Tensor, op.names.methods[0])


def test_a_new_reduction_is_one_declaration() -> None:
    # what a family's OPS entry gives: torch.X with the declared arguments, applying the op
    op = Op(name="sumsq", node="SumsqBackward0", forward=lambda x, dim=None, keepdim=False:
            np.add.reduce(x * x, axis=dim, keepdims=keepdim),
            vjps=(lambda ns, g, o, x, dim=None, keepdim=False: 2 * x * g,), rule="∂Σx²/∂xᵢ = 2xᵢ", saves=("x",),
            names=_public("sumsq", "reduction", Arg("input", "tensor"), Arg("dim", "dims", None),
                          Arg("keepdim", "flag", False)))
    sumsq = declared_function(op)
    x = Tensor([[1.0, 2.0], [3.0, 4.0]], dtype=np.float64, requires_grad=True)
    y = sumsq(x, dim=-1, keepdim=True)
    np.testing.assert_array_equal(y._data, [[5.0], [25.0]])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad._data, [[2.0, 4.0], [6.0, 8.0]])
    with pytest.raises(TypeError):
        sumsq(x, 0, True, 1)


# -- the vmap rule is declared with the op ------------------------------------------------------------
def test_an_op_names_its_batching_rule_and_func_maps_the_kind_to_the_rule() -> None:
    from gradcli.func import batching
    by_kind = {kind: {op.name for op in O.TABLE if op.batching == kind} for kind in batching.KINDS}
    assert {"sum", "var", "logsumexp", "cumsum", "softmax"} <= by_kind["along_dim"]
    assert by_kind["along_given_dim"] == {"max", "min"}
    assert {"atan2", "fmod", "lerp", "gelu"} <= by_kind["broadcast"]
    assert batching.derive(O.VAR) is batching.along_dim and batching.derive(O.ATAN2) is batching.elementwise
    assert batching.derive(O.ADD) is batching.elementwise  # flagged elementwise, no kind written
    assert batching.derive(O.MATMUL) is None  # a rule of its own, registered by name
    assert not any(op.batching and op.batching not in batching.KINDS for op in O.TABLE)


def test_a_declared_rule_runs_batched_with_pytorchs_numbers() -> None:
    torch = pytest.importorskip("torch")
    from gradcli.engine import creation as C
    from gradcli.func import transforms as func
    a = np.random.default_rng(5).standard_normal((3, 4))
    before = len(func.Fallbacks.reasons)
    ours = func.vmap(lambda t: t.var(0) + torch_free_atan2(t))(C.tensor(a))
    assert len(func.Fallbacks.reasons) == before  # by the rules, not once per example
    theirs = torch.func.vmap(lambda t: t.var(0) + torch.atan2(t, t * 2 + 1))(torch.tensor(a))
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-12)


def torch_free_atan2(t: Tensor) -> Tensor:
    return F.atan2(t, t * 2 + 1)


# -- functions built of primitives (engine/rearranging.py) are declared the same way -----------------
def test_a_composite_reaches_torch_tensor_and_the_tables_from_its_declaration() -> None:
    from gradcli.engine import rearranging as R
    for c in R.COMPOSITES + F.COMPOSITES:
        for name in c.functions:
            member = B.TORCH.members[name]  # round(2.5) is Python's on a number, torch's on a tensor
            assert getattr(member, "__wrapped__", member) is c.function and (c.op is None or B.OP_OF[name] is c.op)
        mapped = c.input_at or c.packs or c.renamed  # a method made from the function (test_declared_methods.py)
        for name in c.methods:
            method = getattr(Tensor, name)
            assert name in B.TENSOR_METHODS and (method is (c.method or c.function) if not mapped else
                                                 method.__name__ == c.methods[0] and method is not c.function), name
    assert "hstack" not in B.TENSOR_METHODS and B.OP_OF["row_stack"] is O.CAT


def test_repeat_interleave_needs_its_repeats_as_a_method_not_as_a_function() -> None:
    # torch 2.13: torch.repeat_interleave(torch.tensor([1, 2])) is tensor([0, 1, 1]); the method without
    # repeats is a TypeError ("received an invalid combination of arguments - got ()")
    ran = run("import torch\na = torch.repeat_interleave(torch.tensor([1, 2]))\n"
              "b = torch.tensor([1.0, 2.0]).repeat_interleave(2)")
    assert ran["a"].tolist() == [0, 1, 1] and ran["b"].tolist() == [1.0, 1.0, 2.0, 2.0]
    error = fails("import torch\nb = torch.tensor([1, 2]).repeat_interleave()", ArgumentError)
    assert "missing a required argument: 'repeats'" in error.message


# -- torch.nansum and torch.logaddexp, each added by its declaration alone -----------------------------
def test_nansum_skips_nan_in_value_and_gradient_as_pytorch() -> None:
    # torch 2.13: nansum of [[1, nan], [3, 4]] is 8 (NansumBackward0), its gradient [[1, 0], [1, 1]];
    # x.nansum(1, keepdim=True) is [[1], [7]]
    ran = run("import torch\nx = torch.tensor([[1.0, float('nan')], [3.0, 4.0]], dtype=torch.float64, "
              "requires_grad=True)\ny = torch.nansum(x)\ny.backward()\nz = x.nansum(1, keepdim=True)\n"
              "names = [y.grad_fn.name(), z.grad_fn.name()]\nw = torch.nansum(torch.tensor([1, 2]), dtype=torch.float64)")
    assert float(ran["y"]._data) == 8.0 and ran["z"].tolist() == [[1.0], [7.0]]
    assert ran["x"].grad.tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert ran["names"] == ["NansumBackward0", "NansumBackward0"] and ran["w"].dtype == np.float64


def test_logaddexp_values_and_gradients_as_pytorch() -> None:
    # torch 2.13, float64: logaddexp([0.5, -1, 3], [2, -1, -2]) = [2.2014, -0.3069, 3.0067] (LogaddexpBackward0);
    # d/da = [0.18242552380635635, 0.5, 0.9933071490757153], d/db = 1 - d/da
    ran = run("import torch\na = torch.tensor([0.5, -1.0, 3.0], dtype=torch.float64, requires_grad=True)\n"
              "b = torch.tensor([2.0, -1.0, -2.0], dtype=torch.float64, requires_grad=True)\n"
              "o = torch.logaddexp(a, b)\no.sum().backward()\nm = a.logaddexp(b)\nname = o.grad_fn.name()")
    np.testing.assert_allclose(ran["o"]._data, [2.2014, -0.3069, 3.0067], atol=1e-4)
    np.testing.assert_allclose(ran["a"].grad._data, [0.18242552380635635, 0.5, 0.9933071490757153], rtol=1e-12)
    np.testing.assert_allclose(ran["b"].grad._data, [0.8175744761936437, 0.5, 0.0066928509242848554], rtol=1e-12)
    np.testing.assert_array_equal(ran["m"]._data, ran["o"]._data)
    assert ran["name"] == "LogaddexpBackward0"


def test_logaddexp_and_nansum_check_with_sympy_and_a_wrong_vjp_fails(cli, patched) -> None:
    program = "out = (torch.nansum(x * 2, 0) + torch.logaddexp(x, x.flip(0))).sum()"
    result = cli("eval", program, "x=[0.5, -1.0, 3.0]", "--check")
    assert result.exit_code == 0 and "│ x     │ pass   │ SymPy   │" in result.stdout
    right = O.LOGADDEXP.vjps
    patched(O.LOGADDEXP, (right[1], right[0]))  # each input given the other's share
    result = cli("eval", program, "x=[0.5, -1.0, 3.0]", "--check")
    assert result.exit_code == 1 and "fail" in result.stdout


# -- max, min, softmax and log_softmax: PyTorch's overloads from one declaration each ------------------
def test_max_and_min_overloads_give_pytorchs_values_nodes_and_indices() -> None:
    # torch 2.13 on [[1, 5], [7, 2]]: max() is 7 (MaxBackward1); max(1) is values [5, 7], indices [1, 0]
    # (MaxBackward0); min(0, keepdim=True) is [[1, 2]] at [[0, 1]]; max(m, 3 * ones) is [[3, 5], [7, 3]]
    # (MaximumBackward0); max of an empty tensor is an error
    ran = run("import torch\nm = torch.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)\na = m.max()\n"
              "b = torch.max(m, 1)\nc = m.min(dim=0, keepdim=True)\nd = torch.max(m, 3 * torch.ones(2, 2))\n"
              "a.backward()")
    assert float(ran["a"]._data) == 7.0 and ran["a"].grad_fn.name == "MaxBackward1"
    assert ran["b"].values.tolist() == [5.0, 7.0] and ran["b"].indices.tolist() == [1, 0]
    assert ran["b"].values.grad_fn.name == "MaxBackward0" and ran["b"].indices.dtype == np.int64
    assert ran["c"].values.tolist() == [[1.0, 2.0]] and ran["c"].indices.tolist() == [[0, 1]]
    assert ran["d"].tolist() == [[3.0, 5.0], [7.0, 3.0]] and ran["d"].grad_fn.name == "MaximumBackward0"
    assert ran["m"].grad.tolist() == [[0.0, 0.0], [1.0, 0.0]]
    assert fails("import torch\ny = torch.max(torch.zeros(0))", ValueDomainError).message == \
        "max(): expected a non-empty tensor"


def test_softmax_takes_its_dim_as_declared() -> None:
    # torch 2.13: softmax([1, 2], 0) is [0.2689414213699951, 0.7310585786300049]; a 0-d input's softmax is 1
    # and log_softmax 0; gradcli asks for dim on 2-D input rather than guess it, as PyTorch deprecates
    ran = run(PRE + "a = x.softmax(0)\nb = torch.softmax(x, dim=-1)\nc = torch.log_softmax(x, 0)\n"
                    "d = torch.softmax(x[0], 0)\ne = x[0].log_softmax(-1)\nf = torch.softmax(x)")
    expected = np.exp([1.0, 2.0, 4.0]) / np.exp([1.0, 2.0, 4.0]).sum()
    for name in "abf":
        np.testing.assert_allclose(ran[name]._data, expected, rtol=1e-15)
    np.testing.assert_allclose(ran["c"]._data, np.log(expected), rtol=1e-14)
    assert float(ran["d"]._data) == 1.0 and float(ran["e"]._data) == 0.0 and ran["d"].shape == ()
    error = fails(PRE + "y = torch.softmax(x.reshape(1, 3))", ArgumentError)
    assert error.message == "softmax(): dim must be given for a tensor of 2 dimensions"
    assert error.hint == "e.g. softmax(x, dim=1) to normalise each row"


def test_max_and_softmax_agree_with_torch() -> None:
    torch = pytest.importorskip("torch")
    a = np.array([[0.5, 2.0, -3.0], [1.5, 2.0, 0.25]])
    t, ours = torch.tensor(a), Tensor(a)
    for theirs, mine in [(t.max(1), ours.max(1)), (t.min(0, True), ours.min(0, True))]:
        np.testing.assert_array_equal(mine.values._data, theirs.values.numpy())
        np.testing.assert_array_equal(mine.indices._data, theirs.indices.numpy())
    np.testing.assert_allclose(ours.log_softmax(1)._data, t.log_softmax(1).numpy(), rtol=1e-14)
    np.testing.assert_allclose(F.softmax(ours, 0)._data, torch.softmax(t, 0).numpy(), rtol=1e-14)
