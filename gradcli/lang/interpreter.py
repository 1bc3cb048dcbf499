"""Runs a checked program tree: statements, control flow, names, calls. It never evaluates text.

The tree is compiled once into a tree of Python closures (one per node, built by plain Python
code over the checked `ast`; no text is ever compiled), so a loop's body costs calls of closures
rather than a walk of the tree. Dispatch is by `ast` node type through dicts (simpleeval's design,
without its blocklists): the parser has already refused every node type missing here. Names, attributes and methods resolve
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
import inspect
import itertools
import sys
from dataclasses import dataclass
from types import MethodType
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import saved as SAVED
from gradcli.engine.autograd import as_tensor_backward
from gradcli.engine.backward import run_backward
from gradcli.engine.inplace import check_leaf
from gradcli.engine.logical import invert
from gradcli.engine.modes import GradModeContext
from gradcli.nn.modules import Module, registered
from gradcli.engine.tensor import AccumulateGrad, Node, Tensor, program_node
from gradcli.engine.tensor_str import UNINITIALIZED, Size
from gradcli.errors import (ArgumentError, GradcliError, LimitError, NameLookupError, NotAllowedError,
                            ProgramAssertionError, ValueDomainError)
from gradcli.lang import arrays as ARR
from gradcli.lang import dunders
from gradcli.lang import builtins as B
from gradcli.lang import classes as C
from gradcli.lang import containers as D
from gradcli.lang import formatting as T
from gradcli.lang import sets
from gradcli.lang import statements as S
from gradcli.lang.signals import BREAK as _break
from gradcli.lang.signals import CONTINUE as _continue
from gradcli.lang.signals import Returned as _Returned
from gradcli.lang import stdlib
from gradcli.lang.stdlib import runtime
from gradcli.lang.objects import Instance
from gradcli.lang import generators as G
from gradcli.lang import resumable as R
from gradcli.lang.limits import ACTIVE, DEFAULT_MAX_STEPS, MAX_CALL_DEPTH, Budget, check_list, check_string
from gradcli.lang.operators import (BINARY, COMPARE, COMPARED, EXACT, NUMBER, PLAIN, arithmetic, compare, exact, index,
                                    set_item, truth, type_name)
from gradcli.lang.python_builtins import PYTHON, items, iterate
from gradcli.lang.user_functions import REQUIRED, Scope, UserFunction, local_names, signature
from gradcli.lang.numpy_facade.namespace import refusal as numpy_refusal
from gradcli.lang.parser import ASSIGNABLE_ATTRIBUTES, READABLE_ATTRIBUTES
from gradcli.source import node_span


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


class Interpreter:
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
                 displayed: set[int] | None = None) -> None:
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
        runtime.GETTERS.append(self.own["getattr"])
        stdlib.reset_all()
        try:
            body = self._block(tree.body)
            self.budget.start()
            with SAVED.identities(_reads_saved_tensors(tree)):
                body()
        finally:
            ACTIVE.pop()
            runtime.PRINTERS.pop()
            runtime.GETTERS.pop()
            G.close_all(self.generators)
            sys.setrecursionlimit(limit)
        name = self._outcome_name
        self.outcome.name = self.text(name) if isinstance(name, ast.AST) else name
        return self.outcome

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
                with self.budget.paused():
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

    # -- expressions ----------------------------------------------------------------------------
    def _name(self, node: ast.Name) -> Callable[[], Any]:
        name, lookup, locate = node.id, self._lookup, self._locate

        def read_name() -> Any:
            values = self.scope.values
            if name in values:
                return values[name]
            try:
                return lookup(name)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return read_name

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
        for table in (B.PRELUDE, self.own, PYTHON, B.FUNCTIONS):
            if name in table:
                return table[name]
        if name == "print":
            return _PRINT
        if name == "__name__":
            return "__main__"
        known = list(self.env) + list(self.scope.values) + list(B.PRELUDE) + list(PYTHON) + list(B.FUNCTIONS) + \
            ["print"]
        raise NameLookupError(f"name '{name}' is not defined", hint=_suggest(name, known) or
                              "define it first (y = ...), or pass it as an input: NAME=SPEC")

    def _lambda(self, node: ast.Lambda) -> Callable[[], UserFunction]:
        return self._located(node, self._function_maker("<lambda>", node))

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp) -> Callable[[], list]:
        """A list, set or dict comprehension, built eagerly (bounded)."""
        generators = self._comprehension_levels(node)
        if isinstance(node, ast.DictComp):
            key_of, item_of = self._expression(node.key), self._expression(node.value)

            def element_of() -> tuple:
                return key_of(), item_of()
        else:
            element_of = self._expression(node.elt)
        produce = _produced(generators, element_of, self.budget.tick)
        made = {ast.SetComp: D.set_, ast.DictComp: D.dict_}.get(type(node))

        def comprehension() -> list:
            result: list = []
            first = iterate(generators[0][0]())
            outer, self.scope = self.scope, Scope({}, frozenset(), self.scope)
            try:
                for item in produce(0, first):
                    check_list(len(result) + 1)
                    result.append(item)
            finally:
                self.scope = outer
            return result if made is None else made(result)
        return self._located(node, comprehension)

    def _comprehension_levels(self, node: ast.comprehension) -> list[tuple[Callable[[], Any], Callable[[Any], None],
                                                                          list[Callable[[], Any]]]]:
        """Each `for` of a comprehension: its iterable, its target's binder, its `if` tests."""
        return [(self._expression(g.iter), self._binder(g.target), [self._expression(t) for t in g.ifs])
                for g in node.generators]

    def _generator_expression(self, node: ast.GeneratorExp) -> Callable[[], G.ProgramGenerator]:
        """`(e for v in xs)`: a lazy generator, as Python's; its first iterable is read where it is written,
        and each item it visits is a step (an endless one meets the step limit wherever it is consumed)."""
        generators, element_of = self._comprehension_levels(node), self._expression(node.elt)
        produce, locate = _produced(generators, element_of, self.budget.step), self._locate

        def generator_expression() -> G.ProgramGenerator:
            first = iterate(generators[0][0]())

            def body() -> Any:
                try:
                    yield from produce(0, first)
                except GradcliError as exc:
                    raise locate(exc, node) from None
            return G.ProgramGenerator(self, "<genexpr>", Scope({}, frozenset(), self.scope), body, None)
        return self._located(node, generator_expression)

    def _f_string(self, node: ast.JoinedStr) -> Callable[[], str]:
        return self._located(node, self._joined(node))

    def _joined(self, node: ast.JoinedStr) -> Callable[[], str]:
        """An f-string's text (a format spec is one too), its errors placed by the caller."""
        parts: list[Any] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                spec_of = self._joined(part.format_spec) if part.format_spec is not None else None
                conversion = chr(part.conversion) if part.conversion > 0 else None
                parts.append((self._expression(part.value), spec_of, conversion))
            else:
                parts.append(part.value)

        def f_string() -> str:
            texts = []
            size = 0
            for part in parts:
                if isinstance(part, str):
                    text = part
                else:
                    value_of, spec_of, conversion = part
                    spec = spec_of() if spec_of is not None else ""
                    text = T.format_value(value_of(), spec, conversion)
                size += len(text)
                check_string(size)
                texts.append(text)
            return "".join(texts)
        return f_string

    def _list(self, node: ast.List) -> Callable[[], list]:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self._located(node, self._arguments(node.elts))
        element_ofs = [self._expression(e) for e in node.elts]
        return self._located(node, lambda: [e() for e in element_ofs])

    def _tuple(self, node: ast.Tuple) -> Callable[[], tuple]:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            elements = self._arguments(node.elts)
            return self._located(node, lambda: tuple(elements()))
        element_ofs = [self._expression(e) for e in node.elts]
        return self._located(node, lambda: tuple(e() for e in element_ofs))

    def _set(self, node: ast.Set) -> Callable[[], set]:
        elements = self._arguments(node.elts)
        return self._located(node, lambda: D.set_(elements()))

    def _dict(self, node: ast.Dict) -> Callable[[], dict]:
        parts = [(None if k is None else self._expression(k), self._expression(v)) for k, v in zip(node.keys, node.values)]

        def dict_() -> dict:
            out: dict = {}
            for key_of, value_of in parts:
                if key_of is None:
                    D.update_from(out, value_of())
                else:
                    D.set_item(out, key_of(), value_of())
            return out
        return self._located(node, dict_)

    def _unary(self, node: ast.UnaryOp) -> Callable[[], Any]:
        operand_of, op = self._expression(node.operand), node.op

        def unary() -> Any:
            value = operand_of()
            if isinstance(op, ast.Not):
                return not truth(value)
            if isinstance(op, ast.Invert):
                return ARR.unary("~", value) if isinstance(value, np.ndarray) else invert(value)
            if isinstance(value, Tensor):
                return -value if isinstance(op, ast.USub) else value
            if isinstance(value, NUMBER):
                return -value if isinstance(op, ast.USub) else +value
            if isinstance(value, Instance) and isinstance(op, (ast.USub, ast.UAdd)):
                return dunders.unary("-" if isinstance(op, ast.USub) else "+", value)
            if isinstance(value, np.ndarray):
                return ARR.unary("-" if isinstance(op, ast.USub) else "+", value)
            raise ArgumentError(f"bad operand type for unary {'-' if isinstance(op, ast.USub) else '+'}: "
                                f"{type_name(value)}")
        return self._located(node, unary)

    def _binary(self, node: ast.BinOp) -> Callable[[], Any]:
        (left_of, left_value), (right_of, right_value) = self._operand(node.left), self._operand(node.right)
        op = node.op
        symbol, fn = BINARY[type(op)]
        locate = self._locate
        on_tensors = symbol != "//"
        on_numbers = symbol in EXACT  # two Python numbers: Python's own operator, ints kept to a size

        def binary() -> Any:
            try:
                left = left_value if left_of is None else left_of()
                right = right_value if right_of is None else right_of()
                # tensor with tensor or number: what `_arithmetic` would decide, without its checks
                if on_tensors and (isinstance(left, Tensor) and (isinstance(right, Tensor) or type(right) in PLAIN)
                                   or isinstance(right, Tensor) and type(left) in PLAIN):
                    return fn(left, right)
                if on_numbers and type(left) is type(right) and type(left) in PLAIN:
                    return exact(fn, left, right)
                return arithmetic(op, left, right)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return binary

    def _bool_op(self, node: ast.BoolOp) -> Callable[[], Any]:
        is_and = isinstance(node.op, ast.And)
        operands = [(self._expression(v), v) for v in node.values]

        def bool_op() -> Any:
            value = None
            for value_of, operand in operands:
                value = value_of()
                if truth(value) != is_and:
                    return value
            return value
        return self._located(node, bool_op)

    def _compare(self, node: ast.Compare) -> Callable[[], Any]:
        left_of = self._expression(node.left)
        locate = self._locate
        if len(node.ops) == 1:
            op, (right_of, right_value) = node.ops[0], self._operand(node.comparators[0])
            fn = None if isinstance(op, (ast.Is, ast.IsNot)) else COMPARE[type(op)]

            def compare_one() -> Any:
                try:
                    left = left_of()
                    right = right_value if right_of is None else right_of()
                    if fn is not None and type(left) in COMPARED and type(right) in COMPARED:
                        return fn(left, right)  # numbers and tensors: what `compare` would decide
                    return compare(op, left, right)
                except GradcliError as exc:
                    raise locate(exc, node) from None
            return compare_one

        pairs = [(op, self._expression(c)) for op, c in zip(node.ops, node.comparators)]

        def compare_chain() -> Any:
            left = left_of()
            result: Any = True
            for op, right_of in pairs:
                right = right_of()
                outcome = compare(op, left, right)
                if not truth(outcome):
                    return False
                result, left = outcome, right
            return result
        return self._located(node, compare_chain)

    def _if_exp(self, node: ast.IfExp) -> Callable[[], Any]:
        test_of, body_of, orelse_of = (self._expression(n) for n in (node.test, node.body, node.orelse))
        return self._located(node, lambda: body_of() if truth(test_of()) else orelse_of())

    def _subscript(self, node: ast.Subscript) -> Callable[[], Any]:
        value_of, key_of, locate = self._expression(node.value), self._expression(node.slice), self._locate

        def subscript() -> Any:
            try:
                return index(value_of(), key_of())
            except GradcliError as exc:
                raise locate(exc, node) from None
        return subscript

    def _slice(self, node: ast.Slice) -> Callable[[], slice]:
        part_ofs = [None if part is None else self._expression(part) for part in (node.lower, node.upper, node.step)]

        def slice_() -> slice:
            parts = []
            for part_of in part_ofs:
                v = None if part_of is None else part_of()
                if isinstance(v, Tensor):
                    v = int(v)
                if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
                    raise ArgumentError(f"slice bounds must be integers, got {v!r}")
                parts.append(v)
            if parts[2] == 0:
                raise ValueDomainError("slice step cannot be zero", hint="step by 1, or -1 to reverse a list")
            return slice(*parts)
        return self._located(node, slice_)

    def _attribute(self, node: ast.Attribute) -> Callable[[], Any]:
        owner_of, attr, get, locate = self._expression(node.value), node.attr, self._get_attribute, self._locate
        plain: set[type] = set()  # the owner types on which this attribute is simply getattr

        def attribute() -> Any:
            try:
                owner = owner_of()
                if type(owner) in plain:
                    return getattr(owner, attr)
                return get(owner, attr, node, plain)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return attribute

    def _get_attribute(self, owner: Any, attr: str, node: ast.AST, plain: set[type] | None = None) -> Any:
        if isinstance(owner, B.Namespace):
            if attr in owner.members:
                return owner.members[attr]
        elif attr in READABLE_ATTRIBUTES:
            return S.class_view(owner, attr)
        elif isinstance(owner, C.OWNERS):
            return C.attribute(owner, attr)
        elif isinstance(owner, Module) and registered(owner, attr):
            return getattr(owner, attr)  # a built-in module's own names: `net.fc1` of a Sequential, `lstm.weight_hh_l0`
        elif attr in B.attribute_names(owner):
            if type(owner) is Tensor and UNINITIALIZED and UNINITIALIZED.has(owner):
                B.refuse_uninitialized(attr)
            if type(owner) in B.SEQUENCE_METHODS:
                return B.bound_method(owner, attr)
            if type(owner) is np.ndarray:
                return ARR.attribute(owner, attr)
            value = getattr(owner, attr)
            if attr == "shape" and type(owner) is not np.ndarray:
                return Size(value)
            if attr == "name" and isinstance(owner, (Node, AccumulateGrad)):
                return B.NodeName(value)
            if attr in ("grad_fn", "creator") and type(owner) is Tensor:
                return program_node(value)  # a Function's output shows its Function's node, as in PyTorch
            if plain is not None:
                plain.add(type(owner))
            return value
        if (type(owner) is np.ndarray or isinstance(owner, B.Namespace) and owner.name.startswith("numpy")) and \
                numpy_refusal(attr):
            raise NotAllowedError(f"'{attr}' of NumPy is not available: gradcli refuses {numpy_refusal(attr)}",
                                  hint="gradcli's NumPy is its numeric API on arrays of numbers")
        allowed = B.attribute_names(owner)
        what = f"'{owner.name}'" if isinstance(owner, B.Namespace) else f"a {type_name(owner)}"
        hint = _suggest(attr, allowed) or "`gradcli ops` lists what a program can use"
        if not isinstance(owner, (Tensor, B.Namespace)) and callable(owner) and B.TORCH.lookup(attr) is not None:
            hint = f"to use {attr} from torch under a short name, import it first: import torch as " \
                   f"{getattr(owner, '__name__', 't')}"
        raise NameLookupError(f"attribute '{attr}' is not available on {what}", hint=hint)

    def _call(self, node: ast.Call) -> Callable[[], Any]:
        """A call; `owner.method(...)` without keywords calls a plain method of the owner's class directly.

        Whether a site's method is plain is decided per owner class, the first time the site meets
        it, by the general path: a Python function of the class that every instance binds the same
        way (no instance dict, no custom attribute lookup), that is not `backward` and not a gradient
        function, so `_invoke`'s checks would all pass. The direct call skips the bound method and those
        checks; a call whose arguments do not fit is named exactly as `_apply` names it.
        """
        callee = node.func
        arguments = self._arguments(node.args)
        keywords = [(k.arg, self._expression(k.value)) for k in node.keywords]
        spread = any(word is None for word, _ in keywords)
        invoke, locate, sites = self._invoke, self._locate, self.call_sites
        if isinstance(callee, ast.Attribute) and not keywords:
            owner_of, func_of, attr, get = self._expression(callee.value), None, callee.attr, self._get_attribute
        else:
            owner_of, func_of = None, self._expression(callee)
        plain: set[type] = set()  # owner classes on which `attr` is simply getattr (see `_attribute`)
        methods: dict[type, Callable[..., Any] | None] = {}  # per owner class: its plain method `attr`, or None

        def call() -> Any:
            try:
                if owner_of is not None:
                    owner = owner_of()
                    method = methods.get(type(owner))
                    if method is not None:
                        args = arguments()
                        sites.append(node)
                        try:
                            return method(owner, *args)
                        except TypeError as exc:
                            raise _argument_error(exc, MethodType(method, owner), args, {}, self.text(callee)) from None
                        finally:
                            sites.pop()
                    try:
                        func = getattr(owner, attr) if type(owner) in plain else get(owner, attr, callee, plain)
                    except GradcliError as exc:
                        raise locate(exc, callee) from None
                    if type(owner) in plain and type(owner) not in methods:  # decided once: None is not plain
                        methods[type(owner)] = func.__func__ if _plain_method(owner, attr, func) else None
                else:
                    func = func_of()
                args = arguments()
                kwargs = {word: value_of() for word, value_of in keywords} if keywords and not spread else \
                    S.keywords(keywords) if keywords else {}
                if func is _PRINT:
                    self._print(node, args, kwargs)
                    return None
                sites.append(node)
                try:
                    return invoke(func, args, kwargs, node)
                finally:
                    sites.pop()
            except GradcliError as exc:
                raise locate(exc, node) from None
        return call

    def _arguments(self, nodes: list[ast.expr]) -> Callable[[], list]:
        """A call's positional arguments as a new list each time (no call at all when they are constants)."""
        if all(isinstance(a, ast.Constant) for a in nodes):
            return [a.value for a in nodes].copy
        if len(nodes) == 1 and not isinstance(nodes[0], ast.Starred):
            only = self._expression(nodes[0])
            return lambda: [only()]
        if not any(isinstance(a, ast.Starred) for a in nodes):
            value_ofs = [self._expression(a) for a in nodes]
            return lambda: [value_of() for value_of in value_ofs]
        parts = [(isinstance(a, ast.Starred), self._expression(a.value if isinstance(a, ast.Starred) else a))
                 for a in nodes]

        def arguments() -> list:
            args: list = []
            for starred, value_of in parts:
                if starred:
                    more = items(value_of())
                    check_list(len(args) + len(more))
                    args.extend(more)
                else:
                    args.append(value_of())
            return args
        return arguments

    def _print(self, node: ast.Call, args: list, kwargs: dict) -> None:
        """`print(...)`: the text Python's print writes (a tensor as PyTorch prints it, `sep` and `end`
        honoured), and each argument titled by its source for the JSON view."""
        unknown = set(kwargs) - {"sep", "end", "flush"}
        if unknown:
            raise ArgumentError(f"print() got an unexpected keyword argument '{sorted(unknown)[0]}'",
                                hint="print(a, b, sep=', ', end='\\n')")
        for word in ("sep", "end"):
            if kwargs.get(word) is not None and not isinstance(kwargs[word], str):
                raise ArgumentError(f"{word} must be None or a string, not {type_name(kwargs[word])}")
        sep = " " if kwargs.get("sep") is None else kwargs["sep"]
        end = "\n" if kwargs.get("end") is None else kwargs["end"]
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        titles = [""] * len(args) if starred else [self.text(a) for a in node.args]
        items, parts, length = [], [], len(end) - len(sep)
        for title, value in zip(titles, args):
            shown = _shown(value)
            parts.append(T.to_str(shown))
            length += len(parts[-1]) + len(sep)
            check_string(length)  # as it grows: a million long arguments stop at the first that passes the limit
            items.append((title, shown))
        if self.hooks.on_print is not None:
            with self.budget.paused():
                self.hooks.on_print(items, node.lineno, sep.join(parts) + end)

    def _show_text(self, text: str) -> None:
        """What a facade prints (pprint, warnings.warn), as a print of the call that asked."""
        site = self.call_sites[-1] if self.call_sites else None
        if self.hooks.on_print is not None:
            with self.budget.paused():
                self.hooks.on_print([(self.text(site) if site is not None else "", T.Shown(text))],
                                    site.lineno if site is not None else 0, text + "\n")

    def _invoke(self, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if not callable(func) or isinstance(func, (Tensor, B.Namespace, type)):
            raise ArgumentError(f"'{self.text(node.func)}' is not a function", hint="call functions and methods only")
        if self.hooks.on_backward is not None and func is B.AUTOGRAD.members["backward"]:
            func, args, kwargs = as_tensor_backward(args, kwargs) or (func, args, kwargs)
        if self.hooks.on_backward is not None and _is_backward(func):
            return self._backward(func, args, kwargs, node)
        if "device" in kwargs and B.takes_device(func):
            B.check_device(kwargs.pop("device"))
        kind = B.gradient_kind(func) if self.hooks.on_gradient is not None else None
        if kind is None:
            return self._apply(func, func, args, kwargs, node)

        def counted(target: Any = func) -> Any:
            with self.budget.counted():
                return self._apply(target, func, args, kwargs, node)
        with self.budget.paused():
            return self.hooks.on_gradient(kind, func, counted, args, kwargs, node.lineno)

    def _apply(self, target: Any, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        """Call `target` (`func`, or a traced variant of it) with a call's arguments; arguments that do not
        fit `func` are the user's mistake, named by the call."""
        try:
            return target(*args, **kwargs)
        except TypeError as exc:
            if isinstance(func, UserFunction):
                raise
            if _takes_axis_for_dim(func, kwargs):  # PyTorch's NumPy-style alias: x.argmax(axis=1), x.sum(axis=0)
                kwargs = {("dim" if k == "axis" else k): v for k, v in kwargs.items()}
                return self._apply(target, func, args, kwargs, node)
            raise _argument_error(exc, func, args, kwargs, self.text(node.func)) from None

    def _backward(self, method: Any, args: list, kwargs: dict, node: ast.Call) -> None:
        """Hand `.backward(...)` to the hook as a `run(trace=None)` closure, arguments already bound."""
        tensor = method.__self__
        bound = _bind(method, "backward", args, kwargs)

        def run(trace: Any = None) -> None:
            with self.budget.counted():
                run_backward((tensor,), (bound.get("gradient"),), bound.get("retain_graph"),
                             bound.get("create_graph", False), trace=trace)
        with self.budget.paused():
            self.hooks.on_backward(tensor, run, dict(bound), node.lineno)

    def _is_print(self) -> bool:
        try:
            return self._lookup("print") is _PRINT
        except NameLookupError:
            return False


def _takes_axis_for_dim(func: Any, kwargs: dict) -> bool:
    """PyTorch's argument parser reads `axis=` as `dim=` for its own functions and methods: true for an
    engine function taking `dim` that was given `axis` (and not `dim`)."""
    if "axis" not in kwargs or "dim" in kwargs:
        return False
    owner = getattr(func, "__self__", None)
    if not (getattr(func, "__module__", "") or "").startswith("gradcli.engine") and type(owner) is not Tensor:
        return False
    try:
        names = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "dim" in names and "axis" not in names


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


def _produced(generators: list, element_of: Callable[[], Any], count: Callable[[], None]) -> Callable[..., Any]:
    """A comprehension's items, level by level (`produce(0, first_values)` yields them); `count` is paid
    per item visited: a tick for a comprehension (its list is bounded), a step for a generator expression."""
    def produce(level: int, values: Any) -> Any:
        _, bind, tests = generators[level]
        for value in values:
            count()
            bind(value)
            if not all(truth(test_of()) for test_of in tests):
                continue
            if level + 1 < len(generators):
                yield from produce(level + 1, iterate(generators[level + 1][0]()))
            else:
                yield element_of()
    return produce


def _breaking() -> object:
    return _break


def _continuing() -> object:
    return _continue


def _nothing() -> None:
    """`pass` and a string statement."""


def _constant(node: ast.Constant) -> Callable[[], Any]:
    value = node.value
    return lambda: value


class _Print:
    """`print` as a value: `callable(print)`, `map(print, xs)`. A call of it at a call site is the
    interpreter's own (`_print`, titled by the source); one made by a builtin prints its text."""

    def __call__(self, *args: Any, sep: str | None = " ", end: str | None = "\n", flush: bool = False) -> None:
        text = (" " if sep is None else str(sep)).join(T.to_str(a) for a in args)
        check_string(len(text))
        runtime.show(text)

    def __repr__(self) -> str:
        return "<built-in function print>"


_PRINT = _Print()


def _tensors(value: Any) -> bool:
    """A tensor, or a tuple or list of them (what a gradient function returns)."""
    if isinstance(value, (tuple, list)):
        return bool(value) and all(isinstance(v, Tensor) for v in value)
    return isinstance(value, Tensor)


def _shown(value: Any) -> Any:
    """A list or tuple goes to the caller as its (bounded) text; other values as they are."""
    if isinstance(value, C.Instance):  # its own __str__, run now, under the program's budget
        return T.Shown(T.to_str(value))
    return T.Shown(T.to_repr(value)) if isinstance(value, (list, tuple, dict, set)) else value


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


def _plain_method(owner: Any, attr: str, func: Any) -> bool:
    """Whether every instance of `owner`'s class gives `func` (a method bound to `owner`) for `attr`, and
    `_invoke` would only call it: it is callable and not backward (a bound method is never one of the
    gradient functions, and the call has no device= to check)."""
    cls = type(owner)
    return type(func) is MethodType and func.__self__ is owner and cls.__dictoffset__ == 0 and \
        cls.__getattribute__ is object.__getattribute__ and getattr(cls, attr, None) is func.__func__ and \
        not _is_backward(func)


def _is_backward(func: Any) -> bool:
    return getattr(func, "__name__", None) == "backward" and isinstance(getattr(func, "__self__", None), Tensor)


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


_SIGNATURES: dict[Any, tuple[inspect.Signature, bool]] = {}
"""Per function: its signature, and whether every parameter has a default (a bare call binds nothing)."""


def _bind(method: Any, name: str, args: list, kwargs: dict) -> dict[str, Any]:
    """The arguments a call gives `method` by parameter name, its signature read once per function."""
    function = getattr(method, "__func__", method)
    known = _SIGNATURES.get(function)
    if known is None:
        signature_ = inspect.signature(method)
        known = _SIGNATURES[function] = (signature_, all(p.default is not p.empty
                                                         for p in signature_.parameters.values()))
    signature_, optional = known
    if optional and not args and not kwargs:
        return {}
    try:
        return signature_.bind(*args, **kwargs).arguments
    except TypeError as mismatch:
        raise ArgumentError(f"{name}(): {mismatch}", hint=_signature_hint(name, signature_)) from None


def _signature_hint(name: str, signature: Any) -> str:
    params = [p for p in signature.parameters.values() if p.name != "self"]
    shown = ", ".join(str(p).split(":")[0].split(" =")[0] + ("=" + repr(p.default) if p.default is not p.empty
                                                              else "") for p in params)
    return f"usage: {name.rsplit('.', 1)[-1]}({shown})"
