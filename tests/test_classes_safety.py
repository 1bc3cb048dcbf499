"""The hostile cases classes open (issue 24's Safety section), written before the feature: each is
refused by name before it runs, or stopped by a cap within seconds with the caret in the program's
own method, and exits 2 from the command line with no traceback."""
from __future__ import annotations

import pytest

from gradcli.errors import GradcliError, LimitError, NameLookupError, NotAllowedError
from gradcli.lang.parser import parse_program
from tests.language_helpers import fails

CLASS = "class A:\n    def __init__(self):\n        self.v = 1\n\n    def f(self):\n        return self.v\n\n"


@pytest.mark.parametrize("source, words", [
    (CLASS + "s = A.__subclasses__()", "attribute '__subclasses__' is not available"),
    (CLASS + "a = A()\nc = a.__class__.__bases__", "attribute '__bases__' is not available"),
    (CLASS + "a = A()\nc = a.__class__.__mro__", "attribute '__mro__' is not available"),
    (CLASS + "a = A()\nc = a.__class__.__init__", "attribute '__init__' is not available"),
    (CLASS + "a = A()\ng = a.__init__.__globals__", "attribute '__init__' is not available"),
    (CLASS + "a = A()\nd = a.__dict__", "attribute '__dict__' is not available"),
    (CLASS + "A.__init__ = print", "attribute '__init__' is not available"),
    ("class B:\n    def f(self):\n        return super().__thisclass__", "attribute '__thisclass__' is not available"),
    ("class M:\n    pass\n\nclass A(metaclass=M):\n    pass", "class keyword 'metaclass='"),
    ("class A(object, flag=True):\n    pass", "class keyword 'flag='"),
    ("class A:\n    def __getattribute__(self, name):\n        return 1", "special method '__getattribute__'"),
    ("class A:\n    def __getattr__(self, name):\n        return 1", "special method '__getattr__'"),
    ("class A:\n    def __setattr__(self, name, v):\n        pass", "special method '__setattr__'"),
    ("class A:\n    def __del__(self):\n        pass", "special method '__del__'"),
    ("class A:\n    def __new__(cls):\n        pass", "special method '__new__'"),
    ("class A:\n    def __init_subclass__(cls):\n        pass", "special method '__init_subclass__'"),
    ("class A:\n    def __class_getitem__(cls, k):\n        pass", "special method '__class_getitem__'"),
    ("class A:\n    def __set_name__(self, o, n):\n        pass", "special method '__set_name__'"),
    ("class A:\n    def __get__(self, o, t):\n        pass", "special method '__get__'"),
    ("class A:\n    def __set__(self, o, v):\n        pass", "special method '__set__'"),
    ("class A:\n    __slots__ = ('x',)", "'__slots__' is not supported"),
    ("class A:\n    while True:\n        pass", "'While' is not allowed in a class body"),
    ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        return ctx.__dict__", "attribute '__dict__' is not available"),
    ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n"
     "        ctx.__class__ = 1", "attribute '__class__' is not available"),
])
def test_refused_by_name_before_anything_runs(source, words):
    with pytest.raises(NotAllowedError) as caught:
        parse_program(source)
    assert words in caught.value.message
    assert caught.value.line is not None


@pytest.mark.parametrize("base", ["int", "list", "dict", "Exception", "torch.Tensor", "print"])
def test_a_base_outside_the_list_is_refused_by_name(base):
    caught = fails(f"import torch\nclass A({base}):\n    pass", NotAllowedError)
    assert caught.message.startswith("cannot subclass")
    assert "nn.Module" in caught.hint
    assert caught.line == 2


def test_reading_an_unset_attribute_of_an_object_names_it():
    caught = fails(CLASS + "a = A()\nb = a.w", NameLookupError)
    assert caught.message == "'A' object has no attribute 'w'"


def test_a_repr_calling_repr_of_itself_meets_the_depth_limit_in_the_method():
    source = "class A:\n    def __repr__(self):\n        return repr(self)\n\nprint(A())"
    caught = fails(source, LimitError)
    assert "recursion" in caught.message
    assert caught.line == 3


def test_a_method_that_loops_for_ever_stops_at_the_step_limit_in_the_method():
    source = "class A:\n    def spin(self):\n        while True:\n            pass\n\nA().spin()"
    caught = fails(source, LimitError, max_steps=10_000)
    assert "loop iterations" in caught.message
    assert caught.line == 3


def test_an_iterator_that_never_ends_stops_at_the_step_limit():
    source = ("class Count:\n    def __init__(self):\n        self.n = 0\n    def __iter__(self):\n        return self\n"
              "    def __next__(self):\n        self.n += 1\n        return self.n\n\nfor k in Count():\n    pass")
    caught = fails(source, LimitError, max_steps=10_000)
    assert "loop iterations" in caught.message


def test_a_forward_calling_the_module_itself_meets_the_depth_limit():
    source = ("import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, v):\n"
              "        return self(v)\n\nnet = Net()\ny = net(torch.ones(2))")
    caught = fails(source, LimitError)
    assert "recursion" in caught.message
    assert caught.line == 5


def test_a_backward_that_never_returns_stops_at_the_step_limit_inside_the_engine():
    source = ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n        while True:\n"
              "            pass\n\nx = torch.ones(2, requires_grad=True)\nF.apply(x).sum().backward()")
    caught = fails(source, LimitError, max_steps=10_000)
    assert "loop iterations" in caught.message
    assert caught.line == 8


def test_a_limit_inside_a_method_cannot_be_caught_by_the_program():
    source = ("class A:\n    def spin(self):\n        while True:\n            pass\n\ntry:\n    A().spin()\n"
              "except Exception:\n    done = 1")
    fails(source, LimitError, max_steps=10_000)


@pytest.mark.parametrize("source", [
    "class A:\n    def __repr__(self):\n        return repr(self)\n\nprint(A())\n",
    "import torch\nclass A(int):\n    pass\n",
    "class A:\n    def __del__(self):\n        pass\n",
])
def test_the_command_line_exits_2_with_a_caret_and_no_traceback(cli, tmp_path, source):
    path = tmp_path / "hostile.py"
    path.write_text(source)
    result = cli("run", str(path))
    assert result.exit_code == 2
    text = result.stdout + result.stderr
    assert "Traceback" not in text
    assert "^" in text


def test_every_gradcli_error_kind_is_what_the_program_meets():
    assert issubclass(NotAllowedError, GradcliError) and issubclass(LimitError, GradcliError)
