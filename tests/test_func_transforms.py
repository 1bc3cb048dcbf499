"""torch.func: each transform on programs' own functions, nested, against hand-derived values and PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import ArgumentError, LimitError, ShapeError
import gradcli.engine.creation as C
from gradcli.func import transforms as func
from gradcli.nn import modules as nn
from tests.language_helpers import fails, run
from tests.test_forward_ad import CUBE_BACKWARD_AND_JVP

PRE = "import torch\nfrom torch.func import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, " \
      "functional_call\n"


def values(source: str, name: str = "r") -> np.ndarray:
    return np.asarray(run(PRE + source)[name]._data)


# -- hostile input first ----------------------------------------------------------------------------------
def test_vmap_over_a_huge_batch_per_example_is_refused_before_any_call() -> None:
    err = fails(PRE + "r = vmap(lambda x: x * x.item())(torch.zeros(200_000, 1))", LimitError)
    assert "200,000 examples" in err.message


def test_vmap_over_a_huge_batch_by_rules_runs_once() -> None:
    r = run(PRE + "r = vmap(lambda x: x * 2)(torch.zeros(200_000, 1))")["r"]
    assert r.shape == (200_000, 1)


def test_vmap_of_a_function_that_never_ends_hits_the_step_cap() -> None:
    fails(PRE + "def f(x):\n    while True:\n        x = x + 1\n    return x\nr = vmap(f)(torch.zeros(3))\n",
          LimitError, max_steps=1000)


def test_grad_of_a_non_scalar_is_pytorchs_error() -> None:
    err = fails(PRE + "r = grad(lambda x: x * 2)(torch.tensor([1.0, 2.0]))", ShapeError)
    assert err.message == ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           "1 dims. Maybe you wanted to use the vjp or jacrev APIs instead?")


def test_grad_of_a_number_output_and_a_number_input() -> None:
    assert "to return a Tensor, got <class 'float'>" in fails(PRE + "r = grad(lambda x: 3.0)(torch.ones(()))").message
    assert fails(PRE + "r = grad(lambda x: x)(3.0)", ArgumentError).message == \
        "Thing passed to transform API must be Tensor, got <class 'float'>"


def test_argnums_out_of_range_and_has_aux_without_a_pair() -> None:
    assert fails(PRE + "r = grad(lambda x: x.sum(), argnums=1)(torch.ones(2))").message == \
        "Got argnum=1, but only 1 positional inputs"
    assert "should be a tuple: (output, aux)" in fails(
        PRE + "r = grad(lambda x: x.sum(), has_aux=True)(torch.ones(2))").message


def test_vmap_shape_errors_are_pytorchs() -> None:
    assert fails(PRE + "r = vmap(lambda x, y: x + y)(torch.ones(2, 3), torch.ones(3, 3))", ShapeError).message == \
        "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [2, 3] for the " \
        "mapped dimension"
    assert "Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2" in fails(
        PRE + "r = vmap(lambda x: x.sum(), in_dims=2)(torch.ones(2, 3))").message
    assert "must only return Tensors, got type <class 'float'>" in fails(
        PRE + "r = vmap(lambda x: 1.0)(torch.ones(2))").message


def test_jvp_wants_tuples_of_matching_shapes() -> None:
    assert fails(PRE + "r = jvp(torch.sin, torch.ones(2), torch.ones(2))").message.startswith(
        "jvp(f, primals, tangents): Expected primals to be a tuple.")
    assert "Tensor is of size [2] while the given forward gradient is of size [3]" in fails(
        PRE + "r = jvp(torch.sin, (torch.ones(2),), (torch.ones(3),))", ShapeError).message


def test_a_transform_of_a_tensor_is_refused() -> None:
    assert "must be a function" in fails(PRE + "r = grad(torch.ones(2))").message


# -- values (hand-derived) ------------------------------------------------------------------------------
def test_grad_of_a_cube_sum() -> None:
    np.testing.assert_allclose(values("r = grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))"), [3, 12])


def test_grad_argnums_tuple_and_grad_and_value() -> None:
    ran = run(PRE + "def f(x, y):\n    return (x * y).sum()\n"
                    "gx, gy = grad(f, argnums=(0, 1))(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 5.0]))\n"
                    "g, v = grad_and_value(f)(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 5.0]))\n")
    np.testing.assert_allclose(ran["gx"]._data, [3, 5])
    np.testing.assert_allclose(ran["gy"]._data, [1, 2])
    np.testing.assert_allclose(ran["g"]._data, [3, 5])
    assert float(ran["v"]) == 13.0


def test_grad_has_aux_returns_the_aux_untouched() -> None:
    ran = run(PRE + "g, aux = grad(lambda x: ((x * x).sum(), x * 10), has_aux=True)(torch.tensor([1.0, 2.0]))")
    np.testing.assert_allclose(ran["g"]._data, [2, 4])
    np.testing.assert_allclose(ran["aux"]._data, [10, 20])
    assert ran["aux"].grad_fn is None


def test_nested_grad_gives_the_second_and_third_derivative() -> None:
    ran = run(PRE + "x = torch.tensor(2.0)\nd2 = grad(grad(lambda x: x ** 3))(x)\nd3 = grad(grad(grad(lambda x: x ** 3)))(x)")
    assert float(ran["d2"]) == 12.0 and float(ran["d3"]) == 6.0
    assert ran["d2"].grad_fn is None  # nothing of the caller's is on the graph


def test_grad_of_an_input_that_requires_grad_stays_on_its_graph() -> None:
    ran = run(PRE + "x = torch.tensor([1.0, 2.0], requires_grad=True)\ng = grad(lambda x: (x ** 2).sum())(x)\n"
                    "g.sum().backward()")
    np.testing.assert_allclose(ran["x"].grad._data, [2, 2])


def test_jacrev_jacfwd_and_hessian() -> None:
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(values("r = jacrev(torch.sin)(torch.tensor([1.0, 2.0]))"), np.diag(np.cos(x)), rtol=1e-6)
    np.testing.assert_allclose(values("r = jacfwd(lambda x: x * x.sum())(torch.tensor([1.0, 2.0]))"),
                               [[4, 1], [2, 5]])
    np.testing.assert_allclose(values("r = hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))"),
                               np.diag(6 * x))
    np.testing.assert_allclose(values("r = jacfwd(jacrev(lambda x: (x ** 3).sum()))(torch.tensor([1.0, 2.0]))"),
                               np.diag(6 * x))


def test_vjp_and_jvp() -> None:
    ran = run(PRE + "out, fn = vjp(lambda x: x * x, torch.tensor([1.0, 3.0]))\n(g,) = fn(torch.tensor([1.0, 10.0]))\n"
                    "o, t = jvp(lambda x: x * x, (torch.tensor([1.0, 3.0]),), (torch.tensor([1.0, 10.0]),))")
    np.testing.assert_allclose(ran["out"]._data, [1, 9])
    np.testing.assert_allclose(ran["g"]._data, [2, 60])
    np.testing.assert_allclose(ran["t"]._data, [2, 60])


def test_vmap_in_dims_out_dims_and_nested() -> None:
    np.testing.assert_allclose(values("r = vmap(lambda x, w: x @ w, in_dims=(0, None))(torch.ones(3, 2), "
                                      "torch.ones(2, 4))"), np.full((3, 4), 2.0))
    assert values("r = vmap(lambda x: x * 2, out_dims=1)(torch.ones(2, 3))").shape == (3, 2)
    assert values("r = vmap(lambda x: x.sum(), in_dims=1)(torch.ones(2, 3))").shape == (3,)
    np.testing.assert_allclose(values("r = vmap(vmap(lambda a, b: a * b))(torch.ones(2, 3) * 2, "
                                      "torch.arange(6.0).reshape(2, 3))"), np.arange(6.0).reshape(2, 3) * 2)
    np.testing.assert_allclose(values("r = vmap(grad(lambda x: (x ** 3).sum()))(torch.tensor([[1.0, 2.0], "
                                      "[3.0, 4.0]]))"), [[3, 12], [27, 48]])


def test_functional_call_swaps_the_parameters_for_the_call_only() -> None:
    m = nn.Linear(2, 1)
    before = m.weight._data.copy()
    r = func.functional_call(m, {"weight": C.tensor([[1.0, 2.0]]), "bias": C.tensor([0.5])}, (C.tensor([[3.0, 4.0]]),))
    np.testing.assert_allclose(r._data, [[11.5]])
    np.testing.assert_array_equal(m.weight._data, before)
    with pytest.raises(ArgumentError, match="unexpected key\\(s\\): 'w'"):
        func.functional_call(m, {"w": C.ones(1)}, (C.ones(2),))


def test_per_sample_gradients_by_vmap_of_grad_of_functional_call() -> None:
    m = nn.Linear(2, 1)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, x, y):
        return ((func.functional_call(m, p, (x,)) - y) ** 2).sum()
    xs, ys = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]), np.array([[1.0], [0.0], [2.0]])
    g = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, C.tensor(xs), C.tensor(ys))
    w, b = params["weight"]._data, params["bias"]._data
    residual = xs @ w.T + b - ys
    np.testing.assert_allclose(g["weight"]._data, (2 * residual)[:, :, None] * xs[:, None, :], rtol=1e-5)
    np.testing.assert_allclose(g["bias"]._data, 2 * residual, rtol=1e-5)


def test_functorch_names_are_the_same() -> None:
    np.testing.assert_allclose(np.asarray(run("import torch\nfrom functorch import grad\n"
                                              "r = grad(lambda x: (x * x).sum())(torch.ones(2))")["r"]._data), [2, 2])


# -- jvp and jacfwd are forward mode ----------------------------------------------------------------------
def test_jacfwd_and_jvp_read_the_jvp_rules_and_jacrev_does_not() -> None:
    from gradcli.engine import ops as O
    right = O.SIN.jvp
    object.__setattr__(O.SIN, "jvp", lambda op, ts, out, x: 2 * ts[0])  # planted: d sin = 2
    try:
        fwd = values("r = jacfwd(torch.sin)(torch.tensor([1.0, 2.0]))")
        tangent = values("o, r = jvp(torch.sin, (torch.tensor([1.0, 2.0]),), (torch.tensor([1.0, 1.0]),))")
        rev = values("r = jacrev(torch.sin)(torch.tensor([1.0, 2.0]))")
    finally:
        object.__setattr__(O.SIN, "jvp", right)
    np.testing.assert_allclose(fwd, np.diag([2.0, 2.0]))
    np.testing.assert_allclose(tangent, [2.0, 2.0])
    np.testing.assert_allclose(rev, np.diag(np.cos([1.0, 2.0])), rtol=1e-6)


def test_jacfwd_over_an_op_without_a_jvp_rule_is_pytorchs_error() -> None:
    from gradcli.engine import ops as O
    from gradcli.errors import BackwardError
    right = O.SIN.jvp
    object.__setattr__(O.SIN, "jvp", None)
    try:
        err = fails(PRE + "r = jacfwd(lambda x: x.sin() * 2)(torch.tensor([1.0, 2.0]))", BackwardError)
        assert values("r = jacrev(torch.sin)(torch.tensor([0.0]))").tolist() == [[1.0]]
    finally:
        object.__setattr__(O.SIN, "jvp", right)
    assert err.message == "Trying to use forward AD with sin that does not support it because it has not been " \
                          "implemented yet."


def test_jacfwd_calls_the_function_once_as_pytorchs_vmap_of_jvp_does() -> None:
    ran = run(PRE + "calls = []\ndef f(x):\n    calls.append(1)\n    return x.exp()\n"
                    "r = jacfwd(f)(torch.tensor([1.0, 2.0, 3.0]))\n")
    assert ran["calls"] == [1]
    np.testing.assert_allclose(ran["r"]._data, np.diag(np.exp([1.0, 2.0, 3.0])), rtol=1e-6)


FUNCTION = PRE + """
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
""" + CUBE_BACKWARD_AND_JVP


def test_jacfwd_of_a_function_needs_its_vmap_support_as_in_pytorch() -> None:
    err = fails(FUNCTION + "r = jacfwd(Cube.apply)(torch.tensor([1.0, 2.0]))")
    assert err.message.startswith("You tried to vmap over Cube, but it does not have vmap support. Please override "
                                  "and implement the vmap staticmethod or set generate_vmap_rule=True.")
    ran = run(FUNCTION.replace("class Cube(torch.autograd.Function):\n",
                               "class Cube(torch.autograd.Function):\n    generate_vmap_rule = True\n")
              + "r = jacfwd(Cube.apply)(torch.tensor([1.0, 2.0]))\n")
    np.testing.assert_allclose(ran["r"]._data, np.diag([3.0, 12.0]))


def test_a_function_under_a_transform_needs_setup_context_and_vmap_support_as_in_pytorch() -> None:
    old_style = PRE + ("class Twice(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                       "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n")
    for call in ["grad(lambda x: Twice.apply(x).sum())(torch.ones(2))", "vmap(Twice.apply)(torch.ones(2))",
                 "jacrev(Twice.apply)(torch.ones(2))"]:
        assert fails(old_style + f"r = {call}\n").message.startswith(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must "
            "override the setup_context staticmethod.")
    assert float(run(old_style + "x = torch.ones(2, requires_grad=True)\nr = Twice.apply(x).sum()\n")["r"]) == 4.0
    assert fails(FUNCTION + "r = vmap(Cube.apply)(torch.tensor([1.0, 2.0]))\n").message.startswith(
        "You tried to vmap over Cube, but it does not have vmap support.")
    np.testing.assert_allclose(values(FUNCTION[len(PRE):] + "r = grad(lambda x: Cube.apply(x).sum())(torch.tensor([1.0, 2.0]))"),
                               [1.0, 1.0])  # its backward passes g through, as written


# -- --check proves every transform's result, by SymPy and never by the rules that computed it ----------------
CHECKED = PRE + """def f(t):
    return (t.sin() * t ** 2).sum()
