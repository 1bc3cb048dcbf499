"""`operator`: the language's own operators as functions (the same checks as `a + b` in a program)."""
from __future__ import annotations

import ast
from typing import Any, Callable

from gradcli.lang.exceptions import raise_python
from gradcli.lang.namespace import Namespace
from gradcli.lang.stdlib import runtime
from gradcli.lang.operators import arithmetic, compare, contains, index, truth


def _binary(op: ast.operator, name: str) -> Callable[[Any, Any], Any]:
    def call(a: Any, b: Any) -> Any:
        return arithmetic(op, a, b)
    call.__name__ = name
    return call


def _comparison(op: ast.cmpop, name: str) -> Callable[[Any, Any], Any]:
    def call(a: Any, b: Any) -> Any:
        return compare(op, a, b)
    call.__name__ = name
    return call


def itemgetter(*keys: Any) -> Callable[[Any], Any]:
    def get(value: Any) -> Any:
        found = tuple(index(value, key) for key in keys)
        return found[0] if len(keys) == 1 else found
    get.__name__ = "itemgetter"
    return get


def attrgetter(*names: Any) -> Callable[[Any], Any]:
    """`attrgetter('name')`, `attrgetter('a.b', 'c')`: each name read as the program's `getattr` reads it."""
    for name in names:
        if not isinstance(name, str):
            raise_python("TypeError", "attribute name must be a string")

    def get(value: Any) -> Any:
        found = []
        for name in names:
            target = value
            for part in name.split("."):
                target = runtime.get_attribute(target, part)
            found.append(target)
        return found[0] if len(names) == 1 else tuple(found)
    get.__name__ = "attrgetter"
    return get


def _negative(value: Any) -> Any:
    return arithmetic(ast.Sub(), 0, value)


OPERATOR = Namespace("operator", {
    **{name: _binary(op, name) for name, op in (("add", ast.Add()), ("sub", ast.Sub()), ("mul", ast.Mult()),
                                                ("truediv", ast.Div()), ("floordiv", ast.FloorDiv()),
                                                ("mod", ast.Mod()), ("pow", ast.Pow()), ("matmul", ast.MatMult()))},
    **{name: _comparison(op, name) for name, op in (("eq", ast.Eq()), ("ne", ast.NotEq()), ("lt", ast.Lt()),
                                                    ("le", ast.LtE()), ("gt", ast.Gt()), ("ge", ast.GtE()),
                                                    ("is_", ast.Is()), ("is_not", ast.IsNot()))},
    "neg": _negative, "not_": lambda value: not truth(value), "truth": truth,
    "contains": lambda container, item: contains(item, container), "getitem": index, "itemgetter": itemgetter,
    "attrgetter": attrgetter,
})
