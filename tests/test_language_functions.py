"""`def`, `lambda`, closures and recursion: values and gradients by hand, Python's scoping rules, bounded
depth and calls, and errors that show the program's own call stack."""
from __future__ import annotations

import re

import numpy as np

import gradcli
from gradcli.engine.tensor import GradMode
from gradcli.errors import ArgumentError, LimitError, NameLookupError, ValueDomainError
from gradcli.lang.limits import DEFAULT_MAX_STEPS, MAX_CALL_DEPTH, MAX_CALLS
from tests.language_helpers import fails, run


def test_def_with_positional_keyword_and_default_arguments():
    ran = run("def affine(x, w, b=0.5, *, scale=1.0):\n    '''w x + b, scaled.'''\n    return scale * (w * x + b)\n"
              "a = affine(2.0, 3.0)\nb = affine(2.0, w=3.0, b=1.0)\nc = affine(2.0, 3.0, scale=2.0)")
    assert (ran["a"], ran["b"], ran["c"]) == (6.5, 7.0, 13.0)


def test_gradient_through_a_function_matches_the_hand_derivative():
    # loss(w) = sum((w x - y)^2): d/dw = 2 (w x - y) x = 2 (2 - 3) 2 = -4 and 2 (-2 - 1) (-1) = 6
    ran = run("import torch\ndef loss_fn(w, x, y):\n    pred = w * x\n    return ((pred - y) ** 2).sum()\n"
              "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
              "loss = loss_fn(w, torch.tensor([2.0, -1.0]), torch.tensor([3.0, 1.0]))\nloss.backward()")
    np.testing.assert_allclose(ran["w"].grad.numpy(), [-4.0, 6.0])
    assert ran["loss"].item() == 10.0


def test_closures_see_the_enclosing_scope_late_bound():
    ran = run("def make(scale):\n    def apply(v):\n        return v * scale + offset\n    return apply\n"
              "offset = 1\ntwice = make(2)\nfirst = twice(5)\noffset = 10\nsecond = twice(5)\n"
              "adders = [lambda v, k=k: v + k for k in range(3)]\nthird = adders[2](1)")
    assert (ran["first"], ran["second"], ran["third"]) == (11, 20, 3)


def test_assignments_in_a_function_are_local():
    ran = run("x = 1\ndef f():\n    x = 2\n    return x\ny = f()")
    assert (ran["x"], ran["y"]) == (1, 2)


def test_reading_a_local_before_assigning_it_is_pythons_error_not_the_global():
    error = fails("x = 1\ndef f():\n    y = x\n    x = 2\n    return y\nf()", NameLookupError)
    assert error.message == "cannot access local variable 'x' where it is not associated with a value"
    assert (error.line, error.calls) == (3, [(6, 1, 3)])


def test_recursion_and_varargs():
    ran = run("def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n"
              "def total(*values, start=0):\n    return start + sum(values)\n"
              "a = fact(10)\nb = total(1, 2, 3)\nc = total(*[4, 5], start=1)")
    assert (ran["a"], ran["b"], ran["c"]) == (3628800, 6, 10)


def test_wrong_arguments_name_the_function_and_its_parameters():
    error = fails("def f(x, y=1):\n    return x\nf(1, 2, 3)", ArgumentError)
    assert error.message == "f(): too many positional arguments"
    assert error.hint == "usage: f(x, y=...)"
    assert (error.line, error.column) == (3, 1)
    assert "missing a required argument: 'x'" in fails("def f(x):\n    return x\nf()", ArgumentError).message


def test_an_error_inside_a_function_shows_the_programs_call_stack():
    source = "import torch\ndef inner(v):\n    return v.item()\ndef outer(w):\n    return inner(w * 2)\n" \
             "y = outer(torch.ones(3))"
    error = fails(source, ValueDomainError)
    assert (error.line, error.column, error.length) == (3, 12, len("v.item()"))
    assert error.calls == [(6, 5, len("outer(torch.ones(3))")), (5, 12, len("inner(w * 2)"))]


def test_an_error_in_a_lambda_called_by_the_engine_points_into_the_lambda():
    error = fails("import torch\nfrom torch.autograd.functional import jacobian\n"
                  "J = jacobian(lambda v: v.mean(dim=3), torch.ones(2))")
    assert (error.line, error.column) == (3, 24)
    assert error.calls == [(3, 5, len("jacobian(lambda v: v.mean(dim=3), torch.ones(2))"))]


def test_a_recursion_bomb_is_a_limit_error():
    error = fails("def f(n):\n    return f(n + 1)\nf(0)", LimitError)
    assert error.message == f"maximum recursion depth exceeded ({MAX_CALL_DEPTH} nested calls of the program's functions)"
    assert len(error.calls) == MAX_CALL_DEPTH
    assert error.calls[0] == (3, 1, 4) and error.calls[-1] == (2, 12, 8)


def test_mutual_recursion_inside_a_with_block_meets_the_same_limit():
    error = fails("import torch\ndef a(n):\n    with torch.no_grad():\n        return b(n)\ndef b(n):\n    return a(n)\n"
                  "a(0)", LimitError)
    assert "maximum recursion depth exceeded" in error.message
    assert GradMode.enabled  # every no_grad the recursion entered was left again


