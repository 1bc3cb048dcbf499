"""The Python of tutorials (del, loop else, sets, dict views...), each program compared with what
CPython itself prints for it, and the hostile cases each construct opens."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError, LimitError, NotAllowedError
from language_helpers import fails, run, same_as_cpython

# -- hostile first ---------------------------------------------------------------------------------


@pytest.mark.parametrize("source, words", [
    ("import torch\nx = torch.ones(2)\ny = x ^ 2", "operator '^' is not supported on a float32 tensor (bitwise_xor "
                                                "is PyTorch's on bool and integer tensors only)"),
    ("y = 3 | 1", "operator '|' is not supported"),
    ("y = 3\ny &= 1", "operator '&' is not supported"),
    ("try:\n    y = 2 ^ 3\nexcept Exception:\n    y = 0", "operator '^' is not supported"),
])
def test_bit_operators_on_numbers_and_tensors_stay_refused_and_cannot_be_caught(source, words):
    error = fails(source, NotAllowedError)
    assert error.message == words
    assert error.line == source.count("\n") + 1 - (2 if "try" in source else 0)


def test_a_power_written_with_xor_keeps_its_hint():
    assert "**" in fails("y = 2 ^ 3", NotAllowedError).hint


@pytest.mark.parametrize("source", [
    "a = set(range(600000))\nb = set(range(600000, 1200000))\nc = a | b",
    "a = set(range(600000))\nb = set(range(600000, 1200000))\nc = a ^ b",
    "a = set(range(600000))\na |= set(range(600000, 1200000))",
    "d = {k: 0 for k in range(600000)}\ne = d | {k: 0 for k in range(600000, 1200000)}",
    "d = {k: 0 for k in range(600000)}\nk = d.keys()\ne = k | set(range(600000, 1200000))",
])
def test_set_and_dict_unions_meet_the_list_limit_before_they_are_built(source):
    assert "over the limit" in fails(source, LimitError, max_steps=10 ** 8).message  # before the steps of its items


@pytest.mark.parametrize("source, words", [
    ("x = 1\ndel x.real", "cannot delete attribute 'real' of a number"),
    ("import torch\ndel torch.tensor", "cannot delete attribute 'tensor'"),
    ("d = {}\ndel d.keys", "cannot delete attribute 'keys' of a dict"),
])
def test_del_of_an_attribute_the_program_did_not_set_is_refused(source, words):
    assert fails(source, NotAllowedError).message.startswith(words)


@pytest.mark.parametrize("source", ["class A:\n    pass\na = A()\ndel a.__dict__",
                                    "class A:\n    pass\na = A()\ndel a.__class__",
                                    "import torch\nx = torch.ones(1)\ndel x._version"])
def test_del_of_a_private_attribute_is_refused_before_the_program_runs(source):
    from gradcli.lang.parser import parse_program
    with pytest.raises(NotAllowedError, match="is not available"):
        parse_program(source)


def test_a_limit_inside_a_loop_else_is_the_limit():
    error = fails("for i in range(2):\n    pass\nelse:\n    while True:\n        pass", LimitError, max_steps=1000)
    assert error.line == 4


# -- against CPython -------------------------------------------------------------------------------

DEL = """
class A:
    pass
a = A()
a.x = 1
a.y = 2
del a.x
print(hasattr(a, "x"), a.y)
try:
    del a.x
except AttributeError as e:
    print("AttributeError:", e)
d = {"a": 1, "b": 2, "c": 3}
del d["a"], d["c"]
print(d)
try:
    del d["zz"]
except KeyError as e:
    print("KeyError:", e)
xs = list(range(10))
del xs[1:3]
del xs[::2]
del xs[-1]
print(xs)
try:
    del xs[100]
except IndexError as e:
    print("IndexError:", e)
"""

LOOP_ELSE = """
def find(xs, target):
    for i, x in enumerate(xs):
        if x == target:
            break
    else:
        return -1
    return i
print(find([3, 5, 7], 5), find([3, 5, 7], 4), find([], 1))
n = 0
while n < 3:
    n += 1
else:
    print("while ended", n)
while True:
    break
else:
    print("not shown")
for j in range(3):
    for k in range(3):
        if k == j:
            break
    else:
        print("no break", j)
        continue
    print("broke at", j)
for p in range(2, 20):
    for q in range(2, p):
        if p % q == 0:
            break
    else:
        print(p, "is prime")
"""

SETS = """
a = {1, 2, 3}
b = {2, 3, 4}
print(a | b, a & b, a ^ b, a - b, b - a)
alias = a
a |= {9}
a -= {1}
a &= {2, 3, 9, 10}
a ^= {3, 11}
print(a, alias is a)
print({1} <= {1, 2}, {1, 2} < {1, 2}, {1, 2} >= {2}, {3} > set(), {1, 2} == {2, 1})
print(a.union([7]), a.intersection(range(3)), a.difference([2]), a.symmetric_difference((2, 5)))
print(a.issubset(range(100)), a.issuperset([2]), a.isdisjoint({100}))
try:
    c = {1} | [2]
