"""`gradcli ops`: generated from the allowlist and the op table, so nothing can be missing or out of date."""
from __future__ import annotations

import inspect

import pytest

from gradcli.engine import ops as O
from gradcli.lang import builtins as B
from gradcli.engine.tensor import Tensor


@pytest.fixture
def listing(cli) -> list[dict]:
    return cli.json("ops")["ops"]


def test_every_op_in_the_table_is_listed(listing):
    assert {e["op"] for e in listing if e["op"]} == {op.name for op in O.TABLE}
    assert {e["node"] for e in listing if e["node"]} >= {op.node for op in O.TABLE}


def test_every_name_of_the_language_is_listed(listing):
    kinds = {(e["name"], e["kind"]) for e in listing}
    assert {(n, "function") for n in B.FUNCTIONS} <= kinds
    assert {(n, "method") for n in B.TENSOR_METHODS} <= kinds
    assert {(n, "attribute") for n in B.TENSOR_ATTRIBUTES} <= kinds


def test_rules_and_coverage_come_from_the_table(listing):
    for e in listing:
        op = B.OP_OF.get(e["name"]) if e["kind"] in ("function", "method", "attribute") else None
        op = next((form for form, args in B.TENSOR_FORMS.get(e["name"], ()) if e["call"].endswith(f"{args})")), op)
        if op is not None:
            assert (e["op"], e["node"], e["rule"], e["check"]) == (op.name, op.node, op.rule, op.sym is not None)
    assert next(e for e in listing if e["name"] == "ones")["rule"] is None


def test_signatures_come_from_inspect(listing):
    calls = {(e["name"], e["kind"]): e["call"] for e in listing if "=Tensor" not in e["call"]}
    tensor_forms = {e["call"]: e["node"] for e in listing if "=Tensor" in e["call"]}
    assert tensor_forms["clamp(x, min=Tensor, max=Tensor)"] == tensor_forms["x.clip(min=Tensor, max=Tensor)"] == \
        "ClampBackward0"
    assert calls["softmax", "function"] == "softmax(input, dim=None)"
    assert calls["sum", "method"] == "x.sum(dim=None, keepdim=False, *, dtype=None)"
    assert calls["T", "attribute"] == "x.T"
    params = list(inspect.signature(Tensor.clamp).parameters)[1:]
    assert calls["clamp", "method"] == "x.clamp(" + ", ".join(f"{p}=None" for p in params) + ")"


@pytest.mark.parametrize("form, op", [("a + b", "add"), ("a - b", "sub"), ("a * b", "mul"), ("a / b", "div"),
                                      ("a ** b", "pow"), ("a @ b", "matmul"), ("-a", "neg"), ("a[0]", "index")])
def test_operators_are_read_off_the_graph(listing, form, op):
    entry = next(e for e in listing if e["name"] == form)
    assert entry["kind"] == "operator" and entry["op"] == op


def test_primitives_no_name_reaches_are_still_listed(listing):
    primitives = [e["op"] for e in listing if e["kind"] == "primitive"]
    assert "gelu_backward" in primitives    # recorded only by gelu's backward under create_graph
    named = {e["op"] for e in listing if e["kind"] != "primitive"}
    assert not named & set(primitives)


def test_filter(cli):
    names = {e["name"] for e in cli.json("ops", "soft")["ops"]}
    assert names == {"softmax", "log_softmax", "softplus", "F.softmin", "F.softsign", "nn.Softmax", "nn.LogSoftmax",
                     "nn.Softmin", "nn.Softplus", "nn.Softsign", "F.soft_margin_loss", "F.multilabel_soft_margin_loss",
                     "nn.SoftMarginLoss", "nn.MultiLabelSoftMarginLoss", "F.softshrink", "nn.Softshrink",
                     "F.gumbel_softmax"}
    by_node = {e["name"] for e in cli.json("ops", "MmBackward")["ops"]}
    assert {"matmul", "mm", "dot", "a @ b"} <= by_node


def test_a_filter_nothing_matches_is_a_user_error_with_the_closest_name(cli):
    result = cli("ops", "sigmod")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == ["error[argument]: no function, method, attribute or operator matches 'sigmod'",
                                          "hint: did you mean 'sigmoid'?"]
    result = cli("ops", "nosuchthing")
    assert result.exit_code == 2
    assert "hint: no name is close to it; gradcli ops with no filter lists everything" in result.stderr


def test_namespaces(cli):
    spaces = cli.json("ops")["namespaces"]
    assert spaces["torch.nn.functional"].startswith("adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool2d, "
                                                    "affine_grid, avg_pool1d, avg_pool2d, avg_pool3d, batch_norm, "
                                                    "binary_cross_entropy, binary_cross_entropy_with_logits, celu, ")
    assert ("log_softmax, logsigmoid, margin_ranking_loss, max_pool1d, max_pool2d, max_pool3d, max_unpool1d, "
            "max_unpool2d, mish"
            in spaces["torch.nn.functional"])
    # Optimizer: the base a program subclasses
    assert spaces["torch.optim"] == "Adadelta, Adagrad, Adam, AdamW, LBFGS, Optimizer, RMSprop, SGD"
    assert spaces["torch.optim.lr_scheduler"] == ("CosineAnnealingLR, ExponentialLR, LRScheduler, LambdaLR, MultiStepLR, "
                                                  "OneCycleLR, ReduceLROnPlateau, StepLR")
    assert spaces["torch"].startswith("every function")


def test_text_table(cli):
    result = cli("ops", "softmax")
    assert result.exit_code == 0
    out = result.stdout
    assert "softmax(input, dim=None)" in out and "x.softmax(dim=None)" in out and "SoftmaxBackward0" in out
    assert "∂softmax(x)ᵢ/∂xⱼ" in out and "yes" in out
    assert "9 entries matching 'softmax'" in out


def test_the_filter_is_user_text_not_markup(cli):
    result = cli("ops", "[/x]")
    assert result.exit_code == 2 and "matches '[/x]'" in result.stderr


def test_at_80_columns_calls_and_rules_wrap_between_names_never_inside():
    import os
    import subprocess
    done = subprocess.run(["gradcli", "ops", "softmax"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80"})
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and all(len(line) <= 80 for line in lines)
    table = [line for line in lines if line.startswith("│")]
    assert "…" not in "".join(table)
    calls = [line.split("│")[1].strip() for line in table]
    for name in ("log_softmax(", "softmin(", "LogSoftmax(", "Softmax("):
        assert any(cell.endswith(name) or cell.startswith(name) for cell in calls), name
    assert "LogSoftmaxBackward0" in done.stdout
