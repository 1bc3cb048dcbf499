"""`try`, `raise`, `del`, `**kwargs` at a call site, and the builtins that need the running interpreter.

The interpreter compiles these nodes by calling here, so its hot paths (assignments, calls, loops)
stay as they were for programs that never use them. The one rule that matters most lives in
`try_statement`: a limit or a refusal passes every `except` and skips every `finally`, since
`catchable` says no; a `finally` can therefore neither swallow a limit nor run on past it.
"""
from __future__ import annotations

import ast
from typing import Any, Callable

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, NameLookupError, NotAllowedError
from gradcli.lang import classes as C
from gradcli.lang.library import Module, registered
from gradcli.lang import containers as D
from gradcli.lang import type_tests
from gradcli.lang.exceptions import (ExceptionType, ExceptionValue, ProgramType, catchable, python_value,
                                     raise_python, raised)
from gradcli.lang.formatting import to_repr
from gradcli.lang.operators import type_name
from gradcli.lang.user_functions import UserFunction
from gradcli.lang.parser import ASSIGNABLE_ATTRIBUTES, ASSIGNABLE_HINT, READABLE_ATTRIBUTES
from gradcli.source import node_span

Interpreter = Any  # the running interpreter (lang.interpreter imports this module, not the other way)

Handler = tuple[Callable[[], Any] | None, str | None, Callable[[], Any], ast.ExceptHandler]