except TypeError as e:
    print("TypeError:", e)
merged = {"lr": 0.1, "epochs": 3} | {"epochs": 5}
merged |= {"seed": 0}
merged |= [("momentum", 0.9)]
print(merged)
"""

VIEWS = """
d = {"a": 1, "b": 2}
k, v, i = d.keys(), d.values(), d.items()
print(k, v, i)
d["c"] = 3
print(k, v, i, len(k), len(v), len(i))
print("a" in k, "z" in k, 2 in v, 9 in v, ("a", 1) in i, ("a", 2) in i)
print(sorted(k & {"a", "z"}), sorted(k - {"a"}), sorted(k | {"q"}), k == {"a", "b", "c"}, list(i & {("b", 2)}))
print(f"{k}", str(i), repr(v), [x for x in k], list(i), tuple(v))
for key, value in d.items():
    print(key, value)
print(max(d.values()), min(d.keys()), sum(d.values()), sorted(d.values(), reverse=True))
print(dict(d.items()), list(zip(d.keys(), d.values())), list(enumerate(d.keys())))
print(bool({}.keys()), bool(k), k.isdisjoint(["x"]), i.isdisjoint([("a", 1)]))
first, second, third = d.values()
print(first, second, third)
"""


@pytest.mark.parametrize("source", [DEL, LOOP_ELSE, SETS, VIEWS], ids=["del", "loop else", "sets", "dict views"])
def test_prints_what_cpython_prints(source):
    same_as_cpython(source)


def test_del_of_a_modules_parameter_submodule_and_attribute_as_pytorch():
    ran = run("""
import torch
import torch.nn as nn
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.w = nn.Parameter(torch.ones(2))
        self.k = 3
m = M()
before = [name for name, _ in m.named_parameters()]
del m.fc
del m.w
del m.k
after = [name for name, _ in m.named_parameters()]
gone = [hasattr(m, "fc"), hasattr(m, "w"), hasattr(m, "k")]
x = torch.ones(2, requires_grad=True)
(x * 3).sum().backward()
del x.grad
cleared = x.grad is None
""")
    assert ran["before"] == ["w", "fc.weight", "fc.bias"]
    assert ran["after"] == [] and ran["gone"] == [False, False, False] and ran["cleared"] is True


def test_a_view_is_live_and_iterating_it_while_the_dict_grows_ends():
    ran = run("d = {0: 0}\nfor key in d.keys():\n    d[key + 1] = 0\nn = len(d)")
    assert ran["n"] == 2


def test_a_caught_pytorch_error_is_pytorchs_type_and_text_alone():
    pytest.importorskip("torch")
    from pathlib import Path
    same_as_cpython((Path(__file__).parent / "fixtures" / "caught_torch_errors.py").read_text())


def test_an_uncaught_pytorch_error_keeps_gradclis_explanation():
    error = fails("import torch\ny = torch.ones(2, 3) @ torch.ones(2, 3)")
    assert error.message == ("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3): matmul of shapes (2, 3) and "
                             "(2, 3): the first's last dimension (3) must equal the second's second-to-last "
                             "dimension (2)")
    caught = run("import torch\ntry:\n    y = torch.ones(2) + torch.ones(3)\nexcept RuntimeError as e:\n"
                 "    text = str(e)")
    assert caught["text"] == "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"


# -- dataclasses, defaultdict, callable -------------------------------------------------------------

@pytest.mark.parametrize("source, words", [
    ("from dataclasses import dataclass\n@dataclass\ndef f():\n    pass", "dataclass() should be called on a class"),
    ("from dataclasses import dataclass\n@dataclass\nclass A:\n    x: list = []",
     "mutable default <class 'list'> for field x is not allowed: use default_factory"),
    ("from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int = 1\n    y: int",
     "non-default argument 'y' follows default argument"),
    ("from dataclasses import field\nf = field(default=1, default_factory=list)",
     "cannot specify both default and default_factory"),
    ("from dataclasses import asdict\nd = asdict(3)", "asdict() should be called on dataclass instances"),
])
def test_dataclass_mistakes_are_pythons_errors(source, words):
    assert words in fails(source).message


@pytest.mark.parametrize("source", [
    "from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int = 1\na = A()\nf = a.__dataclass_fields__",
    "from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int = 1\nf = A.__init__",
    "import dataclasses\nf = dataclasses._process",
    "@print.__self__\nclass A:\n    pass",
])
def test_a_dataclasss_machinery_is_out_of_reach(source):
    from gradcli.lang.parser import parse_program
    with pytest.raises(NotAllowedError, match="is not available"):
        parse_program(source)


def test_an_annotation_in_a_class_body_is_never_evaluated():
    ran = run("log = []\nclass A:\n    x: log.append(1) = 2\n    y: undefined_name\nv = A.x")
    assert ran["log"] == [] and ran["v"] == 2


DATACLASSES = """
from dataclasses import dataclass, field, asdict
@dataclass
class Config:
    lr: float
    epochs: int = 3
    layers: list = field(default_factory=list)
    name: str = field(default="run")
