"""try / except / else / finally / raise, global / nonlocal / del, annotations, __name__, generators (issue 25, items 2, 3)."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError
from gradcli.lang.exceptions import RaisedError
from tests.language_helpers import fails, run


def test_try_except_else_finally_run_in_pythons_order():
    source = ("log = []\ndef f(v):\n    try:\n        log.append('try')\n        r = 10 / v\n    except ZeroDivisionError as e:\n"
              "        log.append('except ' + str(e))\n        return -1\n    else:\n        log.append('else')\n"
              "        return r\n    finally:\n        log.append('finally')\na = f(2)\nb = f(0)")
    ran = run(source)
    assert ran["a"] == 5.0 and ran["b"] == -1
    assert ran["log"][:3] == ["try", "else", "finally"]
    assert ran["log"][3] == "try" and ran["log"][4].startswith("except ") and ran["log"][5] == "finally"


def test_pytorch_errors_are_caught_as_runtime_error_with_pytorchs_text():
    ran = run("import torch\ntry:\n    torch.ones(2, 3) @ torch.ones(2, 3)\nexcept RuntimeError as e:\n    m = str(e)\n"
              "try:\n    torch.ones(3, requires_grad=True).sum().backward()\n    torch.ones(3).backward()\n"
              "except RuntimeError as e:\n    b = str(e)")
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)" in ran["m"]
    assert ran["b"].startswith("element 0 of tensors does not require grad and does not have a grad_fn")


def test_pytorch_texts_against_torch():
    torch = pytest.importorskip("torch")
    try:
        torch.ones(2, 3) @ torch.ones(2, 3)
    except RuntimeError as e:
        expected = str(e)
    ran = run("import torch\ntry:\n    torch.ones(2, 3) @ torch.ones(2, 3)\nexcept RuntimeError as e:\n    m = str(e)")
    assert ran["m"].startswith(expected)


def test_exception_hierarchy_and_raise_forms():
    source = ("out = []\nfor kind in [ValueError, KeyError, IndexError, ZeroDivisionError, NotImplementedError]:\n"
              "    try:\n        raise kind('x')\n    except LookupError:\n        out.append('lookup')\n"
              "    except ArithmeticError:\n        out.append('arith')\n    except RuntimeError:\n        out.append('runtime')\n"
              "    except Exception as e:\n        out.append(type(e).__name__)\n"
              "try:\n    try:\n        raise ValueError('inner')\n    except ValueError:\n        raise\nexcept ValueError as e:\n"
              "    again = e.args\ntry:\n    raise TypeError\nexcept TypeError as e:\n    empty = str(e)")
    ran = run(source)
    assert ran["out"] == ["ValueError", "lookup", "lookup", "arith", "runtime"]
    assert ran["again"] == ("inner",) and ran["empty"] == ""
    assert "e" not in ran.env  # Python unbinds the name after its handler


def test_an_uncaught_raise_is_a_located_error():
    caught = fails("x = 1\nraise ValueError('learning rate must be positive')", RaisedError)
    assert caught.message == "ValueError: learning rate must be positive" and caught.line == 2
    caught = fails("def f():\n    raise NotImplementedError\nf()", RaisedError)
    assert caught.message == "NotImplementedError" and caught.line == 2 and caught.calls == [(3, 1, 3)]


def test_an_unmatched_exception_passes_through_its_finally():
    caught = fails("log = []\ntry:\n    raise KeyError('k')\nexcept ValueError:\n    log.append(1)\nfinally:\n"
                   "    log.append(2)\n    print(log)", RaisedError)
    assert caught.message == "KeyError: 'k'" and caught.line == 3


def test_a_failed_assert_is_catchable_as_assertion_error_with_its_message():
    ran = run("try:\n    assert 1 > 2, 'one is not more'\nexcept AssertionError as e:\n    m = str(e)")
    assert ran["m"] == "one is not more"


def test_global_nonlocal_and_del():
    ran = run("count = 0\ndef inc():\n    global count\n    count += 1\n    count = count * 2\ninc()\ninc()\n"
              "def outer():\n    n = 0\n    def bump():\n        nonlocal n\n        n += 5\n    bump()\n    bump()\n"
              "    return n\nr = outer()\ntemp = 3\ndel temp\nxs = [1, 2, 3]\ndel xs[0]\nd = {'a': 1, 'b': 2}\ndel d['a']")
    assert ran["count"] == 6 and ran["r"] == 10 and "temp" not in ran.env
    assert ran["xs"] == [2, 3] and ran["d"] == {"b": 2}
    assert "name 'temp' is not defined" in fails("temp = 1\ndel temp\nprint(temp)").message


def test_if_name_is_main_runs():
    assert run("def main():\n    return 7\nif __name__ == '__main__':\n    r = main()")["r"] == 7


def test_assert_message():
    from gradcli.errors import ProgramAssertionError
    with pytest.raises(ProgramAssertionError) as caught:
        run("x = 3\nassert x < 2, f'x is {x}'")
    assert caught.value.message == "x is 3"


def test_generators_are_lazy_and_interleave_as_in_python():
    source = ("log = []\ndef gen(n):\n    for i in range(n):\n        log.append(f'make {i}')\n        yield i * i\n"
              "    log.append('end')\nfor v in gen(3):\n    log.append(f'use {v}')\n"
              "def data_iter(batch, xs):\n    for i in range(0, len(xs), batch):\n        yield xs[i:i + batch]\n"
              "batches = list(data_iter(2, [1, 2, 3, 4, 5]))\ng = gen(10)\nfirst = next(g)\nsecond = next(g)\n"
              "total = sum(gen(4))")
    ran = run(source)
    assert ran["log"][:7] == ["make 0", "use 0", "make 1", "use 1", "make 2", "use 4", "end"]
    assert ran["batches"] == [[1, 2], [3, 4], [5]]
    assert (ran["first"], ran["second"]) == (0, 1) and ran["total"] == 14


def test_an_error_inside_a_generator_reaches_the_consumer_located_in_the_body():
    caught = fails("def gen():\n    yield 1\n    raise ValueError('bad batch')\nfor v in gen():\n    pass", RaisedError)
    assert caught.message == "ValueError: bad batch" and caught.line == 3
    ran = run("def gen():\n    yield 1\n    raise ValueError('bad')\ntry:\n    xs = list(gen())\nexcept ValueError as e:\n"
              "    m = str(e)")
    assert ran["m"] == "bad"


def test_display_shows_top_level_bare_expressions_only():
    ran = run("x = 2\nx\nfor i in range(3):\n    i\nif True:\n    x + 100\ndef f():\n    5\nf()\nx * 10")
    assert ran.shown == ["2", "20"]
