"""Program text in, checked `ast.Module` out; everything outside gradcli's language refused by name.

The user's text only ever reaches `ast.parse`, which builds a tree and runs nothing. The tree is
then walked through dispatch tables of *allowed* node types: a node type missing from a table is
refused with a message naming it, so a construct Python adds later stays refused until someone
decides to allow it (an allowlist, never a blocklist).

Positions in the returned tree are rewritten to what the user typed: `lineno` counts the user's
lines, and `col_offset` / `end_col_offset` are 0-based *character* columns of the user's line (not
UTF-8 byte offsets into the dedented text `ast` saw). Later stages can then point a caret at the
user's text without knowing about dedenting or encodings; `gradcli.source.node_span` gives the (line, column,
length) triple errors carry.
"""
from __future__ import annotations

import ast
import os
import re
import unicodedata
import warnings
from array import array
from bisect import bisect_right
from itertools import accumulate
from typing import Callable

from gradcli.errors import GradcliError, LimitError, NotAllowedError, ParseError
from gradcli.lang import class_syntax, mangling, module_paths
from gradcli.lang import stdlib
from gradcli.source import BOM, position_of, split_lines
from gradcli.source import span as span_of

MAX_SOURCE_CHARS = 1_000_000
MAX_DEPTH = 100

_NOT_TEXT = re.compile(r"[\x00\ud800-\udfff]")  # ast.parse cannot take these; say where they are
_TOO_DEEP = f"expression nested too deeply (over {MAX_DEPTH} levels)"
_BLOCKS_TOO_DEEP = f"blocks nested too deeply (over {MAX_DEPTH} levels)"
_SPLIT_IT = "split it into steps with intermediate variables (t = a + b, then u = t * c)"
_LISTED_BY_OPS = "gradcli allows the tensor attributes and methods listed by `gradcli ops`"
_TORCH_MODULES = frozenset({"torch", "torch.autograd", "torch.autograd.functional", "torch.nn", "torch.nn.functional",
                            "torch.nn.init", "torch.optim", "numpy", "numpy.linalg", "numpy.matlib", "torch.autograd.function",
                            "torch.optim.optimizer", "torch.utils", "torch.utils.data", "torch.nn.utils",
                            "torch.nn.utils.rnn", "torch.nn.utils.clip_grad", "torch.nn.utils.parametrizations",
                            "torch.nn.utils.parametrize", "torch.backends", "torch.backends.mps",
                            "torch.backends.cudnn", "torch.backends.cuda", "torch.version",
                            "torch.utils.checkpoint",
                            "torch.optim.lr_scheduler",
                            "torch.func", "functorch", "torch.autograd.forward_ad", "torch.autograd.graph",
                            "torch.distributions", "torch.testing"})
_DISTRIBUTION_MODULES = frozenset(f"torch.distributions.{name}" for name in (
    "constraints", "kl", "transforms", "constraint_registry", *module_paths.DISTRIBUTION_FILES))
"""The modules PyTorch defines each distribution in (`from torch.distributions.normal import Normal`)."""
_MODULE_PATHS = frozenset({"torch.nn.modules", "torch.nn.parameter", "torch.nn.parallel", "torch.utils.data.dataset",
                           "torch.utils.data.dataloader"} | {f"torch.nn.modules.{f}" for f in module_paths.NN_MODULE_FILES})
"""Where PyTorch defines its classes (`from torch.nn.modules.linear import Linear`): lang/module_paths.py."""
DISTRIBUTED_MODULES = frozenset({"torch.distributed", "torch.multiprocessing", "torch.utils.data.distributed"} | {
    f"torch.distributed.{name}" for name in ("rpc", "fsdp", "tensor", "autograd", "optim", "checkpoint", "nn",
                                             "algorithms", "device_mesh", "pipelining")})
"""torch.distributed's modules (lang/distributed_names.py makes them; the refused ones say why at their use)."""
_IMPORTABLE = _TORCH_MODULES | _DISTRIBUTION_MODULES | _MODULE_PATHS | DISTRIBUTED_MODULES | stdlib.NAMES
_IMPORTS_HINT = "remove the import; docs/language.md (Imports) lists the modules a program may import"
_GRAD_MODES = frozenset({"no_grad", "enable_grad", "set_grad_enabled", "inference_mode"})
_AUTOGRAD_CONTEXTS = frozenset({"saved_tensors_hooks", "save_on_cpu", "dual_level", "detect_anomaly",
                                "set_detect_anomaly", "device"})  # graph hooks, forward AD, anomaly detection,