x = torch.tensor([0.5, -1.0, 2.0])
g = grad(f)(x)
J = jacrev(lambda t: t.sin() * t)(x)
Jf = jacfwd(lambda t: t.sin() * t.sum())(x)
H = hessian(f)(x)
out, vjp_fn = vjp(lambda t: t.sin() * t, x)
(gv,) = vjp_fn(torch.tensor([1.0, 2.0, 3.0]))
o, tangent = jvp(lambda t: t.sin() * t.sum(), (x,), (torch.tensor([1.0, 0.5, -1.0]),))
per = vmap(grad(f))(torch.tensor([[0.5, 1.0], [2.0, -1.0]]))
gav, value = grad_and_value(f)(x)
"""
SITES = {6: "grad(f)(…)", 7: "jacrev(lambda t: t.sin() * t)(…)", 8: "jacfwd(lambda t: t.sin() * t.sum())(…)",
         9: "hessian(f)(…)", 11: "vjp_fn(…)", 12: "jvp(lambda t: t.sin() * t.sum(), …)", 13: "vmap(grad(f))(…)",
         14: "grad_and_value(f)(…)"}


def _checked(tmp_path, planted: dict | None = None):
    from gradcli.check import checker
    from gradcli.engine import ops as O
    from gradcli.program.scripts import run_file
    path = tmp_path / "func.py"
    path.write_text(CHECKED, encoding="utf-8")
    right = {name: getattr(O.SIN, name) for name in planted or {}}
    for name, rule in (planted or {}).items():
        object.__setattr__(O.SIN, name, rule)
    try:
        return run_file(path, checker("symbolic"))
    finally:
        for name, rule in right.items():
            object.__setattr__(O.SIN, name, rule)


def _failed_lines(result) -> set[int]:
    return {site.line for site in result.sites if site.failed}


def test_check_proves_each_transforms_result(tmp_path) -> None:
    result = _checked(tmp_path)
    assert result.status == "ok" and result.checks_failed == 0 and result.checks_undefined == 0
    assert {(site.line, site.what): site.calls - site.unchecked for site in result.sites} == \
        {(line, what): 2 if line == 13 else 1 for line, what in SITES.items()}  # vmap: each example


def test_check_catches_a_wrong_vjp_in_every_result(tmp_path) -> None:
    result = _checked(tmp_path, {"vjps": (lambda ns, g, o, x: 2 * g * ns.cos(x),)})
    assert result.status == "failed" and _failed_lines(result) == set(SITES)  # sin's jvp rule is its VJP (diagonal)


def test_check_catches_a_wrong_jvp_wherever_forward_mode_computed_the_result(tmp_path) -> None:
    result = _checked(tmp_path, {"jvp": lambda op, ts, out, x: 2 * ts[0] * np.cos(x)})
    assert result.status == "failed" and _failed_lines(result) == {8, 9, 12}  # hessian: forward over reverse


def test_the_vmap_batch_limit_cannot_be_caught() -> None:
    fails(PRE + "try:\n    r = vmap(lambda x: x * x.item())(torch.zeros(200_000))\nexcept Exception:\n    r = 1\n", LimitError)


NESTED_CHECKED = PRE + """x = torch.tensor([0.5, -1.0])
def f(t):
    return (t.sin() * t).sum()
