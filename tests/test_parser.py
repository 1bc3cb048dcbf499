"""The parser accepts what tutorials write, refuses everything else by name, and never runs text."""
import ast
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli.errors import GradcliError, LimitError, NotAllowedError, ParseError
from gradcli.lang.parser import parse_program
from gradcli.source import caret_lines, node_span

SEED_000 = """
 import torch

 from torch.autograd import Variable

 '''求导数'''

 x = Variable(torch.ones(2,2),requires_grad=True)

 y = x + 2

 print(x.creator)      # None,用户直接创建没有creater属性

 print(y.creator)      # <torch.autograd._functions.basic_ops.AddConstant object at 0x7fb9b4d4b208>
"""

SEED_000_BACKWARD = "\n".join([
    "   z = y*y*3",
    "  ",
    "   out = z.mean()",
    "  ",
    "   out.backward()",
    "  ",
    "   print(x,y,z)",
    "  ",
    "   print(x.grad)          # 输出对out对x求倒结果",
    "  ",
    "   print(y.grad)          # y不是自动求导变量",
])

SEED_000_WHILE = """   x = torch.randn(3)
  
   x = Variable(x, requires_grad = True)
  
   y = x * 2
  
   while y.data.norm() < 1000:
  
       y = y * 2
  
   gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
  
   y.backward(gradients)
  
   x.grad
"""

SEED_002 = """import torch
from torch.autograd import Variable
x = Variable(torch.Tensor([2]), requires_grad=True)
y = x + 2
z = y ** 2 + 3
print(z)
z.backward()
print(x.grad)
x = Variable(torch.randn(10, 20), requires_grad=True)
y = Variable(torch.randn(10, 5), requires_grad=True)
w = Variable(torch.randn(20, 5), requires_grad=True)
out = torch.mean(y - torch.matmul(x, w))
out.backward()
x=torch.ones(1)
b=torch.rand(1,requires_grad=True)
y.backward()#自动求导，它会对所有需要求梯度的变量进行求导，然后得到他们的梯度。
print (x.grad) #求变量x的梯度，梯度为w，也就是2
print (b. grad)#求变量b的梯度，梯度为常数1
"""

