"""Every builtin `gradcli ops` lists, called with wrong-typed arguments: a user error (exit 2) or a
result (exit 0), never an internal error (exit 3).

The calls are generated from the catalogue and each entry's signature, so a new builtin is
covered without touching this file. They run in-process through `gradcli.evaluate` (the library
call behind `gradcli eval`, backward included) and are classified as the CLI's `guarded` would:
a `GradcliError` is exit 2, anything else escaping is exit 3.
"""
from __future__ import annotations

import inspect

import pytest

import gradcli
from gradcli.errors import GradcliError
from gradcli.lang import builtins as B
from gradcli.program.catalog import entries

BAD = {
    "a string": "'s'",
    "a ragged nested list": "[[1.0, 2.0], [3.0]]",
    "a nested list": "[[1.0, 2.0], [3.0, 4.0]]",
    "None": "None",
    "a bool": "True",
    "a huge int": "10**30",
    "a huge negative int": "-10**30",
    "a tensor": "x",
    "a float": "2.5",
    "a bad dim": "-7",
    "a tuple with a string": "(0, 's')",
    "a function": "relu",
}
INPUTS = {"x": "[[1.0, -2.0], [0.5, 3.0]]"}
# How the catalogue's prefixed names are written in a program, and where they live.
NAMESPACES = {"linalg": (B.LINALG, "torch.linalg"), "F": (B.NN_FUNCTIONAL, "torch.nn.functional"),
              "nn": (B.NN, "torch.nn"), "optim": (B.OPTIM, "torch.optim"),
              "nn.utils": (B.NN_UTILS, "torch.nn.utils")}


def _params(fn, bound: bool) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(getattr(fn, "__wrapped__", fn)).parameters.values())
    except (TypeError, ValueError):
        return []
    return params[1:] if bound else params


def _calls(callee: str, params: list[inspect.Parameter], receiver: bool) -> list[str]:
    """Argument lists with one wrong value each: in every position, as every keyword, and alone."""
    required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    good = ["x"] * len(required)
    out = []
    for bad in BAD.values():
        out.append(f"{callee}({bad})")
        for i in range(len(required)):
            out.append(f"{callee}({', '.join(good[:i] + [bad] + good[i + 1:])})")
        for p in params:
            if p.kind is p.POSITIONAL_OR_KEYWORD or p.kind is p.KEYWORD_ONLY:
                if p.default is not p.empty:
                    out.append(f"{callee}({', '.join(good + [f'{p.name}={bad}'])})")
        if variadic or not receiver:
            out.append(f"{callee}({', '.join(good + [bad])})")
    return out


def _programs() -> list[tuple[str, list[str]]]:
    seen, cases = set(), []
    for entry in entries():
        prefix, _, short = entry.name.rpartition(".")
        if prefix in NAMESPACES and entry.kind in ("function", "module", "optimizer"):
            space, written = NAMESPACES[prefix]
            fn, callee, bound = space.members[short], f"{written}.{short}", False
        elif entry.kind == "function":
            fn, callee, bound = B.FUNCTIONS[entry.name], entry.name, False
        elif entry.kind == "method":
            fn, callee, bound = getattr(gradcli.Tensor, entry.name), f"x.{entry.name}", True
        else:
            continue
        if entry.name in ("backward",) and bound:
            callee = "(x * 2).sum().backward"
        key = (id(fn), bound)
        if key in seen:
            continue
        seen.add(key)
        cases.append((callee, sorted(set(_calls(callee, _params(fn, bound), bound)))))
    return cases


def _exit_code(program: str) -> int:
    try:
        gradcli.evaluate(f"out = {program}", INPUTS, max_elements=100_000, timeout=10)
    except GradcliError:
        return 2
    return 0


PROGRAMS = _programs()


def test_the_catalogue_yields_calls_for_every_builtin():
    names = {callee for callee, _ in PROGRAMS}
    assert {"clamp", "x.clamp", "ones", "x.sum", "softmax", "(x * 2).sum().backward"} <= names
    assert sum(len(calls) for _, calls in PROGRAMS) > 2000


@pytest.mark.parametrize("callee, calls", PROGRAMS, ids=[callee for callee, _ in PROGRAMS])
def test_wrong_argument_types_are_user_errors_never_internal_errors(callee, calls):
    crashed = []
    for program in calls:
        try:
            _exit_code(program)
        except Exception as exc:  # exit 3 at the command line
            crashed.append(f"{program}: {type(exc).__name__}: {exc}")
    assert not crashed, "\n".join(crashed)


@pytest.mark.parametrize("args", [("x", "'s'"), ("x", "[1, 2]"), ("x", "min=[1, 2]"), ("x", "max='s'")])
def test_clamp_refuses_a_string_or_a_list_naming_the_argument(cli, args):
    result = cli("eval", f"out = clamp({', '.join(args)}).sum()", "x=[1.0, 2.0]")
    assert result.exit_code == 2
    name = "max" if "max" in args[1] else "min"
    assert f"clamp(): argument '{name}' must be a number or a tensor" in result.stderr
