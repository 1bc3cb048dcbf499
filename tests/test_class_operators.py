"""Operators a program's class defines are used as Python uses them: hostile cases first (each stopped by a
limit in the method, or Python's own error as the program's exception), then Python's dispatch rules, by hand
and against Python itself (the same text run by CPython, with torch where a tensor is involved)."""
from __future__ import annotations

import pytest

from gradcli.errors import LimitError, NotAllowedError
from gradcli.lang.exceptions import RaisedError
from tests.language_helpers import fails, oracle, run


# -- hostile ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method, use", [
    ("def __eq__(self, o):\n        return self == o", "A() == A()"),
    ("def __ne__(self, o):\n        return self != o", "A() != 1"),
    ("def __lt__(self, o):\n        return self < o", "A() < 1"),
    ("def __add__(self, o):\n        return self + o", "A() + 1"),
    ("def __radd__(self, o):\n        return o + self", "1 + A()"),
    ("def __neg__(self):\n        return -self", "-A()"),
    ("def __bool__(self):\n        return not self", "bool(A())"),
    ("def __len__(self):\n        return len(self)", "len(A())"),
    ("def __contains__(self, v):\n        return v in self", "1 in A()"),
])
def test_a_dunder_that_recurses_for_ever_stops_at_the_depth_limit_in_the_method(method, use):
    error = fails(f"class A:\n    {method}\n\nx = {use}\n", LimitError)
    assert "depth" in error.message
    assert error.line == 3  # the caret is in the method, on the call that recursed


@pytest.mark.parametrize("method, use", [
    ("def __eq__(self, o):\n        while True:\n            pass", "A() == 1"),
    ("def __iter__(self):\n        return self\n    def __next__(self):\n        return 1", "2 in A()"),
    ("def __getitem__(self, i):\n        return i", "-1 in A()"),
    ("def __getitem__(self, i):\n        return i", "list(A())"),
])
def test_a_runaway_dunder_or_an_endless_search_stops_at_the_step_limit(method, use):
    error = fails(f"class A:\n    {method}\n\nx = {use}\n", LimitError, max_steps=20_000)
    assert "more than 20,000" in error.message


@pytest.mark.parametrize("method, use, message", [
    ("def __len__(self):\n        return 'x'", "len(A())", "TypeError: 'str' object cannot be interpreted as an integer"),
    ("def __len__(self):\n        return -1", "len(A())", "ValueError: __len__() should return >= 0"),
    ("def __len__(self):\n        return -1", "bool(A())", "ValueError: __len__() should return >= 0"),
    ("def __bool__(self):\n        return 1", "bool(A())", "TypeError: __bool__ should return bool, returned int"),
    ("def __iter__(self):\n        return 3", "list(A())", "TypeError: iter() returned non-iterator of type 'int'"),
    ("def __add__(self, o):\n        return NotImplemented", "A() + 1",
     "TypeError: unsupported operand type(s) for +: 'A' and 'int'"),
    ("def __eq__(self, o):\n        return True", "{A(): 1}", "TypeError: unhashable type: 'A'"),
    ("pass", "A() < A()", "TypeError: '<' not supported between instances of 'A' and 'A'"),
    ("pass", "-A()", "TypeError: bad operand type for unary -: 'A'"),
    ("pass", "2 in A()", "TypeError: argument of type 'A' is not iterable"),
    ("pass", "torch.ones(2) * A()", "TypeError: unsupported operand type(s) for *: 'Tensor' and 'A'"),
])
def test_what_python_refuses_is_the_programs_own_exception_with_pythons_text(method, use, message):
    error = fails(f"import torch\nclass A:\n    {method}\n\nx = {use}\n", RaisedError)
    assert error.message == message
    caught = run(f"import torch\nclass A:\n    {method}\n\ntry:\n    x = {use}\nexcept (TypeError, ValueError) as e:\n"
                 f"    caught = str(e)\n")
    assert caught["caught"] == message.split(": ", 1)[1]


@pytest.mark.parametrize("name", ["__hash__", "__iadd__", "__and__", "__abs__", "__index__", "__format__"])
def test_dunders_off_the_list_stay_refused_by_name(name):
    error = fails(f"class A:\n    def {name}(self, *a):\n        return 1\n", NotAllowedError)
    assert error.message == f"defining the special method '{name}' is not supported"


def test_an_alias_in_the_body_must_name_a_method_defined_above_it():
    fails("class A:\n    __rmul__ = print\n", NotAllowedError)
    fails("class A:\n    __rmul__ = __mul__\n    def __mul__(self, o):\n        return 1\n", NotAllowedError)
    fails("class A:\n    def mul(self, o):\n        return 1\n    __hash__ = mul\n", NotAllowedError)