ACCEPTED = {
    "seed 000 with every line indented": SEED_000,
    "seed 000 backward, whitespace-only lines less indented": SEED_000_BACKWARD,
    "seed 000 while loop": SEED_000_WHILE,
    "seed 002": SEED_002,
    "while loop": "while y.data.norm() < 1000:\n    y = y * 2",
    "one-line for": "for i in range(3): y = y * 2",
    "for with start and step": "for i in range(0, 10, 2):\n    if i == 4:\n        continue\n    if i > 6:\n        break\n    y = y + i",
    "conditional expression": "z = a if c else b",
    "slices": "z = x[:, 1:3]",
    "ellipsis and None index": "z = x[..., None]",
    "new axis": "z = x[:, None] + x[1:, ::2] + x[0] + x[-1, 0]",
    "augmented assignment": "y *= 2",
    "every augmented operator": "y += 1; y -= 1; y *= 2; y /= 2; y //= 1; y %= 5; y **= 2; y @= w",
    "matmul and mean": "out = torch.mean(y - torch.matmul(x, w))",
    "semicolons": "y = x + 2; z = y*y*3; out = z.mean()",
    "imports": "import torch\nimport torch as t\nimport numpy as np\nimport numpy\nimport torch.autograd\n"
               "from torch.autograd import Variable, grad\nfrom torch import tensor, ones as o",
    "assignable attributes": "x.requires_grad = True\nw.grad = None\nx.data = x.data * 2",
    "unpacking": "a, b = 1, 2\n[c, d] = e\n(f, g) = h",
    "chained assignment": "a = b = x * 2",
    "assert with message": "assert x.grad is not None, 'x has no gradient'",
    "if elif else with boolean logic": "if 0 < x < 1 and not done or x >= 2:\n  y = 1\nelif x != 0:\n  y = 2\nelse:\n  pass",
    "print keywords": "print(x.grad, sep=' ', end='\\n')",
    "arithmetic": "z = -x + +y * 2 / 3 // 4 % 5 ** 2 @ w - x.t()",
    "bracketed continuation": "out = torch.mean(\n    y - torch.matmul(x,\n                     w))",
    "backslash continuation": "y = x + \\\n    2",
    "tab indentation": "if x:\n\ty = 1\n\tz = 2",
    "pasted with tabs": "\tx = 1\n\tif x:\n\t\ty = 2",
    "utf-8 byte order mark": "\ufeffx = 1",
    "CRLF line endings": "x = 1\r\nif x:\r\n    y = 2\r\n",
    "Chinese identifier": "导数 = x * 2",
    "string statements": "'''求导数'''\n\"a note\"\nx = 1",
    "empty program": "",
    "only comments": "# 求导数\n   # indented comment",
    "leading blank line": "\n    x = 1\n    y = x",
    "comment less indented than pasted code": "    x = 1\n# a comment at the margin\n    y = x",
    "booleans and None": "a = True; b = False; c = None; d = 1e-3; e = 0x1F",
    "is comparisons": "ok = x.grad is None or y is not None",
    "nested lists": "x = torch.tensor([[1, 2], [3, 4.5]])",
    "single underscore name": "_ = 1; _tmp = 2",
    "invalid escape sequence, no warning": "print('\\d')",
    "90 nested minus signs": "y = " + "-" * 90 + "1",
    "def with defaults, keywords and a docstring": "def loss_fn(w, x, *, scale=1.0, lr=0.1):\n    '''Squared error.'''\n"
                                                  "    return (w * x).sum() * scale",
    "annotated def": "def f(x: torch.Tensor, n: int = 2) -> torch.Tensor:\n    return x ** n",
    "nested def and closure": "def outer(a):\n    def inner(b):\n        return a * b\n    return inner",
    "recursion": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)",
    "decorators": "@torch.no_grad()\ndef step(w):\n    w -= 0.1 * w.grad\n@torch.enable_grad\ndef g():\n    pass",
    "varargs": "def f(*xs):\n    return sum(xs)\ny = f(*[1, 2])",
    "lambda": "f = lambda v, k=2: v ** k",
    "call of a call": "y = (lambda a: lambda b: a * b)(2)(3)",
    "gradient modes": "with torch.no_grad():\n    w -= 0.1 * w.grad\nwith torch.set_grad_enabled(False), torch.enable_grad():\n"
                      "    pass\nwith inference_mode():\n    pass",
    "comprehensions": "ys = [x * i for i in range(3) if i != 1]\ns = sum(v ** 2 for v in ys)\n"
                      "pairs = [(a, b) for a in range(2) for b in range(a)]",
    "for over anything with unpacking": "for i, (a, b) in enumerate(zip(xs, ys)):\n    pass\nfor row in x:\n    pass",
    "f-strings": "print(f'loss {loss.item():.4f} at {step:>3d} {x!r} {w:{width}}')",
    "element and slice assignment": "x[0] = 2\nx[1:, mask] = v\nx.data[0] = 1\nx[0] += 1",
    "augmented attributes": "x.data -= 0.1 * x.grad\nx.grad *= 0\nw.grad.data -= 1",
    "imports of the accepted modules": "import math\nimport torch.nn.functional as F\nfrom torch.autograd.functional import "
                                       "jacobian, hessian\nimport torch.nn as nn\nfrom torch import optim",
}