# torch.cuda.device (refused on entry, as PyTorch's CPU build refuses it)
_WITH_HINT = "write 'with torch.no_grad():' (or enable_grad(), set_grad_enabled(flag), inference_mode())"
ASSIGNABLE_ATTRIBUTES = frozenset({"requires_grad", "data", "grad"})
ASSIGNABLE_HINT = ("only NAME.requires_grad, NAME.data and NAME.grad can be assigned, "
                    "as in x.requires_grad = True")
_CONSTANT_TYPES = (int, float, bool, str, type(None))
# PyTorch's documented saved tensors on a node: the only names starting with '_' a program may read
SAVED_ATTRIBUTES = frozenset({"_saved_self", "_saved_other", "_saved_result", "_saved_exponent", "_saved_mat2",
                              "_saved_tensor", "_saved_alpha", "_saved_dim", "_saved_keepdim"})
# The one dunder a program may read as a name: the module's `__name__` ("__main__"); a string, reading it
# runs nothing.
READABLE_DUNDER = "__name__"
# The dunders a program may read as attributes: the name-only class view (`obj.__class__` is `type(obj)`)
# and a type's or function's name, module and docstring; all strings or that view, none runs anything.
READABLE_ATTRIBUTES = frozenset({"__name__", "__class__", "__qualname__", "__module__", "__doc__"})
MODULE_DUNDERS = frozenset({"__version__"})
"""Read-only module attributes tutorials print (`torch.__version__`); only the namespaces that list them answer."""

_BINARY_OPERATORS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod,
                               ast.Pow, ast.MatMult, ast.BitOr, ast.BitAnd, ast.BitXor})
# `| & ^` are Python's set and dict operators; on numbers and tensors `lang.sets` refuses them when run.
_UNARY_OPERATORS = frozenset({ast.USub, ast.UAdd, ast.Not, ast.Invert})
# `~` negates a bool tensor (a mask); on anything else `engine.logical.invert` refuses it when run.
_COMPARISONS = frozenset({ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In,
                          ast.NotIn})
_BOOLEAN_OPERATORS = frozenset({ast.And, ast.Or})

# Only to *name* an operator in a refusal; whether it is allowed is decided by the sets above.
_OPERATOR_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.LShift: "<<", ast.RShift: ">>", ast.Invert: "~", ast.In: "in", ast.NotIn: "not in",
}
_WORD_OPERATORS = {"in": re.compile(r"\bin\b"), "not in": re.compile(r"\bnot\s+in\b")}
_OPERATOR_HINTS: dict[str, str] = {}

_REFUSALS: dict[type[ast.AST], tuple[str, str | None]] = {
    ast.AsyncFunctionDef: ("async functions are not supported", None),
    ast.AsyncFor: ("'async for' loops are not supported", None),
    ast.AsyncWith: ("'async with' statements are not supported", None),
    ast.Match: ("'match' statements are not supported", "use if / elif / else"),
    ast.TryStar: ("'try' with 'except*' is not supported", "write 'except TYPE:'"),
    ast.NamedExpr: ("assignment expressions (':=') are not supported", "assign on a line of its own"),
    ast.Await: ("'await' is not supported", None),
}

# Python's message is kept; these add how to fix it.
_SYNTAX_HINTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"was never closed"), "close the bracket opened here"),
    (re.compile(r"^unmatched '"), "this closing bracket has no opening bracket before it"),
    (re.compile(r"does not match opening parenthesis"), "close each bracket with its partner: ( ), [ ]"),
    (re.compile(r"instead of '='"), "to compare two values write '=='; a single '=' assigns"),
    (re.compile(r"^expected ':'"), "end the if / elif / else / while / for line with ':'"),
    (re.compile(r"^expected an indented block"), "indent the statements of the block, e.g. by 4 spaces"),
    (re.compile(r"^unexpected indent"),
     "indent a line only inside an if / while / for block (a pasted program may be indented as a "
     "whole, but then every line by the same amount)"),
    (re.compile(r"^unindent does not match"), "line this statement up with the block it belongs to"),
    (re.compile(r"inconsistent use of tabs and spaces"), "indent with spaces only, or with tabs only"),
    (re.compile(r"^unterminated (triple-quoted )?string"), "close the string with the quotes it starts with"),
    (re.compile(r"^Missing parentheses in call to 'print'"), "gradcli reads Python 3: print(x)"),
]
_WHOLE_INDENTATION = ("unexpected indent", "unindent does not match any outer indentation level")
_INVALID_CHARACTER = re.compile(r"^invalid (?:non-printable )?character .*U\+([0-9A-F]{4,6})")
_LOOKALIKES = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u3002": ".",
               "\u3001": ",", "\u00d7": "*", "\u00f7": "/", "\u2212": "-", "\u2013": "-", "\u2014": "-"}


