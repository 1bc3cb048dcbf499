"""Tables that must agree with each other, so a mismatch fails here instead of surfacing as exit 3.

The VJPs in the op table run against two namespaces (`ops.NUMPY` on arrays, `engine.functions`
under create_graph), and the parser's allowlist and the interpreter's compiler tables (node type ->
the function that compiles it into a closure) are written separately; each pair is read here and compared.
"""
from __future__ import annotations

import ast
import inspect

from gradcli.engine import functions, ops
from gradcli.lang import parser
from gradcli.lang.interpreter import Interpreter
from gradcli.lang.operators import BINARY, COMPARE


def names_called_on_ns() -> set[str]:
    """Every attribute a VJP (or a helper they share) reads from the namespace argument `ns`, in every family."""
    trees = [ast.parse(inspect.getsource(family)) for family in (ops.op, *ops.FAMILIES)]
    return {node.attr for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ns"}


def test_the_vjps_call_something_on_ns() -> None:
    assert {"sum", "reshape", "where"} <= names_called_on_ns()


def test_both_vjp_namespaces_name_everything_the_vjps_call() -> None:
    used = names_called_on_ns()
    assert sorted(n for n in used if not hasattr(ops.NUMPY, n)) == []
    assert sorted(n for n in used if not hasattr(functions, n)) == []


def test_the_interpreter_compiles_every_statement_and_expression_the_parser_allows() -> None:
    interpreter = Interpreter("")
    assert set(parser._STATEMENTS) == set(interpreter._statements)
    # A slice only occurs inside a subscript, which the parser's subscript check walks itself.
    assert set(parser._EXPRESSIONS) == set(interpreter._expressions) - {ast.Slice}


def test_the_interpreter_evaluates_every_operator_the_parser_allows() -> None:
    assert parser._BINARY_OPERATORS == set(BINARY)
    assert parser._COMPARISONS == set(COMPARE)


# Primitives no program names: recorded by backward passes under create_graph, or by a distribution's rsample.
INTERNAL = {"gelu_backward": "gelu's backward", "_standard_gamma": "Gamma.rsample (and Beta, Dirichlet)",
            "_sample_dirichlet": "Dirichlet.rsample (and Beta)"}
# PyTorch has these as torch.X but not as Tensor methods (checked against torch in test_torch_oracle.py).
FUNCTION_ONLY = {"cat", "concat", "stack", "einsum", "tensordot", "celu", "selu", "dropout", "layer_norm", "kl_div",
                 "cosine_similarity", "pairwise_distance", "binary_cross_entropy_with_logits", "hstack", "vstack",
                 "row_stack", "meshgrid", "cdist",
                 "softplus"}  # F.softplus, a bare name of `gradcli eval`: torch has no Tensor.softplus (nor torch.softplus)
# ... and these as Tensor methods but not as torch.X functions (`torch.float` is a dtype, not a cast).
METHOD_ONLY = {"to", "float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool", "expand_as", "repeat", "contiguous", "unfold", "view", "expand",
               "view_as", "reshape_as"}
"""Methods of a primitive that torch has no function for, besides the in-place forms (x.X_ of a method x.X)."""


def _reached() -> tuple[dict[str, set[tuple[str, str]]], set[str], set[str]]:
    from gradcli.program.catalog import entries
    rows = entries()
    by_op: dict[str, set[tuple[str, str]]] = {}
    for e in rows:
        if e.op is not None:
            by_op.setdefault(e.op.name, set()).add((e.kind, e.name))
    functions_ = {e.name for e in rows if e.kind == "function" and e.op is not None and "." not in e.name}
    methods = {e.name for e in rows if e.kind == "method" and e.op is not None}
    return by_op, functions_, methods


def test_every_primitive_is_reachable_from_a_program() -> None:
    by_op, _, _ = _reached()
    unreached = sorted(op.name for op in ops.TABLE if not {k for k, _ in by_op.get(op.name, ())} - {"primitive"})
    assert unreached == sorted(INTERNAL)


def test_functions_are_tensor_methods_and_methods_functions_where_pytorch_has_both() -> None:
    _, functions_, methods = _reached()
    assert sorted(functions_ - methods) == sorted(FUNCTION_ONLY)
    assert sorted(m for m in methods - functions_ if not (m.endswith("_") and m[:-1] in methods)) == sorted(METHOD_ONLY)
