"""Property: whatever program a user types, gradcli answers with a result or a GradcliError, never a crash."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcli
from gradcli.errors import GradcliError, ProgramAssertionError

NAMES = ["x", "w", "y", "q"]
FUNCTIONS = ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs", "sum", "mean", "max", "min", "softmax",
             "norm", "matmul", "maximum", "where", "cat", "stack", "reshape", "transpose", "clamp", "var", "prod",
             "ones", "zeros", "tensor", "len", "range", "float", "grad", "unsqueeze", "expand", "log_softmax"]
METHODS = ["sum", "mean", "t", "T", "data", "grad", "item", "norm", "reshape", "max", "detach", "shape",
           "view", "squeeze", "unsqueeze", "backward", "zero_", "tolist", "numel", "size", "grad_fn"]
ATOMS = st.sampled_from(NAMES + ["1", "2.5", "0", "-1", "True", "None", "'s'", "[1, 2]", "[[1., 2.], [3., 4.]]",
                                 "(2, 2)", "1e308", "10**400"])


def expressions(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return ATOMS
    sub = expressions(depth - 1)
    return st.one_of(
        ATOMS,
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/", "**", "@", "<", "==", "and", "//"]), sub).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["-", "not "]), sub).map(lambda t: f"{t[0]}{t[1]}"),
        st.tuples(st.sampled_from(FUNCTIONS), st.lists(sub, max_size=3),
                  st.lists(st.tuples(st.sampled_from(["dim", "keepdim", "p", "min"]), sub), max_size=1)).map(
            lambda t: f"{t[0]}({', '.join(t[1] + [f'{k}={v}' for k, v in t[2]])})"),
        st.tuples(sub, st.sampled_from(METHODS)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(sub, st.sampled_from(METHODS), st.lists(sub, max_size=2)).map(
            lambda t: f"{t[0]}.{t[1]}({', '.join(t[2])})"),
        st.tuples(sub, st.sampled_from(["0", "-1", ":", "1:", "[0, 0]", "None", "..., 0", "5"])).map(
            lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
    )


STATEMENTS = st.one_of(
    st.tuples(st.sampled_from(NAMES), expressions(3)).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(st.sampled_from(NAMES), st.sampled_from(["+=", "*=", "-="]), expressions(2)).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"),
    expressions(3),
    st.tuples(expressions(2), st.sampled_from(NAMES), expressions(2)).map(
        lambda t: f"while {t[0]}:\n    {t[1]} = {t[2]}"),
    st.tuples(st.integers(0, 3), st.sampled_from(NAMES), expressions(2)).map(
        lambda t: f"for i in range({t[0]}):\n    {t[1]} = {t[2]}"),
    expressions(2).map(lambda e: f"assert {e}"),
    expressions(2).map(lambda e: f"print({e})"),
)


def run(program: str) -> None:
    try:
        gradcli.evaluate(program, {"x": "[[0.5, -1.0], [2.0, 0.0]]", "w": "[1.0, 2.0]"}, grad="ones",
                         max_steps=200, max_elements=10_000)
    except (GradcliError, ProgramAssertionError):
        pass


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STATEMENTS, min_size=1, max_size=5))
def test_random_programs_raise_only_gradcli_errors(statements):
    with np.errstate(all="ignore"):
        run("\n".join(statements))


@given(st.lists(st.sampled_from(list("xw()[]+-*/@.,:=01 \n_'\"") + ["**", "exp", "sum", ".T", "if", "else"]),
                max_size=30))
def test_token_soup_raises_only_gradcli_errors(tokens):
    run("".join(tokens))
