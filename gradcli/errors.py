"""The one exception type library code raises for user mistakes.

Every kind carries what went wrong (message, PyTorch's text where PyTorch has one), how to fix it
(hint) and where (line, column, span length), so the CLI can print a caret and pick an exit code
without knowing which part of gradcli raised it.
"""
from __future__ import annotations


class GradcliError(Exception):
    """A mistake in what the user asked for; always exit code 2 at the command line."""

    kind = "error"

    def __init__(self, message: str, hint: str | None = None, *, line: int | None = None,
                 column: int | None = None, length: int = 1, source: str | None = None,
                 filename: str | None = None, explanation: str | None = None) -> None:
        full = message if explanation is None else f"{message}: {explanation}"
        super().__init__(full)
        self.message = full
        self.pytorch_text = message
        """PyTorch's own text of the error, all a program's `except ... as e: print(e)` sees; `message` adds
        gradcli's explanation, shown when nothing catches the error."""
        self.hint = hint
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.source = source
        self.filename = filename
        self.cell: int | None = None
        """The notebook cell the line counts in (the file is then a notebook and the line the cell's own)."""
        self.calls: list[tuple[int, int, int]] = []
        """Where the program's own functions were called, outermost first (the error's place is innermost)."""

    def at(self, line: int | None, column: int | None, length: int = 1, source: str | None = None) -> "GradcliError":
        """Attach a source position unless a more precise one is already known."""
        if self.line is None:
            self.line, self.column, self.length = line, column, max(1, length)
        if self.source is None:
            self.source = source
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message, "hint": self.hint,
                "line": self.line, "column": self.column, "calls": calls_json(self.calls),
                **({"cell": self.cell} if self.cell is not None else {})}


class ParseError(GradcliError):
    """The text is not valid syntax, or uses a construct outside the language."""
    kind = "syntax"


class NotAllowedError(GradcliError):
    """A valid Python construct the language refuses on purpose (lambda, import os, dunders)."""
    kind = "not-allowed"


class NameLookupError(GradcliError):
    """An unknown variable, function, attribute or method."""
    kind = "name"


class ArgumentError(GradcliError):
    """A call with the wrong number or type of arguments."""
    kind = "argument"


class ShapeError(GradcliError):
    """Shapes that do not broadcast, multiply or reshape."""
    kind = "shape"


class DtypeError(GradcliError):
    """An operation the tensor's dtype does not allow (integer tensors requiring grad)."""
    kind = "dtype"


class BackwardError(GradcliError):
    """Misuse of backward: non-scalar output without a gradient, freed graph, no grad_fn."""
    kind = "backward"


class InputSpecError(GradcliError):
    """A NAME=SPEC input or a --grad SPEC that cannot be read."""
    kind = "input"


class LimitError(GradcliError):
    """A tensor, loop or nesting past the configured bound."""
    kind = "limit"


class ValueDomainError(GradcliError):
    """A value outside what an operation accepts (item() of many elements, bad index)."""
    kind = "value"


class ProgramAssertionError(Exception):
    """An `assert` in a program did not hold: exit code 1, a failed expectation rather than a mistake."""

    kind = "assertion"

    def __init__(self, test: str, values: list, message: object, line: int, column: int, length: int,
                 source: str | None, filename: str | None) -> None:
        super().__init__(f"assertion failed: {test}")
        self.test = test
        # (label, text): written now, while the program's default dtype still decides how a tensor prints.
        self.values = [(label, repr(value)) for label, value in values]
        self.message = message
        self.line = line
        self.column = column
        self.length = length
        self.source = source
        self.filename = filename
        self.cell: int | None = None
        self.calls: list[tuple[int, int, int]] = []

    def to_dict(self) -> dict:
        """The same fields as `GradcliError.to_dict`, so JSON consumers see one error shape."""
        return {"kind": self.kind, "message": f"assertion failed: {self.test}", "hint": None,
                "line": self.line, "column": self.column, "calls": calls_json(self.calls),
                **({"cell": self.cell} if self.cell is not None else {})}


def calls_json(calls: list[tuple[int, int, int]]) -> list[dict]:
    """The call stack in JSON: where each of the program's functions was called, outermost first."""
    return [{"line": line, "column": column} for line, column, _ in calls]