# -- Python's rules ----------------------------------------------------------------------------------------
VECTOR = '''
import torch

class V:
    def __init__(self, x):
        self.x = x
    def __add__(self, o):
        if isinstance(o, V):
            return V(self.x + o.x)
        if isinstance(o, (int, float)):
            return V(self.x + o)
        return NotImplemented
    def __radd__(self, o):
        return ("radd", o.tolist()) if isinstance(o, torch.Tensor) else V(o + self.x)
    def __mul__(self, o):
        return V(self.x * o)
    __rmul__ = __mul__
    def __sub__(self, o):
        return V(self.x - o)
    def __rsub__(self, o):
        return V(o - self.x)
    def __truediv__(self, o):
        return V(self.x / o)
    def __rtruediv__(self, o):
        return V(o / self.x)
    def __floordiv__(self, o):
        return V(self.x // o)
    def __mod__(self, o):
        return V(self.x % o)
    def __pow__(self, o):
        return V(self.x ** o)
    def __rpow__(self, o):
        return V(o ** self.x)
    def __matmul__(self, o):
        return "matmul"
    def __neg__(self):
        return V(-self.x)
    def __pos__(self):
        return self
    def __eq__(self, o):
        return isinstance(o, V) and self.x == o.x
    def __lt__(self, o):
        return self.x < (o.x if isinstance(o, V) else o)
    def __le__(self, o):
        return self.x <= (o.x if isinstance(o, V) else o)
    def __len__(self):
        return self.x
    def __repr__(self):
        return f"V({self.x})"

class Bag:
    def __init__(self, items):
        self.items = items
    def __contains__(self, v):
        return v in self.items

class Seq:
    def __getitem__(self, i):
        if i >= 3:
            raise IndexError
        return i * 10

class Count:
    def __init__(self):
        self.i = 0
    def __iter__(self):
        return self
    def __next__(self):
        self.i += 1
        if self.i > 3:
            raise StopIteration
        return self.i

class Plain:
    pass

class Base:
    def __add__(self, o):
        return "Base.add"
    def __radd__(self, o):
        return "Base.radd"
    def __eq__(self, o):
        return "Base.eq"

class Derived(Base):
    def __radd__(self, o):
        return "Derived.radd"
    def __eq__(self, o):
        return "Derived.eq"

class Same(Base):
    pass

a, b = V(2), V(3)
arith = [a + b, a + 1, 1 + a, a * 2, 3 * a, a - 1, 10 - a, a / 4, 8 / a, a // 2, a % 2, a ** 2, 2 ** a, a @ b,
         -a, +a]
compared = [a == V(2), a != V(2), a != b, a == 2, a < b, a <= 2, 3 > a, 2.5 >= a]
found = [torch.ones(2) + a, a in [V(1), V(2)], 2 in Bag([1, 2]), 5 in Bag([1]), 20 in Seq(), 25 in Seq(),
         list(Seq()), 2 in Count(), [v for v in Count()]]
truths = [bool(a), bool(V(0)), bool(Plain()), len(a), "yes" if V(0) else "no", not a, Plain() == Plain()]
order = [Base() + Derived(), Base() + Same(), Base() == Derived(), Derived() == Base(), Base() == Base()]
t = V(1)
t += 5
totals = [t, sum([V(1), V(2)], V(0)), torch.tensor(2.0) == a]
shown = repr([arith, compared, found, truths, order, totals])
'''


def test_operators_comparisons_membership_truth_and_dispatch_order_are_pythons():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(VECTOR)
    assert run(VECTOR)["shown"] == namespace["shown"]


def test_the_same_by_hand():
    ran = run(VECTOR)
    assert repr(ran["arith"]) == ("[V(5), V(3), V(3), V(4), V(6), V(1), V(8), V(0.5), V(4.0), V(1), V(0), V(4), V(4), "
                                  "'matmul', V(-2), V(2)]")
    assert ran["compared"] == [True, False, True, False, True, True, True, True]
    assert ran["truths"] == [True, False, True, 2, "no", False, False]
    # a subclass overriding the reflected method goes first; one that only inherits it does not
    assert ran["order"] == ["Derived.radd", "Base.add", "Derived.eq", "Derived.eq", "Base.eq"]
    assert ran["found"][0] == ("radd", [1.0, 1.0])  # a tensor answers NotImplemented, as PyTorch's does


def test_each_dunder_call_is_a_call_of_the_programs_functions(monkeypatch):
    from gradcli.lang import limits
    source = "class A:\n    def __add__(self, o):\n        return self\n\nx = A()\nfor i in range(100):\n    x = x + 1\n"
    run(source)
    monkeypatch.setattr(limits, "MAX_CALLS", 50)
    error = fails(source, LimitError)
    assert error.message == "the program made more than 50 calls of its own functions"
