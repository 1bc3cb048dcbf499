"""`gradcli jacobian/hessian --check`: autograd's blocks against SymPy's of the same replay."""
import numpy as np
import pytest

import gradcli as g
from gradcli.check import hessian_check, jacobian_check
from gradcli.engine.autograd import hessian_of, jacobian_of


def test_softmax_jacobian():
    x = g.tensor([0.2, -1.0, 0.7], requires_grad=True)
    y = g.softmax(x, dim=-1)
    (block,) = jacobian_of(y, [x])
    report = jacobian_check(y, {"x": x}, {"x": block})
    c = report.inputs["x"]
    assert report.status == "pass" and report.mode == "jacobian"
    assert (c.checked, c.total) == (9, 9)
    assert c.derivative.startswith("∂y[0]/∂x[0] = ")


def test_a_wrong_jacobian_entry_is_named():
    x = g.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    w = g.tensor([0.5, -2.0], requires_grad=True)
    y = (x @ w).tanh()
    blocks = jacobian_of(y, [x, w])
    wrong = blocks[1].copy()
    wrong[1, 0] += 0.5
    report = jacobian_check(y, {"x": x, "w": w}, {"x": blocks[0], "w": wrong})
    assert report.status == "fail" and report.inputs["x"].status == "pass"
    assert (report.inputs["w"].worst.label, report.inputs["w"].worst.index) == ("∂y[1]/∂w[0]", (1, 0))


def test_cubic_hessian():
    x = g.tensor([1.0, 2.0, -1.0], requires_grad=True)
    out = (x ** 3).sum() + x[0] * x[1]
    block = np.array([[6.0, 1, 0], [1, 12, 0], [0, 0, -6]])
    report = hessian_check(out, {"x": x}, {"x": {"x": block}})
    c = report.inputs["x"]
    assert report.status == "pass" and (c.checked, c.total) == (9, 9)
    assert c.derivative == "∂²out/∂x[0]∂x[0] = 6*x[0] = 6"


def test_hessian_blocks_of_two_inputs_and_a_wrong_one():
    xv, wv = np.array([0.3, -0.4]), np.array([1.5, 0.5])
    x = g.tensor(xv, requires_grad=True)
    w = g.tensor(wv, requires_grad=True)
    out = (x * w).sin().sum() + (w * w * x).sum()
    s, c = np.sin(xv * wv), np.cos(xv * wv)
    xw = np.diag(c - xv * wv * s + 2 * wv)
    computed = {"x": {"x": np.diag(-wv * wv * s), "w": xw},
                "w": {"x": xw.T, "w": np.diag(-xv * xv * s + 2 * xv)}}
    report = hessian_check(out, {"x": x, "w": w}, computed)
    assert report.status == "pass"
    assert set(report.inputs) == {"x", "x,w", "w,x", "w"}
    computed["w"]["x"] = computed["w"]["x"] + np.array([[0.0, 0.0], [0.0, 1e-3]])
    report = hessian_check(out, {"x": x, "w": w}, computed)
    assert report.inputs["w,x"].status == "fail"
    assert report.inputs["w,x"].worst.label == "∂²out/∂w[1]∂x[1]"


def test_hessian_needs_one_element():
    x = g.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="one-element"):
        hessian_check(x * 2, {"x": x}, {})


def test_jacobian_of_a_deep_chain_falls_back_to_finite_differences():
    x = g.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(100):
        y = y.sin()
    report = jacobian_check(y, {"x": x}, {"x": np.zeros((1, 1))})
    c = report.inputs["x"]
    assert report.status == "fail" and c.method == "numeric" and "nested too deeply" in c.note
    (block,) = jacobian_of(y, [x])
    assert jacobian_check(y, {"x": x}, {"x": block}).status == "pass"


def test_kinks_in_a_jacobian_are_undefined():
    x = g.tensor([0.0, 1.0], requires_grad=True)
    y = x.abs() * 2
    (block,) = jacobian_of(y, [x])
    report = jacobian_check(y, {"x": x}, {"x": block})
    assert report.status == "pass" and report.inputs["x"].status == "undefined"
    assert [e.label for e in report.inputs["x"].undefined] == ["∂y[0]/∂x[0]"]


def test_the_engines_own_hessian_passes_the_check():
    x = g.tensor([1.0, 2.0, -1.0], requires_grad=True)
    out = (x ** 3).sum() + x[0] * x[1]
    ((block,),) = hessian_of(out, [x])
    assert hessian_check(out, {"x": x}, {"x": {"x": block}}).status == "pass"


def test_finite_differences_name_the_same_wrong_jacobian_entry():
    x = g.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    w = g.tensor([0.5, -2.0], requires_grad=True)
    y = (x @ w).tanh()
    blocks = jacobian_of(y, [x, w])
    wrong = blocks[1].copy()
    wrong[1, 0] += 0.01
    report = jacobian_check(y, {"x": x, "w": w}, {"x": blocks[0], "w": wrong}, "numeric")
    assert report.status == "fail" and report.inputs["x"].status == "pass" and report.inputs["w"].method == "numeric"
    assert report.inputs["w"].worst.label == "∂y[1]/∂w[0]"
    assert jacobian_check(y, {"x": x, "w": w}, {"x": blocks[0], "w": blocks[1]}, "numeric").status == "pass"


def test_finite_differences_of_a_jacobian_leave_kinks_undefined():
    x = g.tensor([0.0, 1.0], requires_grad=True)
    y = x.abs() * 2
    (block,) = jacobian_of(y, [x])
    c = jacobian_check(y, {"x": x}, {"x": block}, "numeric").inputs["x"]
    assert c.status == "undefined" and [e.label for e in c.undefined] == ["∂y[0]/∂x[0]", "∂y[1]/∂x[0]"]


def test_second_differences_check_hessian_blocks():
    xv, wv = np.array([0.3, -0.4]), np.array([1.5, 0.5])
    x = g.tensor(xv, requires_grad=True)
    w = g.tensor(wv, requires_grad=True)
    out = (x * w).sin().sum() + (w * w * x).sum()
    rows = hessian_of(out, [x, w])
    computed = {a: dict(zip("xw", row)) for a, row in zip("xw", rows)}
    report = hessian_check(out, {"x": x, "w": w}, computed, "numeric")
    assert report.status == "pass" and {c.method for c in report.inputs.values()} == {"numeric"}
    assert max(c.max_abs_err for c in report.inputs.values()) < 1e-6
    computed["w"]["x"] = computed["w"]["x"] + np.array([[0.0, 0.0], [0.0, 1e-2]])
    report = hessian_check(out, {"x": x, "w": w}, computed, "all")
    assert report.inputs["w,x"].status == "fail" and report.inputs["w,x"].numeric.status == "fail"
    assert report.inputs["w,x"].numeric.worst.label == "∂²out/∂w[1]∂x[1]"