H1 = jacfwd(jacrev(f))(x)
H2 = jacrev(jacrev(f))(x)
H3 = jacfwd(jacfwd(f))(x)
d2 = grad(grad(lambda t: t.sin() * t))(torch.tensor(0.5))
"""


def test_a_transform_of_a_transform_is_judged_by_the_second_derivatives_of_f(tmp_path) -> None:
    from gradcli.check import checker
    from gradcli.engine import ops as O
    from gradcli.program.scripts import run_file
    path = tmp_path / "nested.py"
    path.write_text(NESTED_CHECKED, encoding="utf-8")
    result = run_file(path, checker("symbolic"))
    assert result.status == "ok" and [(s.line, s.calls - s.unchecked) for s in result.sites] == \
        [(6, 1), (7, 1), (8, 1), (9, 1)]
    assert all(c.report.mode == "hessian" for c in result.checks)
    right = O.SIN.vjps
    object.__setattr__(O.SIN, "vjps", (lambda ns, g, o, x: 2 * g * ns.cos(x),))
    try:
        planted = run_file(path, checker("symbolic"))
    finally:
        object.__setattr__(O.SIN, "vjps", right)
    assert planted.status == "failed" and {s.line for s in planted.sites if s.failed} == {6, 7, 8, 9}


def test_hessian_over_a_dict_of_parameters_is_a_dict_of_dicts_of_blocks() -> None:
    """torch.func.hessian of a loss of functional_call's parameters (the per-parameter curvature):
    jacfwd of jacrev, whose output is a dict of gradients; loss = (w·x + b)², so ∂²/∂w² = 2xxᵀ."""
    ran = run(PRE + "from torch.func import functional_call, hessian\nm = torch.nn.Linear(3, 1)\n"
                    "params = dict(m.named_parameters())\nx = torch.tensor([[1.0, 2.0, -1.0]])\n"
                    "h = hessian(lambda p, inp: functional_call(m, p, (inp,)).pow(2).sum())(params, x)\n")
    h, x = ran["h"], np.array([1.0, 2.0, -1.0])
    assert sorted(h) == ["bias", "weight"] and sorted(h["weight"]) == ["bias", "weight"]
    np.testing.assert_allclose(h["weight"]["weight"]._data, 2 * np.outer(x, x).reshape(1, 3, 1, 3))
    np.testing.assert_allclose(h["weight"]["bias"]._data, 2 * x.reshape(1, 3, 1))
    np.testing.assert_allclose(h["bias"]["bias"]._data, [[2.0]])