c = Config(0.1)
print(c)
print(c.layers is Config(0.1).layers, Config.epochs, Config.name)
c2 = Config(lr=0.5, epochs=1, layers=[1])
c2.layers.append(2)
print(c2, c2.epochs, asdict(c2))
for make in [lambda: Config(), lambda: Config(1, 2, [], "x", 5), lambda: Config(1, bad=2), lambda: Config(1, lr=2)]:
    try:
        make()
    except TypeError as e:
        print("TypeError:", e)
@dataclass
class Point:
    x: float
    y: float
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5
@dataclass
class Point3(Point):
    z: float = 0.0
p = Point3(3.0, 4.0)
print(p, p.norm(), asdict(p))
@dataclass(repr=False)
class Quiet:
    a: int = 1
    def __repr__(self):
        return "quiet"
print(Quiet(), Quiet(2).a)
try:
    s = {Point(1, 2)}
except TypeError as e:
    print("TypeError:", e)
"""

DEFAULTDICT_AND_CALLABLE = """
from collections import defaultdict, Counter
def zero():
    return 0
for factory in [int, list, lambda: 0, zero, None, dict, set, float, str]:
    print(repr(defaultdict(factory)))
d = defaultdict(lambda: 0)
d["a"] += 2
print(d, zero, lambda: 1)
nested = defaultdict(lambda: defaultdict(int))
nested["x"]["y"] += 1
print(nested["x"], len(nested))
print(callable(len), callable(int), callable(defaultdict), callable(zero), callable(3), callable("s"),
      callable(print), callable(Counter), callable(lambda: 0))
f = print
f("printed", "by", "f", sep="-")
print(list(map(print, ["via", "map"])), print)
"""


@pytest.mark.parametrize("source", [DATACLASSES, DEFAULTDICT_AND_CALLABLE], ids=["dataclasses", "defaultdict"])
def test_standard_module_objects_print_what_cpython_prints(source):
    same_as_cpython(source)


def test_a_class_decorator_that_is_not_callable_is_named():
    error = fails("d = 3\n@d\nclass A:\n    pass")
    assert error.message == "'d' is not a decorator" and error.line == 2


def test_a_tutorials_everyday_python_prints_what_cpython_prints():
    """Configs as dicts, argparse defaults, random, itertools, functools, collections, sorting pairs,
    slicing strings backwards, sum of lists, pow: the Python around d2l / fast.ai / CS224n code."""
    from pathlib import Path
    same_as_cpython((Path(__file__).parent / "fixtures" / "tutorial_python_cpython.py").read_text())


@pytest.mark.parametrize("source, words", [
    ("import torch\nx = torch.ones(3)\ny = x[::-1]", "step must be greater than zero"),
    ("import torch\nx = torch.ones(3)\nx[::-2] = 0", "step must be greater than zero"),
    ("xs = [1, 2]\ny = xs[::0]", "slice step cannot be zero"),
    ("x = pow(2, 10 ** 6, 0)", "pow() 3rd argument cannot be 0"),
    ("x = vars(3)", "TypeError: vars() argument must have __dict__ attribute"),
    ("s = sorted([(1, 'a'), ('a', 1)])", "'<' not supported between instances of 'str' and 'int'"),
    ("s = sorted([[[1]], [[2]]])", "not a mix or nested lists"),
    ("s = sum([[1]] * 600000 + [[2]] * 600000, [])", "over the limit"),
])
def test_the_everyday_builtins_refuse_as_python_and_pytorch_do(source, words):
    assert words in fails(source).message


def test_pow_is_the_power_operator_and_pythons_modular_power():
    ran = run("a = pow(2, 10)\nb = pow(2.0, -1)\nc = pow(3, 10 ** 9, 7)")
    assert (ran["a"], ran["b"], ran["c"]) == (1024, 0.5, pow(3, 10 ** 9, 7)) and type(ran["a"]) is int
    assert fails("x = pow(10, 400)").message == fails("x = 10 ** 400").message


def test_fastai_style_helpers_print_what_cpython_prints():
    pytest.importorskip("torch")
    from pathlib import Path
    same_as_cpython((Path(__file__).parent / "fixtures" / "fastai_python_cpython.py").read_text())


@pytest.mark.parametrize("source", ["import operator\nclass A:\n    pass\nf = operator.attrgetter('__dict__')(A())",
                                    "import operator\nf = operator.attrgetter('x._secret')"
                                    "(operator)"])
def test_attrgetter_meets_the_attribute_allowlist(source):
    assert "is not available" in fails(source).message
