"""Dicts, sets, star-arguments, keyword-only arguments, star-unpacking and the type tests (issue 25, items 1, 3, 4)."""
from __future__ import annotations

import pytest

from gradcli.errors import ArgumentError, GradcliError
from tests.language_helpers import fails, run


def test_dict_literals_comprehensions_and_methods_behave_as_pythons():
    source = ("d = {'a': 1, 'b': 2}\nd['c'] = 3\nd.update(e=5)\nd.setdefault('a', 9)\nd.setdefault('f', 6)\n"
              "g = d.get('zz', -1)\np = d.pop('b')\nks = list(d.keys())\nvs = [v for v in d.values()]\n"
              "its = [(k, v) for k, v in d.items()]\nsq = {k: v * v for k, v in d.items() if v > 1}\n"
              "m = dict(x=1, y=2)\nz = dict([('p', 1), ('q', 2)])\nu = {**m, **z, 'x': 0}\nn = len(u)\n"
              "has = 'x' in u and 'w' not in u\nd2 = dict(d)\ndel d2['a']")
    ran = run(source)
    expected = {'a': 1, 'b': 2}
    expected['c'] = 3
    expected.update(e=5)
    expected.setdefault('f', 6)
    expected.pop('b')
    assert ran["d"] == expected and list(ran["d"]) == list(expected)
    assert ran["g"] == -1 and ran["p"] == 2
    assert ran["ks"] == list(expected) and ran["vs"] == list(expected.values())
    assert ran["its"] == list(expected.items())
    assert ran["sq"] == {'c': 9, 'e': 25, 'f': 36}
    assert ran["u"] == {'x': 0, 'y': 2, 'p': 1, 'q': 2} and ran["n"] == 4 and ran["has"] is True
    assert "a" not in ran["d2"] and "a" in ran["d"]


def test_sets_and_set_comprehensions():
    ran = run("s = {3, 1, 2}\ns.add(4)\ns.discard(9)\nt = {v % 3 for v in range(10)}\nu = s.union(t)\ni = s.intersection([1, 2, 7])\nn = len(s)\nok = 4 in s\ne = set()")
    assert ran["s"] == {1, 2, 3, 4} and ran["t"] == {0, 1, 2} and ran["u"] == {0, 1, 2, 3, 4}
    assert ran["i"] == {1, 2} and ran["n"] == 4 and ran["ok"] is True and ran["e"] == set()


def test_dicts_keyed_by_tensors_hash_by_identity():
    ran = run("import torch\na = torch.ones(2)\nb = torch.ones(2)\nd = {a: 'a', b: 'b'}\nwho = d[b]\nn = len(d)")
    assert ran["who"] == "b" and ran["n"] == 2


def test_a_missing_key_is_a_key_error_with_pythons_text():
    caught = fails("d = {'a': 1}\nv = d['b']")
    assert caught.message == "KeyError: 'b'" and caught.line == 2
    assert run("d = {}\ntry:\n    d['x']\nexcept LookupError as e:\n    m = repr(e)")["m"] == "KeyError('x')"


def test_dict_and_set_reprs_are_pythons():
    ran = run("print({'a': 1, 'b': [1, 2]})\nprint(set())\nprint({})\nprint({1.5})")
    assert ran.printed == ["{'a': 1, 'b': [1, 2]}", "set()", "{}", "{1.5}"]


def test_star_args_kwargs_and_keyword_only_arguments():
    source = ("def f(a, *rest, scale=1, **options):\n    return a, rest, scale, options\n"
              "r1 = f(1)\nr2 = f(1, 2, 3, scale=2, mode='x')\nargs = [4, 5]\nkw = {'scale': 3, 'k': 0}\n"
              "r3 = f(*args, **kw)\ndef g(x, *, lr):\n    return x * lr\nr4 = g(2, lr=0.5)")
    ran = run(source)
    assert ran["r1"] == (1, (), 1, {})
    assert ran["r2"] == (1, (2, 3), 2, {'mode': 'x'})
    assert ran["r3"] == (4, (5,), 3, {'k': 0})
    assert ran["r4"] == 1.0
    assert "missing a required argument: 'lr'" in fails(source + "\ng(2)", ArgumentError).message
    assert "too many positional arguments" in fails(source + "\ng(2, 3)", ArgumentError).message
    assert "multiple values for keyword argument 'lr'" in fails(source + "\ng(2, lr=1, **{'lr': 2})").message
    assert "must be a mapping" in fails("def f(**k):\n    return k\nf(**[1])").message


