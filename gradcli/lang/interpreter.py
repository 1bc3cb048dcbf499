"""Runs a checked program tree: statements, control flow, names, calls. It never evaluates text.

The tree is compiled once into a tree of Python closures (one per node, built by plain Python
code over the checked `ast`; no text is ever compiled), so a loop's body costs calls of closures
rather than a walk of the tree. Dispatch is by `ast` node type through dicts (simpleeval's design,
without its blocklists): the parser has already refused every node type missing here. Names, attributes and methods resolve
only through `gradcli.lang.builtins`. Side effects a caller cares about (print, bare expression
values, backward calls) go out through `Hooks`, so the interpreter itself never prints.

The expression compilers live in `expressions.py` (`Expressions`, which `Interpreter` inherits); the
statements, names, scopes and calls are here.

Names live in `Scope`s: the module's (`env`), one per call of a program function, one per
comprehension. Calls of the program's functions come back here (`_call_function`), which is where
the call-depth limit, the step budget and the program's own call stack for errors are kept.
"""
from __future__ import annotations

import ast
import contextlib
import itertools
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import saved as SAVED
from gradcli.engine.budget import program_clock
from gradcli.engine.inplace import check_leaf
from gradcli.engine.modes import GradModeContext
from gradcli.engine.tensor import Tensor
from gradcli.errors import (ArgumentError, GradcliError, LimitError, NameLookupError, NotAllowedError,
                            ProgramAssertionError, ValueDomainError)
from gradcli.lang import arrays
from gradcli.lang import builtins as B
from gradcli.lang import classes as C
from gradcli.lang import containers as D
from gradcli.lang import sets
from gradcli.lang import statements as S
from gradcli.lang.signals import BREAK as _break
from gradcli.lang.signals import CONTINUE as _continue
from gradcli.lang.signals import Returned as _Returned
from gradcli.lang import stdlib
from gradcli.lang.stdlib import runtime
from gradcli.lang import generators as G
from gradcli.lang import resumable as R
from gradcli.lang.limits import ACTIVE, DEFAULT_MAX_STEPS, MAX_CALL_DEPTH, Budget, check_list
from gradcli.lang.operators import BINARY, EXACT, PLAIN, arithmetic, compare, exact, index, set_item, truth, type_name
from gradcli.lang.python_builtins import PYTHON, items, iterate
from gradcli.lang.user_functions import REQUIRED, Scope, UserFunction, local_names, signature
from gradcli.lang.parser import ASSIGNABLE_ATTRIBUTES
from gradcli.source import node_span
from gradcli.lang.expressions import Expressions, _shown, _suggest


@dataclass
class Hooks:
    """How a caller sees what a program does. Each is optional."""

    on_print: Callable[[list[tuple[str, Any]], int, str], None] | None = None
    """A `print(...)`: (each argument titled by its source, line, the text Python's print writes)."""
    on_display: Callable[[str, Any, int], None] | None = None
    on_backward: Callable[[Tensor, Callable[..., None], dict, int], None] | None = None
    on_gradient: Callable[[str, Any, Callable[..., Any], list, dict, int], Any] | None = None
    """A call of a gradient function (`B.gradient_kind`): (kind, func, run, args, kwargs, line) -> its value.

    `func` is the function called; `run(target)` calls `target` (by default `func` itself) with the
    call's arguments, so the hook may call a traced variant that also returns what it differentiated."""
    on_cell_end: Callable[[], None] | None = None
    """After a top-level statement that ends a notebook cell: where Jupyter draws the cell's figures."""


@dataclass
class Outcome:
    """The value of the last statement that produced one, and the name it is known by."""

    value: Any = None
    name: str | None = None


def _reads_saved_tensors(tree: ast.Module) -> bool:
    """Whether the program reads a node's `_saved_*` attribute (only then do ops remember their outputs)."""
    return any(type(n) is ast.Attribute and n.attr in SAVED.NAMES for n in ast.walk(tree))


def source_text(node: ast.AST) -> str:
    """How an expression is titled in output (`x.grad`), normalised by ast.unparse."""
    return ast.unparse(node)


