"""The hostile cases the richer language opens (issue 25's Safety section): each refused by name or
stopped by a cap within seconds, never caught by the program, never reaching Python's internals."""
from __future__ import annotations

import pytest

from gradcli.errors import LimitError, NameLookupError, NotAllowedError, ParseError
from gradcli.lang.parser import parse_program
from tests.language_helpers import fails, run


@pytest.mark.parametrize("source, words", [
    ("try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__", "attribute '__traceback__'"),
    ("c = {}.__class__.__bases__", "attribute '__bases__'"),
    ("c = {1}.__class__.__subclasses__", "attribute '__subclasses__'"),
    ("c = {}.items.__self__", "attribute '__self__'"),
    ("def f(**kw):\n    return kw.__class__.__mro__", "attribute '__mro__'"),
    ("x = 1\nx.__class__ = str", "attribute '__class__'"),
    ("try:\n    pass\nexcept Exception as __e:\n    pass", "name '__e' is not available"),
    ("__name__ = 'x'", "name '__name__' is not available"),
    ("global __builtins__", "name '__builtins__' is not available"),
    ("del __builtins__", "name '__builtins__' is not available"),
    ("x = type(1).__dict__", "attribute '__dict__'"),
    ("def g():\n    yield g.__code__", "attribute '__code__'"),
])
def test_dunder_paths_are_refused_before_anything_runs(source, words):
    with pytest.raises(NotAllowedError) as caught:
        parse_program(source)
    assert words in caught.value.message


@pytest.mark.parametrize("source, words", [
    ("x = getattr(1, '__bases__')", "attribute '__bases__' is not available"),
    ("x = getattr({}, '_private', 0)", "attribute '_private' is not available"),
    ("n = '__di' + 'ct__'\nx = getattr([], n)", "attribute '__dict__' is not available"),
    ("import torch\nx = torch.ones(1)\nsetattr(x, 'shape', 3)", "assignment to attribute 'shape'"),
    ("x = hasattr(1, '__mro__')", "attribute '__mro__' is not available"),
])
def test_computed_attribute_names_meet_the_same_allowlist_and_are_not_catchable(source, words):
    caught = fails(source, NotAllowedError)
    assert words in caught.message
    wrapped = "try:\n" + "\n".join("    " + line for line in source.split("\n")) + "\nexcept BaseException:\n    pass"
    assert words in fails(wrapped, NotAllowedError).message


def test_format_fields_through_kwargs_cannot_reach_attributes():
    source = "d = {'x': 1}\ns = '{x.__class__}'.format(**d)"
    assert "fields are positions or names" in fails(source, NotAllowedError).message
    assert "fields are positions or names" in fails("d = {'x': [1]}\ns = '{x[0]}'.format(**d)",
                                                    NotAllowedError).message


@pytest.mark.parametrize("handler", ["except:", "except BaseException:", "except Exception:",
                                     "except (RuntimeError, BaseException) as e:"])
def test_no_except_catches_the_step_limit(handler):
    caught = fails(f"try:\n    while True:\n        pass\n{handler}\n    escaped = 1", LimitError, max_steps=500)
    assert "more than 500 loop iterations" in caught.message
    assert caught.line == 2


def test_a_finally_does_not_run_past_a_limit():
    source = "ran = []\ntry:\n    while True:\n        pass\nfinally:\n    ran.append(1)\n    while True:\n        pass"
    caught = fails(source, LimitError, max_steps=300)
    assert caught.line == 3  # the first loop's limit, not a second budget for the finally's loop


def test_a_return_in_finally_does_not_swallow_a_limit():
    source = "def f():\n    try:\n        while True:\n            pass\n    finally:\n        return 1\nx = f()"
    assert fails(source, LimitError, max_steps=300).line == 3


def test_limits_inside_try_stop_whatever_the_limit():
    assert "recursion" in fails("def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept Exception:\n    pass",
                                LimitError).message
    assert "list would have" in fails("try:\n    x = [0] * 10**7\nexcept:\n    pass", LimitError).message
    assert "string would have" in fails("try:\n    s = 'ab' * 10**7\nexcept ValueError:\n    pass",
                                        LimitError).message


def test_a_generator_that_never_ends_meets_the_step_limit():
    source = "def forever():\n    while True:\n        yield 1\ntotal = 0\ntry:\n    for v in forever():\n" \
             "        total += v\nexcept BaseException:\n    pass"
    assert "loop iterations" in fails(source, LimitError, max_steps=1000).message
    assert "loop iterations" in fails("def forever():\n    while True:\n        yield 1\nxs = list(forever())",
                                      LimitError, max_steps=1000).message


