"""The exceptions a program can raise and catch: Python's types as values, never Python's own classes.

`ValueError`, `RuntimeError`, ... are `ExceptionType` objects: calling one makes an
`ExceptionValue`, `raise` throws it inside a `RaisedError` (a `GradcliError`, so an uncaught one
ends the program as a user error with its caret), and `except T` matches by `ExceptionType.covers`.
gradcli's own errors are caught as the Python type PyTorch would raise (a shape mismatch is a
`RuntimeError` whose text is PyTorch's); `python_value` decides which.

What can never be caught: a limit (`LimitError`: steps, time, sizes, depth, recursion) and a
refusal (`NotAllowedError`), whatever the `except` names, bare or `BaseException`; see `catchable`.

Types are values with a name and bases (`ProgramType`), so a user class (lang/classes.py) can
subclass `Exception` by making an `ExceptionType` whose base is it, and `isinstance` treats the
program's types and gradcli's stand-ins for Python's (`int`, `torch.Tensor`) alike.
"""
from __future__ import annotations

import dis
import os
from typing import Any

from gradcli.errors import (ArgumentError, BackwardError, DtypeError, GradcliError, InputSpecError, LimitError,
                            NameLookupError, NotAllowedError, ProgramAssertionError, ShapeError, ValueDomainError)


class ProgramType:
    """A type a program can name: `isinstance(v, T)`, `issubclass(S, T)`, `type(v)`, `T.__name__`."""

    name: str = "object"
    bases: tuple["ProgramType", ...] = ()
    module: str = ""
    """Where Python would say the type lives, as its text shows it: `numbers.` for `<class 'numbers.Real'>`."""

    def __repr__(self) -> str:
        return f"<class '{self.module}{self.name}'>"

    def covers(self, value: Any) -> bool:
        """isinstance(value, self)."""
        raise NotImplementedError

    def includes(self, other: "ProgramType") -> bool:
        """issubclass(other, self): self is other or one of its bases, transitively."""
        stack = [other]
        while stack:
            kind = stack.pop()
            if kind is self:
                return True
            stack.extend(kind.bases)
        return False


class ExceptionType(ProgramType):
    """`ValueError` and its kind: calling it makes the exception value a `raise` throws."""

    def __init__(self, name: str, base: "ExceptionType | None") -> None:
        self.name = self.__name__ = name
        self.bases = (base,) if base is not None else ()

    def __call__(self, *args: Any) -> "ExceptionValue":
        return ExceptionValue(self, args)

    def covers(self, value: Any) -> bool:
        return isinstance(value, ExceptionValue) and self.includes(value.type)

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


class ExceptionValue:
    """One exception: its type and arguments (`e.args`); `str(e)` and `repr(e)` as Python writes them."""

    def __init__(self, kind: ExceptionType, args: tuple, origin: GradcliError | ProgramAssertionError | None = None
                 ) -> None:
        self.type = kind
        self.args = tuple(args)
        self.origin = origin
        """The gradcli error this value stands for when one was caught, re-raised as itself."""

    def __str__(self) -> str:
        from gradcli.lang.formatting import to_repr, to_str
        if not self.args:
            return ""
        if len(self.args) == 1:
            only = self.args[0]
            return to_repr(only) if self.type.name == "KeyError" else to_str(only)
        return to_repr(self.args)

    program_str = True
    """`str(e)` is the message (formatting asks for this rather than importing the exceptions)."""

    def __repr__(self) -> str:
        from gradcli.lang.formatting import to_repr
        inner = to_repr(self.args)
        return f"{self.type.name}({inner[1:-2] if len(self.args) == 1 else inner[1:-1]})"


class RaisedError(GradcliError):
    """An exception the program raised (or a caught one raised again) that nothing caught."""

    kind = "exception"

    def __init__(self, value: ExceptionValue) -> None:
        text = str(value)
        super().__init__(f"{value.type.name}: {text}" if text else value.type.name)
        self.value = value


def _hierarchy() -> dict[str, ExceptionType]:
    """Python's built-in exception types that tutorials raise and catch, with Python's bases."""
    table: dict[str, ExceptionType] = {}
    for name, base in [("BaseException", None), ("Exception", "BaseException"), ("ArithmeticError", "Exception"),
                       ("ZeroDivisionError", "ArithmeticError"), ("OverflowError", "ArithmeticError"),
                       ("LookupError", "Exception"), ("IndexError", "LookupError"), ("KeyError", "LookupError"),
                       ("RuntimeError", "Exception"), ("NotImplementedError", "RuntimeError"),
                       ("ValueError", "Exception"), ("TypeError", "Exception"), ("NameError", "Exception"),
                       ("AttributeError", "Exception"), ("AssertionError", "Exception"),
                       ("StopIteration", "Exception"), ("ImportError", "Exception"),
                       ("ModuleNotFoundError", "ImportError"), ("Warning", "Exception"),
                       ("UserWarning", "Warning"), ("DeprecationWarning", "Warning"),
                       ("RuntimeWarning", "Warning"), ("UnicodeError", "ValueError"), ("OSError", "Exception"),
                       ("FileNotFoundError", "OSError")]:
        table[name] = ExceptionType(name, table[base] if base else None)
    return table


