"""CPython's own recursive work on a program's values (hashing, ==, repr, asdict, the MRO) is bounded by
budgeted code or bounded inputs, not by the clock alone (issue 35): a structure built by doubling is sixty
objects in memory and 2**60 parts to visit."""
from __future__ import annotations

import pytest

from gradcli.errors import LimitError
from gradcli.lang.limits import MAX_KEY_PARTS, MAX_LIST, MAX_MRO, MAX_STRING
from gradcli.lang.visits import shared
from tests.language_helpers import fails, run, same_as_cpython

DOUBLED = "a = ()\nb = ()\nfor i in range(60):\n    a = (a, a)\n    b = (b, b)\n"
KEY_LIMIT = f"a dict key or set item would be hashed part by part through more than {MAX_KEY_PARTS:,} parts"
COMPARED = f"comparing these values would have to visit more than {MAX_LIST:,} items"


@pytest.mark.parametrize("use", ["d = {a: 1}", "d = {}\nd[a] = 1", "s = {a}", "s = set([a])", "print(a in {})",
                                 "print(a in set())", "d = dict([(a, 1)])"])
def test_a_key_built_by_doubling_is_refused_before_python_hashes_it(use):
    error = fails(DOUBLED + use, LimitError)
    assert error.message == KEY_LIMIT
    assert "key by something smaller" in error.hint


def test_keys_of_an_ordinary_size_are_python_s():
    same_as_cpython("k = tuple(range(1000))\nd = {k: 1, (1, (2, 3)): 2}\nprint(d[k], (1, (2, 3)) in d, len({k, k}))")
    fails(f"d = {{tuple(range({MAX_KEY_PARTS + 1})): 1}}", LimitError)


@pytest.mark.parametrize("use", ["print([b].count(a))", "print([b].index(a))", "print(a in [b])", "[b].remove(a)",
                                 "print([b] * 3 == [a] * 3)", "print(a == b)"])
def test_comparisons_of_structures_built_by_doubling_share_one_budget(use):
    error = fails(DOUBLED + use, LimitError)
    assert error.message == COMPARED and "a structure built by doubling" in error.hint


def test_list_searches_keep_python_s_answers():
    same_as_cpython("xs = [3, 1, 4, 1, 5, (1, 2), [3]]\n"
                    "print(xs.index(1), xs.index(1, 2), xs.index(1, 2, 4), xs.index((1, 2)), xs.index([3]))\n"
                    "print(xs.count(1), xs.count([3]), 4 in xs, (1, 2) in xs, 9 in xs)\n"
                    "try:\n    xs.index(1, 4)\nexcept ValueError as e:\n    print(e)\n"
                    "try:\n    xs.index('a')\nexcept ValueError as e:\n    print(e)\n"
                    "xs.remove(1)\nprint(xs, 'ab'.index('b'))")


DATACLASS = ("from dataclasses import dataclass, asdict\n@dataclass\nclass P:\n    x: object\n    y: object\n"
             "a = P(1, 2)\nb = P(1, 2)\nfor i in range(60):\n    a = P(a, a)\n    b = P(b, b)\n")


@pytest.mark.parametrize("use, message", [
    ("print(a == b)", COMPARED),
    ("d = asdict(a)", f"asdict() would have to visit more than {MAX_LIST:,} items"),
    ("print(a)", f"a string would have {MAX_STRING + 1:,} characters, over the limit of {MAX_STRING:,}"),
    ("print([a])", f"a string would have {MAX_STRING + 1:,} characters, over the limit of {MAX_STRING:,}"),
])
def test_a_dataclass_nested_by_doubling_meets_a_limit_in_its_written_methods(use, message):
    assert fails(DATACLASS + use, LimitError).message == message


def test_dataclass_methods_keep_python_s_answers():
    same_as_cpython("from dataclasses import dataclass, asdict\n@dataclass\nclass P:\n    x: object\n    y: object\n"
                    "p = P(P(1, [2, 3]), {'k': P(4, 5)})\nq = P(P(1, [2, 3]), {'k': P(4, 5)})\n"
                    "print(p == q, p != P(1, 2), p)\nprint(asdict(p))")


def test_a_chain_of_subclasses_past_the_limit_is_refused_where_the_class_is_made():
    source = "class A0:\n    pass\nprev = A0\nfor i in range({n}):\n    class B(prev):\n        pass\n    prev = B\n"
    assert run(source.format(n=MAX_MRO - 2))["i"] == MAX_MRO - 3  # B, MAX_MRO - 3 more, A0 and object: MAX_MRO
    error = fails(source.format(n=9000), LimitError)
    assert error.message == f"class B would have {MAX_MRO + 1} classes in its method resolution order, over the " \
                            f"limit of {MAX_MRO}"
    assert error.line == 5


def test_walks_nested_in_a_running_walk_of_their_kind_spend_its_budget():
    with shared("equal", 10) as outer:
        with shared("equal", 1000) as inner:
            assert inner is outer
            inner[0] -= 3
        with shared("repr", 50) as other:
            assert other is not outer and other == [50]
    assert outer == [7]
    with shared("equal", 5) as fresh:
        assert fresh == [5]