def test_star_unpacking_in_assignments_and_literals():
    ran = run("a, *b = [1, 2, 3]\n*c, d = (1, 2, 3)\ne, *f, g = range(5)\nh = [*b, *'xy', 0]\nt = (*b,)\n"
              "(p, q), *r = [(1, 2), 3]\nk1, k2 = {'u': 1, 'v': 2}")
    assert (ran["a"], ran["b"]) == (1, [2, 3]) and (ran["c"], ran["d"]) == ([1, 2], 3)
    assert (ran["e"], ran["f"], ran["g"]) == (0, [1, 2, 3], 4)
    assert ran["h"] == [2, 3, 'x', 'y', 0] and ran["t"] == (2, 3)
    assert (ran["p"], ran["q"], ran["r"]) == (1, 2, [3]) and (ran["k1"], ran["k2"]) == ("u", "v")
    assert "cannot unpack 1 values into 3 names" in fails("a, *b, c = [1]").message


def test_decorators_user_and_no_grad():
    source = ("import torch\ncalls = []\ndef logged(fn):\n    def wrapper(*args, **kwargs):\n"
              "        calls.append(fn.__name__)\n        return fn(*args, **kwargs)\n    return wrapper\n"
              "@logged\ndef double(x):\n    return 2 * x\n@torch.no_grad()\ndef step(w):\n    return w * 3\n"
              "w = torch.ones(2, requires_grad=True)\ny = double(w)\nz = step(w)\nr1 = y.requires_grad\n"
              "r2 = z.requires_grad")
    ran = run(source)
    assert ran["calls"] == ["double"] and ran["r1"] is True and ran["r2"] is False


def test_isinstance_hasattr_getattr_setattr():
    source = ("import torch\nimport torch.nn as nn\nx = torch.ones(2)\nlin = nn.Linear(2, 1)\n"
              "r = [isinstance(x, torch.Tensor), isinstance(3, int), isinstance(True, int), isinstance(3.0, (int, float)),"
              " isinstance('s', str), isinstance([], list), isinstance({}, dict), isinstance(lin, nn.Linear),"
              " isinstance(x, int), issubclass(ValueError, Exception), issubclass(KeyError, (TypeError,)),"
              " hasattr(x, 'grad'), hasattr(x, 'nothing'), getattr(x, 'shape') == x.shape, getattr(x, 'zz', 7),"
              " callable(max), callable(x), type(2.5).__name__, type(x) is torch.Tensor]\n"
              "setattr(x, 'requires_grad', True)\nq = x.requires_grad")
    ran = run(source)
    assert ran["r"] == [True, True, True, True, True, True, True, True, False, True, False, True, False, True, 7,
                        True, False, "float", True]
    assert ran["q"] is True


def test_builtins_iter_next_map_filter_divmod():
    ran = run("it = iter([1, 2, 3])\na = next(it)\nb = next(it)\nrest = list(it)\nc = next(it, 'done')\n"
              "m = list(map(lambda v: v * 10, [1, 2]))\nf = list(filter(None, [0, 1, 2]))\nd = divmod(7, 2)\n"
              "s = sum(x * x for x in range(5))\nmx = max(v for v in [3, 9, 2])\nr = list(reversed([1, 2]))\n"
              "z = list(zip(iter([1, 2, 3]), 'ab'))\ne = list(enumerate(iter('xy')))")
    assert (ran["a"], ran["b"], ran["rest"], ran["c"]) == (1, 2, [3], "done")
    assert ran["m"] == [10, 20] and ran["f"] == [1, 2] and ran["d"] == (3, 1) and ran["s"] == 30
    assert ran["mx"] == 9 and ran["r"] == [2, 1] and ran["z"] == [(1, 'a'), (2, 'b')] and ran["e"] == [(0, 'x'), (1, 'y')]
    assert fails("it = iter([])\nnext(it)").message == "StopIteration"


def test_list_and_string_methods():
    ran = run("xs = [3, 1, 2]\nxs.sort()\nxs.insert(0, 9)\np = xs.pop()\ni = xs.index(1)\nxs.remove(9)\n"
              "w = 'a,b,c'.split(',')\nt = 'x-y'.replace('-', '+')\nc = 'ab'.center(6, '*')")
    assert ran["xs"] == [1, 2] and ran["p"] == 3 and ran["i"] == 1
    assert ran["w"] == ["a", "b", "c"] and ran["t"] == "x+y" and ran["c"] == "**ab**"
    assert "width" in fails("s = 'a'.center(10**9)").message or "string would have" in fails("s = 'a'.center(10**9)").message


def test_sorted_min_max_with_a_key():
    ran = run("d = {'a': 3, 'b': 1, 'c': 2}\ns = sorted(d, key=d.get)\nr = sorted([3, 1, 2], key=lambda v: -v, reverse=True)\n"
              "m = max(d, key=lambda k: d[k])\nn = min(['bb', 'a', 'ccc'], key=len)\ne = max([], default=0)")
    assert ran["s"] == ["b", "c", "a"] and ran["r"] == [1, 2, 3] and ran["m"] == "a" and ran["n"] == "a"
    assert ran["e"] == 0
