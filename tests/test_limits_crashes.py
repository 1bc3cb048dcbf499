"""Each crash the second hostile suite found is a clean error (exit 2) or a right answer, never exit 3 (issue 35);
a fuzz test over the facades' argument types keeps it so."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.errors import GradcliError
from gradcli.lang.exceptions import RaisedError
from tests.language_helpers import cpython, run


def ran_or_clean(source: str) -> None:
    """The program runs, or stops with one of gradcli's errors: nothing else (an internal error) escapes."""
    try:
        run(source)
    except (GradcliError, RaisedError):
        pass


def test_argparse_help_naming_an_unknown_field_is_refused_where_it_is_written():
    with pytest.raises(GradcliError) as caught:
        run("import argparse\np = argparse.ArgumentParser()\np.add_argument('--x', help='%(nokey)s')")
    assert "help names %(nokey)" in caught.value.message


def test_argparse_help_cannot_show_the_parser_itself():
    with pytest.raises(GradcliError) as caught:
        run("import argparse\np = argparse.ArgumentParser()\np.add_argument('--x', help='%(container)r')")
    assert "%(container)" in caught.value.message


def test_argparse_help_shows_defaults_and_percent_signs():
    source = ("import argparse\np = argparse.ArgumentParser(prog='t')\n"
              "p.add_argument('--lr', type=float, default=0.1, help='rate (default %(default)s), 50%%')\n"
              "print(p.format_help())")
    assert "rate (default 0.1), 50%" in "\n".join(run(source).printed)


def test_a_len_past_an_index_is_pythons_overflow_error_in_tqdm_too():
    source = ("class L:\n    def __len__(self):\n        return 2 ** 64 - 1 if False else 9223372036854775807 * 2\n"
              "try:\n    len(L())\nexcept OverflowError as e:\n    print(e)\n")
    assert run(source).printed == cpython(source) == ["cannot fit 'int' into an index-sized integer"]
    with pytest.raises(GradcliError):
        run("from tqdm import tqdm\nclass L:\n    def __len__(self):\n        return 9223372036854775807 * 2\n"
            "    def __iter__(self):\n        return iter([1])\nfor i in tqdm(L()):\n    pass\n")


def test_an_empty_tensor_with_a_dimension_past_the_limit_is_refused():
    with pytest.raises(GradcliError) as caught:
        run("import torch\nprint(torch.zeros(2**62, 2**62, 0).sum(2))")
    assert "would have a dimension of 4,611,686,018,427,387,904" in caught.value.message
    assert run("import torch\nprint(torch.zeros(3, 0).sum(1))").printed == ["tensor([0., 0., 0.])"]


def test_exact_check_of_a_power_past_pythons_digit_limit_exits_cleanly(cli):
    result = cli("eval", "out = (x**5000).sum()", "x=[10.0]", "--check", "--exact")
    assert result.exit_code in (0, 1) and "internal error" not in result.stdout + result.stderr


def test_plot_of_a_spike_cuts_it_instead_of_aborting(cli):
    result = cli("plot", "out = 1/(x*x+1e-30)", "--range", "-1:1")
    assert result.exit_code == 0 and "(y cut to " in result.stdout


VALUES = st.sampled_from(["0", "-1", "2**40", "1.5", "float('nan')", "float('inf')", "'s'", "''", "None", "[]",
                          "[1, 2]", "(1,)", "{}", "{'a': 1}", "True", "zip", "len", "lambda: 0", "torch.ones(2)",
                          "torch.tensor(3.0)", "10**30", "-10**20", "'%d'", "'\\x1b'"])
