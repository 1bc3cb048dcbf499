"""What a class definition may say, decided on the tree before anything runs (the parser asks here).

A class is an allowlist too: its body holds methods, class attributes and a docstring; the special
methods it may define are listed by name (`SPECIAL_METHODS`); a base list is plain names or dotted
names, never a call or a keyword (`metaclass=` would let a program run code at class creation).
Every other dunder a program could define changes how Python itself looks attributes up or
destroys objects (`__getattribute__`, `__del__`, descriptors), so each is refused by name.
"""
from __future__ import annotations

import ast

SPECIAL_METHODS = frozenset({
    "__init__", "__call__", "__getitem__", "__setitem__", "__len__", "__iter__", "__next__", "__repr__", "__str__",
    "__eq__", "__contains__", "__enter__", "__exit__",
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__matmul__", "__rmatmul__", "__pow__", "__rpow__", "__neg__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__",
    "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__pos__",
})
"""The special methods a program's class may define (its other dunders are refused by name)."""

_SPECIAL_HINT = ("a class may define __init__, __call__, __repr__, __str__, __len__, __getitem__, __setitem__, "
                 "__iter__, __next__, __eq__, __ne__, __lt__, __le__, __gt__, __ge__, __bool__, __contains__, __enter__, "
                 "__exit__, the arithmetic operators (with their reflected forms), __neg__, __pos__ and ordinary "
                 "methods")
_BODY_HINT = "a class body holds methods (def), class attributes (NAME = value) and a docstring"


def is_private(name: str) -> bool:
    """A single-underscore name (`_prev`), which a program's plain objects may hold; never a dunder."""
    return name.startswith("_") and not name.startswith("__") and not name.startswith("_gradcli")


def refusal(node: ast.ClassDef) -> tuple[ast.AST, str, str | None] | None:
    """Where and why a class definition is refused (the node to put the caret under), or None."""
    for keyword in node.keywords:
        what = f"'{keyword.arg}='" if keyword.arg else "'**' in a class's bases"
        return keyword, f"class keyword {what} is not supported", \
            "metaclasses and class keywords change how Python builds the class; write class A(Base):"
    for base in node.bases:
        if not _dotted(base):
            return base, "a class's base must be a name such as nn.Module or a class of the program", None
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef):
            name = statement.name
            if name.startswith("__") and name not in SPECIAL_METHODS:
                return statement, f"defining the special method '{name}' is not supported", _SPECIAL_HINT
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if not isinstance(target, ast.Name):
                    return target, "a class attribute is assigned to a plain name", _BODY_HINT
                if target.id == "__slots__":
                    return target, "'__slots__' is not supported", "leave it out: instances keep their attributes"
        elif isinstance(statement, ast.AnnAssign):  # a field of a dataclass: `lr: float = 0.1`
            if not isinstance(statement.target, ast.Name):
                return statement.target, "a class attribute is assigned to a plain name", _BODY_HINT
        elif not (isinstance(statement, ast.Pass) or isinstance(statement, ast.Expr) and
                  isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
            return statement, f"'{type(statement).__name__}' is not allowed in a class body", _BODY_HINT
    return None


def alias(statement: ast.stmt, defined: set[str]) -> bool:
    """`__rmul__ = __mul__`: a listed special method named after a method the body defined above it."""
    return isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name) and \
        statement.value.id in defined and \
        all(isinstance(t, ast.Name) and t.id in SPECIAL_METHODS for t in statement.targets)


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def through_super(node: ast.Attribute) -> bool:
    """`super().__init__` (and a listed special method read through super()): the one dunder read allowed."""
    value = node.value
    return node.attr in SPECIAL_METHODS and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
        value.func.id == "super"
