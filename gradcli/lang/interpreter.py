"""Runs a checked program tree: statements, control flow, names, calls. It never evaluates text.

Dispatch is by `ast` node type through dicts (simpleeval's design, without its blocklists): the
parser has already refused every node type missing here. Names, attributes and methods resolve
only through `gradcli.lang.builtins`. Side effects a caller cares about (print, bare expression
values, backward calls) go out through `Hooks`, so the interpreter itself never prints.
"""
from __future__ import annotations

import ast
import difflib
import math
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.nn import Sequential
from gradcli.errors import (ArgumentError, GradcliError, LimitError, NameLookupError, NotAllowedError,
                            ProgramAssertionError, ValueDomainError)
from gradcli.lang import builtins as B
from gradcli.lang.limits import DEFAULT_MAX_STEPS, Budget
from gradcli.source import node_span
from gradcli.engine.tensor import Tensor

_NUMBER = (int, float, bool, np.integer, np.floating, np.bool_)


@dataclass
class Hooks:
    """How a caller sees what a program does. Each is optional."""

    on_print: Callable[[list[tuple[str, Any]], int], None] | None = None
    on_display: Callable[[str, Any, int], None] | None = None
    on_backward: Callable[[Tensor, Callable[..., None], dict, int], None] | None = None
    on_gradient: Callable[[str, Callable[..., Any], list, dict, int], Any] | None = None
    """A call of a gradient function (`B.GRADIENT_FUNCTIONS`): (kind, run, args, kwargs, line) -> its value.

    `run(target)` calls `target` (by default the function itself) with the call's arguments, so
    the hook may call a traced variant that also returns what it differentiated."""


@dataclass
class Outcome:
    """The value of the last statement that produced one, and the name it is known by."""

    value: Any = None
    name: str | None = None


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_BINARY: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv), ast.Pow: ("**", operator.pow), ast.MatMult: ("@", operator.matmul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod),
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}


def source_text(node: ast.AST) -> str:
    """How an expression is titled in output (`x.grad`), normalised by ast.unparse."""
    return ast.unparse(node)


