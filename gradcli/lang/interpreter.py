"""Runs a checked program tree: statements, control flow, names, calls. It never evaluates text.

Dispatch is by `ast` node type through dicts (simpleeval's design, without its blocklists): the
parser has already refused every node type missing here. Names, attributes and methods resolve
only through `gradcli.lang.builtins`. Side effects a caller cares about (print, bare expression
values, backward calls) go out through `Hooks`, so the interpreter itself never prints.

Names live in `Scope`s: the module's (`env`), one per call of a program function, one per
comprehension. Calls of the program's functions come back here (`_call_function`), which is where
the call-depth limit, the step budget and the program's own call stack for errors are kept.
"""
from __future__ import annotations

import ast
import contextlib
import difflib
import math
import operator
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.modes import GradModeContext
from gradcli.engine.tensor import AccumulateGrad, Node, Tensor
from gradcli.engine.tensor_str import Size
from gradcli.engine.nn import Sequential
from gradcli.errors import (ArgumentError, GradcliError, LimitError, NameLookupError, NotAllowedError,
                            ProgramAssertionError, ValueDomainError)
from gradcli.lang import builtins as B
from gradcli.lang import formatting as T
from gradcli.lang.limits import DEFAULT_MAX_STEPS, MAX_CALL_DEPTH, MAX_LIST, Budget, check_list, check_string
from gradcli.lang.python_builtins import PYTHON, iterate
from gradcli.lang.user_functions import REQUIRED, Scope, UserFunction, signature
from gradcli.source import node_span

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


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


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
        self.globals = Scope(self.env)
        self.scope = self.globals
        self.hooks = hooks or Hooks()
        self.budget = Budget(source, max_steps, timeout)
        self.depth = 0
        self.call_sites: list[ast.AST] = []
        self.outcome = Outcome()
        self._statements: dict[type, Callable[[Any], None]] = {
            ast.Assign: self._assign, ast.AugAssign: self._aug_assign, ast.Expr: self._expr_statement,
            ast.If: self._if, ast.While: self._while, ast.For: self._for, ast.Assert: self._assert,
            ast.Pass: lambda node: None, ast.Break: self._break, ast.Continue: self._continue,
            ast.Import: self._import, ast.ImportFrom: self._import_from, ast.FunctionDef: self._function_def,
            ast.Return: self._return, ast.With: self._with,
        }
        self._expressions: dict[type, Callable[[Any], Any]] = {
            ast.Constant: lambda node: node.value, ast.Name: self._name, ast.List: self._list,
            ast.Tuple: lambda node: tuple(self.eval(e) for e in node.elts), ast.UnaryOp: self._unary,
            ast.BinOp: self._binary, ast.BoolOp: self._bool_op, ast.Compare: self._compare,
            ast.IfExp: self._if_exp, ast.Subscript: self._subscript, ast.Slice: self._slice,
            ast.Call: self._call, ast.Attribute: self._attribute, ast.Lambda: self._lambda,
            ast.ListComp: self._comprehension, ast.GeneratorExp: self._comprehension,
            ast.JoinedStr: self._f_string,
        }

    # -- running ------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> Outcome:
        # Each call of a program's function costs a few dozen Python frames; the call-depth limit,
        # not Python's, is what a deep recursion must meet.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _PYTHON_FRAMES_PER_CALL * MAX_CALL_DEPTH + 2000))
        self.budget.start()
        try:
            self._block(tree.body)
        finally:
            sys.setrecursionlimit(limit)
        return self.outcome

    @property
    def at_top(self) -> bool:
        """Whether statements run at the program's top level (not in a function or comprehension)."""
        return self.scope is self.globals

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            try:
                self._statements[type(stmt)](stmt)
            except GradcliError as exc:
                raise self._locate(exc, stmt) from None
            except ProgramAssertionError:
                raise
            except (_Break, _Continue, _Return):
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
        if value is not None and not isinstance(value, str) and self.at_top:
            self.outcome.value, self.outcome.name = value, name

    def _assign(self, node: ast.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self._bind(target, value)
        last = node.targets[-1]
        self._remember(value, last.id if isinstance(last, ast.Name) else source_text(last))

    def _bind(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope.values[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self._unpack(value, len(target.elts), target)
            for t, v in zip(target.elts, items):
                self._bind(t, v)
        elif isinstance(target, ast.Subscript):
            self._set_item(self.eval(target.value), self.eval(target.slice), value)
        else:  # the parser admits only these and x.requires_grad/grad/data
            self._set_attribute(self.eval(target.value), target, value)

    def _set_item(self, container: Any, key: Any, value: Any) -> None:
        if isinstance(container, Tensor):
            container[key] = value
        elif isinstance(container, list):
            if isinstance(key, Tensor):
                key = int(key)
            if not isinstance(key, int) or isinstance(key, bool):
                raise ArgumentError("list indices must be integers", hint="xs[0] = value")
            if not -len(container) <= key < len(container):
                raise ArgumentError("list assignment index out of range")
            container[key] = value
        else:
            raise ArgumentError(f"a {_type_name(container)} does not support item assignment",
                                hint="assign into a tensor (x[0] = 1.0) or a list")

    def _unpack(self, value: Any, count: int, target: ast.expr) -> list:
        if isinstance(value, (tuple, list)) or isinstance(value, Tensor) and value.ndim > 0:
            items = list(value)
            if len(items) == count:
                return items
            raise ArgumentError(f"cannot unpack {len(items)} values into {count} names").at(
                *node_span(target, self.source))
        raise ArgumentError(f"cannot unpack a {type(value).__name__} into {count} names").at(
            *node_span(target, self.source))

    def _set_attribute(self, owner: Any, target: ast.Attribute, value: Any) -> None:
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
        """Python's `t op= v`: a tensor is updated in place (PyTorch's rules), anything else rebound."""
        target = node.target
        if isinstance(target, ast.Name):
            value = self._updated(node.op, self._lookup(target.id), self.eval(node.value))
            self.scope.values[target.id] = value
            self._remember(value, target.id)
        elif isinstance(target, ast.Attribute):
            owner = self.eval(target.value)
            current = self._get_attribute(owner, target.attr, target)
            self._set_attribute(owner, target, self._updated(node.op, current, self.eval(node.value)))
        else:
            container, key = self.eval(target.value), self.eval(target.slice)
            if isinstance(container, Tensor):
                from gradcli.engine.inplace import check_leaf
                check_leaf(container, view=True)
            current = self._index(container, key)
            self._set_item(container, key, self._arithmetic(node.op, current, self.eval(node.value)))

    def _updated(self, op: ast.operator, current: Any, value: Any) -> Any:
        if isinstance(current, Tensor) and type(op) in _IN_PLACE:
            return getattr(current, _IN_PLACE[type(op)])(value)
        if isinstance(current, list) and isinstance(op, ast.Add):
            check_list(len(current) + len(value if isinstance(value, (list, tuple)) else ()))
            current.extend(PYTHON["list"](value))
            return current
        return self._arithmetic(op, current, value)

    def _expr_statement(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string statement is a comment ('''求导数''')
        value = self.eval(node.value)
        if value is None or isinstance(node.value, ast.Call) and self._is_print(node.value) or not self.at_top:
            return
        self._remember(value, source_text(node.value))
        if self.hooks.on_display is not None:
            with self.budget.paused():
                self.hooks.on_display(source_text(node.value), _shown(value), node.lineno)

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
        try:
            values = iterate(self.eval(node.iter))
        except GradcliError as exc:
            raise self._locate(exc, node.iter) from None
        with self.budget.inside(node):
            for value in values:
                self._bind(node.target, value)
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
            values = [(source_text(a), _shown(v)) for a, v in zip(test.args, args)]
            result = self._invoke(func, args, kwargs, test)
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = self.eval(test.left), self.eval(test.comparators[0])
            values = [(source_text(test.left), _shown(left)), (source_text(test.comparators[0]), _shown(right))]
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
            module = _module(alias.name)
            if alias.asname:
                self.scope.values[alias.asname] = module
            else:
                top = alias.name.split(".")[0]
                self.scope.values[top] = _module(top)

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = _module(node.module or "")
        for alias in node.names:
            value = module.lookup(alias.name)
            if value is None:
                raise NameLookupError(f"cannot import name '{alias.name}' from '{node.module}'",
                                      hint=_suggest(alias.name, module.members))
            self.scope.values[alias.asname or alias.name] = value

    def _function_def(self, node: ast.FunctionDef) -> None:
        decorators = [self.eval(d) for d in node.decorator_list]
        value: Any = self._make_function(node.name, node)
        for decorator, written in zip(reversed(decorators), reversed(node.decorator_list)):
            if not callable(decorator) or isinstance(decorator, (Tensor, B.Namespace, type)):
                raise ArgumentError(f"'{source_text(written)}' is not a decorator",
                                    hint="gradcli's decorators are @torch.no_grad(), @torch.enable_grad() and "
                                         "your own functions").at(*node_span(written, self.source))
            value = decorator(value)
        self.scope.values[node.name] = value

    def _make_function(self, name: str, node: ast.FunctionDef | ast.Lambda) -> UserFunction:
        args = node.args
        defaults = [self.eval(d) for d in args.defaults]
        kw_defaults = [REQUIRED if d is None else self.eval(d) for d in args.kw_defaults]
        return UserFunction(name, node, signature(args, defaults, kw_defaults), self.scope, self._call_function)

    def _call_function(self, fn: UserFunction, args: tuple, kwargs: dict) -> Any:
        """Run a program function: its own scope, one step of the budget, one level of the depth limit.

        An error inside it gains the place it was called from, so the program's own call stack is
        shown, innermost last.
        """
        if self.depth >= MAX_CALL_DEPTH:
            raise LimitError(f"maximum recursion depth exceeded ({MAX_CALL_DEPTH} nested calls of the program's "
                             f"functions)", hint=f"check that '{fn.__name__}' reaches a case that does not call "
                                                 "itself again")
        self.budget.call()
        scope = Scope(fn.bind(args, kwargs), fn.local_names, fn.scope)
        site = self.call_sites[-1] if self.call_sites else None
        outer, self.scope = self.scope, scope
        self.depth += 1
        try:
            if isinstance(fn.node, ast.Lambda):
                return self.eval(fn.node.body)
            self._block(fn.node.body)
            return None
        except _Return as returned:
            return returned.value
        except (GradcliError, ProgramAssertionError) as exc:
            if site is not None:
                exc.calls.insert(0, node_span(site, self.source))
            raise
        finally:
            self.scope = outer
            self.depth -= 1

    def _return(self, node: ast.Return) -> None:
        raise _Return(None if node.value is None else self.eval(node.value))

    def _with(self, node: ast.With) -> None:
        with contextlib.ExitStack() as stack:
            for item in node.items:
                mode = self.eval(item.context_expr)
                if not isinstance(mode, GradModeContext):
                    raise NotAllowedError("'with' works only with a gradient mode",
                                          hint="call it: 'with torch.no_grad():'").at(
                        *node_span(item.context_expr, self.source))
                stack.enter_context(mode)
            self._block(node.body)

    # -- expressions ----------------------------------------------------------------------------
    def _name(self, node: ast.Name) -> Any:
        return self._lookup(node.id)

    def _lookup(self, name: str) -> Any:
        """Python's order: the scopes from the innermost out, then gradcli's builtins."""
        scope: Scope | None = self.scope
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            if name in scope.local_names:
                raise NameLookupError(f"cannot access local variable '{name}' where it is not associated with a "
                                      f"value", hint=f"assign '{name}' before this line in the function, or pass "
                                                     "it in as an argument")
            scope = scope.parent
        for table in (B.PRELUDE, PYTHON, B.FUNCTIONS):
            if name in table:
                return table[name]
        if name == "print":
            return _PRINT
        known = list(self.env) + list(self.scope.values) + list(B.PRELUDE) + list(PYTHON) + list(B.FUNCTIONS) + \
            ["print"]
        raise NameLookupError(f"name '{name}' is not defined", hint=_suggest(name, known) or
                              "define it first (y = ...), or pass it as an input: NAME=SPEC")

    def _lambda(self, node: ast.Lambda) -> UserFunction:
        return self._make_function("<lambda>", node)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list:
        """A list comprehension or generator expression, built eagerly into a list (bounded)."""
        result: list = []
        first = iterate(self.eval(node.generators[0].iter))
        outer, self.scope = self.scope, Scope({}, frozenset(), self.scope)
        try:
            self._generate(node, 0, first, result)
        finally:
            self.scope = outer
        return result

    def _generate(self, node: ast.ListComp | ast.GeneratorExp, level: int, values: Any, result: list) -> None:
        generator = node.generators[level]
        for value in values:
            self.budget.tick()
            self._bind(generator.target, value)
            if not all(self._truth(self.eval(test), test) for test in generator.ifs):
                continue
            if level + 1 < len(node.generators):
                self._generate(node, level + 1, iterate(self.eval(node.generators[level + 1].iter)), result)
            else:
                check_list(len(result) + 1)
                result.append(self.eval(node.elt))

    def _f_string(self, node: ast.JoinedStr) -> str:
        parts = []
        size = 0
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                spec = self._f_string(part.format_spec) if part.format_spec is not None else ""
                conversion = chr(part.conversion) if part.conversion > 0 else None
                text = T.format_value(self.eval(part.value), spec, conversion)
            else:
                text = part.value
            size += len(text)
            check_string(size)
            parts.append(text)
        return "".join(parts)

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
        if isinstance(left, str) or not isinstance(left, Tensor) and not isinstance(right, Tensor) and \
                (isinstance(left, (list, tuple)) or isinstance(right, (str, list, tuple))):
            return _sequence_arithmetic(symbol, left, right)
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
        return self._index(self.eval(node.value), self.eval(node.slice))

    def _index(self, value: Any, key: Any) -> Any:
        if isinstance(value, Tensor):
            return value[key]
        if isinstance(value, (list, tuple, range, str, Sequential)):
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
            if isinstance(owner, (str, list)):
                return B.bound_method(owner, attr)
            value = getattr(owner, attr)
            if attr == "shape":
                return Size(value)
            return B.NodeName(value) if attr == "name" and isinstance(owner, (Node, AccumulateGrad)) else value
        what = f"'{owner.name}'" if isinstance(owner, B.Namespace) else f"a {_type_name(owner)}"
        hint = _suggest(attr, allowed) or "`gradcli ops` lists what a program can use"
        if not isinstance(owner, (Tensor, B.Namespace)) and callable(owner) and B.TORCH.lookup(attr) is not None:
            hint = f"to use {attr} from torch under a short name, import it first: import torch as " \
                   f"{getattr(owner, '__name__', 't')}"
        raise NameLookupError(f"attribute '{attr}' is not available on {what}", hint=hint)

    def _call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        args = self._arguments(node.args)
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if func is _PRINT:
            self._print(node, args, kwargs)
            return None
        self.call_sites.append(node)
        try:
            return self._invoke(func, args, kwargs, node)
        finally:
            self.call_sites.pop()

    def _arguments(self, nodes: list[ast.expr]) -> list:
        args: list = []
        for a in nodes:
            if isinstance(a, ast.Starred):
                args.extend(PYTHON["list"](self.eval(a.value)))
            else:
                args.append(self.eval(a))
        return args

    def _print(self, node: ast.Call, args: list, kwargs: dict) -> None:
        """`print(...)`: values go to the hook titled by their source; `sep` joins plain values into one text."""
        unknown = set(kwargs) - {"sep", "end", "flush"}
        if unknown:
            raise ArgumentError(f"print() got an unexpected keyword argument '{sorted(unknown)[0]}'",
                                hint="print(a, b, sep=', ', end='\\n')")
        for word in ("sep", "end"):
            if kwargs.get(word) is not None and not isinstance(kwargs[word], str):
                raise ArgumentError(f"{word} must be None or a string, not {_type_name(kwargs[word])}")
        items = [(source_text(a), _shown(v)) for a, v in zip(node.args, args)]
        sep = kwargs.get("sep")
        if sep is not None and sep != " " and not any(isinstance(v, Tensor) for v in args):
            parts = [T.to_str(v) for v in args]
            check_string(sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0))
            items = [(source_text(node), sep.join(parts))]
        if self.hooks.on_print is not None:
            with self.budget.paused():
                self.hooks.on_print(items, node.lineno)

    def _invoke(self, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if not callable(func) or isinstance(func, (Tensor, B.Namespace, type)):
            raise ArgumentError(f"'{source_text(node.func)}' is not a function", hint="call functions and methods only")
        if self.hooks.on_backward is not None and _is_backward(func):
            return self._backward(func, args, kwargs, node)
        if "device" in kwargs and B.takes_device(func):
            B.check_device(kwargs.pop("device"))
        kind = B.gradient_kind(func) if self.hooks.on_gradient is not None else None

        def run(target: Any = func) -> Any:
            try:
                return target(*args, **kwargs)
            except TypeError as exc:
                if isinstance(func, UserFunction):
                    raise
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
        if isinstance(value, (*_NUMBER, type(None), str, list, tuple, range)):
            return bool(value)
        raise ArgumentError(f"a {_type_name(value)} has no truth value")

    def _is_print(self, call: ast.Call) -> bool:
        if not isinstance(call.func, ast.Name) or call.func.id != "print":
            return False
        try:
            return self._lookup("print") is _PRINT
        except NameLookupError:
            return False


_PRINT = object()


def _shown(value: Any) -> Any:
    """A list or tuple goes to the caller as its (bounded) text; other values as they are."""
    return T.Shown(T.to_repr(value)) if isinstance(value, (list, tuple)) else value


def _equal(left: Any, right: Any, budget: list[int]) -> bool:
    """Python's == on lists and tuples, element by element against a budget: nested lists built by
    doubling would make Python's own comparison run for ever."""
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        if isinstance(left, list) != isinstance(right, list) or len(left) != len(right):
            return False
        for a, b in zip(left, right):
            budget[0] -= 1
            if budget[0] < 0:
                check_list(MAX_LIST + 1)
            if a is not b and not _equal(a, b, budget):
                return False
        return True
    return bool(left == right)
_PYTHON_FRAMES_PER_CALL = 30
_IN_PLACE = {ast.Add: "__iadd__", ast.Sub: "__isub__", ast.Mult: "__imul__", ast.Div: "__itruediv__",
             ast.Pow: "__ipow__"}


def _module(name: str) -> "B.Namespace":
    module = B.MODULES.get(name)
    if module is None:
        raise NameLookupError(f"module '{name}' is not available in gradcli yet",
                              hint="available: " + ", ".join(sorted(B.MODULES)))
    return module


def _sequence_arithmetic(symbol: str, left: Any, right: Any) -> Any:
    """`+` joins two strings, lists or tuples; `*` repeats one a number of times; `%` formats a string."""
    if symbol == "%" and isinstance(left, str):
        return T.percent_format(left, right)
    if symbol == "+" and type(left) is type(right):
        size = len(left) + len(right)
        check_string(size) if isinstance(left, str) else check_list(size)
        return left + right
    if symbol == "*":
        sequence, count = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
        if isinstance(count, (int, np.integer)) and not isinstance(count, bool):
            size = len(sequence) * max(int(count), 0)
            check_string(size) if isinstance(sequence, str) else check_list(size)
            return sequence * int(count)
    raise ArgumentError(f"unsupported operand types for {symbol}: {_type_name(left)} and {_type_name(right)}",
                        hint="arithmetic works on numbers and tensors; make a list a tensor with tensor([...]); "
                             "join strings with +, or use an f-string")


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
        return _equal(left, right, [MAX_LIST]) == isinstance(op, ast.Eq)
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
    if isinstance(value, UserFunction) or callable(value):
        return "function"
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