def test_an_infinite_generator_without_a_loop_in_it_still_counts_steps():
    source = "def ones():\n    yield 1\n    yield from ones()\nfor v in ones():\n    pass"
    caught = fails(source, LimitError)
    assert "maximum recursion depth" in caught.message and caught.line == 3
    source = "def nat():\n    n = 0\n    while True:\n        yield n\n        n += 1\ns = sum(nat())"
    assert "loop iterations" in fails(source, LimitError, max_steps=2000).message


def test_a_recursive_generator_is_bounded():
    source = "def deep(n):\n    yield n\n    for v in deep(n + 1):\n        yield v\nfor v in deep(0):\n    pass"
    caught = fails(source, LimitError)
    assert "generators are running at once" in caught.message or "recursion" in caught.message


@pytest.mark.parametrize("source, words", [
    ("s = sum(range(10**12))", "loop iterations"),
    ("s = any(v < 0 for v in range(10**12))", "loop iterations"),
    ("s = all(v >= 0 for v in range(10**9))", "loop iterations"),
    ("s = max(range(10**12))", "loop iterations"),
    ("s = sum(map(abs, range(10**12)))", "loop iterations"),
    ("print(*range(10**10))", "list would have"),
    ("d = dict.fromkeys(range(10**10))", ""),
    ("d = {}.fromkeys(range(10**10))", "list would have"),
    ("s = set(range(10**10))", "list would have"),
    ("d = {k: 0 for k in range(10**10)}", "loop iterations"),  # each item a step: the steps run out first
    ("s = sorted(range(10**10))", "list would have"),
])
def test_builtins_that_consume_iterables_are_bounded(source, words):
    caught = fails(source, max_steps=10_000)
    assert words in caught.message
    assert caught.line == 1


def test_the_step_limit_of_a_builtin_points_at_its_line():
    caught = fails("x = 1\ns = sum(range(10**12))", LimitError, max_steps=10_000)
    assert (caught.line, caught.column, caught.length) == (2, 5, 18)


def test_dict_growth_is_capped():
    assert "list would have" in fails("d = {}\nfor i in range(2_000_000):\n    d[i] = i", LimitError,
                                      max_steps=3_000_000).message


def test_annotations_are_never_evaluated():
    ran = run("calls = []\ndef f() -> calls.append(1):\n    return 2\nx: calls.append(2) = f()\ny: print('no')")
    assert ran["calls"] == [] and ran["x"] == 2 and ran.printed == []
    assert "y" not in ran.env


def test_yield_outside_a_function_and_nonlocal_at_module_level_are_python_syntax_errors():
    with pytest.raises(ParseError, match="'yield' outside function"):
        parse_program("x = yield 1")
    with pytest.raises(ParseError, match="'yield' outside function"):
        parse_program("def f():\n    g = lambda: (yield)")
    with pytest.raises(ParseError, match="nonlocal declaration not allowed at module level"):
        parse_program("nonlocal x")
    with pytest.raises(ParseError, match="multiple starred"):
        parse_program("a, *b, *c = [1, 2, 3]")


def test_raising_something_that_is_not_an_exception_is_refused():
    assert "derive from BaseException" in fails("raise 3").message
    assert "do not inherit from BaseException" in fails("try:\n    1 / 0\nexcept int:\n    pass").message


def test_an_unhashable_key_is_pythons_type_error_not_a_crash():
    ran = run("try:\n    d = {[1]: 2}\nexcept TypeError as e:\n    m = str(e)")
    assert ran["m"] == "unhashable type: 'list'"


def test_a_dict_that_holds_itself_prints_within_the_string_limit():
    caught = fails("d = {}\nd['d'] = d\nprint(d)", LimitError)
    assert caught.line == 3


def test_type_of_an_internal_object_is_not_available():
    assert "type() of a" in fails("import torch\nt = type(torch)").message
    assert "type() of a" in fails("x = type(max)").message


def test_a_class_read_is_types_view_and_an_internal_objects_class_is_not_available():
    ran = run("import torch\nmodel = torch.nn.Linear(1, 1)\nname = model.__class__.__name__\nsame = model.__class__ is type(model)\n")
    assert ran["name"] == "Linear" and ran["same"] is True
    assert "attribute '__class__' is not available on 'torch'" in fails("import torch\nt = torch.__class__").message
    assert "type() of a" in fails("x = max.__class__").message
