"""Tables that must agree with each other, so a mismatch fails here instead of surfacing as exit 3.

The VJPs in the op table run against two namespaces (`ops.NUMPY` on arrays, `engine.functions`
under create_graph), and the parser's allowlist and the interpreter's dispatch tables are written
separately; each pair is read here and compared.
"""
from __future__ import annotations

import ast
import inspect

from gradcli.engine import functions, ops
from gradcli.lang import parser
from gradcli.lang.interpreter import _BINARY, _COMPARE, Interpreter


def names_called_on_ns() -> set[str]:
    """Every attribute a VJP (or a helper they share) reads from the namespace argument `ns`."""
    tree = ast.parse(inspect.getsource(ops))
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ns"}


def test_the_vjps_call_something_on_ns() -> None:
    assert {"sum", "reshape", "where"} <= names_called_on_ns()


def test_both_vjp_namespaces_name_everything_the_vjps_call() -> None:
    used = names_called_on_ns()
    assert sorted(n for n in used if not hasattr(ops.NUMPY, n)) == []
    assert sorted(n for n in used if not hasattr(functions, n)) == []


def test_the_interpreter_runs_every_statement_and_expression_the_parser_allows() -> None:
    interpreter = Interpreter("")
    assert set(parser._STATEMENTS) == set(interpreter._statements)
    # A slice only occurs inside a subscript, which the parser's subscript check walks itself.
    assert set(parser._EXPRESSIONS) == set(interpreter._expressions) - {ast.Slice}


def test_the_interpreter_evaluates_every_operator_the_parser_allows() -> None:
    assert parser._BINARY_OPERATORS == set(_BINARY)
    assert parser._COMPARISONS == set(_COMPARE)