EXCEPTIONS: dict[str, ExceptionType] = _hierarchy()


def raised(value: ExceptionValue) -> GradcliError:
    """The error that carries `value` out: a caught gradcli error is raised again as itself, place and all."""
    if value.origin is not None:
        return value.origin
    return RaisedError(value)


def raise_python(name: str, *args: Any) -> None:
    """Raise the program's own exception `name(*args)` (a KeyError of a dict, a StopIteration of next)."""
    raise RaisedError(EXCEPTIONS[name](*args))


def catchable(exc: BaseException) -> bool:
    """Whether any `except` may see `exc`: never a limit or a refusal, never one of gradcli's own bugs."""
    return isinstance(exc, (GradcliError, ProgramAssertionError)) and not isinstance(exc, (LimitError,
                                                                                          NotAllowedError))


def python_value(exc: GradcliError | ProgramAssertionError) -> ExceptionValue:
    """The exception a program's `except` sees for a catchable error: PyTorch's type and text."""
    if isinstance(exc, RaisedError):
        return exc.value
    if isinstance(exc, ProgramAssertionError):
        return ExceptionValue(EXCEPTIONS["AssertionError"], () if exc.message is None else (exc.message,), exc)
    return ExceptionValue(EXCEPTIONS[_python_name(exc)], (exc.pytorch_text,), exc)


_INDEX_ERRORS = ("Dimension out of range", "index ")
_VALUE_ERRORS = ("Expected input batch_size",)
_RUNTIME_ERRORS = ("a Tensor with",)
_FILE_ERRORS = ("[Errno 2] No such file",)
_NOT_IMPLEMENTED = ("No KL(p || q) is implemented", "The cross KL-divergence", "KL between Binomials",
                    "Inhomogeneous total count", "Cannot transform _", "PyTorch defines no ")
_ASSERTION_ERRORS = ("Torch not compiled with CUDA enabled",)
_ATTRIBUTE_ERRORS = ("module 'torch._C' has no attribute",)
"""PyTorch's own exception type for errors whose gradcli kind does not say it (checked against torch 2.13)."""


def _python_name(exc: GradcliError) -> str:
    message = exc.pytorch_text
    if message.startswith(_INDEX_ERRORS):
        return "IndexError"
    if message.startswith(_VALUE_ERRORS):
        return "ValueError"
    if message.startswith(_RUNTIME_ERRORS):
        return "RuntimeError"
    if message.startswith(_FILE_ERRORS):
        return "FileNotFoundError"
    if message.startswith(_NOT_IMPLEMENTED) or " has no rsample: " in message:  # Distribution.rsample's own
        return "NotImplementedError"
    if message.startswith('"') and "not implemented for '" in message:  # PyTorch's kernel missing for a dtype
        return "NotImplementedError"
    if message.startswith(_ASSERTION_ERRORS):
        return "AssertionError"
    if message.startswith(_ATTRIBUTE_ERRORS):
        return "AttributeError"
    if isinstance(exc, (ShapeError, BackwardError, DtypeError)):
        return "RuntimeError"
    if isinstance(exc, NameLookupError):
        return "AttributeError" if message.startswith(("attribute", "cannot import")) else "NameError"
    if isinstance(exc, ValueDomainError):
        return "ZeroDivisionError" if "division by zero" in message else \
            "OverflowError" if "too large" in message else "ValueError"
    if isinstance(exc, ArgumentError):
        return "IndexError" if "out of range" in message else "TypeError"
    if isinstance(exc, InputSpecError):
        return "ValueError"
    return "RuntimeError"


_BUILTIN_TYPES = frozenset({ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError, KeyError})
"""What a CPython builtin raises for the values it is given (exactly these: a library's subclass is not Python's)."""
_LANGUAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PACKAGE = os.path.dirname(_LANGUAGE.rstrip(os.sep)) + os.sep
_RAISE = dis.opmap["RAISE_VARARGS"]


def builtins_own(exc: BaseException) -> bool:
    """Whether `exc`, out of a builtin or facade a program called, is what Python raises for that call, so it
    becomes the program's exception; otherwise it is a bug in gradcli and stays an internal error.

    Python's own: one of the types a builtin raises, raised in CPython or a standard module, or out of a call that
    one of the language's facades (`gradcli/lang`) made with the program's values. A gradcli bug: any other type;
    one that passed through gradcli's engine, torch library, checker or views (they raise gradcli's errors, never
    Python's); or one a facade raised with a `raise` of its own (a facade raises the program's with
    `raise_python`). Frames after the first are the call's; the first is the caller's, which caught it."""
    if type(exc) not in _BUILTIN_TYPES or exc.__traceback__ is None:
        return False
    frame = exc.__traceback__.tb_next
    while frame is not None:
        where = frame.tb_frame.f_code.co_filename
        if where.startswith(_PACKAGE) and not where.startswith(_LANGUAGE):
            return False
        if frame.tb_next is None and where.startswith(_PACKAGE):
            return frame.tb_frame.f_code.co_code[frame.tb_lasti] != _RAISE
        frame = frame.tb_next
    return True