@pytest.mark.parametrize("source", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepts_tutorial_programs(source):
    assert isinstance(parse_program(source), ast.Module)


def test_dedent_keeps_line_numbers_and_user_columns():
    tree = parse_program(SEED_000)
    assignment = next(n for n in tree.body if isinstance(n, ast.Assign))
    assert (assignment.lineno, assignment.col_offset) == (8, 1)
    assert node_span(assignment.targets[0]) == (8, 2, 1)


def test_positions_are_characters_of_the_users_line():
    tree = parse_program("    s = '求导数'; y = x.sum()")
    second = tree.body[1]
    assert node_span(second) == (1, 16, 11)
    call = second.value
    assert call.col_offset == 19 and call.end_col_offset == 26


def test_multi_line_node_is_underlined_to_the_end_of_its_first_line():
    source = "out = torch.mean(\n    y)"
    call = parse_program(source).body[0].value
    assert node_span(call, source) == (1, 7, 11)
    assert node_span(call) == (1, 7, 1)


# (source, error class, words the message must contain, line, column)
REJECTED = {
    "async def": ("async def f():\n    pass", NotAllowedError, "async functions", 1, 1),
    "metaclass": ("class A(metaclass=M):\n    pass", NotAllowedError, "class keyword 'metaclass='", 1, 9),
    "return outside function": ("return x", ParseError, "'return' outside function", 1, 1),
    "with open": ("with open('f') as f:\n    pass", NotAllowedError, "'with' is only supported for gradient modes", 1, 6),
    "dunder parameter": ("def f(__x):\n    pass", NotAllowedError, "name '__x' is not available", 1, 7),
    "dunder function name": ("def __init__(x):\n    pass", NotAllowedError, "name '__init__' is not available", 1, 1),
    "dunder in a lambda": ("f = lambda: x.__dict__", NotAllowedError, "attribute '__dict__'", 1, 15),
    "dunder in an f-string": ("s = f'{x.__dict__}'", NotAllowedError, "attribute '__dict__'", 1, 10),
    "dunder in a comprehension": ("s = [v.__dict__ for v in x]", NotAllowedError, "attribute '__dict__'", 1, 8),
    "return in a loop of the module": ("for i in range(2):\n    return i", ParseError, "'return' outside function", 2, 5),
    "break in a function in a loop": ("for i in range(2):\n    def f():\n        break", ParseError, "'break' outside loop", 3, 9),
    "await": ("await x", NotAllowedError, "'await' is not supported", 1, 1),
    "walrus": ("if (n := 3) > 2:\n    pass", NotAllowedError, "assignment expressions (':=')", 1, 5),
    "import os": ("import os; z = x.sum()", NotAllowedError, "import of 'os' is refused: it reaches files", 1, 8),
    "import os.path": ("import os.path", NotAllowedError, "import of 'os.path'", 1, 8),
    "import torch.hub": ("import torch, torch.hub", NotAllowedError, "import of 'torch.hub'", 1, 15),
    "from os import": ("from os import system", NotAllowedError, "import of 'os' is refused", 1, 6),
    "relative import": ("from . import x", NotAllowedError, "import of '.' is not supported", 1, 6),
    "star import": ("from torch import *", NotAllowedError, "'from torch import *' is not supported", 1, 19),
    "private import": ("from torch import _C", NotAllowedError, "attribute '_C' is not available", 1, 19),
    "dunder import alias": ("import torch as __builtins__", NotAllowedError, "name '__builtins__' is not available", 1, 8),
    "match": ("match x:\n    case 1:\n        pass", NotAllowedError, "'match' statements", 1, 1),
    "left shift": ("y = x << 2", NotAllowedError, "operator '<<' is not supported", 1, 7),
    "right shift": ("y = (x) >> (2)", NotAllowedError, "operator '>>' is not supported", 1, 9),
    "complex": ("z = 1j", NotAllowedError, "complex numbers are not supported", 1, 5),
    "bytes": ("z = b'x'", NotAllowedError, "bytes literals are not supported", 1, 5),
    "ellipsis outside index": ("z = ...", NotAllowedError, "'...' is only allowed inside an index", 1, 5),
    "dunder attribute": ("x.__dict__", NotAllowedError, "attribute '__dict__' is not available", 1, 3),
    "class bases read": ("x.__class__.__bases__", NotAllowedError, "attribute '__bases__' is not available", 1, 13),
    "private attribute": ("y = x._data", NotAllowedError, "attribute '_data' is not available", 1, 7),
    "saved name off the list": ("y = x.grad_fn._saved_foo", NotAllowedError, "attribute '_saved_foo'", 1, 15),
    "saved name assigned": ("x.grad_fn._saved_self = 1", NotAllowedError, "assignment to attribute '_saved_self'", 1, 1),
    "subclasses payload": ("().__class__.__bases__[0].__subclasses__()", NotAllowedError,
                           "attribute '__bases__' is not available", 1, 14),
    "import payload": ("__import__('os').system('touch /tmp/x')", NotAllowedError,
                       "name '__import__' is not available", 1, 1),
    "builtins": ("b = __builtins__", NotAllowedError, "name '__builtins__' is not available", 1, 5),
    "dunder target": ("__x = 1", NotAllowedError, "name '__x' is not available", 1, 1),
    "private attribute read": ("y = x._grad + 1", NotAllowedError, "attribute '_grad' is not available", 1, 7),
    "break outside loop": ("x = 1\nbreak", ParseError, "'break' outside loop", 2, 1),
    "continue outside loop": ("if x:\n    continue", ParseError, "'continue' outside loop", 2, 5),
    "first offence wins": ("y = x.__dict__ ; f = {1}", NotAllowedError, "attribute '__dict__'", 1, 7),
    "dunder after Chinese text": ("   s = '求导数' + y.__dict__", NotAllowedError, "attribute '__dict__'", 1, 18),
}


@pytest.mark.parametrize("source, kind, words, line, column", REJECTED.values(), ids=REJECTED.keys())
def test_refuses_with_a_message_naming_the_construct(source, kind, words, line, column):
    with pytest.raises(kind) as caught:
        parse_program(source)
    error = caught.value
    assert words in error.message
    assert (error.line, error.column) == (line, column)
    assert error.source == source


def test_exact_messages_and_hints():
    with pytest.raises(NotAllowedError) as caught:
        parse_program("class Net:\n    def __del__(self):\n        pass")
    assert caught.value.message == "defining the special method '__del__' is not supported"
    assert "__init__" in caught.value.hint

    with pytest.raises(NotAllowedError) as caught:
        parse_program("x.__dict__")
    assert caught.value.message == "attribute '__dict__' is not available"
    assert caught.value.hint == "gradcli allows the tensor attributes and methods listed by `gradcli ops`"
    assert caught.value.length == len("__dict__")

    with pytest.raises(NotAllowedError) as caught:
        parse_program("import os")
    assert caught.value.message == "import of 'os' is refused: it reaches files, processes and the environment"
    assert caught.value.hint == "remove the import; docs/language.md (Imports) lists the modules a program may import"
    with pytest.raises(NotAllowedError) as caught:
        parse_program("import requests")
    assert caught.value.message == ("import of 'requests' is not supported: gradcli runs torch, numpy and a list of "
                                    "standard modules as its own, not other packages")
    assert "docs/language.md" in caught.value.hint

    with pytest.raises(NotAllowedError) as caught:
        parse_program("with open('data.txt'):\n    pass")
    assert caught.value.hint == "write 'with torch.no_grad():' (or enable_grad(), set_grad_enabled(flag), inference_mode())"


def test_payloads_are_never_run(tmp_path):
    tmp_x_existed = os.path.exists("/tmp/x")
    with pytest.raises(NotAllowedError):
        parse_program("__import__('os').system('touch /tmp/x')")
    assert tmp_x_existed or not os.path.exists("/tmp/x")
    marker = tmp_path / "x"
    payloads = [f"__import__('os').system('touch {marker}')",
                f"().__class__.__bases__[0].__subclasses__()[0]('touch {marker}')",
                f"import os; os.system('touch {marker}')",
                f"print(f\"{{__import__('os').system('touch {marker}')}}\")"]
    for payload in payloads:
        with pytest.raises(NotAllowedError):
            parse_program(payload)
    assert not marker.exists()


# (source, message, line, column, words in the hint)
SYNTAX_ERRORS = {
    "unclosed bracket": ("z = (x+2", "'(' was never closed", 1, 5, "close the bracket"),
    "unclosed bracket in a pasted block": ("    y = x\n    z = torch.mean(y", "'(' was never closed", 2, 19, "close the bracket"),
    "assignment in a condition": ("if x = 1:\n    pass", "invalid syntax. Maybe you meant '==' or ':=' instead of '='?", 1, 4, "'=='"),
    "missing colon": ("while x < 1\n    x = x * 2", "expected ':'", 1, 12, "':'"),
    "unexpected indent": ("  x = 1\n    y = 2", "unexpected indent", 2, 1, "indent"),
    "unindent": ("if x:\n    y = 1\n  z = 2", "unindent does not match any outer indentation level", 3, 1, "line"),
    "tabs and spaces": ("if x:\n        y = 1\n\tz = 2", "inconsistent use of tabs and spaces in indentation", 3, 1, "tabs"),
    "unmatched bracket": ("y = x)", "unmatched ')'", 1, 6, "no opening bracket"),
    "full-width parentheses": ("y.backward（）", "invalid character '（' (U+FF08)", 1, 11, "type '('"),
    "non-breaking space": ("x = 1\u00a0+ 2", "invalid non-printable character U+00A0", 1, 6, "space"),
    "number times name": ("y = 2x", "invalid decimal literal", 1, 5, "2*x"),
    "python 2 print": ("print x", "Missing parentheses in call to 'print'. Did you mean print(...)?", 1, 1, "print(x)"),
    "unterminated string": ("print('abc)", "unterminated string literal (detected at line 1)", 1, 7, "close the string"),
    "column after Chinese text": ("  y = '求导数' + (x 2)", "invalid syntax. Perhaps you forgot a comma?", 1, 16, None),
    "missing block": ("for i in range(3):\nx = 1", "expected an indented block after 'for' statement on line 1", 2, 1, "indent"),
}


@pytest.mark.parametrize("source, message, line, column, hint", SYNTAX_ERRORS.values(), ids=SYNTAX_ERRORS.keys())
def test_syntax_errors_keep_pythons_message_and_add_a_hint(source, message, line, column, hint):
    with pytest.raises(ParseError) as caught:
        parse_program(source, filename="prog.py")
    error = caught.value
    assert (error.message, error.line, error.column) == (message, line, column)
    assert error.filename == "prog.py" and error.source == source
    if hint is None:
        assert error.hint is None
    else:
        assert hint in error.hint


def test_indentation_errors_underline_the_whole_indentation():
    with pytest.raises(ParseError) as caught:
        parse_program("  x = 1\n      y = 2")
    assert (caught.value.line, caught.value.column, caught.value.length) == (2, 1, 6)


def test_characters_that_are_not_text():
    with pytest.raises(ParseError, match="null character") as caught:
        parse_program("x = 1\ny = 2\x00")
    assert (caught.value.line, caught.value.column) == (2, 6)
    with pytest.raises(ParseError, match="U\\+DCFF"):
        parse_program("x = '\udcff'")  # what a non-UTF-8 byte on the command line becomes


PATHOLOGICAL = {
    "10000 parentheses": "(" * 10000 + ")" * 10000,
    "100000 minus signs": "-" * 100000 + "1",
    "100000 nots": "not " * 100000 + "x",
    "100000 powers": "**".join(["x"] * 100000),
    "long sum": "+".join(["x"] * 100000),
    "long attribute chain": "x" + ".a" * 100000,
    "long call chain": "f" + "()" * 100000,
    "150 minus signs": "y = " + "-" * 150 + "1",
    "deep lists": "[" * 150 + "]" * 150,
    "deep blocks": "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n",
    "deep elif chain": "if x:\n    pass\n" + "elif x:\n    pass\n" * 150,
}


@pytest.mark.parametrize("source", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_nesting_is_a_limit_error(source):
    """How fast: tests/bench/bench_parser.py."""
    with pytest.raises(LimitError, match="nested too deeply"):
        parse_program(source)


def test_exact_nesting_message():
    with pytest.raises(LimitError) as caught:
        parse_program("-" * 100000 + "1")
    assert caught.value.message == "expression nested too deeply (over 100 levels)"


def test_too_long_a_program_is_refused_before_parsing():
    with pytest.raises(LimitError, match="program too long"):
        parse_program("x = 1\n" * 200_000)


def test_too_long_an_integer_is_a_limit_error():
    with pytest.raises(LimitError, match="integer literal too long"):
        parse_program("x = " + "1" * 5000)


def test_long_flat_program_is_accepted():
    tree = parse_program("y = x * 2 + 1\n" * 20_000)
    assert len(tree.body) == 20_000


def test_caret_under_the_span():
    assert caret_lines("y = x & 1", 1, 7) == ["y = x & 1", "      ^"]
    assert caret_lines("a\nx.__class__", 2, 3, 9) == ["x.__class__", "  ^^^^^^^^^"]


def test_caret_counts_tabs_and_wide_characters_as_terminal_cells():
    assert caret_lines("\tx = y & 1", 1, 8) == ["    x = y & 1", "          ^"]
    assert caret_lines("s = '求导' + y", 1, 12) == ["s = '求导' + y", "             ^"]
    assert caret_lines("y.backward（）", 1, 11) == ["y.backward（）", "          ^^"]


def test_caret_shows_invisible_characters_and_clamps_to_the_line():
    assert caret_lines("x = 1\u00a0+ 2", 1, 6) == ["x = 1?+ 2", "     ^"]
    assert caret_lines("z = (x+2", 1, 9) == ["z = (x+2", "        ^"]
    assert caret_lines("abc", 1, 2, 50) == ["abc", " ^^"]
    assert caret_lines("\ufeffabc", 1, 1) == ["abc", "^"]


def test_caret_on_a_missing_line_is_nothing():
    assert caret_lines("x = 1", 2, 1) == []
    assert caret_lines("x = 1", 0, 1) == []


def test_caret_on_a_very_long_line_shows_a_window():
    source = "x = " + "1 + " * 500 + "y.__z"
    shown, carets = caret_lines(source, 1, 2007, 3)
    assert len(shown) < 140 and shown.startswith("...") and "y.__z" in shown
    assert shown[carets.index("^"):carets.index("^") + 3] == "__z"


TOKENS = ["x", "y", "torch", ".", "grad", "__class__", "_x", "(", ")", "[", "]", ",", ":", "=", "==", "+",
          "-", "*", "**", "@", "&", "^", "~", "1", "2.5", "1j", "'s'", "'''求导'''", "if", "else", "while",
          "for", "in", "range", "not", "and", "lambda", "import", "from", "os", "def", "return", "...",
          "None", "\n", "    ", "\t", ";", "#", "求", "（", "\u00a0", "\ufeff", "\r", "\\", "{", "}", "*x"]


def check_outcome(source):
    try:
        tree = parse_program(source)
    except GradcliError as error:
        assert error.message
        assert error.line is None or error.line >= 1
        assert error.column is None or error.column >= 1
        if error.line is not None:
            caret_lines(source, error.line, error.column or 1, error.length)
    else:
        assert isinstance(tree, ast.Module)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_is_a_module_or_a_gradcli_error(source):
    check_outcome(source)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_token_soup_is_a_module_or_a_gradcli_error(source):
    check_outcome(source)


@given(st.lists(st.sampled_from(["x", "y", "1", "+", "*", "-", "(", ")", "[", "]", ",", ":", "=", "\n", "  ",
                                 "a.b", "求", "f(x)"]), max_size=30).map("".join))
def test_accepted_programs_have_positions_inside_the_users_lines(source):
    try:
        tree = parse_program(source)
    except GradcliError:
        return
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) is not None:
            assert 0 <= node.col_offset <= len(lines[node.lineno - 1])
            assert 0 <= node.end_col_offset <= len(lines[node.end_lineno - 1])

