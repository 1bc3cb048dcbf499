"""Python's private-name mangling, done on the tree before the parser checks it.

CPython's compiler rewrites `self.__hidden` written inside `class Net` to `self._Net__hidden`
(and so every `__name` there: attributes, variables, parameters, keywords, method names); `ast`
leaves that to the compiler, so gradcli does it here, once. A mangled name is an ordinary
single-underscore name of the program's, which `classes` then treats as any other `_name` the
program gives its own objects, and an error shows it as Python's would (`_Net__hidden`).
"""
from __future__ import annotations

import ast


def mangled(name: str, owner: str) -> str:
    """`__x` inside class `owner` as CPython spells it; dunders and other names unchanged."""
    stripped = owner.lstrip("_")
    if not name.startswith("__") or name.endswith("__") or "." in name or not stripped:
        return name
    return f"_{stripped}{name}"


def mangle(tree: ast.Module) -> None:
    """Rewrite every `__name` inside a class body in place (iteratively: trees can be deep)."""
    pending: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while pending:
        node, owner = pending.pop()
        if owner is not None:
            _rename(node, owner)
        if isinstance(node, ast.ClassDef):
            outer = [*node.bases, *node.keywords, *node.decorator_list]
            pending.extend((child, owner) for child in outer)
            pending.extend((child, node.name) for child in node.body)
            continue
        pending.extend((child, owner) for child in ast.iter_child_nodes(node))


def _rename(node: ast.AST, owner: str) -> None:
    if isinstance(node, ast.Attribute):
        node.attr = mangled(node.attr, owner)
    elif isinstance(node, ast.Name):
        node.id = mangled(node.id, owner)
    elif isinstance(node, ast.arg):
        node.arg = mangled(node.arg, owner)
    elif isinstance(node, ast.keyword) and node.arg is not None:
        node.arg = mangled(node.arg, owner)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node.name = mangled(node.name, owner)
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        node.names = [mangled(name, owner) for name in node.names]