class Interpreter:
    """One program run: its variables, its step budget and its hooks."""

    def __init__(self, source: str, env: dict[str, Any] | None = None, hooks: Hooks | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS, filename: str | None = None, timeout: float | None = None) -> None:
        self.source = source
        self.filename = filename
        self.env: dict[str, Any] = dict(env or {})
        self.hooks = hooks or Hooks()
        self.budget = Budget(source, max_steps, timeout)
        self.outcome = Outcome()
        self._statements: dict[type, Callable[[Any], None]] = {
            ast.Assign: self._assign, ast.AugAssign: self._aug_assign, ast.Expr: self._expr_statement,
            ast.If: self._if, ast.While: self._while, ast.For: self._for, ast.Assert: self._assert,
            ast.Pass: lambda node: None, ast.Break: self._break, ast.Continue: self._continue,
            ast.Import: self._import, ast.ImportFrom: self._import_from,
        }
        self._expressions: dict[type, Callable[[Any], Any]] = {
            ast.Constant: lambda node: node.value, ast.Name: self._name, ast.List: self._list,
            ast.Tuple: lambda node: tuple(self.eval(e) for e in node.elts), ast.UnaryOp: self._unary,
            ast.BinOp: self._binary, ast.BoolOp: self._bool_op, ast.Compare: self._compare,
            ast.IfExp: self._if_exp, ast.Subscript: self._subscript, ast.Slice: self._slice,
            ast.Call: self._call, ast.Attribute: self._attribute,
        }

    # -- running ------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> Outcome:
        self.budget.start()
        self._block(tree.body)
        return self.outcome

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            try:
                self._statements[type(stmt)](stmt)
            except GradcliError as exc:
                raise self._locate(exc, stmt) from None
            except ProgramAssertionError:
                raise
            except (_Break, _Continue):
                raise
            except (ZeroDivisionError, OverflowError) as exc:
                raise self._locate(ValueDomainError(f"{exc}", hint="check the values that reach this line"),
                                   stmt) from None
            except (MemoryError, RecursionError):
                raise self._locate(LimitError("the program needs more memory or depth than is available",
                                              hint="use smaller shapes or fewer nested operations"), stmt) from None

    def _locate(self, exc: GradcliError, node: ast.AST) -> GradcliError:
        if exc.line is None:
            line, column, length = node_span(node, self.source)
            exc.at(line, column, length, self.source)
        if exc.source is None:
            exc.source = self.source
        if exc.filename is None:
            exc.filename = self.filename
        return exc

    def eval(self, node: ast.expr) -> Any:
        self.budget.tick()
        try:
            return self._expressions[type(node)](node)
        except GradcliError as exc:
            raise self._locate(exc, node) from None

    # -- statements -----------------------------------------------------------------------------
    def _remember(self, value: Any, name: str) -> None:
        if value is not None and not isinstance(value, str):
            self.outcome.value, self.outcome.name = value, name

    def _assign(self, node: ast.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self._bind(target, value)
        last = node.targets[-1]
        self._remember(value, last.id if isinstance(last, ast.Name) else source_text(last))

    def _bind(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self._unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self._bind(t, v)
        else:  # the parser admits only names, tuples of names and x.requires_grad/grad/data
            self._set_attribute(target, value)

    def _unpack(self, value: Any, count: int, target: ast.expr) -> list:
        if isinstance(value, (tuple, list)) or isinstance(value, Tensor) and value.ndim > 0:
            items = list(value)
            if len(items) == count:
                return items
            raise ArgumentError(f"cannot unpack {len(items)} values into {count} names").at(
                *node_span(target, self.source))
        raise ArgumentError(f"cannot unpack a {type(value).__name__} into {count} names").at(
            *node_span(target, self.source))

    def _set_attribute(self, target: ast.Attribute, value: Any) -> None:
        owner = self.eval(target.value)
        if not isinstance(owner, Tensor):
            raise NotAllowedError(f"cannot assign to attribute '{target.attr}' of a {_type_name(owner)}",
                                  hint="only a tensor's requires_grad, grad and data can be assigned").at(
                *node_span(target, self.source))
        if target.attr == "requires_grad":
            owner.requires_grad_(bool(value))
        elif target.attr == "grad":
            owner.grad = None if value is None else _checked_grad(owner, value)
        else:
            owner.data = F.as_tensor(value)

    def _aug_assign(self, node: ast.AugAssign) -> None:
        current = self._name(ast.Name(id=node.target.id, ctx=ast.Load()), node.target)
        value = self._arithmetic(node.op, current, self.eval(node.value))
        self.env[node.target.id] = value
        self._remember(value, node.target.id)

    def _expr_statement(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string statement is a comment ('''求导数''')
        value = self.eval(node.value)
        if value is None or isinstance(node.value, ast.Call) and _is_print(node.value, self.env):
            return
        self._remember(value, source_text(node.value))
        if self.hooks.on_display is not None:
            with self.budget.paused():
                self.hooks.on_display(source_text(node.value), value, node.lineno)

    def _if(self, node: ast.If) -> None:
        if self._truth(self.eval(node.test), node.test):
            self._block(node.body)
        else:
            self._block(node.orelse)

    def _iteration(self, body: list[ast.stmt]) -> bool:
        """One pass through a loop body, counted against the budget; False when it breaks out."""
        self.budget.step()
        try:
            self._block(body)
        except _Break:
            return False
        except _Continue:
            pass
        return True

    def _while(self, node: ast.While) -> None:
        with self.budget.inside(node):
            while self._truth(self.eval(node.test), node.test):
                if not self._iteration(node.body):
                    break

    def _for(self, node: ast.For) -> None:
        iterable = self.eval(node.iter)
        if not isinstance(iterable, range):
            raise NotAllowedError("for loops run over range(...) only", hint="for i in range(10): ...").at(
                *node_span(node.iter, self.source))
        with self.budget.inside(node):
            for i in iterable:
                self.env[node.target.id] = i
                if not self._iteration(node.body):
                    break

    def _break(self, node: ast.Break) -> None:
        raise _Break

    def _continue(self, node: ast.Continue) -> None:
        raise _Continue

    def _assert(self, node: ast.Assert) -> None:
        test = node.test
        values: list[tuple[str, Any]] = []
        if isinstance(test, ast.Call):
            func = self.eval(test.func)
            args = [self.eval(a) for a in test.args]
            kwargs = {k.arg: self.eval(k.value) for k in test.keywords}
            values = [(source_text(a), v) for a, v in zip(test.args, args)]
            result = self._invoke(func, args, kwargs, test)
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = self.eval(test.left), self.eval(test.comparators[0])
            values = [(source_text(test.left), left), (source_text(test.comparators[0]), right)]
            result = compare(test.ops[0], left, right)
        else:
            result = self.eval(test)
        if not self._truth(result, test):
            message = self.eval(node.msg) if node.msg is not None else None
            line, column, length = node_span(node, self.source)
            raise ProgramAssertionError(source_text(test), values, message, line, column, length, self.source,
                                        self.filename)

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.env[alias.asname] = B.MODULES[alias.name]
            else:
                top = alias.name.split(".")[0]
                self.env[top] = B.MODULES[top]

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = B.MODULES.get(node.module or "")
        for alias in node.names:
            value = module.lookup(alias.name) if module is not None else None
            if value is None:
                raise NameLookupError(f"cannot import name '{alias.name}' from '{node.module}'",
                                      hint=_suggest(alias.name, module.members if module else {}))
            self.env[alias.asname or alias.name] = value

    # -- expressions ----------------------------------------------------------------------------
    def _name(self, node: ast.Name, where: ast.AST | None = None) -> Any:
        name = node.id
        if name in self.env:
            return self.env[name]
        if name in B.PRELUDE:
            return B.PRELUDE[name]
        if name in B.FUNCTIONS:
            return B.FUNCTIONS[name]
        if name == "print":
            return _PRINT
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        known = list(self.env) + list(B.PRELUDE) + list(B.FUNCTIONS) + ["print"]
        raise NameLookupError(f"name '{name}' is not defined", hint=_suggest(name, known) or
                              "define it first (y = ...), or pass it as an input: NAME=SPEC")

    def _list(self, node: ast.List) -> list:
        return [self.eval(e) for e in node.elts]

    def _unary(self, node: ast.UnaryOp) -> Any:
        value = self.eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not self._truth(value, node.operand)
        if isinstance(value, Tensor):
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(value, _NUMBER):
            return -value if isinstance(node.op, ast.USub) else +value
        raise ArgumentError(f"bad operand type for unary {'-' if isinstance(node.op, ast.USub) else '+'}: "
                            f"{_type_name(value)}")

    def _binary(self, node: ast.BinOp) -> Any:
        return self._arithmetic(node.op, self.eval(node.left), self.eval(node.right))

    def _arithmetic(self, op: ast.operator, left: Any, right: Any) -> Any:
        symbol, fn = _BINARY[type(op)]
        if isinstance(left, Tensor) or isinstance(right, Tensor):
            if symbol == "//":
                raise ArgumentError(f"operator '{symbol}' is not supported on tensors",
                                    hint="gradcli differentiates + - * / % ** and @")
            if not all(isinstance(v, (Tensor, *_NUMBER, list, tuple)) for v in (left, right)):
                raise ArgumentError(f"unsupported operand types for {symbol}: {_type_name(left)} and "
                                    f"{_type_name(right)}")
            return fn(F.as_tensor(left) if isinstance(left, (list, tuple)) else left,
                      F.as_tensor(right) if isinstance(right, (list, tuple)) else right)
        if isinstance(left, _NUMBER) and isinstance(right, _NUMBER):
            if symbol == "@":
                raise ArgumentError("operator '@' needs tensors, not numbers")
            try:
                if symbol == "**" and _huge_power(left, right):
                    return float(left) ** float(right)
                return fn(left, right)
            except OverflowError:
                raise ValueDomainError(f"{left!r} {symbol} {right!r} is too large for a float (the largest is about "
                                       f"1.8e308)", hint="use smaller numbers, or torch.inf (float('inf')) for infinity") from None
            except ZeroDivisionError:
                raise ValueDomainError(f"{left!r} {symbol} {right!r}: division by zero",
                                       hint="divide tensors instead (they give inf or nan, as in PyTorch)") from None
        raise ArgumentError(f"unsupported operand types for {symbol}: {_type_name(left)} and {_type_name(right)}",
                            hint="arithmetic works on numbers and tensors; make a list a tensor with tensor([...])")

    def _bool_op(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        value = None
        for operand in node.values:
            value = self.eval(operand)
            if self._truth(value, operand) != is_and:
                return value
        return value

    def _compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        result: Any = True
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator)
            outcome = compare(op, left, right)
            if len(node.ops) == 1:
                return outcome
            if not self._truth(outcome, node):
                return False
            result, left = outcome, right
        return result

    def _if_exp(self, node: ast.IfExp) -> Any:
        return self.eval(node.body) if self._truth(self.eval(node.test), node.test) else self.eval(node.orelse)

    def _subscript(self, node: ast.Subscript) -> Any:
        value = self.eval(node.value)
        key = self.eval(node.slice)
        if isinstance(value, Tensor):
            return value[key]
        if isinstance(value, (list, tuple, range, F.MaxMin, Sequential)):
            if isinstance(key, Tensor):
                key = int(key)
            if not isinstance(key, (int, slice)) or isinstance(key, bool):
                raise ArgumentError("list indices must be integers or slices")
            try:
                return value[key]
            except IndexError:
                raise ArgumentError(f"index {key} is out of range for a sequence of length {len(value)}") from None
        raise ArgumentError(f"a {_type_name(value)} cannot be indexed")

    def _slice(self, node: ast.Slice) -> slice:
        parts = []
        for part in (node.lower, node.upper, node.step):
            v = None if part is None else self.eval(part)
            if isinstance(v, Tensor):
                v = int(v)
            if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
                raise ArgumentError(f"slice bounds must be integers, got {v!r}")
            parts.append(v)
        if parts[2] is not None and parts[2] <= 0:
            raise ArgumentError("slice step must be positive", hint="PyTorch does not support negative steps")
        return slice(*parts)

    def _attribute(self, node: ast.Attribute) -> Any:
        owner = self.eval(node.value)
        return self._get_attribute(owner, node.attr, node)

    def _get_attribute(self, owner: Any, attr: str, node: ast.AST) -> Any:
        allowed = B.attribute_names(owner)
        if attr in allowed:
            if isinstance(owner, B.Namespace):
                return owner.lookup(attr)
            return getattr(owner, attr)
        what = f"'{owner.name}'" if isinstance(owner, B.Namespace) else f"a {_type_name(owner)}"
        hint = _suggest(attr, allowed) or "`gradcli ops` lists what a program can use"
        if not isinstance(owner, (Tensor, B.Namespace)) and callable(owner) and B.TORCH.lookup(attr) is not None:
            hint = f"to use {attr} from torch under a short name, import it first: import torch as " \
                   f"{getattr(owner, '__name__', 't')}"
        raise NameLookupError(f"attribute '{attr}' is not available on {what}", hint=hint)

    def _call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if func is _PRINT:
            if self.hooks.on_print is not None:
                with self.budget.paused():
                    self.hooks.on_print([(source_text(a), v) for a, v in zip(node.args, args)], node.lineno)
            return None
        return self._invoke(func, args, kwargs, node)

    def _invoke(self, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if not callable(func) or isinstance(func, (Tensor, B.Namespace, type)):
            raise ArgumentError(f"'{source_text(node.func)}' is not a function", hint="call functions and methods only")
        if self.hooks.on_backward is not None and _is_backward(func):
            return self._backward(func, args, kwargs, node)
        kind = B.gradient_kind(func) if self.hooks.on_gradient is not None else None

        def run(target: Any = func) -> Any:
            try:
                return target(*args, **kwargs)
            except TypeError as exc:
                raise _argument_error(exc, func, args, kwargs, source_text(node.func)) from None
        if kind is not None:
            def counted(target: Any = func) -> Any:
                with self.budget.counted():
                    return run(target)
            with self.budget.paused():
                return self.hooks.on_gradient(kind, counted, args, kwargs, node.lineno)
        return run()

    def _backward(self, method: Any, args: list, kwargs: dict, node: ast.Call) -> None:
        """Hand `.backward(...)` to the hook as a `run(trace=None)` closure, arguments already bound."""
        import inspect

        from gradcli.engine.backward import run_backward
        tensor = method.__self__
        try:
            bound = inspect.signature(method).bind(*args, **kwargs).arguments
        except TypeError as mismatch:
            raise ArgumentError(f"backward(): {mismatch}",
                                hint=_signature_hint("backward", inspect.signature(method))) from None

        def run(trace: Any = None) -> None:
            with self.budget.counted():
                run_backward((tensor,), (bound.get("gradient"),), bound.get("retain_graph"),
                             bound.get("create_graph", False), trace=trace)
        with self.budget.paused():
            self.hooks.on_backward(tensor, run, dict(bound), node.lineno)

    def _truth(self, value: Any, node: ast.AST) -> bool:
        if isinstance(value, Tensor):
            return bool(value)
        if isinstance(value, (*_NUMBER, type(None), str, list, tuple)):
            return bool(value)
        raise ArgumentError(f"a {_type_name(value)} has no truth value")


_PRINT = object()


def _is_print(call: ast.Call, env: dict) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "print" and "print" not in env


def _checked_grad(owner: Tensor, value: Any) -> Tensor:
    """What PyTorch accepts as `x.grad = value`: a tensor of x's size and dtype, with its messages."""
    if not isinstance(value, Tensor):
        raise ArgumentError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}", hint="assign None, or a tensor such as torch.zeros_like(x)")
    if value.shape != owner.shape:
        raise ArgumentError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of size "
                            f"'{list(owner.shape)}'. Please ensure that the gradient and the tensor are the same size",
                            hint=f"the gradient must have the tensor's shape {tuple(owner.shape)}")
    if value.dtype != owner.dtype:
        raise ArgumentError(f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor with dtype "
                            f"'{owner.dtype}'", hint="make the dtypes match, e.g. .float() or .double()")
    return value


def _is_backward(func: Any) -> bool:
    return getattr(func, "__name__", None) == "backward" and isinstance(getattr(func, "__self__", None), Tensor)


def _huge_power(base: Any, exponent: Any) -> bool:
    """Python ints would compute 10**10**10 exactly, forever; gradcli switches to floats past 2**64."""
    if not isinstance(base, (int, np.integer)) or not isinstance(exponent, (int, np.integer)):
        return False
    return exponent > 0 and abs(base) > 1 and exponent * math.log2(abs(base)) > 64


def compare(op: ast.cmpop, left: Any, right: Any) -> Any:
    """One comparison: `is` for None checks, ordering for numbers and tensors, equality for those and lists."""
    fn = _COMPARE[type(op)]
    if isinstance(op, (ast.Is, ast.IsNot)):
        return fn(left, right)
    numeric = (Tensor, *_NUMBER)
    if isinstance(left, numeric) and isinstance(right, numeric):
        return fn(left, right)
    plain = (*_NUMBER, type(None), str, list, tuple)
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, plain) and isinstance(right, plain):
        return fn(left, right)
    symbol = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}[type(op)]
    raise ArgumentError(f"cannot compare a {_type_name(left)} with a {_type_name(right)} using '{symbol}'",
                        hint="compare numbers or tensors; use 'is None' to test for None")


def _type_name(value: Any) -> str:
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, B.Namespace):
        return f"module '{value.name}'"
    if value is None:
        return "None"
    return {bool: "bool", int: "number", float: "number", str: "string", list: "list", tuple: "tuple",
            range: "range"}.get(type(value), type(value).__name__)


def _suggest(name: str, candidates: Any) -> str | None:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _argument_error(exc: TypeError, func: Any, args: list, kwargs: dict, name: str) -> Exception:
    """The user's mistake if the arguments do not fit the signature; otherwise the TypeError is a bug, kept."""
    import inspect
    target = getattr(func, "__wrapped__", func)
    try:
        signature = inspect.signature(target)
        signature.bind(*args, **kwargs)
    except TypeError as mismatch:
        return ArgumentError(f"{name}(): {mismatch}", hint=_signature_hint(name, signature))
    except ValueError:
        return exc
    return exc


def _signature_hint(name: str, signature: Any) -> str:
    params = [p for p in signature.parameters.values() if p.name != "self"]
    shown = ", ".join(str(p).split(":")[0].split(" =")[0] + ("=" + repr(p.default) if p.default is not p.empty
                                                              else "") for p in params)
    return f"usage: {name.rsplit('.', 1)[-1]}({shown})"