def parse_program(source: str, filename: str = "<program>") -> ast.Module:
    """Parse and check a gradcli program; raise a `GradcliError` for anything else, never evaluate it."""
    if len(source) > MAX_SOURCE_CHARS:
        raise LimitError(f"program too long ({len(source):,} characters; the limit is {MAX_SOURCE_CHARS:,})",
                         filename=filename)
    source = source.removeprefix(BOM)
    bad = _NOT_TEXT.search(source)
    if bad:
        line, column = position_of(source, bad.start())
        what = "a null character (U+0000)" if bad.group() == "\x00" else \
            f"an invalid character U+{ord(bad.group()):04X}"
        raise ParseError(f"the program contains {what}", "delete it; programs must be UTF-8 text",
                         line=line, column=column, source=source, filename=filename)
    text = _Text(source)
    try:
        with warnings.catch_warnings():
            # Python would print e.g. "invalid escape sequence" warnings straight to the user's terminal.
            warnings.simplefilter("ignore")
            tree = ast.parse(text.code, filename, mode="exec")
    except SyntaxError as error:
        raise _from_syntax_error(error, text, source, filename) from None
    except (RecursionError, MemoryError):
        # CPython's parser runs out of stack on deep nesting ("-" * 100000 + "1") before any check of ours.
        raise LimitError(_TOO_DEEP, _SPLIT_IT, source=source, filename=filename) from None
    if text.code != source or not source.isascii():  # else ast's positions already are the user's
        for node in ast.walk(tree):  # iterative, so safe on any tree ast.parse managed to build
            text.relocate(node)
    mangling.mangle(tree)
    _Checker(text.user_lines, source, filename, program_private_names(tree)).block(tree.body, 1)
    return tree


def program_private_names(tree: ast.Module) -> frozenset[str]:
    """The `_names` a program gives its own objects: attributes it assigns (`out._backward = f`,
    micrograd's `self._prev`) and the methods and class attributes its classes define.

    Only these may be read as attributes; any other `_name` (`random._os`, `x._data`) is refused
    before the program runs, as every dunder is. Whether the object holding one may have it (a
    program's plain class, never a gradcli object) is decided when it runs (`classes`).
    """
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(item.name)
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    names.update(t.id for t in (item.targets if isinstance(item, ast.Assign) else [item.target])
                                 if isinstance(t, ast.Name))
    return frozenset(name for name in names if class_syntax.is_private(name) and name not in SAVED_ATTRIBUTES)


def _dedent(lines: list[str]) -> tuple[list[str], list[int]]:
    """Remove the indentation a blog paste gives every line; return the lines and what each lost.

    Unlike textwrap.dedent, blank and comment-only lines do not count towards the common
    indentation (Python ignores their indentation too), so a stray less-indented comment or a line
    of a few spaces cannot stop the dedent. Every line is kept, so line numbers do not change.
    """
    def is_code(line: str) -> bool:
        stripped = line.lstrip()
        return bool(stripped) and not stripped.startswith("#")

    indents = [line[:len(line) - len(line.lstrip(" \t"))] for line in lines if is_code(line)]
    common = len(os.path.commonprefix(indents)) if indents else 0
    shifts = [common if is_code(line) else len(line) - len(line.lstrip()) for line in lines]
    return [line[cut:] for line, cut in zip(lines, shifts)], shifts


class _Text:
    """The user's lines, the dedented code `ast` parses, and the map between their positions."""

    def __init__(self, source: str) -> None:
        self.user_lines = split_lines(source)
        self.code_lines, self.shifts = _dedent(self.user_lines)
        self.code = "\n".join(self.code_lines)
        self._byte_ends: dict[int, array] = {}

    def shift(self, lineno: int) -> int:
        """Characters the dedent removed from the start of a (1-based) line."""
        return self.shifts[lineno - 1] if 1 <= lineno <= len(self.shifts) else 0

    def column(self, lineno: int, byte_offset: int) -> int:
        """0-based character column in the user's line of an `ast` byte offset into the code line."""
        line = self.code_lines[lineno - 1]
        if line.isascii():
            return byte_offset + self.shift(lineno)
        ends = self._byte_ends.get(lineno)
        if ends is None:
            ends = self._byte_ends[lineno] = array("q", accumulate(len(ch.encode()) for ch in line))
        return bisect_right(ends, byte_offset) + self.shift(lineno)

    def relocate(self, node: ast.AST) -> None:
        if getattr(node, "lineno", None) is None:
            return
        node.col_offset = self.column(node.lineno, node.col_offset)
        if node.end_lineno is not None and node.end_col_offset is not None:
            node.end_col_offset = self.column(node.end_lineno, node.end_col_offset)