def declarations(node: ast.FunctionDef) -> dict[str, str]:
    """A function's `global` and `nonlocal` names (its own statements, not nested functions')."""
    declared: dict[str, str] = {}
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.Global, ast.Nonlocal)):
            for name in item.names:
                declared[name] = "global" if isinstance(item, ast.Global) else "nonlocal"
        elif not isinstance(item, (ast.FunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(item))
    return declared


def try_statement(interpreter: Interpreter, body: Callable[[], Any], handlers: list[Handler],
                  orelse: Callable[[], Any], final: Callable[[], Any] | None) -> Callable[[], Any]:
    def handled(exc: BaseException) -> Any:
        found = handler_for(interpreter, handlers, exc)
        if found is None:
            raise exc
        handler, name = found
        try:
            return handler()
        finally:
            handled_by(interpreter, name)

    def main() -> Any:
        try:
            signal = body()
        except BaseException as exc:
            if not catchable(exc) or not handlers:
                raise
            return handled(exc)
        return signal if signal is not None else orelse()

    if final is None:
        return main

    def try_() -> Any:
        try:
            signal = main()
        except BaseException as exc:
            if not catchable(exc):
                raise  # a limit: no finally runs past it
            ending = final()
            if ending is not None:
                return ending  # Python: a return or break in finally drops the exception
            raise
        ending = final()
        return signal if ending is None else ending
    return try_


def handler_for(interpreter: Interpreter, handlers: list[Handler], exc: BaseException
                ) -> tuple[Callable[[], Any], str | None] | None:
    """The `except` clause that takes a caught error, with its name bound and the error being handled
    (for a bare `raise`); None when no clause matches. `handled_by` undoes both when the clause ends."""
    value = python_value(exc)
    for type_of, name, handler, written in handlers:
        if type_of is not None and not _matches(type_of(), value, written, interpreter):
            continue
        if name is not None:
            interpreter.scope.values[name] = value
        interpreter.handling.append(value)
        return handler, name
    return None


def handled_by(interpreter: Interpreter, name: str | None) -> None:
    interpreter.handling.pop()
    if name is not None:
        interpreter.scope.values.pop(name, None)


def _matches(kind: Any, value: ExceptionValue, written: ast.ExceptHandler, interpreter: Interpreter) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for one in kinds:
        if not isinstance(one, ProgramType):
            raise ArgumentError("catching classes that do not inherit from BaseException is not allowed",
                                hint="name exception types: except ValueError:").at(
                *node_span(written.type, interpreter.source))
        if one.covers(value):
            return True
    return False


def raise_statement(interpreter: Interpreter, exc_of: Callable[[], Any] | None, node: ast.Raise
                    ) -> Callable[[], None]:
    def raise_() -> None:
        if exc_of is None:
            if not interpreter.handling:
                raise raised(ExceptionValue(_exception("RuntimeError"), ("No active exception to reraise",)))
            raise raised(interpreter.handling[-1])
        value = exc_of()
        if isinstance(value, ExceptionType):
            value = value()
        if not isinstance(value, ExceptionValue):
            raise ArgumentError("exceptions must derive from BaseException",
                                hint="raise an exception: raise ValueError('what went wrong')")
        raise raised(value)
    return raise_


def _exception(name: str) -> ExceptionType:
    from gradcli.lang.exceptions import EXCEPTIONS
    return EXCEPTIONS[name]


def delete_item(container: Any, key: Any) -> None:
    if isinstance(container, dict):
        D.delete_item(container, key)
    elif isinstance(container, list):
        if not isinstance(key, (int, slice)) or isinstance(key, bool):
            raise ArgumentError("list indices must be integers or slices")
        try:
            del container[key]
        except IndexError:
            raise_python("IndexError", "list assignment index out of range")
    else:
        raise ArgumentError(f"a {type_name(container)} does not support item deletion",
                            hint="del removes items of lists and dicts")


def delete_attribute(owner: Any, attr: str) -> None:
    """`del obj.attr` of what the program set on its own object: an attribute it assigned, or a module's
    parameter, buffer or sub-module (PyTorch's `Module.__delattr__`), or a tensor's `.grad` (PyTorch
    clears it); nothing of a class's API."""
    if isinstance(owner, Tensor) and attr == "grad":
        owner.grad = None
        return
    if not isinstance(owner, (C.Instance, Module)):
        raise NotAllowedError(f"cannot delete attribute '{attr}' of a {type_name(owner)}",
                              hint="del removes attributes the program set on its own objects")
    if isinstance(owner, Module) and registered(owner, attr):
        for table in ("_parameters", "_buffers", "_modules"):
            owner.__dict__[table].pop(attr, None)
    elif attr in owner.__dict__:
        del owner.__dict__[attr]
    else:
        raise_python("AttributeError", f"'{type(owner).__name__}' object has no attribute '{attr}'")


def keywords(parts: list[tuple[str | None, Callable[[], Any]]]) -> dict:
    """A call's keyword arguments, `**mapping` spread in place; a name given twice is Python's TypeError."""
    out: dict = {}
    for word, value_of in parts:
        if word is not None:
            more = {word: value_of()}
        else:
            mapping = value_of()
            if not isinstance(mapping, dict):
                raise ArgumentError(f"argument after ** must be a mapping, not {type_name(mapping)}")
            more = mapping
        for key, value in more.items():
            if not isinstance(key, str):
                raise ArgumentError("keywords must be strings")
            if key in out:
                raise ArgumentError(f"got multiple values for keyword argument '{key}'")
            out[key] = value
    return out


def class_view(value: Any, attr: str) -> Any:
    """`obj.__class__` (the same class as `type(obj)`), and a type's or a function's `__name__`,
    `__qualname__`, `__module__` and `__doc__`: the dunders a program reads, text and that class only."""
    if attr == "__class__":
        return type_tests.type_(value)
    name = name_of(value)
    if attr in ("__name__", "__qualname__"):
        return name
    if attr == "__doc__":
        if isinstance(value, UserFunction):
            return ast.get_docstring(value.node, clean=False) if isinstance(value.node, ast.FunctionDef) else None
        return value.doc if isinstance(value, C.UserClass) else None
    if isinstance(value, (C.UserClass, UserFunction)):
        return "__main__"
    text = to_repr(value)  # `<class 'torch.nn.Linear'>`: the module is what the program sees printed
    dotted = text[len("<class '"):-2] if text.startswith("<class '") else ""
    return dotted.rpartition(".")[0] or "builtins"


def name_of(value: Any) -> str:
    """`T.__name__` of a type or a function."""
    if isinstance(value, ProgramType):
        return value.name
    known = type_tests.stand_in_name(value)
    if known is not None:
        return known
    if callable(value) and not isinstance(value, Tensor) and isinstance(getattr(value, "__name__", None), str):
        return value.__name__
    raise NameLookupError(f"attribute '__name__' is not available on a {type_name(value)}",
                          hint="__name__ names types and functions: type(x).__name__")


def own_builtins(interpreter: Interpreter) -> dict[str, Callable[..., Any]]:
    """`getattr`, `hasattr`, `setattr`: attribute access by a name, through the same allowlist as `x.name`."""
    def checked(name: Any) -> str:
        if not isinstance(name, str):
            raise ArgumentError(f"attribute name must be string, not '{type_name(name)}'")
        if name.startswith("_") and name not in READABLE_ATTRIBUTES:
            raise NotAllowedError(f"attribute '{name}' is not available",
                                  hint="a computed attribute name cannot start with '_': on the program's own object, "
                                       "write it out (obj._name)")
        return name

    missing = object()

    def getattr_(owner: Any, name: Any, default: Any = missing) -> Any:
        target = ast.Attribute(value=ast.Name("_", ast.Load()), attr=checked(name), ctx=ast.Load())
        try:
            return interpreter._get_attribute(owner, name, target)
        except NameLookupError:
            if default is missing:
                raise
            return default

    absent = object()

    def hasattr_(owner: Any, name: Any) -> bool:
        return getattr_(owner, name, absent) is not absent

    def setattr_(owner: Any, name: Any, value: Any) -> None:
        if checked(name) not in ASSIGNABLE_ATTRIBUTES and not isinstance(owner, C.SETTABLE):
            raise NotAllowedError(f"assignment to attribute '{name}' is not supported", hint=ASSIGNABLE_HINT)
        target = ast.Attribute(value=ast.Name("_", ast.Load()), attr=checked(name), ctx=ast.Store(),
                               lineno=1, col_offset=0, end_lineno=1, end_col_offset=1)
        interpreter._set_attribute(owner, target, value)

    getattr_.__name__, hasattr_.__name__, setattr_.__name__ = "getattr", "hasattr", "setattr"
    return {"getattr": getattr_, "hasattr": hasattr_, "setattr": setattr_}