CALLS = st.sampled_from([
    "math.sqrt({0})", "math.factorial({0})", "math.log({0}, {1})", "math.gcd({0}, {1})", "math.comb({0}, {1})",
    "random.choice({0})", "random.randint({0}, {1})", "random.sample({0}, {1})", "random.uniform({0}, {1})",
    "itertools.islice({0}, {1})", "list(itertools.repeat({0}, {1}))", "list(itertools.combinations({0}, {1}))",
    "functools.reduce({0}, {1})", "functools.partial({0}, {1})()", "collections.Counter({0})",
    "collections.deque({0}, {1})", "collections.defaultdict({0})[{1}]", "copy.deepcopy({0})",
    "pprint.pformat({0}, indent={1})", "'%s %d' % ({0}, {1})", "'{{}}{{}}'.format({0}, {1})", "str({0}) * {1}",
    "time.sleep({0})", "tqdm({0}, total={1})", "int({0})", "float({0})", "round({0}, {1})", "divmod({0}, {1})",
    "sorted({0}, key={1})", "max({0}, {1})", "print({0}, sep={1})", "warnings.warn({0})", "repr({0})",
])


@settings(max_examples=150, deadline=None)
@given(CALLS, VALUES, VALUES)
def test_facades_given_any_argument_types_end_cleanly(call, a, b):
    source = ("import math, random, itertools, functools, collections, copy, pprint, time, warnings, torch\n"
              "from tqdm import tqdm\n"
              f"x = {call.format(a, b)}\n")
    ran_or_clean(source)


def test_a_case_mapping_that_triples_a_string_meets_the_string_limit():
    with pytest.raises(GradcliError) as caught:
        run("s = '\\ufb03' * 900000\nt = s.upper()")
    assert caught.value.message == "a string would have 2,700,000 characters, over the limit of 1,000,000"
    assert run("print('\\ufb03'.upper(), 'ab'.title())").printed == ["FFI Ab"]


# -- a Python exception becomes the program's only when Python itself raised it for the call (issue 35) ----

PYTHONS_OWN = [
    "random.uniform(0, 's')",  # raised inside the standard module
    "'abc'.index('z')",  # a C method the call reached through a facade
    "[].pop()",
    "{}['k']",
    "[1, 2].index(3)",
]


@pytest.mark.parametrize("call", PYTHONS_OWN)
def test_what_python_raises_for_a_builtins_call_is_the_programs_to_catch(call):
    source = f"import math, random\ntry:\n    {call}\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    assert run(source).printed == cpython(source)


@pytest.mark.parametrize("kind", [ValueError, TypeError, IndexError, KeyError])
def test_a_python_exception_out_of_gradcls_own_code_stays_an_internal_error(cli, monkeypatch, kind):
    """A bug in the engine (here: its estimate raising) must not become the program's exception, catchable
    and reported as the user's mistake (exit 2); it is an internal error (exit 3) that asks for a report."""
    from gradcli.engine import budget

    def broken(seconds: float, what: str) -> None:
        raise kind("a bug in gradcli")
    monkeypatch.setattr(budget, "spend", broken)
    result = cli("eval", "try:\n    y = torch.matmul(x, x)\nexcept Exception:\n    print('caught')\nout = x.sum()",
                 "x=ones(2,2)")
    assert result.exit_code == 3
    assert "caught" not in result.stdout
    assert f"internal error in gradcli: {kind.__name__}:" in result.stderr
    assert "this is a bug; rerun with --debug for the traceback and please report it" in " ".join(result.stderr.split())


def test_a_facades_own_raise_of_a_python_type_is_an_internal_error():
    """Facades raise the program's exceptions with `raise_python`; a bare `raise ValueError` there is a bug."""
    from gradcli.lang.exceptions import builtins_own
    import gradcli.lang.python_builtins as facade
    namespace: dict = {}
    exec(compile("def broken():\n    raise ValueError('a bug')\ndef fine(s):\n    return int(s)\n",
                 facade.__file__, "exec"), namespace)
    for func, args, own in [(namespace["broken"], (), False), (namespace["fine"], ("x",), True)]:
        try:
            func(*args)
        except ValueError as exc:
            assert builtins_own(exc) is own