def _from_syntax_error(error: SyntaxError, text: _Text, source: str, filename: str) -> GradcliError:
    message, line, column, length = error.msg, error.lineno, None, 1
    if line is not None:
        offset = max(error.offset or 1, 1)  # 1-based characters of the code line (0 or None: unknown)
        column = offset + text.shift(line)
        if error.end_lineno == line and error.end_offset and error.end_offset > offset:
            length = error.end_offset - offset
        whole_indentation = isinstance(error, TabError) or message in _WHOLE_INDENTATION
        if whole_indentation and 1 <= line <= len(text.user_lines):
            # Python points at the indentation's last character; underline all of it instead.
            user_line = text.user_lines[line - 1]
            column, length = 1, len(user_line) - len(user_line.lstrip(" \t\x0c"))
    kind: type[GradcliError] = ParseError
    hint = _syntax_hint(message, error.text or "")
    if message == "too many nested parentheses":
        kind, message, hint = LimitError, _TOO_DEEP, _SPLIT_IT
    elif message == "too many levels of indentation":
        kind, message = LimitError, _BLOCKS_TOO_DEEP
    elif digits := re.match(r"Exceeds the limit \((\d+) digits\)", message):
        kind, message = LimitError, f"integer literal too long (over {digits.group(1)} digits)"
        hint = "write it as a float: 1e30"
    return kind(message, hint, line=line, column=column, length=length, source=source, filename=filename)


def _syntax_hint(message: str, line: str) -> str | None:
    for pattern, hint in _SYNTAX_HINTS:
        if pattern.search(message):
            return hint
    if character := _INVALID_CHARACTER.match(message):
        return _character_hint(chr(int(character.group(1), 16)))
    if message == "invalid decimal literal" and re.search(r"\d[^\W\d_]", line):
        return "write '*' between a number and a name: 2*x, not 2x"
    return None


def _character_hint(ch: str) -> str | None:
    if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zs"):
        return (f"replace the invisible character U+{ord(ch):04X} (often pasted from a web page) "
                "with a space, or delete it")
    plain = _LOOKALIKES.get(ch) or unicodedata.normalize("NFKC", ch)
    if len(plain) == 1 and plain.isascii() and plain.isprintable():
        return f"'{ch}' only looks like '{plain}'; type '{plain}' instead"
    return None


