"""The everyday Python around tensors: f-strings, str.format and %, comprehensions, zip/enumerate and
iteration, Python's builtins; each bounded, and no format string can reach into an object."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import ArgumentError, LimitError, NameLookupError, NotAllowedError
from gradcli.lang.limits import MAX_FORMAT_WIDTH, MAX_LIST, MAX_STRING
from tests.language_helpers import fails, run


# -- strings -----------------------------------------------------------------------------------------
def test_f_strings_format_numbers_and_tensors_as_pytorch_does():
    ran = run("import torch\nx = torch.tensor(1.5)\nv = torch.tensor([1.5, 2.0])\nstep = 7\n"
              "print(f'{x:.4f} {x} {v} {v!r} {x.item():.2e} {step:>3d}|{step:<3}|{None} {True:d}')\n"
              "w = 8\nprint(f'[{3.14159:{w}.3f}]')")
    assert ran.printed == ["1.5000 1.5 tensor([1.5000, 2.0000]) tensor([1.5000, 2.0000]) 1.50e+00   7|7  |None 1",
                           "[   3.142]"]


def test_a_spec_on_a_tensor_of_several_elements_is_pytorchs_error():
    error = fails("import torch\nv = torch.ones(2)\ns = f'{v:.4f}'", ArgumentError)
    assert error.message == "unsupported format string passed to Tensor.__format__"
    assert "item()" in error.hint
    assert fails("s = f'{None:.2f}'", ArgumentError).message == \
        "unsupported format string passed to NoneType.__format__"


def test_str_format_and_percent():
    ran = run("import torch\nv = torch.tensor([1.5, 2.0])\n"
              "print('{} and {:.3f}'.format(v, torch.tensor(2.0)))\nprint('{1}-{0}'.format('a', 'b'))\n"
              "print('{loss:.2f}'.format(loss=0.125))\nprint('%6.2f|%-5d|%s|%r' % (3.14159, 42, [1, 2.5], 'q'))\n"
              "print('%.3f' % torch.tensor([2.0]))\nprint('100%% done' % ())")
    assert ran.printed == ["tensor([1.5000, 2.0000]) and 2.000", "b-a", "0.12", "  3.14|42   |[1, 2.5]|'q'", "2.000",
                           "100% done"]


@pytest.mark.parametrize("template", ["'{0.__class__}'.format(x)", "'{0[0]}'.format(x)", "'{x.grad}'.format(x=x)",
                                      "'{0.__init__.__globals__}'.format(x)"])
def test_format_fields_never_reach_into_an_object(template):
    error = fails(f"x = [1]\ns = {template}", NotAllowedError)
    assert error.message.startswith("format field '") and "positions or names" in error.message


@pytest.mark.parametrize("source, words", [
    ("s = f'{1:>{w}}'", "format width"),
    ("s = '{:.2000f}'.format(1.0)", "format precision"),
    ("s = '%5000d' % 1", "format width"),
    ("s = 'ab' * 10 ** 7", "a string would have"),
    ("s = 'a' * 900000\nt = s + s", "a string would have"),
    ("s = ', '.join(['abc'] * 400000)", "a string would have"),
    ("xs = [0] * 10 ** 8", "a list would have"),
    ("xs = [0] * 600000\nys = xs + xs", "a list would have"),
    ("xs = list(range(10 ** 9))", "a list would have"),
    ("xs = ['a'] * 900000\nprint(*xs, sep='-' * 1000)", "a string would have"),
])
def test_string_list_and_format_bombs_are_limit_errors(source, words):
    error = fails(f"w = {MAX_FORMAT_WIDTH + 1}\n{source}", LimitError)
    assert words in error.message


def test_a_comprehension_bomb_meets_the_list_limit():
    error = fails("xs = [i for i in range(10 ** 9)]", LimitError, max_steps=10 ** 8)  # each item is a step too
    assert error.message == f"a list would have {MAX_LIST + 1:,} items, over the limit of {MAX_LIST:,}"
    error = fails("xs = [(a, b) for a in range(10 ** 5) for b in range(10 ** 5)]", LimitError, max_steps=10 ** 8)
    assert "a list would have" in error.message


def test_limits_hold_inside_a_with_block_and_a_function():
    error = fails("import torch\ndef f():\n    with torch.no_grad():\n        return 'x' * (10 ** 8)\nf()", LimitError)
    assert "a string would have" in error.message and error.calls == [(5, 1, 3)]


def test_limits_are_what_they_say():
    assert (MAX_LIST, MAX_STRING, MAX_FORMAT_WIDTH) == (1_000_000, 1_000_000, 1_000)


# -- comprehensions, iteration, builtins -------------------------------------------------------------
def test_comprehensions_and_generator_expressions():
    ran = run("import torch\nxs = [torch.tensor(float(i), requires_grad=True) for i in range(1, 4)]\n"
              "loss = sum(x ** 2 for x in xs)\nloss.backward()\ngrads = [x.grad.item() for x in xs if x.item() != 2]\n"
              "pairs = [(a, b) for a in range(3) for b in range(a)]\nstacked = torch.stack([x * 2 for x in xs])\n"
              "i = 'unchanged'\nsquares = [i * i for i in range(4)]")
    assert ran["loss"].item() == 14.0 and ran["grads"] == [2.0, 6.0]
    assert ran["pairs"] == [(1, 0), (2, 0), (2, 1)]
    np.testing.assert_array_equal(ran["stacked"].detach().numpy(), [2.0, 4.0, 6.0])
    assert ran["i"] == "unchanged" and ran["squares"] == [0, 1, 4, 9]


def test_for_loops_over_zip_enumerate_tensors_and_lists_with_unpacking():
    ran = run("import torch\nxs = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\nys = [10, 20]\ntotal = 0\n"
              "for i, (row, y) in enumerate(zip(xs, ys)):\n    total += (i + 1) * y * row.sum().item()\n"
              "names = []\nfor k, name in enumerate(['a', 'b'], start=1):\n    names.append(f'{k}{name}')\n"
              "evens = [v for v in range(0, 10, 3)]")
    assert ran["total"] == 1 * 10 * 3.0 + 2 * 20 * 7.0
    assert ran["names"] == ["1a", "2b"] and ran["evens"] == [0, 3, 6, 9]


def test_python_builtins():
    ran = run("import torch\nv = torch.tensor([3.0, 1.0])\n"
              "a = (len('abc'), abs(-2), min(3, 1, 2), max([4, 9]), sum([1, 2], 10), round(2.675, 2), round(2.5))\n"
              "b = (list(range(3)), tuple([1]), str(1.5), bool([]), sorted([3, 1]), list(reversed([1, 2])))\n"
              "c = (any([0, 1]), all([1, 0]), float('0.5'), int('7'), sum(v).item(), max(v).item())\n"
              "d = 7 % 3\ns = '-' * 3 + str(d)")
    assert ran["a"] == (3, 2, 1, 9, 13, 2.67, 2)
    assert ran["b"] == ([0, 1, 2], (1,), "1.5", False, [1, 3], [2, 1])
    assert ran["c"] == (True, False, 0.5, 7, 4.0, 3.0)
    assert ran["s"] == "---1"


def test_print_with_sep_and_end():
    ran = run("print(1, 2, 3, sep=', ')\nprint('a', 'b', end='')\nprint('x', 'y', sep='-', end='!')")
    assert ran.printed == ["1, 2, 3", "a b", "x-y!"]  # each call, with its own end
    assert "unexpected keyword argument 'file'" in fails("print(1, file=None)", ArgumentError).message


def test_list_methods_are_an_allowlist():
    ran = run("xs = [1]\nxs.append(2)\nxs.extend([3, 4])\nxs += [5]\nxs[0] = 0")
    assert ran["xs"] == [0, 2, 3, 4, 5]
    error = fails("xs = [1]\nxs.shuffle()", NameLookupError)
    assert error.message == "attribute 'shuffle' is not available on a list"


def test_iterating_something_that_is_not_iterable_says_so():
    error = fails("for v in 3:\n    pass", ArgumentError)
    assert error.message == "'int' object is not iterable" and (error.line, error.column) == (1, 10)


@pytest.mark.parametrize("source, words", [("s = sum('ab')", "can't sum strings"),
                                           ("s = sum([[1], [2]])", "not a list"),
                                           ("s = sum([1, 2], 'x')", "can't sum strings")])
def test_sum_of_what_does_not_add_is_a_user_error(source, words):
    assert words in fails(source, ArgumentError).message


@pytest.mark.parametrize("use", ["print(xs)", "s = str(xs)", "s = f'{xs}'", "ok = xs == ys", "xs", "assert xs != ys"])
def test_lists_built_by_doubling_are_bounded_when_shown_or_compared(use):
    error = fails(f"xs = [1]\nys = [1]\nfor i in range(60):\n    xs = [xs, xs]\n    ys = [ys, ys]\n{use}", LimitError)
    assert "would have" in error.message


def test_ordering_builtins_compare_flat_values_only():
    assert "compares numbers" in fails("m = max([[[1]], [[2]]])", ArgumentError).message
    assert "compares numbers" in fails("s = sorted([[[2]], [[1]]])", ArgumentError).message
    assert run("m = max([[1], [2]])\ns = sorted([(2, 'b'), (1, 'a')])")["s"] == [(1, "a"), (2, "b")]
    assert "not a mix" in fails("m = min((0, 's'))", ArgumentError).message
    assert "Unknown conversion specifier" in fails("s = '{!x}'.format(1)", ArgumentError).message


def test_a_function_and_a_module_are_true_and_a_sequential_by_its_length():
    ran = run("import torch\nfrom torch import nn\nclass D:\n    def __init__(self, transform=None):\n"
              "        self.transform = transform\n    def get(self, x):\n        if self.transform:\n"
              "            x = self.transform(x)\n        return x\n"
              "a, b = D(lambda v: v * 2).get(3), D().get(3)\n"
              "flags = [bool(print), bool(nn.Linear(1, 1)), bool(nn.Sequential()), bool(nn.Sequential(nn.ReLU())), "
              "bool(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1))]\n")
    assert (ran["a"], ran["b"]) == (6, 3)
    assert ran["flags"] == [True, True, False, True, True]