class Interpreter(Expressions):
    """One program run: its variables, its step budget, its hooks, and its compiled code.

    Each `_statements` / `_expressions` entry compiles one node type into a closure that runs it,
    once per node: names, operators, attribute lookups and call shapes are decided at compile time,
    and running a loop's body is calling its closures. Compiling only builds closures over the
    checked tree; it raises nothing and runs nothing, so errors still happen where the program
    reaches them. Every expression closure that can fail places its error at its own node (the
    innermost one wins, as `GradcliError.at` keeps the first place), every statement at itself.
    """

    def __init__(self, source: str, env: dict[str, Any] | None = None, hooks: Hooks | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS, filename: str | None = None, timeout: float | None = None,
                 displayed: set[int] | None = None, cell_ends: set[int] | None = None) -> None:
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
        self._texts: dict[ast.AST, str] = {}
        self._bodies: dict[ast.AST, Callable[[], Any]] = {}
        self._outcome_name: str | ast.AST | None = None
        self._top_level = True  # while compiling: the module's own statements, not a function's body
        self._nested = False  # while compiling: inside a compound statement's body (nothing there is displayed)
        self._declared: dict[str, str] = {}  # while compiling a function: its `global` / `nonlocal` names
        self._displayed = displayed
        """The lines whose bare expression is shown (a notebook cell's last); None: every top-level one."""
        self._cell_ends = cell_ends or set()
        self.handling: list[Any] = []  # the exceptions being handled (`raise` alone re-raises the innermost)
        self.generators = G.live_set()  # the program's generators started and unfinished, closed when the run ends
        self.own = S.own_builtins(self)
        self._statements: dict[type, Callable[[Any], Callable[[], Any]]] = {
            ast.Assign: self._assign, ast.AugAssign: self._aug_assign, ast.Expr: self._expr_statement,
            ast.If: self._if, ast.While: self._while, ast.For: self._for, ast.Assert: self._assert,
            ast.Pass: lambda node: _nothing, ast.Break: lambda node: _breaking,
            ast.Continue: lambda node: _continuing,
            ast.Import: self._import, ast.ImportFrom: self._import_from, ast.FunctionDef: self._function_def, ast.ClassDef: self._class_def,
            ast.Return: self._return, ast.With: self._with,
            ast.AnnAssign: self._ann_assign, ast.Try: self._try, ast.Raise: self._raise,
            ast.Global: lambda node: _nothing, ast.Nonlocal: lambda node: _nothing, ast.Delete: self._delete,
        }
        self._expressions: dict[type, Callable[[Any], Callable[[], Any]]] = {
            ast.Constant: _constant, ast.Name: self._name, ast.List: self._list, ast.Tuple: self._tuple,
            ast.UnaryOp: self._unary, ast.BinOp: self._binary, ast.BoolOp: self._bool_op,
            ast.Compare: self._compare, ast.IfExp: self._if_exp, ast.Subscript: self._subscript,
            ast.Slice: self._slice, ast.Call: self._call, ast.Attribute: self._attribute, ast.Lambda: self._lambda,
            ast.ListComp: self._comprehension, ast.GeneratorExp: self._generator_expression,
            ast.JoinedStr: self._f_string, ast.Dict: self._dict, ast.Set: self._set,
            ast.SetComp: self._comprehension, ast.DictComp: self._comprehension, ast.Yield: self._yield,
            ast.YieldFrom: self._yield,
        }

    # -- running ------------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> Outcome:
        # Each call of a program's function costs a few dozen Python frames; the call-depth limit,
        # not Python's, is what a deep recursion must meet.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _PYTHON_FRAMES_PER_CALL * MAX_CALL_DEPTH + 2000))
        ACTIVE.append(self.budget)
        runtime.PRINTERS.append(self._show_text)
        runtime.LINES.append(self._call_line)
        runtime.GETTERS.append(self.own["getattr"])
        stdlib.reset_all()
        try:
            body = self._cells(tree.body)
            with program_clock(self.budget.timeout), SAVED.identities(_reads_saved_tensors(tree)):
                self.budget.left()  # a program started past the deadline (a plot's next point) stops at once
                body()
        finally:
            ACTIVE.pop()
            runtime.PRINTERS.pop()
            runtime.LINES.pop()
            runtime.GETTERS.pop()
            G.close_all(self.generators)
            sys.setrecursionlimit(limit)
        name = self._outcome_name
        self.outcome.name = self.text(name) if isinstance(name, ast.AST) else name
        return self.outcome

    def _cells(self, body: list[ast.stmt]) -> Callable[[], Any]:
        """The module's statements, cut after each notebook cell's last one to tell `on_cell_end`."""
        on_end = self.hooks.on_cell_end
        if not self._cell_ends or on_end is None:
            return self._block(body)
        parts: list[Callable[[], Any]] = []
        start = 0
        for at, statement in enumerate(body):
            if statement.lineno in self._cell_ends:
                parts.append(self._block(body[start:at + 1]))
                start = at + 1
        rest = self._block(body[start:])

        def cells() -> Any:
            for part in parts:
                part()
                on_end()
            return rest()
        return cells

    def eval(self, node: ast.expr) -> Any:
        """The value of one expression (an input spec's), compiled and run."""
        return self._expression(node)()

    def text(self, node: ast.AST) -> str:
        """How an expression is titled in output (`x.grad`), normalised by ast.unparse; built once, when needed."""
        text = self._texts.get(node)
        if text is None:
            text = self._texts[node] = source_text(node)
        return text

    def _expression(self, node: ast.expr) -> Callable[[], Any]:
        return self._expressions[type(node)](node)

    def _operand(self, node: ast.expr) -> tuple[Callable[[], Any] | None, Any]:
        """An operand's closure, or None and the operand's value when it is a constant (read without a call)."""
        if isinstance(node, ast.Constant):
            return None, node.value
        return self._expression(node), None

    def _block(self, body: list[ast.stmt]) -> Callable[[], Any]:
        """The statements in order; the closure returns None, or the signal (break, continue, return) that ends it."""
        steps = [(self._statements[type(stmt)](stmt), stmt) for stmt in body]
        budget, tick, locate = self.budget, self.budget.tick, self._locate

        def block() -> Any:
            for run, stmt in steps:
                if budget.ticks > 0:  # `tick()`, its count written out: once per statement
                    budget.ticks -= 1
                else:
                    tick()
                try:
                    signal = run()
                except GradcliError as exc:
                    raise locate(exc, stmt) from None
                except (ZeroDivisionError, OverflowError, MemoryError, RecursionError) as exc:
                    raise self.failure(exc, stmt) from None
                if signal is not None:
                    return signal
            return None
        return block

    def failure(self, exc: BaseException, stmt: ast.stmt) -> GradcliError:
        """What Python raised for a statement as the program's error: arithmetic, or memory and depth."""
        if isinstance(exc, (ZeroDivisionError, OverflowError)):
            return self._locate(ValueDomainError(f"{exc}", hint="check the values that reach this line"), stmt)
        return self._locate(LimitError("the program needs more memory or depth than is available",
                                       hint="use smaller shapes or fewer nested operations"), stmt)

    def statement(self, stmt: ast.stmt) -> Callable[[], Any]:
        """One statement's closure (`lang.resumable` compiles a generator's statements that hold no yield so)."""
        return self._statements[type(stmt)](stmt)

    def expression(self, node: ast.expr) -> Callable[[], Any]:
        return self._expression(node)

    def binder(self, target: ast.expr) -> Callable[[Any], None]:
        return self._binder(target)

    def locate(self, exc: GradcliError, node: ast.AST) -> GradcliError:
        return self._locate(exc, node)

    @staticmethod
    def forever() -> Any:
        """What a `while` loop runs over (its test ends it)."""
        return _FOREVER

    def _locate(self, exc: GradcliError, node: ast.AST) -> GradcliError:
        if exc.line is None:
            line, column, length = node_span(node, self.source)
            exc.at(line, column, length, self.source)
        if exc.source is None:
            exc.source = self.source
        if exc.filename is None:
            exc.filename = self.filename
        return exc

    def _located(self, node: ast.AST, run: Callable[[], Any]) -> Callable[[], Any]:
        """`run` with its errors placed at `node` (for the closures that do not place their own)."""
        locate = self._locate

        def located() -> Any:
            try:
                return run()
            except GradcliError as exc:
                raise locate(exc, node) from None
        return located

    # -- statements -----------------------------------------------------------------------------
    def _remember(self, value: Any, name: str | ast.AST) -> None:
        """Keep a top-level value as the outcome; a name given as its node is written out when the run ends.

        Only the module's own statements call this (decided when compiling them, `_top_level`): they
        run in the module's scope, and a function's statements always in a call's."""
        if value is not None and not isinstance(value, str):
            self.outcome.value, self._outcome_name = value, name

    def _assign(self, node: ast.Assign) -> Callable[[], None]:
        value_of = self._expression(node.value)
        last = node.targets[-1]
        name: str | ast.AST = last.id if isinstance(last, ast.Name) else last
        remember = self._remember if self._top_level else None
        if len(node.targets) == 1 and isinstance(last, ast.Name) and last.id not in self._declared:
            target = last.id

            def assign_name() -> None:
                value = value_of()
                self.scope.values[target] = value
                if remember is not None:
                    remember(value, target)
            return assign_name
        binds = [self._binder(target) for target in node.targets]

        def assign() -> None:
            value = value_of()
            for bind in binds:
                bind(value)
            if remember is not None:
                remember(value, name)
        return assign

    def _binder(self, target: ast.expr) -> Callable[[Any], None]:
        """A closure that binds a value to `target` (a name, a tuple of targets, an item or an attribute)."""
        if isinstance(target, ast.Name):
            name = target.id
            if name in self._declared:
                values_of = self._declared_values(name)

                def bind_declared(value: Any) -> None:
                    values_of()[name] = value
                return bind_declared

            def bind_name(value: Any) -> None:
                self.scope.values[name] = value
            return bind_name
        if isinstance(target, (ast.Tuple, ast.List)):
            starred = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            binds = [self._binder(t.value if isinstance(t, ast.Starred) else t) for t in target.elts]
            count = len(binds)
            if starred:
                star = starred[0]

                def bind_starred(value: Any) -> None:
                    values = self._unpack(value, count, target, star)
                    after = len(values) - (count - star - 1)
                    for bind, item in zip(binds, [*values[:star], values[star:after], *values[after:]]):
                        bind(item)
                return bind_starred

            def bind_each(value: Any) -> None:
                for bind, item in zip(binds, self._unpack(value, count, target)):
                    bind(item)
            return bind_each
        owner_of = self._expression(target.value)
        if isinstance(target, ast.Subscript):
            key_of = self._expression(target.slice)

            def bind_item(value: Any) -> None:
                set_item(owner_of(), key_of(), value)
            return bind_item

        def bind_attribute(value: Any) -> None:  # the parser admits only x.requires_grad/grad/data
            self._set_attribute(owner_of(), target, value)
        return bind_attribute

    def _unpack(self, value: Any, count: int, target: ast.expr, star: int | None = None) -> list:
        """The values `a, b = value` (or `a, *rest = value`, `star` the starred name's place) binds."""
        if isinstance(value, (tuple, list)) or isinstance(value, Tensor) and value.ndim > 0:
            values = list(value)
        else:
            try:
                values = items(value)
            except GradcliError:
                raise ArgumentError(f"cannot unpack a {type_name(value)} into {count} names").at(
                    *node_span(target, self.source)) from None
        if len(values) == count if star is None else len(values) >= count - 1:
            return values
        raise ArgumentError(f"cannot unpack {len(values)} values into {count} names").at(
            *node_span(target, self.source))

    def _declared_values(self, name: str) -> Callable[[], dict]:
        """Where a `global` or `nonlocal` name of the function being compiled lives, found when it is bound."""
        if self._declared[name] == "global":
            return lambda: self.globals.values

        def enclosing() -> dict:
            scope = self.scope.parent
            while scope is not None and scope is not self.globals:
                if name in scope.values or name in scope.local_names:
                    return scope.values
                scope = scope.parent
            raise NameLookupError(f"no binding for nonlocal '{name}' found",
                                  hint="assign it in the enclosing function first")
        return enclosing

    def _set_attribute(self, owner: Any, target: ast.Attribute, value: Any) -> None:
        if isinstance(owner, C.SETTABLE):
            return C.set_attribute(owner, target.attr, value)
        if hasattr(type(owner), "program_set_attribute"):  # a facade's object that takes new attributes
            try:
                return owner.program_set_attribute(target.attr, value)
            except GradcliError as exc:
                raise exc.at(*node_span(target, self.source)) from None
        if not isinstance(owner, Tensor) or target.attr not in ASSIGNABLE_ATTRIBUTES:
            raise NotAllowedError(f"cannot assign to attribute '{target.attr}' of a {type_name(owner)}",
                                  hint="only a tensor's requires_grad, grad and data can be assigned").at(
                *node_span(target, self.source))
        if target.attr == "requires_grad":
            owner.requires_grad_(bool(value))
        elif target.attr == "grad":
            owner.grad = None if value is None else _checked_grad(owner, value)
        else:
            owner.data = F.as_tensor(value)

    def _aug_assign(self, node: ast.AugAssign) -> Callable[[], None]:
        """Python's `t op= v`: a tensor is updated in place (PyTorch's rules), anything else rebound."""
        target, op = node.target, node.op
        if isinstance(target, ast.Name) and target.id in self._declared:
            read, bind, value_of = self._expression(ast.Name(target.id, ast.Load())), self._binder(target), \
                self._expression(node.value)
            return lambda: bind(self._updated(op, read(), value_of()))
        if isinstance(target, ast.Name):
            name, remember = target.id, self._remember if self._top_level else None
            operand_of, operand = self._operand(node.value)
            symbol, fn = BINARY[type(op)]
            on_numbers = symbol in EXACT

            def update_name() -> None:
                values = self.scope.values
                current = values[name] if name in values else self._lookup(name)
                value = operand if operand_of is None else operand_of()
                # two Python numbers: what `_updated` would decide, without its checks
                if on_numbers and type(current) is type(value) and type(current) in PLAIN:
                    value = exact(fn, current, value)
                else:
                    value = self._updated(op, current, value)
                values[name] = value
                if remember is not None:
                    remember(value, name)
            return update_name
        value_of, owner_of = self._expression(node.value), self._expression(target.value)
        if isinstance(target, ast.Attribute):
            def update_attribute() -> None:
                owner = owner_of()
                current = self._get_attribute(owner, target.attr, target)
                self._set_attribute(owner, target, self._updated(op, current, value_of()))
            return update_attribute
        key_of = self._expression(target.slice)

        def update_item() -> None:
            container, key = owner_of(), key_of()
            if isinstance(container, Tensor):
                check_leaf(container, view=True)
            current = index(container, key)
            if isinstance(container, dict):
                D.set_item(container, key, self._updated(op, current, value_of()))
                return
            set_item(container, key, arithmetic(op, current, value_of()))
        return update_item

    def _updated(self, op: ast.operator, current: Any, value: Any) -> Any:
        if type(current) is type(value) and type(current) in PLAIN and BINARY[type(op)][0] in EXACT:
            return exact(BINARY[type(op)][1], current, value)
        if isinstance(current, Tensor) and type(op) in _IN_PLACE:
            return getattr(current, _IN_PLACE[type(op)])(value)
        if type(current) is np.ndarray and BINARY[type(op)][0] in arrays.IN_PLACE:
            return arrays.update(BINARY[type(op)][0], current, value)
        if isinstance(current, list) and isinstance(op, ast.Add):
            check_list(len(current) + len(value if isinstance(value, (list, tuple)) else ()))
            current.extend(PYTHON["list"](value))
            return current
        if isinstance(current, (set, dict)) and type(op) in sets.SYMBOLS:
            return sets.update(op, current, value)
        return arithmetic(op, current, value)

    def _expr_statement(self, node: ast.Expr) -> Callable[[], None]:
        expression = node.value
        if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
            return _nothing  # a string statement is a comment ('''求导数''')
        value_of = self._expression(expression)
        maybe_print = isinstance(expression, ast.Call) and isinstance(expression.func, ast.Name) and \
            expression.func.id == "print"
        top_level = self._top_level
        shown = top_level and not self._nested and (self._displayed is None or node.lineno in self._displayed)
        # A script's bare call is run for its effect unless it gives tensors (`model(x)`,
        # `torch.autograd.grad(y, x)`): Python shows nothing for `timer.stop()`. A notebook shows a
        # cell's last expression whatever it is, as Jupyter does.
        for_effect = self._displayed is None and isinstance(expression, ast.Call)

        def expression_statement() -> None:
            value = value_of()
            if not top_level or value is None or maybe_print and self._is_print():
                return
            self._remember(value, expression)
            if for_effect and not _tensors(value):
                return
            if shown and self.hooks.on_display is not None:
                self.hooks.on_display(self.text(expression), _shown(value), node.lineno)
        return expression_statement

    def _inner(self, body: list[ast.stmt]) -> Callable[[], Any]:
        """A compound statement's body: compiled like any block, but its bare expressions are never shown."""
        outer, self._nested = self._nested, True
        try:
            return self._block(body)
        finally:
            self._nested = outer

    def _if(self, node: ast.If) -> Callable[[], Any]:
        test_of, body, orelse = self._expression(node.test), self._inner(node.body), self._inner(node.orelse)

        def if_() -> Any:
            return body() if truth(test_of()) else orelse()
        return if_

    def _while(self, node: ast.While) -> Callable[[], Any]:
        test_of, body = self._expression(node.test), self._inner(node.body)
        budget, orelse = self.budget, self._inner(node.orelse) if node.orelse else None

        def while_() -> Any:
            return _repeat(budget, node, _FOREVER, None, body, test_of, orelse)
        return while_

    def _for(self, node: ast.For) -> Callable[[], Any]:
        iter_of, bind, body = self._expression(node.iter), self._binder(node.target), self._inner(node.body)
        budget, orelse = self.budget, self._inner(node.orelse) if node.orelse else None

        def for_() -> Any:
            try:
                values = iterate(iter_of())
            except GradcliError as exc:
                raise self._locate(exc, node.iter) from None
            return _repeat(budget, node, values, bind, body, None, orelse)
        return for_

    def _assert(self, node: ast.Assert) -> Callable[[], None]:
        test = node.test
        message_of = self._expression(node.msg) if node.msg is not None else None
        if isinstance(test, ast.Call):
            func_of, arguments = self._expression(test.func), self._arguments(test.args)
            keywords = [(k.arg, self._expression(k.value)) for k in test.keywords]

            def check() -> tuple[Any, list]:
                func = func_of()
                args = arguments()
                kwargs = S.keywords(keywords)
                shown = [_shown(v) for v in args]
                return self._invoke(func, args, kwargs, test), list(zip(test.args, shown))
        elif isinstance(test, ast.Compare) and len(test.ops) == 1:
            left_of, right_of, op = self._expression(test.left), self._expression(test.comparators[0]), test.ops[0]

            def check() -> tuple[Any, list]:
                left, right = left_of(), right_of()
                shown = [(test.left, _shown(left)), (test.comparators[0], _shown(right))]
                return compare(op, left, right), shown
        else:
            test_of = self._expression(test)

            def check() -> tuple[Any, list]:
                return test_of(), []

        def assert_() -> None:
            result, shown = check()
            if not truth(result):
                message = message_of() if message_of is not None else None
                line, column, length = node_span(node, self.source)
                values = [(self.text(part), value) for part, value in shown]
                raise ProgramAssertionError(self.text(test), values, message, line, column, length, self.source,
                                            self.filename)
        return assert_

    def _import(self, node: ast.Import) -> Callable[[], None]:
        def import_() -> None:
            for alias in node.names:
                module = _module(alias.name)
                if alias.asname:
                    self.scope.values[alias.asname] = module
                else:
                    top = alias.name.split(".")[0]
                    self.scope.values[top] = _module(top)
        return import_

    def _import_from(self, node: ast.ImportFrom) -> Callable[[], None]:
        if node.module == "__future__":
            return _nothing  # accepted, no effect: gradcli already reads Python 3's meaning

        def import_from() -> None:
            module = _module(node.module or "")
            for alias in node.names:
                value = module.lookup(alias.name)
                if value is None and module.refusal:
                    raise NotAllowedError(f"'{module.name}.{alias.name}' is not available: {module.refusal}",
                                          hint="docs/library.md lists what gradcli runs of torch.distributed")
                if value is None:
                    raise NameLookupError(f"cannot import name '{alias.name}' from '{node.module}'",
                                          hint=_suggest(alias.name, module.members))
                self.scope.values[alias.asname or alias.name] = value
        return import_from

    def _function_def(self, node: ast.FunctionDef) -> Callable[[], None]:
        decorator_ofs = [self._expression(d) for d in node.decorator_list]
        make = self._function_maker(node.name, node)

        def function_def() -> None:
            decorators = [d() for d in decorator_ofs]
            self.scope.values[node.name] = self._decorated(node, decorators, make())
        return function_def

    def _decorated(self, node: ast.FunctionDef | ast.ClassDef, decorators: list, value: Any) -> Any:
        """`value` (the function or class `node` defines) passed through its decorators, innermost first."""
        for decorator, written in zip(reversed(decorators), reversed(node.decorator_list)):
            if not callable(decorator) or isinstance(decorator, (Tensor, B.Namespace, type)):
                raise ArgumentError(f"'{self.text(written)}' is not a decorator",
                                    hint="gradcli's decorators are @torch.no_grad(), @torch.enable_grad(), "
                                         "@dataclass and your own functions").at(*node_span(written, self.source))
            value = decorator(value)
        return value

    def _class_def(self, node: ast.ClassDef) -> Callable[[], None]:
        """A class: its bases evaluated and its body run where it is defined; `classes` builds the rest."""
        base_ofs = [self._expression(b) for b in node.bases]
        outer, self._top_level = self._top_level, False
        try:
            body = self._block(node.body)
        finally:
            self._top_level = outer

        decorator_ofs = [self._expression(d) for d in node.decorator_list]
        fields = tuple(stmt.target.id for stmt in node.body if isinstance(stmt, ast.AnnAssign))

        def class_def() -> None:
            decorators = [d() for d in decorator_ofs]
            cls = C.define(self, node, [b() for b in base_ofs], body)
            cls.fields = fields  # the names the body annotates, in order (what a @dataclass makes fields of)
            self.scope.values[node.name] = self._decorated(node, decorators, cls)
        return class_def

    def _function_maker(self, name: str, node: ast.FunctionDef | ast.Lambda) -> Callable[[], UserFunction]:
        """A closure that makes the function `node` defines, its defaults evaluated where it is defined."""
        args = node.args
        default_ofs = [self._expression(d) for d in args.defaults]
        kw_default_ofs = [None if d is None else self._expression(d) for d in args.kw_defaults]
        names = local_names(node)

        def make() -> UserFunction:
            defaults = [d() for d in default_ofs]
            kw_defaults = [REQUIRED if d is None else d() for d in kw_default_ofs]
            return UserFunction(name, node, signature(args, defaults, kw_defaults), self.scope, self._call_function,
                                names)
        return make

    def _body(self, node: ast.FunctionDef | ast.Lambda) -> Callable[[], Any]:
        """A function's compiled body (compiled at its first call): it returns the function's value."""
        body = self._bodies.get(node)
        if body is None:
            if isinstance(node, ast.Lambda):
                body = self._expression(node.body)
            elif G.is_generator(node):
                body = self._generator_body(node)
            else:
                outer = self._top_level, self._nested, self._declared
                self._top_level, self._nested, self._declared = False, True, S.declarations(node)
                try:
                    block = self._block(node.body)
                finally:
                    self._top_level, self._nested, self._declared = outer

                def body() -> Any:
                    signal = block()
                    return signal.value if isinstance(signal, _Returned) else None
            self._bodies[node] = body
        return body

    def _generator_body(self, node: ast.FunctionDef) -> Callable[[], Any]:
        """A generator function's body: a Python generator (`lang.resumable`) its generator object drives."""
        outer = self._top_level, self._nested, self._declared
        self._top_level, self._nested, self._declared = False, True, S.declarations(node)
        try:
            block = R.block(self, node.body)
        finally:
            self._top_level, self._nested, self._declared = outer

        def body() -> Any:
            signal = yield from block()
            return signal.value if isinstance(signal, _Returned) else None
        return body

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
        body = self._body(fn.node)
        if fn.generator:
            return G.ProgramGenerator(self, fn.__name__, scope, body, site)
        outer, self.scope = self.scope, scope
        self.depth += 1
        try:
            return body()
        except (GradcliError, ProgramAssertionError) as exc:
            if site is not None:
                exc.calls.insert(0, node_span(site, self.source))
            raise
        finally:
            self.scope = outer
            self.depth -= 1

    def _ann_assign(self, node: ast.AnnAssign) -> Callable[[], None]:
        """`x: T = v` binds as `x = v` would; `x: T` alone binds nothing. The annotation is never evaluated."""
        if node.value is None:
            return _nothing
        return self._assign(ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno,
                                       col_offset=node.col_offset, end_lineno=node.end_lineno,
                                       end_col_offset=node.end_col_offset))

    def _try(self, node: ast.Try) -> Callable[[], Any]:
        handlers = [(None if h.type is None else self._expression(h.type), h.name, self._inner(h.body), h)
                    for h in node.handlers]
        return S.try_statement(self, self._inner(node.body), handlers, self._inner(node.orelse),
                               self._inner(node.finalbody) if node.finalbody else None)

    def _raise(self, node: ast.Raise) -> Callable[[], None]:
        return S.raise_statement(self, None if node.exc is None else self._expression(node.exc), node)

    def _delete(self, node: ast.Delete) -> Callable[[], None]:
        deletes = [self._deleter(target) for target in node.targets]

        def delete() -> None:
            for run in deletes:
                run()
        return delete

    def _deleter(self, target: ast.expr) -> Callable[[], None]:
        if isinstance(target, (ast.Tuple, ast.List)):
            parts = [self._deleter(t) for t in target.elts]
            return lambda: [run() for run in parts] and None
        if isinstance(target, ast.Subscript):
            owner_of, key_of = self._expression(target.value), self._expression(target.slice)
            return self._located(target, lambda: S.delete_item(owner_of(), key_of()))
        if isinstance(target, ast.Attribute):
            owner_of, attr = self._expression(target.value), target.attr
            return self._located(target, lambda: S.delete_attribute(owner_of(), attr))
        name = target.id
        values_of = self._declared_values(name) if name in self._declared else lambda: self.scope.values

        def delete_name() -> None:
            values = values_of()
            if name not in values:
                raise NameLookupError(f"name '{name}' is not defined", hint="del removes a name bound before").at(
                    *node_span(target, self.source))
            del values[name]
        return delete_name

    def _yield(self, node: ast.Yield | ast.YieldFrom) -> Callable[[], Any]:
        """A `yield` `lang.resumable` did not compile (one in a class body): refused where it is reached."""
        def yield_() -> Any:
            raise NotAllowedError("'yield' is not supported here", hint="yield in a function's own body").at(
                *node_span(node, self.source))
        return yield_

    def _return(self, node: ast.Return) -> Callable[[], "_Returned"]:
        if node.value is None:
            return lambda: _Returned(None)
        value_of = self._expression(node.value)
        return lambda: _Returned(value_of())

    def _with(self, node: ast.With) -> Callable[[], Any]:
        enter, body = self.modes(node), self._inner(node.body)

        def with_() -> Any:
            with contextlib.ExitStack() as stack:
                enter(stack)
                return body()
        return with_

    def modes(self, node: ast.With) -> Callable[[contextlib.ExitStack], None]:
        """A `with` statement's gradient modes, each checked and entered on the stack it is given."""
        items = [(self._expression(item.context_expr), item.context_expr,
                  None if item.optional_vars is None else self._binder(item.optional_vars)) for item in node.items]

        def enter(stack: contextlib.ExitStack) -> None:
            for mode_of, written, bind in items:
                mode = mode_of()
                if not isinstance(mode, (GradModeContext, *B.CONTEXT_TYPES)):
                    raise NotAllowedError("'with' works only with a gradient mode",
                                          hint="call it: 'with torch.no_grad():'").at(*node_span(written, self.source))
                entered = stack.enter_context(mode)
                if bind is not None:
                    bind(entered)
        return enter