def _in_words(type_name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", type_name).lower()


def _import_refusal(module: str) -> str:
    """One line: the module, why it cannot be imported; what to do is `_IMPORTS_HINT`."""
    reason = stdlib.REFUSED.get(module.split(".")[0])
    if reason is not None:
        return f"import of '{module}' is refused: {reason}"
    return (f"import of '{module}' is not supported: gradcli runs torch, numpy and a list of standard modules as "
            "its own, not other packages")


class _Checker:
    """Walks a parsed program, accepting only node types found in `_STATEMENTS` / `_EXPRESSIONS`.

    `depth` counts the statements and expressions enclosing a node, so nesting is bounded here,
    before an interpreter that recurses over the same tree could run out of stack.
    """

    def __init__(self, user_lines: list[str], source: str, filename: str, private: frozenset[str]) -> None:
        self.user_lines = user_lines
        self.private = private
        self.source = source
        self.filename = filename
        self.loops = 0
        self.functions = 0
        self.lambdas = 0
        self.statement_yields: set[int] = set()  # the yields that are a statement's whole value (id of the node)

    def refuse(self, node: ast.AST, message: str, hint: str | None = None, *,
               kind: type[GradcliError] = NotAllowedError,
               span: tuple[int, int, int] | None = None) -> GradcliError:
        line, column, length = span or span_of(node, self.user_lines)
        return kind(message, hint, line=line, column=column, length=length, source=self.source,
                    filename=self.filename)

    def bound(self, node: ast.AST, depth: int) -> None:
        if depth > MAX_DEPTH:
            if isinstance(node, ast.stmt):
                raise self.refuse(node, _BLOCKS_TOO_DEEP, kind=LimitError)
            raise self.refuse(node, _TOO_DEEP, _SPLIT_IT, kind=LimitError)

    def block(self, body: list[ast.stmt], depth: int) -> None:
        for node in body:
            self.statement(node, depth)

    def statement(self, node: ast.stmt, depth: int) -> None:
        self.bound(node, depth)
        check = _STATEMENTS.get(type(node))
        if check is None:
            raise self.unsupported(node)
        check(self, node, depth + 1)

    def expression(self, node: ast.expr, depth: int) -> None:
        self.bound(node, depth)
        check = _EXPRESSIONS.get(type(node))
        if check is None:
            raise self.unsupported(node)
        check(self, node, depth + 1)

    def unsupported(self, node: ast.AST) -> GradcliError:
        message, hint = _REFUSALS.get(type(node)) or (
            f"'{_in_words(type(node).__name__)}' is not supported in gradcli programs", None)
        return self.refuse(node, message, hint)

    def segment(self, node: ast.AST) -> str | None:
        """The user's text of a one-line node, to quote it back in a hint."""
        if node.end_lineno != node.lineno:
            return None
        return self.user_lines[node.lineno - 1][node.col_offset:node.end_col_offset]

    def find(self, pattern: re.Pattern[str], before: ast.AST, after: ast.AST) -> tuple[int, int, int] | None:
        """Span of the operator between two operands; only brackets, comments and it can be there."""
        first, last = before.end_lineno, after.lineno
        for lineno in range(first, last + 1):
            text = self.user_lines[lineno - 1]
            low = before.end_col_offset if lineno == first else 0
            high = after.col_offset if lineno == last else len(text)
            found = pattern.search(text[low:high].split("#", 1)[0])
            if found:
                return lineno, low + found.start() + 1, found.end() - found.start()
        return None

    def operator(self, node: ast.AST, op: ast.AST, allowed: frozenset, before: ast.AST | None,
                 after: ast.AST, suffix: str = "") -> None:
        if type(op) in allowed:
            return
        symbol = _OPERATOR_SYMBOLS.get(type(op)) or _in_words(type(op).__name__)
        if before is None:  # a unary operator starts its node
            span = (node.lineno, node.col_offset + 1, len(symbol))
        else:
            pattern = _WORD_OPERATORS.get(symbol) or re.compile(re.escape(symbol + suffix))
            span = self.find(pattern, before, after)
        raise self.refuse(node, f"operator '{symbol}{suffix}' is not supported", _OPERATOR_HINTS.get(symbol),
                          span=span)

    def identifier(self, name: str, node: ast.AST, reading: bool = False) -> None:
        if name.startswith("__") and not (reading and name == READABLE_DUNDER):
            raise self.refuse(node, f"name '{name}' is not available", _LISTED_BY_OPS)

    def attribute_name(self, node: ast.Attribute) -> None:
        if not node.attr.startswith("_") or node.attr in SAVED_ATTRIBUTES or node.attr in self.private or \
                (node.attr in READABLE_ATTRIBUTES or node.attr in MODULE_DUNDERS) and isinstance(node.ctx, ast.Load) or \
                class_syntax.through_super(node):
            return
        span = None
        start = node.end_col_offset - len(node.attr)
        if self.user_lines[node.end_lineno - 1][start:node.end_col_offset] == node.attr:
            span = (node.end_lineno, start + 1, len(node.attr))
        hint = "a class shows its __name__, __qualname__, __module__ and __doc__" \
            if node.attr in ("__bases__", "__mro__", "__subclasses__") else _LISTED_BY_OPS
        raise self.refuse(node, f"attribute '{node.attr}' is not available", hint, span=span)

    # statements

    def assign(self, node: ast.Assign, depth: int) -> None:
        for target in node.targets:
            self.target(target, depth)
        self.statement_yield(node.value)
        self.expression(node.value, depth)

    def statement_yield(self, value: ast.expr) -> None:
        """`yield v`, `x = yield v`, `yield from g`: the places a generator's body can stop (lang.resumable)."""
        if isinstance(value, (ast.Yield, ast.YieldFrom)):
            self.statement_yields.add(id(value))

    def target(self, node: ast.expr, depth: int, unpacking: bool = False) -> None:
        self.bound(node, depth)
        if isinstance(node, ast.Name):
            self.identifier(node.id, node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            if sum(isinstance(e, ast.Starred) for e in node.elts) > 1:
                raise self.refuse(node, "multiple starred expressions in assignment", kind=ParseError)
            for element in node.elts:
                self.target(element, depth + 1, unpacking=True)
        elif isinstance(node, ast.Attribute):
            self.expression(node.value, depth + 1)
            self.attribute_name(node)
            if node.attr.startswith("_") and node.attr not in self.private:
                raise self.refuse(node, f"assignment to attribute '{node.attr}' is not supported", ASSIGNABLE_HINT)
        elif isinstance(node, ast.Subscript):
            self.subscript(node, depth + 1)
        elif isinstance(node, ast.Starred) and unpacking:
            self.target(node.value, depth + 1, unpacking=True)
        else:
            raise self.refuse(node, f"assignment to '{_in_words(type(node).__name__)}' is not supported")

    def aug_assign(self, node: ast.AugAssign, depth: int) -> None:
        if isinstance(node.target, (ast.Tuple, ast.List)):
            raise self.refuse(node.target, "an augmented assignment updates one target, not a tuple")
        self.target(node.target, depth)
        self.operator(node, node.op, _BINARY_OPERATORS, node.target, node.value, suffix="=")
        self.expression(node.value, depth)

    def expression_statement(self, node: ast.Expr, depth: int) -> None:
        self.statement_yield(node.value)
        self.expression(node.value, depth)

    def if_(self, node: ast.If, depth: int) -> None:
        self.expression(node.test, depth)
        self.block(node.body, depth)
        self.block(node.orelse, depth)

    def while_(self, node: ast.While, depth: int) -> None:
        self.expression(node.test, depth)
        self.loop_body(node, depth)

    def for_(self, node: ast.For, depth: int) -> None:
        self.target(node.target, depth, unpacking=True)
        self.expression(node.iter, depth)
        self.loop_body(node, depth)

    def class_def(self, node: ast.ClassDef, depth: int) -> None:
        """What a class may say is decided by `class_syntax.refusal`; its methods are checked as functions."""
        refused = class_syntax.refusal(node)
        if refused is not None:
            where, message, hint = refused
            raise self.refuse(where, message, hint)
        for decorator in node.decorator_list:
            self.expression(decorator, depth)
        for base in node.bases:
            self.expression(base, depth)
        defined: set[str] = set()
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef):
                self.function_def(statement, depth, method=True)
                defined.add(statement.name)
            elif not class_syntax.alias(statement, defined):
                self.statement(statement, depth)

    def function_def(self, node: ast.FunctionDef, depth: int, method: bool = False) -> None:
        for decorator in node.decorator_list:
            self.expression(decorator, depth)
        if not method:
            self.identifier(node.name, node)
        self.arguments(node.args, node, depth)
        loops, lambdas, self.loops, self.lambdas = self.loops, self.lambdas, 0, 0
        self.functions += 1
        self.block(node.body, depth)
        self.functions -= 1
        self.loops, self.lambdas = loops, lambdas

    def arguments(self, args: ast.arguments, node: ast.AST, depth: int) -> None:
        """Parameters are names with optional defaults; annotations are never evaluated, so never checked."""
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, *([args.vararg] if args.vararg else []),
                    *([args.kwarg] if args.kwarg else [])]:
            self.identifier(arg.arg, arg)
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.expression(default, depth)

    def return_(self, node: ast.Return, depth: int) -> None:
        if not self.functions:
            raise self.refuse(node, "'return' outside function", kind=ParseError)
        if node.value is not None:
            self.expression(node.value, depth)

    def with_(self, node: ast.With, depth: int) -> None:
        for item in node.items:
            call = item.context_expr
            func = call.func if isinstance(call, ast.Call) else call
            named = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if named not in _GRAD_MODES and named not in _AUTOGRAD_CONTEXTS:
                raise self.refuse(call, "'with' is only supported for gradient modes", _WITH_HINT)
            self.expression(call, depth)
            if item.optional_vars is not None:
                self.target(item.optional_vars, depth, unpacking=True)
        self.block(node.body, depth)

    def loop_body(self, node: ast.For | ast.While, depth: int) -> None:
        self.loops += 1
        self.block(node.body, depth)
        self.loops -= 1
        self.block(node.orelse, depth)  # `else`: runs when the loop ends without `break` (outside the loop)

    def assert_(self, node: ast.Assert, depth: int) -> None:
        self.expression(node.test, depth)
        if node.msg is not None:
            self.expression(node.msg, depth)

    def ann_assign(self, node: ast.AnnAssign, depth: int) -> None:
        """`x: T = v`: the annotation is never checked, since it is never evaluated (it cannot run code)."""
        if not isinstance(node.target, (ast.Name, ast.Subscript)):
            raise self.refuse(node.target, "an annotated assignment names one variable or item",
                              "write 'x: T = value'")
        self.target(node.target, depth)
        if node.value is not None:
            self.expression(node.value, depth)

    def try_(self, node: ast.Try, depth: int) -> None:
        self.block(node.body, depth)
        for handler in node.handlers:
            self.bound(handler, depth)
            if handler.type is not None:
                self.expression(handler.type, depth + 1)
            if handler.name is not None:
                self.identifier(handler.name, handler)
            self.block(handler.body, depth + 1)
        self.block(node.orelse, depth)
        self.block(node.finalbody, depth)

    def raise_(self, node: ast.Raise, depth: int) -> None:
        for part in (node.exc, node.cause):
            if part is not None:
                self.expression(part, depth)

    def declaration(self, node: ast.Global | ast.Nonlocal, depth: int) -> None:
        if isinstance(node, ast.Nonlocal) and not self.functions:
            raise self.refuse(node, "nonlocal declaration not allowed at module level", kind=ParseError)
        for name in node.names:
            self.identifier(name, node)

    def delete(self, node: ast.Delete, depth: int) -> None:
        for target in node.targets:
            self.bound(target, depth)
            if isinstance(target, ast.Name):
                self.identifier(target.id, target)
            elif isinstance(target, ast.Subscript):
                self.subscript(target, depth + 1)
            elif isinstance(target, (ast.Tuple, ast.List)):
                self.delete(ast.Delete(targets=target.elts), depth + 1)
            elif isinstance(target, ast.Attribute):
                self.expression(target.value, depth + 1)
                self.attribute_name(target)
            else:
                raise self.refuse(target, f"'del' of '{_in_words(type(target).__name__)}' is not supported",
                                  "del removes names and items: del x, del d[key]")

    def pass_(self, node: ast.Pass, depth: int) -> None:
        """Nothing to check: `pass` has no parts."""

    def jump(self, node: ast.Break | ast.Continue, depth: int) -> None:
        if not self.loops:
            word = "break" if isinstance(node, ast.Break) else "continue"
            raise self.refuse(node, f"'{word}' outside loop", kind=ParseError)

    def import_(self, node: ast.Import, depth: int) -> None:
        for alias in node.names:
            if alias.name not in _IMPORTABLE:
                raise self.refuse(alias, _import_refusal(alias.name), _IMPORTS_HINT)
            if alias.asname:
                self.identifier(alias.asname, alias)

    def import_from(self, node: ast.ImportFrom, depth: int) -> None:
        module = "." * node.level + (node.module or "")
        if module not in _IMPORTABLE:
            written = re.search(r"\bfrom\s+([.\w]+)", self.user_lines[node.lineno - 1][node.col_offset:])
            span = None
            if written and written.group(1) == module:
                span = (node.lineno, node.col_offset + written.start(1) + 1, len(module))
            raise self.refuse(node, _import_refusal(module), _IMPORTS_HINT, span=span)
        for alias in node.names:
            if alias.name == "*":
                raise self.refuse(alias, f"'from {module} import *' is not supported",
                                  f"name what you import: from {module} import NAME")
            if alias.name.startswith("_"):
                raise self.refuse(alias, f"attribute '{alias.name}' is not available", _LISTED_BY_OPS)
            if alias.asname:
                self.identifier(alias.asname, alias)

    # expressions

    def constant(self, node: ast.Constant, depth: int) -> None:
        if type(node.value) in _CONSTANT_TYPES:
            return
        message = _CONSTANT_REFUSALS.get(type(node.value)) or \
            f"constants of type '{type(node.value).__name__}' are not supported"
        raise self.refuse(node, message)

    def name(self, node: ast.Name, depth: int) -> None:
        self.identifier(node.id, node, reading=isinstance(node.ctx, ast.Load))

    def sequence(self, node: ast.List | ast.Tuple | ast.Set, depth: int) -> None:
        for element in node.elts:
            if isinstance(element, ast.Starred):
                self.bound(element, depth)
                self.expression(element.value, depth + 1)
            else:
                self.expression(element, depth)

    def dict_(self, node: ast.Dict, depth: int) -> None:
        for key, value in zip(node.keys, node.values):
            if key is not None:  # None: `**other`
                self.expression(key, depth)
            self.expression(value, depth)

    def yield_(self, node: ast.Yield | ast.YieldFrom, depth: int) -> None:
        word = "yield" if isinstance(node, ast.Yield) else "yield from"
        if not self.functions or self.lambdas:
            raise self.refuse(node, f"'{word}' outside function", kind=ParseError)
        if id(node) not in self.statement_yields:
            raise self.refuse(node, f"'{word}' inside an expression is not supported",
                              f"make it a statement of its own: '{word} value' or 'x = {word} value'")
        if node.value is not None:
            self.expression(node.value, depth)

    def unary(self, node: ast.UnaryOp, depth: int) -> None:
        self.operator(node, node.op, _UNARY_OPERATORS, None, node.operand)
        self.expression(node.operand, depth)

    def binary(self, node: ast.BinOp, depth: int) -> None:
        self.expression(node.left, depth)
        self.operator(node, node.op, _BINARY_OPERATORS, node.left, node.right)
        self.expression(node.right, depth)

    def boolean(self, node: ast.BoolOp, depth: int) -> None:
        for before, value in zip([None, *node.values], node.values):
            if before is not None:
                self.operator(node, node.op, _BOOLEAN_OPERATORS, before, value)
            self.expression(value, depth)

    def compare(self, node: ast.Compare, depth: int) -> None:
        self.expression(node.left, depth)
        for before, op, value in zip([node.left, *node.comparators], node.ops, node.comparators):
            self.operator(node, op, _COMPARISONS, before, value)
            self.expression(value, depth)

    def if_expression(self, node: ast.IfExp, depth: int) -> None:
        for part in (node.body, node.test, node.orelse):  # in the order they are written
            self.expression(part, depth)

    def subscript(self, node: ast.Subscript, depth: int) -> None:
        self.expression(node.value, depth)
        if isinstance(node.slice, ast.Tuple):
            self.bound(node.slice, depth)
            for item in node.slice.elts:
                self.index(item, depth + 1)
        else:
            self.index(node.slice, depth)

    def index(self, node: ast.expr, depth: int) -> None:
        if isinstance(node, ast.Slice):
            self.bound(node, depth)
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    self.expression(part, depth + 1)
        elif isinstance(node, ast.Constant) and node.value is Ellipsis:
            self.bound(node, depth)
        else:
            self.expression(node, depth)

    def call(self, node: ast.Call, depth: int) -> None:
        self.expression(node.func, depth)
        for argument in sorted([*node.args, *node.keywords], key=lambda a: (a.lineno, a.col_offset)):
            if isinstance(argument, ast.Starred):
                self.expression(argument.value, depth + 1)
            elif isinstance(argument, ast.keyword):
                self.expression(argument.value, depth)
            else:
                self.expression(argument, depth)

    def lambda_(self, node: ast.Lambda, depth: int) -> None:
        self.arguments(node.args, node, depth)
        self.functions += 1
        self.lambdas += 1
        self.expression(node.body, depth)
        self.lambdas -= 1
        self.functions -= 1

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                      depth: int) -> None:
        for generator in node.generators:
            if generator.is_async:
                raise self.refuse(node, "'async for' in a comprehension is not supported")
            self.target(generator.target, depth, unpacking=True)
            self.expression(generator.iter, depth)
            for condition in generator.ifs:
                self.expression(condition, depth)
        if isinstance(node, ast.DictComp):
            self.expression(node.key, depth)
            self.expression(node.value, depth)
        else:
            self.expression(node.elt, depth)

    def f_string(self, node: ast.JoinedStr, depth: int) -> None:
        for part in node.values:
            self.bound(part, depth)
            if isinstance(part, ast.FormattedValue):
                self.expression(part.value, depth + 1)
                if part.format_spec is not None:
                    self.f_string(part.format_spec, depth + 1)
            else:
                self.constant(part, depth + 1)

    def attribute(self, node: ast.Attribute, depth: int) -> None:
        self.expression(node.value, depth)
        self.attribute_name(node)


