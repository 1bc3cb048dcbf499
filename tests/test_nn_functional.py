"""`torch.nn.functional`: every primitive passes `--check` and a wrong VJP of it is caught; kinks are
undefined; PyTorch's node names reach the graph; misuse gets PyTorch's error texts."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import gradcli as g
from gradcli.check import check_gradients
from gradcli.engine import functions as F
from gradcli.nn import conv as C
from gradcli.nn import functional as NF
from gradcli.engine import ops as O
from gradcli.errors import GradcliError

R = np.random.default_rng(11)


def t(*shape: int, low: float = -2.0, high: float = 2.0) -> Any:
    return g.tensor(R.uniform(low, high, shape), requires_grad=True)


def checked(out: Any, leaves: dict[str, Any], mode: str = "all") -> Any:
    """Backward with a random gradient, then the check of what it computed."""
    gradient = g.tensor(R.standard_normal(out.shape)) if out.ndim else None
    for x in leaves.values():
        x.grad = None
    out.backward(gradient)
    computed = {k: x.grad._data for k, x in leaves.items()}
    return check_gradients(out, leaves, gradient, computed, mode=mode)


# (op, program over fresh leaves): each program's top node is the op
PROGRAMS: list[tuple[O.Op, Callable[[], tuple[Any, dict]]]] = [
    (O.HARDTANH, lambda: (lambda x: (NF.hardtanh(x, -0.8, 0.9), {"x": x}))(t(3))),
    (O.LEAKY_RELU, lambda: (lambda x: (NF.leaky_relu(x, 0.1), {"x": x}))(t(3))),
    (O.ELU, lambda: (lambda x: (NF.selu(x), {"x": x}))(t(3))),
    (O.GELU, lambda: (lambda x: (NF.gelu(x, approximate="tanh"), {"x": x}))(t(3))),
    (O.SILU, lambda: (lambda x: (NF.silu(x), {"x": x}))(t(3))),
    (O.MISH, lambda: (lambda x: (NF.mish(x), {"x": x}))(t(3))),
    (O.HARDSIGMOID, lambda: (lambda x: (NF.hardsigmoid(x * 2), {"x": x}))(t(3))),
    (O.HARDSWISH, lambda: (lambda x: (NF.hardswish(x * 2), {"x": x}))(t(3))),
    (O.LOGSIGMOID, lambda: (lambda x: (NF.logsigmoid(x), {"x": x}))(t(3))),
    (O.SOFTPLUS, lambda: (lambda x: (NF.softplus(x, beta=2.0), {"x": x}))(t(3))),
    (O.ADDMM, lambda: (lambda x, w, b: (NF.linear(x, w, b), {"x": x, "w": w, "b": b}))(t(3, 2), t(4, 2), t(4))),
    (O.CONSTANT_PAD, lambda: (lambda x: (NF.pad(x, (1, -1), value=2.0) * x.sum(), {"x": x}))(t(3))),
    (O.LAYER_NORM, lambda: (lambda x, w, b: (NF.layer_norm(x, (3,), w, b), {"x": x, "w": w, "b": b}))(
        t(3), t(3), t(3))),
    (O.BATCH_NORM, lambda: (lambda x, w, b: (C.batch_norm(x, None, None, w, b, training=True),
                                             {"x": x, "w": w, "b": b}))(t(3, 2, 2), t(2), t(2))),
    (O.BATCH_NORM, lambda: (lambda x, w, b: (C.batch_norm(x, g.tensor([0.5, -1.0]), g.tensor([2.0, 0.7]), w, b),
                                             {"x": x, "w": w, "b": b}))(t(3, 2, 2), t(2), t(2))),
    (O.MSE_LOSS, lambda: (lambda x, y: (NF.mse_loss(x, y), {"x": x, "y": y}))(t(3), t(3))),
    (O.SMOOTH_L1_LOSS, lambda: (lambda x, y: (NF.smooth_l1_loss(x, y, reduction="none"), {"x": x, "y": y}))(
        t(3), t(3))),
    (O.HUBER_LOSS, lambda: (lambda x, y: (NF.huber_loss(x, y, reduction="sum", delta=0.5), {"x": x, "y": y}))(
        t(3), t(3))),
    (O.NLL_LOSS, lambda: (lambda x: (NF.cross_entropy(x, g.tensor([2, 0, 1]), weight=g.tensor([1.0, 2.0, 0.5])),
                                     {"x": x}))(t(3, 3))),
    (O.BINARY_CROSS_ENTROPY, lambda: (lambda x, y: (NF.binary_cross_entropy(x, y), {"x": x, "y": y}))(
        t(3, low=0.1, high=0.9), t(3, low=0.0, high=1.0))),
    (O.BCE_WITH_LOGITS, lambda: (lambda x, y: (NF.binary_cross_entropy_with_logits(
        x, y, pos_weight=g.tensor([0.5, 2.0, 1.0])), {"x": x, "y": y}))(t(3), t(3, low=0.0, high=1.0))),
]
IDS = [op.name + "_eval" * (op is O.BATCH_NORM and k > 0 and PROGRAMS[k - 1][0] is op)
       for k, (op, _) in enumerate(PROGRAMS)]


def test_every_functional_primitive_has_a_program():
    block = O.TABLE[O.TABLE.index(O.HARDTANH):O.TABLE.index(O.BCE_WITH_LOGITS) + 1]
    assert {op.name for op in block} - {"gelu_backward"} | {"softplus"} == {op.name for op, _ in PROGRAMS}


@pytest.mark.parametrize("op, build", PROGRAMS, ids=IDS)
def test_check_passes(op: O.Op, build: Callable) -> None:
    out, leaves = build()
    assert out.grad_fn.op is op or op is O.CONSTANT_PAD
    report = checked(out, leaves)
    assert report.status == "pass", report.to_json()


def _skewed(vjp: Callable) -> Callable:
    """The right VJP, 10% too large: off by a little, as a real slip would be."""
    return lambda *args, **kwargs: vjp(*args, **kwargs) * 1.1


@pytest.mark.parametrize("op, build", PROGRAMS, ids=IDS)
def test_a_wrong_vjp_is_caught(op: O.Op, build: Callable, patched: Callable) -> None:
    patched(op, tuple(None if v is None else _skewed(v) for v in op.vjps))
    out, leaves = build()
    report = checked(out, leaves)
    assert report.status == "fail"
    assert all(c.status == "fail" for c in report.inputs.values()), report.to_json()


def test_gelu_second_derivative_is_checked_too(patched: Callable) -> None:
    x = t(4)
    (first,) = g.grad(NF.gelu(x).sum(), x, create_graph=True)
    assert first.grad_fn.name == "GeluBackwardBackward0"
    report = checked(first, {"x": x})
    assert report.status == "pass"
    patched(O.GELU_BACKWARD, (O.GELU_BACKWARD.vjps[0], _skewed(O.GELU_BACKWARD.vjps[1])))
    (first,) = g.grad(NF.gelu(x).sum(), x, create_graph=True)
    assert checked(first, {"x": x}).status == "fail"


@pytest.mark.parametrize("build, node", [
    (lambda x: NF.leaky_relu(x), "LeakyReluBackward0"),
    (lambda x: NF.elu(x, 0.5), "EluBackward0"),
    (lambda x: NF.hardtanh(x - 1), "HardtanhBackward0"),
    (lambda x: NF.relu6(x + 6), "HardtanhBackward0"),
    (lambda x: NF.hardswish(x - 3), "HardswishBackward0"),
])
def test_kinks_are_undefined(build: Callable, node: str) -> None:
    x = g.tensor([0.0, 0.5], requires_grad=True)
    report = checked(build(x).sum(), {"x": x})
    c = report.inputs["x"]
    assert report.status == "pass" and c.status == "undefined"
    assert [e.label for e in c.undefined] == ["x[0]"]
    assert c.undefined[0].reason.startswith(f"{node} is at a kink")


def test_elu_with_alpha_one_has_no_kink():
    x = g.tensor([0.0, 0.5], requires_grad=True)
    assert checked(NF.elu(x).sum(), {"x": x}).inputs["x"].status == "pass"


@pytest.mark.parametrize("fn, values, grad", [
    (lambda x: NF.hardtanh(x), [-1.0, 1.0, 0.5], [0.0, 0.0, 1.0]),
    (lambda x: NF.relu6(x), [0.0, 6.0, 3.0], [0.0, 0.0, 1.0]),
    (lambda x: NF.leaky_relu(x, 0.2), [0.0, -1.0, 1.0], [0.2, 0.2, 1.0]),
    (lambda x: NF.hardsigmoid(x), [-3.0, 3.0, 0.0], [0.0, 0.0, float(np.float32(1 / 6))]),
    (lambda x: NF.hardswish(x), [-3.0, 3.0, 0.0], [0.0, 1.0, 0.5]),
    (lambda x: NF.elu(x, 2.0), [0.0, 1.0], [2.0, 1.0]),
])
def test_pytorchs_subgradients(fn: Callable, values: list, grad: list) -> None:
    """Recorded from PyTorch: strict interiors for hardtanh and hardsigmoid, the left branch at 0 for elu."""
    x = g.tensor(values, requires_grad=True)
    fn(x).sum().backward()
    assert x.grad.tolist() == grad


@pytest.mark.parametrize("call, message", [
    (lambda: NF.nll_loss(g.randn(2, 3), g.tensor([0, 3])), "Target 3 is out of bounds."),
    (lambda: NF.cross_entropy(g.randn(3, 3), g.tensor([0, 1])),
     "Expected input batch_size (3) to match target batch_size (2)."),
    (lambda: NF.nll_loss(g.randn(2, 3), g.tensor([0.0, 1.0])), "expected scalar type Long but found Double"),
    (lambda: NF.binary_cross_entropy(g.tensor([1.5]), g.tensor([1.0])),
     "all elements of input should be between 0 and 1"),
    (lambda: NF.binary_cross_entropy_with_logits(g.randn(2, 3), g.randn(3)),
     "Target size (torch.Size([3])) must be the same as input size (torch.Size([2, 3]))"),
    (lambda: NF.mse_loss(g.randn(2), g.randn(2), reduction="avg"), "avg is not a valid value for reduction"),
    (lambda: NF.dropout(g.randn(2), p=1.5), "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: NF.layer_norm(g.randn(3, 5), (4,)),
     "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[3, 5]"),
    (lambda: NF.pad(g.randn(2, 3), (1, 2, 3)), "Padding length must be divisible by 2"),
    (lambda: NF.linear(g.randn(4, 3), g.randn(2, 5)), "mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)"),
    (lambda: NF.nll_loss(g.randn(2, 3, requires_grad=True), g.tensor([0, 1]),
                         weight=g.ones(3, requires_grad=True)),
     "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'."),
    (lambda: NF.one_hot(g.tensor([0.0, 1.0])), "one_hot is only applicable to index tensor of type LongTensor."),
    (lambda: NF.relu6(g.randn(2), inplace=True), "relu6(): inplace=True is not supported by gradcli"),
])
def test_errors_use_pytorchs_text(call: Callable, message: str) -> None:
    with pytest.raises(GradcliError) as info:
        call()
    assert str(info.value.message).startswith(message)


def test_one_hot_and_dropout_values():
    assert NF.one_hot(g.tensor([0, 2]), 4).tolist() == [[1, 0, 0, 0], [0, 0, 1, 0]]
    x = g.ones(1000, requires_grad=True)
    y = NF.dropout(x, 0.25)
    kept = y._data != 0
    assert set(np.unique(y._data)) <= {0.0, 1 / 0.75} and 650 < kept.sum() < 850
    y.sum().backward()
    assert np.array_equal(x.grad._data, y._data)
    assert NF.dropout(x, 0.25, training=False) is x


def test_cross_entropy_is_log_softmax_then_nll():
    x = g.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)
    loss = NF.cross_entropy(x, g.tensor([1, 2]))
    want = -np.mean([np.log(np.exp(2.0) / np.exp([1.0, 2.0, 0.5]).sum()),
                     np.log(np.exp(3.0) / np.exp([0.1, 0.2, 3.0]).sum())])
    assert loss.item() == pytest.approx(want, rel=1e-14)
    assert loss.grad_fn.name == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name == "LogSoftmaxBackward0"


def test_functions_are_reachable_from_programs(cli):
    result = cli("eval", "loss = F.mse_loss(x, y)", "x=[1.0, 2.0]", "y=[0.0, 0.0]", "--graph")
    assert result.exit_code == 0, result.stderr
    assert "MseLossBackward0" in result.stdout
    result = cli("eval", "out = torch.nn.functional.cross_entropy(x, torch.tensor([1]))", "x=[[1.0, 2.0, 3.0]]",
                 "--check")
    assert result.exit_code == 0, result.stderr
    assert "NllLossBackward0" in cli("eval", "out = F.nll_loss(x, torch.tensor([1]))", "x=[[1.0, 2.0]]",
                                     "--explain").stdout


def test_ops_lists_the_functional_namespace(cli):
    listing = cli.json("ops")["ops"]
    rows = {e["name"]: e for e in listing}
    assert rows["F.mse_loss"]["node"] == "MseLossBackward0" and rows["F.mse_loss"]["check"]
    assert all(f"F.{name}" in rows or name in rows for c in NF.COMPOSITES for name in c.functional)
    assert rows["F.relu6"]["node"] == "HardtanhBackward0" and rows["F.conv2d"]["node"] == "ConvolutionBackward0"
    assert rows["selu"]["node"] == "EluBackward0" and "F.selu" not in rows
    assert rows["nn.Linear"]["kind"] == "module" and rows["optim.Adam"]["call"].startswith("optim.Adam(params, lr=0.001")


def test_softplus_keeps_its_fast_path_and_takes_beta():
    x = g.tensor([1.0, 30.0], requires_grad=True)
    assert F.softplus(x).grad_fn.params == {}
    y = NF.softplus(x, beta=2.0, threshold=10.0)
    assert y.tolist() == pytest.approx([np.log1p(np.exp(2.0)) / 2, 30.0])


def test_gelu_of_a_0d_tensor_is_a_number_with_its_slope():
    x = g.tensor(2.5, requires_grad=True)
    y = NF.gelu(x)
    y.backward()
    cdf = 0.5 * (1 + math.erf(2.5 / math.sqrt(2)))
    assert y.item() == pytest.approx(2.5 * cdf, rel=1e-12)
    assert x.grad.item() == pytest.approx(cdf + 2.5 * math.exp(-2.5 ** 2 / 2) / math.sqrt(2 * math.pi), rel=1e-12)
