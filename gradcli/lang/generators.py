"""A program's generators (`def f(): ... yield x`, `(v for v in xs)`), run lazily as Python runs them.

A generator's body is a Python generator itself (`lang.resumable` compiles a generator function's
statements to Python generators; a generator expression is one), so it runs on the program's own
thread and stops at each `yield` as Python's does: no thread, no lock, nothing left running when a
program ends. What the interpreter keeps per running code (the scope, the call depth, the call
sites, the innermost loop, the exceptions being handled) is swapped in for each turn of the body
and swapped back when it stops, so a limit inside the body names the body's loop, and an error
there is raised in the consumer, located in the body, as Python's traceback would show it.

`send`, `throw` and `close` are Python's. A limit passes through the body (no `except` sees it);
`close()`, and the end of the run, stop a body at its `yield` without running its `finally`
clauses (they would run the program's code where nothing is the program's; see docs/language.md).
"""
from __future__ import annotations

import ast
import contextlib
import weakref
from typing import Any, Callable, Generator

from gradcli.errors import LimitError
from gradcli.lang.exceptions import EXCEPTIONS, ExceptionType, ExceptionValue, RaisedError, raise_python, raised

MAX_LIVE = 10_000
"""Generators started and not finished at once (each holds its suspended frames)."""

Body = Callable[[], Generator[Any, Any, Any]]


def is_generator(node: ast.AST) -> bool:
    """Whether a `def` is a generator function: a `yield` in its own body, not in a nested function."""
    return isinstance(node, ast.FunctionDef) and any(has_yield(stmt) for stmt in node.body)


def has_yield(node: ast.AST) -> bool:
    """Whether `node` holds a `yield` or `yield from` of its own function (not of a nested def or lambda)."""
    stack: list[ast.AST] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(item, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(item))
    return False


class ProgramGenerator:
    """The generator object a generator function's call, or a generator expression, gives the program."""

    program_attributes = frozenset({"send", "throw", "close"})

    def __init__(self, interpreter: Any, name: str, scope: Any, body: Body, site: ast.AST | None) -> None:
        self.interpreter = interpreter
        self.name = name
        self.body = body
        self.state = (scope, interpreter.depth + 1, [site] if site is not None else [], None, [])
        self.walker: Generator[Any, Any, Any] | None = None
        self.finished = False
        self.running = False

    # -- Python's protocol (for loops, list(), the engine): StopIteration is Python's ----------------
    def __iter__(self) -> "ProgramGenerator":
        return self

    def __next__(self) -> Any:
        return self.resume(None, None)

    def resume(self, value: Any, error: BaseException | None) -> Any:
        """One turn of the body: `value` sent in at its `yield` (or `error` raised there); the next value out."""
        if self.running:
            raise_python("ValueError", "generator already executing")
        if self.finished:
            if error is not None:
                raise error
            raise StopIteration
        if self.walker is None:
            if error is not None:
                self.finished = True
                raise error
            if value is not None:
                raise_python("TypeError", "can't send non-None value to a just-started generator")
            live = self.interpreter.generators
            if len(live) >= MAX_LIVE:
                raise LimitError(f"more than {MAX_LIVE:,} generators are started and unfinished at once",
                                 hint="finish a generator before starting the next (a recursive generator holds "
                                      "one per level)")
            live.add(self)
            self.walker = self.body()
        consumer = self._swap(self.state)
        self.running = True
        try:
            return self.walker.send(value) if error is None else self.walker.throw(error)
        except BaseException:
            self._finish()
            raise
        finally:
            self.running = False
            self.state = self._swap(consumer)

    def _swap(self, state: tuple) -> tuple:
        """Install `state` (scope, depth, call sites, loop, exceptions handled); return what was there."""
        interpreter = self.interpreter
        current = (interpreter.scope, interpreter.depth, interpreter.call_sites, interpreter.budget.loop,
                   interpreter.handling)
        interpreter.scope, interpreter.depth, interpreter.call_sites, interpreter.budget.loop, \
            interpreter.handling = state
        return current

    # -- the program's methods: the generator's end is the program's StopIteration ------------------
    def send(self, value: Any) -> Any:
        return _stopped(lambda: self.resume(value, None))

    def throw(self, kind: Any, value: Any = None) -> Any:
        error = raised(_exception(kind, value))
        return _stopped(lambda: self.resume(None, error))

    def close(self) -> None:
        """Stop the body at its `yield` (its frames unwind; no program code runs)."""
        if self.walker is not None and not self.finished and not self.running:
            consumer = self._swap(self.state)
            try:
                self.walker.close()
            finally:
                self.state = self._swap(consumer)
        self._finish()

    def _finish(self) -> None:
        self.finished = True
        self.interpreter.generators.discard(self)

    def __del__(self) -> None:
        # An abandoned generator is closed under its own state, never the consumer's: a close raises
        # nothing a program wrote, and there is no one to tell if it fails.
        with contextlib.suppress(BaseException):
            self.close()

    def __repr__(self) -> str:
        return f"<generator object {self.name} at {id(self):#x}>"


def delegate(inner: ProgramGenerator) -> Generator[Any, Any, Any]:
    """`yield from inner` (PEP 380): each value sent or error thrown passes to `inner`; its return is the value."""
    try:
        value = inner.resume(None, None)
    except StopIteration as stop:
        return stop.value
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            inner.close()
            raise
        except BaseException as exc:  # thrown in by the consumer: thrown on into the inner generator
            try:
                value = inner.resume(None, exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                value = inner.resume(sent, None)
            except StopIteration as stop:
                return stop.value


def live_set() -> "weakref.WeakSet[ProgramGenerator]":
    """The generators of one run that are started and unfinished (held weakly: an abandoned one goes)."""
    return weakref.WeakSet()


def close_all(generators: "weakref.WeakSet[ProgramGenerator]") -> None:
    for generator in list(generators):
        generator.close()


def _stopped(turn: Callable[[], Any]) -> Any:
    try:
        return turn()
    except StopIteration as stop:
        raise_python("StopIteration", *(() if stop.value is None else (stop.value,)))


def _exception(kind: Any, value: Any) -> ExceptionValue:
    """What `g.throw(ValueError)`, `g.throw(ValueError('x'))` or `g.throw(ValueError, 'x')` raises."""
    if isinstance(kind, ExceptionType):
        return kind(*(() if value is None else (value,)))
    if isinstance(kind, ExceptionValue) and value is None:
        return kind
    raise RaisedError(EXCEPTIONS["TypeError"]("exceptions must be classes or instances deriving from "
                                              f"BaseException, not {type(kind).__name__}"))
