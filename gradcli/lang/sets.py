"""The set operators `|`, `&`, `^`, `-` (and `|=`...) on sets, dict keys and items views, and dicts.

Python reads `a | b` on two sets as their union and `d1 | d2` on two dicts as a merge; on bool and
integer tensors they are PyTorch's elementwise logic (`(x > 0) & (x < 1)`). On numbers and float
tensors gradcli refuses them (`x ^ 2` is almost always a power written wrong, `|` and `&` on
numbers a Python `or`/`and`), where the operands are known. A
result is checked against the list limit before it is built.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable

from gradcli.engine.logical import bitwise
from gradcli.engine.tensor import Tensor
from gradcli.errors import NotAllowedError
from gradcli.lang.dict_views import SET_LIKE_VIEWS
from gradcli.lang.limits import check_list

SETS = (set, frozenset, *SET_LIKE_VIEWS)
SYMBOLS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.BitOr: ("|", operator.or_), ast.BitAnd: ("&", operator.and_), ast.BitXor: ("^", operator.xor),
    ast.Sub: ("-", operator.sub),
}
SYMBOL_NAMES = {symbol: kind() for kind, (symbol, _) in SYMBOLS.items() if symbol != "-"}
"""The operator node of each set-only symbol (a sequence operand reaches `combine` by its symbol)."""
_IN_PLACE = {"|": operator.ior, "&": operator.iand, "^": operator.ixor, "-": operator.isub}
OPERATORS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    kind: (SYMBOLS[kind][0], lambda left, right, op=kind(): combine(op, left, right))
    for kind in (ast.BitOr, ast.BitAnd, ast.BitXor)}
"""The operators' entries in the language's table (`operators.BINARY`): on any operands, `combine`."""
_HINTS = {"^": "for a power write ** (x ** 2)", "&": "to combine conditions write 'and'",
          "|": "to combine conditions write 'or'"}


def is_set(value: Any) -> bool:
    return isinstance(value, SETS)


def combine(op: ast.operator, left: Any, right: Any) -> Any:
    """`left op right` for a set operator: a new set (or, for `|` of two dicts, a new dict); with a tensor
    operand PyTorch's elementwise logic (`engine.logical.bitwise`: masks combined, floats refused)."""
    symbol, fn = SYMBOLS[type(op)]
    if symbol != "-" and (isinstance(left, Tensor) or isinstance(right, Tensor)):
        return bitwise(symbol, left, right)
    if symbol == "|" and isinstance(left, dict) and isinstance(right, dict):
        check_list(len(left) + len(right))
        return {**left, **right}
    if is_set(left) and is_set(right):
        if symbol in "|^":
            check_list(len(left) + len(right))
        return fn(plain(left), plain(right))
    _refuse(symbol, left, right)


def update(op: ast.operator, current: Any, value: Any) -> Any:
    """`current op= value` on a set or (`|=`) a dict: changed in place, as Python does, and returned."""
    symbol, _ = SYMBOLS[type(op)]
    if isinstance(current, dict) and symbol == "|":
        from gradcli.lang.containers import _update
        _update(current, value)
        return current
    if isinstance(current, set) and is_set(value):
        if symbol in "|^":
            check_list(len(current) + len(value))
        return _IN_PLACE[symbol](current, plain(value))
    return combine(op, current, value)


def plain(value: Any) -> set | frozenset:
    """The Python set a set-like operand stands for (a view's items now)."""
    return value if isinstance(value, (set, frozenset)) else set(value.listed())


def _refuse(symbol: str, left: Any, right: Any) -> None:
    """Neither operand a set or dict: gradcli's refusal of the operator; one of them: Python's TypeError."""
    if not any(is_set(v) or isinstance(v, dict) for v in (left, right)):
        raise NotAllowedError(f"operator '{symbol}' is not supported", hint=_HINTS.get(symbol))
    from gradcli.lang.exceptions import raise_python
    from gradcli.lang.iteration import type_name
    raise_python("TypeError", f"unsupported operand type(s) for {symbol}: '{type_name(left)}' and "
                              f"'{type_name(right)}'")