_CONSTANT_REFUSALS: dict[type, str] = {
    complex: "complex numbers are not supported",
    bytes: "bytes literals are not supported",
    type(Ellipsis): "'...' is only allowed inside an index, as in x[..., 0]",
}

_Check = Callable[[_Checker, ast.AST, int], None]

_STATEMENTS: dict[type[ast.AST], _Check] = {
    ast.Assign: _Checker.assign,
    ast.AugAssign: _Checker.aug_assign,
    ast.Expr: _Checker.expression_statement,
    ast.If: _Checker.if_,
    ast.While: _Checker.while_,
    ast.For: _Checker.for_,
    ast.Assert: _Checker.assert_,
    ast.Pass: _Checker.pass_,
    ast.Break: _Checker.jump,
    ast.Continue: _Checker.jump,
    ast.Import: _Checker.import_,
    ast.ImportFrom: _Checker.import_from,
    ast.FunctionDef: _Checker.function_def,
    ast.ClassDef: _Checker.class_def,
    ast.Return: _Checker.return_,
    ast.With: _Checker.with_,
    ast.AnnAssign: _Checker.ann_assign,
    ast.Try: _Checker.try_,
    ast.Raise: _Checker.raise_,
    ast.Global: _Checker.declaration,
    ast.Nonlocal: _Checker.declaration,
    ast.Delete: _Checker.delete,
}

_EXPRESSIONS: dict[type[ast.AST], _Check] = {
    ast.Constant: _Checker.constant,
    ast.Name: _Checker.name,
    ast.List: _Checker.sequence,
    ast.Tuple: _Checker.sequence,
    ast.UnaryOp: _Checker.unary,
    ast.BinOp: _Checker.binary,
    ast.BoolOp: _Checker.boolean,
    ast.Compare: _Checker.compare,
    ast.IfExp: _Checker.if_expression,
    ast.Subscript: _Checker.subscript,
    ast.Call: _Checker.call,
    ast.Attribute: _Checker.attribute,
    ast.Lambda: _Checker.lambda_,
    ast.ListComp: _Checker.comprehension,
    ast.GeneratorExp: _Checker.comprehension,
    ast.JoinedStr: _Checker.f_string,
    ast.Set: _Checker.sequence,
    ast.Dict: _Checker.dict_,
    ast.SetComp: _Checker.comprehension,
    ast.DictComp: _Checker.comprehension,
    ast.Yield: _Checker.yield_, ast.YieldFrom: _Checker.yield_,
}
