"""A generator function's body compiled to Python generators, so it can stop at a `yield` and go on later.

The interpreter compiles statements to closures that run to their end. In a generator function's
body, a statement that holds a `yield` (the parser admits one only as a statement's whole value:
`yield v`, `x = yield v`, `yield from g`, or inside an if / while / for / try / with) is compiled
here instead, to a function that returns a Python generator: it yields the program's values up to
the generator object (`lang.generators`) and returns the block's signal (`lang.signals`). Every
other statement keeps the interpreter's own closure, so the body's plain statements cost what
they cost anywhere. The rules are the interpreter's: a step per pass of a loop and per value
yielded, a tick per statement, errors placed at their statement, limits never caught.
"""
from __future__ import annotations

import ast
import contextlib
from typing import Any, Callable, Generator

from gradcli.errors import GradcliError
from gradcli.lang import statements as S
from gradcli.lang.exceptions import catchable
from gradcli.lang.generators import ProgramGenerator, delegate, has_yield
from gradcli.lang.iteration import iterate
from gradcli.lang.operators import truth
from gradcli.lang.signals import BREAK, CONTINUE

Interpreter = Any  # the running interpreter (it imports this module, not the other way)
Resumable = Callable[[], Generator[Any, Any, Any]]


def block(interpreter: Interpreter, body: list[ast.stmt]) -> Resumable:
    """The statements in order, as `Interpreter._block` runs them, stopping where a `yield` stops."""
    steps = [(_statement(interpreter, stmt), has_yield(stmt), stmt) for stmt in body]
    budget, locate, failure = interpreter.budget, interpreter.locate, interpreter.failure

    def run() -> Generator[Any, Any, Any]:
        for step, resumable, stmt in steps:
            budget.tick()
            try:
                signal = (yield from step()) if resumable else step()
            except GradcliError as exc:
                raise locate(exc, stmt) from None
            except (ZeroDivisionError, OverflowError, MemoryError, RecursionError) as exc:
                raise failure(exc, stmt) from None
            if signal is not None:
                return signal
        return None
    return run


def _statement(interpreter: Interpreter, stmt: ast.stmt) -> Callable[[], Any]:
    if not has_yield(stmt):
        return interpreter.statement(stmt)
    return _COMPILERS[type(stmt)](interpreter, stmt)


def _yielding(interpreter: Interpreter, node: ast.Yield | ast.YieldFrom) -> Resumable:
    """`yield v` (its value is what the consumer sends) or `yield from g` (its value is g's return)."""
    budget = interpreter.budget
    value_of = None if node.value is None else interpreter.expression(node.value)
    if isinstance(node, ast.Yield):
        def yield_() -> Generator[Any, Any, Any]:
            value = None if value_of is None else value_of()
            budget.step()
            return (yield value)
        return yield_

    def yield_from() -> Generator[Any, Any, Any]:
        source = value_of()
        if isinstance(source, ProgramGenerator):
            return (yield from delegate(source))
        for item in iterate(source):
            budget.step()
            yield item
        return None
    return yield_from


def _expression_statement(interpreter: Interpreter, stmt: ast.Expr) -> Resumable:
    value = _yielding(interpreter, stmt.value)

    def run() -> Generator[Any, Any, Any]:
        yield from value()
        return None
    return run


def _assign(interpreter: Interpreter, stmt: ast.Assign) -> Resumable:
    value, binds = _yielding(interpreter, stmt.value), [interpreter.binder(t) for t in stmt.targets]

    def run() -> Generator[Any, Any, Any]:
        result = yield from value()
        for bind in binds:
            bind(result)
        return None
    return run


def _if(interpreter: Interpreter, stmt: ast.If) -> Resumable:
    test_of, body, orelse = interpreter.expression(stmt.test), block(interpreter, stmt.body), \
        block(interpreter, stmt.orelse)

    def run() -> Generator[Any, Any, Any]:
        return (yield from (body if truth(test_of()) else orelse)())
    return run


def _loop(interpreter: Interpreter, stmt: ast.While | ast.For, passes: Callable[[], Any],
          bind: Callable[[Any], None] | None, test_of: Callable[[], Any] | None) -> Resumable:
    """A `while` (its test each pass) or `for` (`passes` gives its values) whose body can yield."""
    budget, body = interpreter.budget, block(interpreter, stmt.body)
    orelse = block(interpreter, stmt.orelse) if stmt.orelse else None

    def run() -> Generator[Any, Any, Any]:
        values = passes()
        outer, budget.loop = budget.loop, stmt
        for value in values:
            if test_of is not None and not truth(test_of()):
                break
            if bind is not None:
                bind(value)
            budget.step()
            signal = yield from body()
            if signal is not None and signal is not CONTINUE:
                budget.loop = outer
                return None if signal is BREAK else signal
        budget.loop = outer
        return None if orelse is None else (yield from orelse())
    return run


def _while(interpreter: Interpreter, stmt: ast.While) -> Resumable:
    return _loop(interpreter, stmt, interpreter.forever, None, interpreter.expression(stmt.test))


def _for(interpreter: Interpreter, stmt: ast.For) -> Resumable:
    iter_of, locate = interpreter.expression(stmt.iter), interpreter.locate

    def passes() -> Any:
        try:
            return iterate(iter_of())
        except GradcliError as exc:
            raise locate(exc, stmt.iter) from None
    return _loop(interpreter, stmt, passes, interpreter.binder(stmt.target), None)


def _try(interpreter: Interpreter, stmt: ast.Try) -> Resumable:
    """`try` as `statements.try_statement` runs it; the loop a caught error left is the try's again."""
    handlers = [(None if h.type is None else interpreter.expression(h.type), h.name, block(interpreter, h.body), h)
                for h in stmt.handlers]
    body, orelse = block(interpreter, stmt.body), block(interpreter, stmt.orelse)
    final = block(interpreter, stmt.finalbody) if stmt.finalbody else None
    budget = interpreter.budget

    def main() -> Generator[Any, Any, Any]:
        loop = budget.loop
        try:
            signal = yield from body()
        except BaseException as exc:
            found = S.handler_for(interpreter, handlers, exc) if catchable(exc) and handlers else None
            if found is None:
                raise
            budget.loop = loop
            handler, name = found
            try:
                return (yield from handler())
            finally:
                S.handled_by(interpreter, name)
        return signal if signal is not None else (yield from orelse())

    if final is None:
        return main

    def run() -> Generator[Any, Any, Any]:
        try:
            signal = yield from main()
        except BaseException as exc:
            if not catchable(exc):
                raise  # a limit, or the generator closed: no finally runs past it
            ending = yield from final()
            if ending is not None:
                return ending
            raise
        ending = yield from final()
        return signal if ending is None else ending
    return run


def _with(interpreter: Interpreter, stmt: ast.With) -> Resumable:
    enter, body = interpreter.modes(stmt), block(interpreter, stmt.body)

    def run() -> Generator[Any, Any, Any]:
        with contextlib.ExitStack() as stack:
            enter(stack)
            return (yield from body())
    return run


_COMPILERS: dict[type, Callable[[Interpreter, Any], Resumable]] = {
    ast.Expr: _expression_statement, ast.Assign: _assign, ast.If: _if, ast.While: _while, ast.For: _for,
    ast.Try: _try, ast.With: _with,
}
