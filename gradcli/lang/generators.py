"""A program's generator functions (`def f(): ... yield x`), run lazily as Python runs them.

The interpreter's compiled closures cannot stop half-way, so a generator's body runs on a thread
of its own, and the two take strict turns: `next()` hands control to the body and waits; `yield`
hands the value back and waits. Only one of them runs at any time, so the interpreter's state (the
scope, call depth, call sites, the innermost loop and the generator running) is simply swapped at
each turn. Every item produced is a step of the program's budget; a limit or error in the body is
raised in the consumer, where the program is; a generator left unfinished is closed (its thread
ends) when the run ends.
"""
from __future__ import annotations

import ast
import threading
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from gradcli.errors import LimitError
from gradcli.lang.limits import count_step

MAX_RUNNING = 64
"""Generators started and not finished at once (each holds a thread)."""

if TYPE_CHECKING:
    from gradcli.lang.interpreter import Interpreter
    from gradcli.lang.user_functions import Scope

_STACK = 64 * 1024 * 1024
"""A generator's thread has the stack the call-depth limit needs (threads get less than the main one)."""


def is_generator(node: ast.AST) -> bool:
    """Whether a `def` is a generator function: a `yield` in its own body, not in a nested function."""
    if not isinstance(node, ast.FunctionDef):
        return False
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Yield):
            return True
        if not isinstance(item, (ast.FunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(item))
    return False


class _Closed(BaseException):
    """Thrown into an unfinished body at its `yield` when the run ends; nothing in a program can catch it."""


class ProgramGenerator:
    """The generator object a call of a generator function returns."""

    def __init__(self, interpreter: Interpreter, name: str, scope: Scope, body: Callable[[], Any],
                 site: ast.AST | None) -> None:
        self.interpreter = interpreter
        self.name = name
        self.body = body
        self.state = (scope, interpreter.depth + 1, [site] if site is not None else [], None)
        self.thread: threading.Thread | None = None
        self.finished = False
        self.turn = threading.Semaphore(0)  # the body may run
        self.back = threading.Semaphore(0)  # the consumer may run
        self.message: tuple[str, Any] = ("", None)
        self.closing = False
        self.errors = np.geterr()

    def __iter__(self) -> "ProgramGenerator":
        return self

    def __next__(self) -> Any:
        if self.finished:
            raise StopIteration
        interpreter = self.interpreter
        consumer = self._swap(self.state)
        outer, interpreter.generator = interpreter.generator, self
        try:
            if self.thread is None:
                interpreter.generators = [g for g in interpreter.generators if not g.finished]
                if len(interpreter.generators) >= MAX_RUNNING:
                    self.finished = True
                    raise LimitError(f"more than {MAX_RUNNING} generators are running at once",
                                     hint="finish a generator before starting the next (a recursive generator "
                                          "holds one per level)")
                interpreter.generators.append(self)
                size = threading.stack_size(_STACK)
                try:
                    self.thread = threading.Thread(target=self._run, daemon=True, name=f"gradcli-{self.name}")
                    self.thread.start()
                finally:
                    threading.stack_size(size)
            else:
                self.turn.release()
            self.back.acquire()
        finally:
            interpreter.generator = outer
            self.state = self._swap(consumer)
        kind, value = self.message
        if kind == "yield":
            return value
        self.finished = True
        if kind == "error":
            raise value
        raise StopIteration

    def _swap(self, state: tuple) -> tuple:
        """Install `state` (scope, depth, call sites, loop) in the interpreter; return what was there."""
        interpreter = self.interpreter
        current = (interpreter.scope, interpreter.depth, interpreter.call_sites, interpreter.budget.loop)
        interpreter.scope, interpreter.depth, interpreter.call_sites, interpreter.budget.loop = state
        return current

    def _run(self) -> None:
        try:
            with np.errstate(**self.errors):  # NumPy's error state is per thread: the program's, here too
                self.body()
            self.message = ("return", None)
        except _Closed:
            return
        except BaseException as exc:  # handed to the consumer, raised there as the program's error
            self.message = ("error", exc)
        self.back.release()

    def give(self, value: Any) -> None:
        """`yield value` in the body: one step, then the consumer's turn until the next `next()`."""
        count_step()
        self.message = ("yield", value)
        self.back.release()
        self.turn.acquire()
        if self.closing:
            raise _Closed
        return None

    def close(self) -> None:
        if self.thread is not None and not self.finished:
            self.finished = self.closing = True
            self.turn.release()
            self.thread.join()

    def __repr__(self) -> str:
        return f"<generator object {self.name}>"
