"""Generators without threads (lang.generators, lang.resumable): hostile cases first, then what CPython
prints for the same programs, and the PyTorch code that uses them."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from gradcli.errors import LimitError, NotAllowedError, ParseError
from gradcli.lang.exceptions import RaisedError
from gradcli.lang.interpreter import Hooks, Interpreter
from gradcli.lang.parser import parse_program
from language_helpers import cpython, fails, run, same_as_cpython

# -- limits fire inside the body, located there, and no except sees them --------------------------


def test_the_step_limit_inside_a_generator_names_the_generators_loop_and_cannot_be_caught():
    source = ("def forever():\n    n = 0\n    while True:\n        try:\n            yield n\n"
              "        except BaseException:\n            pass\n        n += 1\n"
              "try:\n    for v in forever():\n        pass\nexcept BaseException:\n    print('caught')")
    caught = fails(source, LimitError, max_steps=1000)
    assert caught.message == "the program ran more than 1,000 loop iterations, in the while loop at line 3"


def test_the_time_limit_inside_a_generator_is_the_limit():
    source = "def forever():\n    while True:\n        yield 1\ntry:\n    s = sum(forever())\nexcept Exception:\n    s = 0"
    interpreter = Interpreter(source, max_steps=10 ** 12, timeout=0.3)
    with pytest.raises(LimitError) as caught:
        interpreter.run(parse_program(source))
    assert "seconds" in caught.value.message and caught.value.line == 2


def test_a_recursive_generator_meets_the_depth_limit_at_its_yield_from():
    caught = fails("def ones():\n    yield 1\n    yield from ones()\nfor v in ones():\n    pass", LimitError)
    assert "maximum recursion depth" in caught.message and caught.line == 3


def test_a_limit_thrown_nowhere_a_finally_can_extend_the_run():
    source = ("log = []\ndef g():\n    try:\n        while True:\n            yield 1\n    finally:\n"
              "        log.append('finally')\n        while True:\n            pass\nfor v in g():\n    pass")
    interpreter = Interpreter(source, max_steps=500)
    with pytest.raises(LimitError):
        interpreter.run(parse_program(source))
    assert interpreter.env["log"] == []


def test_many_abandoned_generators_leave_nothing_running():
    threads = threading.active_count()
    ran = run("def g():\n    while True:\n        yield 1\nn = 0\nfor i in range(30000):\n    n += next(g())")
    assert ran["n"] == 30000 and threading.active_count() == threads


def test_too_many_generators_started_and_kept_is_a_limit():
    caught = fails("def g():\n    yield 1\n    yield 2\nkept = []\nfor i in range(20000):\n    h = g()\n    next(h)\n"
                   "    kept.append(h)", LimitError)
    assert "generators are started and unfinished" in caught.message and caught.line == 7


def test_an_endless_generator_expression_meets_the_step_limit_not_a_size_cap():
    source = "import itertools\ng = (x for x in itertools.count() if x < 0)\nfound = any(g)"
    assert "loop iterations" in fails(source, LimitError, max_steps=5000).message
    source = "g = (x for x in range(10 ** 12) if x < 0)\nfound = next(g, None)"
    assert "loop iterations" in fails(source, LimitError, max_steps=5000).message


@pytest.mark.parametrize("source, words", [
    ("def g():\n    print((yield 1))", "'yield' inside an expression is not supported"),
    ("def g():\n    xs = [(yield v) for v in range(3)]", "'yield' inside an expression is not supported"),
    ("def g():\n    return (yield 1)", "'yield' inside an expression is not supported"),
    ("def g():\n    x = 1 + (yield from [1])", "'yield from' inside an expression is not supported"),
])
def test_a_yield_inside_an_expression_is_refused_before_anything_runs(source, words):
    with pytest.raises(NotAllowedError, match=words):
        parse_program(source)


def test_yield_from_outside_a_function_is_pythons_syntax_error():
    with pytest.raises(ParseError, match="'yield from' outside function"):
        parse_program("yield from [1]")


@pytest.mark.parametrize("source, words", [
    ("def g():\n    yield 1\nf = g().gi_frame", "attribute 'gi_frame' is not available"),
    ("def g():\n    yield 1\nf = getattr(g(), 'gi_code')", "attribute 'gi_code' is not available"),
    ("def g():\n    yield 1\nh = g()\nh.throw(3)", "TypeError: exceptions must be classes or instances"),
])
def test_a_generators_insides_are_out_of_reach(source, words):
    assert words in fails(source).message


def test_an_error_in_the_body_is_located_in_the_body_and_caught_as_pythons():
    caught = fails("def g():\n    yield 1\n    x = 1 / 0\nfor v in g():\n    pass")
    assert caught.line == 3
    caught = fails("def g():\n    yield 1\nh = g()\nnext(h)\nh.throw(KeyError('k'))", RaisedError)
    assert caught.message == "KeyError: 'k'" and caught.line == 2


# -- against CPython --------------------------------------------------------------------------------

PROGRAM = (Path(__file__).parent / "fixtures" / "generators_cpython.py").read_text()


def test_send_throw_close_yield_from_and_generator_expressions_print_what_cpython_prints():
    same_as_cpython(PROGRAM)


def test_a_generator_prints_as_pythons_does_addresses_aside():
    printed = run("def gen():\n    yield 1\nprint(gen())\nprint(v for v in [1])").printed
    assert printed == ["<generator object gen>", "<generator object <genexpr>>"]
    assert [line.split(" at ")[0] + ">" for line in cpython("def gen():\n    yield 1\nprint(gen())")] == printed[:1]


def test_a_generator_of_batches_trains_a_model_and_feeds_an_optimizer():
    ran = run("""
import torch
import torch.nn as nn
model = nn.Linear(2, 1)
opt = torch.optim.SGD((p for p in model.parameters() if p.requires_grad), lr=0.1)
groups = len(opt.param_groups[0]["params"])
def data_iter(batch_size, features, labels):
    for i in range(0, len(features), batch_size):
        yield features[i:i + batch_size], labels[i:i + batch_size]
X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
y = X @ torch.tensor([[2.0], [-1.0]])
batches = 0
for xb, yb in data_iter(2, X, y):
    loss = ((model(xb) - yb) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    batches += 1
def evaluating():
    with torch.no_grad():
        for xb, yb in data_iter(2, X, y):
            yield model(xb).requires_grad
flags = list(evaluating())
enabled = torch.is_grad_enabled()
count = sum(p.numel() for p in model.parameters())
""")
    assert ran["groups"] == 2 and ran["batches"] == 2 and ran["flags"] == [False, False]
    assert ran["enabled"] is True and ran["count"] == 3


def test_finished_generators_kept_in_a_list_do_not_count_as_running():
    ran = run("def g():\n    yield 1\nkept = []\nfor i in range(12000):\n    h = g()\n    total = sum(h)\n"
              "    kept.append(h)\nn = len(kept)")
    assert ran["n"] == 12000