def test_exponentially_many_calls_meet_the_call_limit(monkeypatch):
    from gradcli.lang import limits
    monkeypatch.setattr(limits, "MAX_CALLS", 100_000)
    error = fails("def f(n):\n    return 1 if n == 0 else f(n - 1) + f(n - 1)\nf(60)", LimitError)
    assert error.message == "the program made more than 100,000 calls of its own functions"
    assert len(error.calls) <= 61


def test_calls_do_not_use_up_the_loop_iterations():
    ran = run("def f(v):\n    return g(v) + 1\ndef g(v):\n    return v * 2\ntotal = 0\nfor i in range(100):\n"
              "    total = total + f(i)", max_steps=100)
    assert ran["total"] == 2 * 4950 + 100


def test_deep_nesting_inside_deep_recursion_is_a_limit_error_not_a_crash():
    nested = "(" * 60 + "f(n - 1)" + " + 1)" * 60
    error = fails(f"def f(n):\n    if n == 0:\n        return 0\n    return {nested}\nf(150)", LimitError)
    assert "depth" in error.message


def test_a_function_is_shown_by_name():
    ran = run("def f(x):\n    return x\nprint(f)\nprint(lambda: 1)")
    assert [re.sub(" at 0x[0-9a-f]+>$", ">", line) for line in ran.printed] == ["<function f>", "<function <lambda>>"]


def test_decorated_functions_run_in_their_gradient_mode():
    ran = run("import torch\nw = torch.ones(2, requires_grad=True)\n"
              "@torch.no_grad()\ndef frozen(v):\n    return v * 2\n"
              "@torch.no_grad\ndef bare(v):\n    return v * 2\n"
              "@torch.enable_grad()\ndef tracked(v):\n    return v * 2\n"
              "def twice(fn):\n    return lambda v: fn(fn(v))\n"
              "@twice\ndef inc(v):\n    return v + 1\n"
              "a = frozen(w)\nb = bare(w)\nwith torch.no_grad():\n    c = tracked(w)\nd = inc(1)")
    assert not ran["a"].requires_grad and not ran["b"].requires_grad
    assert ran["c"].requires_grad and ran["c"].grad_fn.name == "MulBackward0"
    assert ran["d"] == 3


def test_a_decorator_must_be_callable():
    error = fails("@3\ndef f():\n    pass", ArgumentError)
    assert error.message == "'3' is not a decorator" and (error.line, error.column) == (1, 2)


def test_break_continue_and_return_leave_exactly_the_blocks_they_name():
    """The compiled blocks hand break, continue and return outwards as signals: through `with` (whose
    gradient mode is restored), through an inner loop to the function, never past the loop they end."""
    ran = run("def first_over(xs, limit):\n    for v in xs:\n        with torch.no_grad():\n"
              "            if v > limit:\n                return v\n    return None\n"
              "hits = []\nfor i in range(6):\n    for j in range(6):\n        if j == 1:\n            continue\n"
              "        if j > 2:\n            break\n        hits.append([i, j])\n    if i == 1:\n        break\n"
              "k = 0\nwhile True:\n    with torch.no_grad():\n        k += 1\n        if k == 4:\n            break\n"
              "found = first_over([1, 5, 9], 4)\nnone = first_over([1, 2], 4)\nenabled = torch.is_grad_enabled()")
    assert ran["hits"] == [[0, 0], [0, 2], [1, 0], [1, 2]]
    assert (ran["k"], ran["found"], ran["none"], ran["enabled"]) == (4, 5, None, True)


def test_one_attribute_site_decides_per_type_of_value_it_meets():
    """A site that read `.grad` off a tensor still refuses it on a graph node, and still gives a
    tensor's `.shape` as a Size."""
    ran = run("x = torch.ones(2, 3, requires_grad=True)\nsizes = []\nfor v in [x, x * 2]:\n"
              "    sizes.append(v.shape)\n    g = v.grad")
    assert [tuple(s) for s in ran["sizes"]] == [(2, 3), (2, 3)] and ran["g"] is None
    error = fails("x = torch.ones(2, requires_grad=True)\nfor v in [x, (x * 2).grad_fn]:\n    g = v.grad",
                  NameLookupError)
    assert error.message.startswith("attribute 'grad' is not available on") and error.line == 3


def test_positional_calls_bind_defaults_and_keep_pythons_errors():
    ran = run("def f(a, b=2, c=3):\n    return [a, b, c]\none = f(1)\ntwo = f(1, 5)\nthree = f(1, 5, 7)")
    assert (ran["one"], ran["two"], ran["three"]) == ([1, 2, 3], [1, 5, 3], [1, 5, 7])
    assert fails("def f(a, b=2):\n    return a\nf(1, 2, 3)", ArgumentError).message == \
        "f(): too many positional arguments"
    assert fails("def f(a, b, c=1):\n    return a\nf(1)", ArgumentError).message == \
        "f(): missing a required argument: 'b'"


def test_a_functions_own_statements_never_become_the_programs_output():
    # f's `inner = v * 5` (and its bare `inner`) run after `y = x * 2`; the output is still y, d/dx = 2
    result = gradcli.evaluate("def f(v):\n    inner = v * 5\n    inner\n    inner += 1\n    return None\n"
                              "y = x * 2\nf(x)", {"x": "[1.0]"})
    assert result.output_name == "y" and result.grads["x"].tolist() == [2.0]