_FOREVER = itertools.repeat(None)
"""The values a `while` loop runs over (its test ends it)."""


def _repeat(budget: Budget, node: ast.AST, values: Any, bind: Callable[[Any], None] | None,
            body: Callable[[], Any], test: Callable[[], Any] | None = None,
            orelse: Callable[[], Any] | None = None) -> Any:
    """The loop both `while` (values without end, its test until false) and `for` (its values) run: a
    step counted per pass, `break`/`continue` consumed here, a `return` handed on outward; the loop's
    `else` runs when it ends without `break`, outside the loop (its own break is the enclosing loop's)."""
    with budget.inside(node):
        for value in values:
            if test is not None and not truth(test()):
                break
            if bind is not None:
                bind(value)
            budget.step()
            signal = body()
            if signal is not None and signal is not _continue:
                return None if signal is _break else signal
    return None if orelse is None else orelse()


def _breaking() -> object:
    return _break


def _continuing() -> object:
    return _continue


def _nothing() -> None:
    """`pass` and a string statement."""


def _constant(node: ast.Constant) -> Callable[[], Any]:
    value = node.value
    return lambda: value


def _tensors(value: Any) -> bool:
    """A tensor, or a tuple or list of them (what a gradient function returns)."""
    if isinstance(value, (tuple, list)):
        return bool(value) and all(isinstance(v, Tensor) for v in value)
    return isinstance(value, Tensor)


_PYTHON_FRAMES_PER_CALL = 30
_IN_PLACE = {ast.Add: "__iadd__", ast.Sub: "__isub__", ast.Mult: "__imul__", ast.Div: "__itruediv__",
             ast.Pow: "__ipow__"}


def _module(name: str) -> "B.Namespace":
    module = B.MODULES.get(name)
    if module is None and name in stdlib.NAMES:
        return stdlib.facade(name)
    if module is None:
        raise NameLookupError(f"module '{name}' is not available in gradcli yet",
                              hint="available: " + ", ".join(sorted(B.MODULES)))
    return module


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


