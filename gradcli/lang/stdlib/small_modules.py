"""The small standard modules: pprint, time, typing, dataclasses, argparse, warnings, string, numbers,
unicodedata and `__future__`, each a `Namespace` of named members.

`time.sleep` sleeps within the program's --timeout (a longer sleep is the time limit, at once);
`argparse` parses with Python's own parser, its errors and `--help` turned into gradcli errors
instead of an exit; `typing` gives names that annotations (never evaluated) and aliases can use.
"""
from __future__ import annotations

import argparse as _argparse
import math
import re
import pprint as _pprint
import string as _string
import time as _time
import unicodedata as _unicodedata
from typing import Any, Callable

import numpy as np

from gradcli.errors import ArgumentError, LimitError, NotAllowedError
from gradcli.lang.namespace import Namespace
from gradcli.lang.exceptions import EXCEPTIONS, ProgramType
from gradcli.lang.limits import ACTIVE, DEFAULT_TIMEOUT, check_string
from gradcli.lang.iteration import items
from gradcli.lang.stdlib import dataclasses_module
from gradcli.lang.stdlib.runtime import show


# -- pprint ------------------------------------------------------------------------------------------
def pformat(value: Any, indent: int = 1, width: int = 80, depth: Any = None, *, compact: bool = False,
            sort_dicts: bool = True) -> str:
    from gradcli.lang.formatting import to_repr
    to_repr(value)  # within the string limit before Python's pprint walks it
    text = _pprint.pformat(value, indent=indent, width=width, depth=depth, compact=compact, sort_dicts=sort_dicts)
    check_string(len(text))
    return text


def pprint(value: Any, *args: Any, **kwargs: Any) -> None:
    show(pformat(value, *args, **kwargs))


class PrettyPrinter:
    """`pprint.PrettyPrinter(indent=2)`: its options kept, `pprint` and `pformat` as the module's with them."""

    program_attributes = frozenset({"pprint", "pformat"})

    def __init__(self, indent: int = 1, width: int = 80, depth: Any = None, *, compact: bool = False,
                 sort_dicts: bool = True) -> None:
        try:
            _pprint.PrettyPrinter(indent, width, depth, compact=compact, sort_dicts=sort_dicts)  # Python's checks
        except (ValueError, TypeError) as exc:
            raise ArgumentError(f"PrettyPrinter: {exc}") from None
        self.options = dict(indent=indent, width=width, depth=depth, compact=compact, sort_dicts=sort_dicts)

    def pformat(self, value: Any) -> str:
        return pformat(value, **self.options)

    def pprint(self, value: Any) -> None:
        show(self.pformat(value))

    def __repr__(self) -> str:
        return "<pprint.PrettyPrinter object>"


# -- time --------------------------------------------------------------------------------------------
def sleep(seconds: Any) -> None:
    if not isinstance(seconds, (int, float)) or seconds < 0:
        raise ArgumentError("sleep length must be a non-negative number")
    left = ACTIVE[-1].left() if ACTIVE else math.inf
    if seconds > left:
        raise LimitError(f"time.sleep({seconds:g}) would wait past the time limit: {left:.2g} s of it are left",
                         hint="sleep less, or raise the limit with --timeout SECONDS")
    if seconds > DEFAULT_TIMEOUT:
        raise LimitError(f"time.sleep({seconds:g}) is longer than gradcli's default time limit of "
                         f"{DEFAULT_TIMEOUT:g} seconds", hint="sleep less: a gradcli program has no use for waiting")
    _time.sleep(seconds)


# -- typing ------------------------------------------------------------------------------------------
class TypingName:
    """`List`, `Optional[Tensor]`...: a name an alias or annotation can use; subscripting it gives itself."""

    def __init__(self, name: str) -> None:
        self.name = self.__name__ = name

    def program_index(self, key: Any) -> "TypingName":
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.name == "TypeVar":
            return TypingName(args[0] if args and isinstance(args[0], str) else "T")
        if self.name == "NewType":
            return lambda value: value
        raise ArgumentError(f"typing.{self.name} cannot be called", hint="use typing's names in annotations")

    def __repr__(self) -> str:
        return f"typing.{self.name}"


_TYPING = ("Any", "List", "Dict", "Tuple", "Set", "FrozenSet", "Optional", "Union", "Callable", "Iterable",
           "Iterator", "Sequence", "Mapping", "MutableMapping", "Type", "TypeVar", "Generator", "NamedTuple",
           "Literal", "Final", "ClassVar", "NewType", "Protocol", "Generic", "Hashable", "Sized", "Collection",
           "DefaultDict", "OrderedDict", "Counter", "Deque", "NoReturn", "Annotated", "TypedDict")


def _typing() -> Namespace:
    members: dict[str, Any] = {name: TypingName(name) for name in _TYPING}
    members["cast"] = lambda kind, value: value
    members["TYPE_CHECKING"] = False
    return Namespace("typing", members)


# -- argparse ----------------------------------------------------------------------------------------
class _Refusing(_argparse.ArgumentParser):
    """Python's parser, with its exits (errors, --help) turned into gradcli's errors."""

    def error(self, message: str) -> Any:
        raise ArgumentError(f"argparse: {message}", hint="parse_args() gives the defaults; pass a list to parse "
                                                         "others: parser.parse_args(['--lr', '0.1'])")

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        raise ArgumentError(f"argparse wanted to exit{': ' + message.strip() if message else ''}",
                            hint="gradcli programs get no command-line arguments: parse_args() gives the defaults")

    def print_help(self, file: Any = None) -> None:
        show(self.format_help())


_HELP_FIELD = re.compile(r"%\((\w*)\)")
_HELP_FIELDS = frozenset({"prog", "default", "dest", "metavar", "choices", "nargs", "const", "required"})
"""What `%(name)s` in a help text may show: values of the program's own, never the parser or its type functions."""


class ArgumentParser:
    program_attributes = frozenset({"add_argument", "parse_args", "parse_known_args", "set_defaults",
                                    "add_argument_group", "print_help", "format_help"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        allowed = {"prog", "description", "epilog", "formatter_class", "add_help", "usage"}
        self._parser = _Refusing(**{k: v for k, v in kwargs.items() if k in allowed and k != "formatter_class"},
                                 exit_on_error=False)

    def add_argument(self, *names: str, **options: Any) -> None:
        if not all(isinstance(n, str) for n in names):
            raise ArgumentError("argument names are strings: add_argument('--lr', type=float, default=0.1)")
        unknown = set(_HELP_FIELD.findall(str(options.get("help", "")))) - _HELP_FIELDS
        if unknown:  # %(container)r would show the parser itself; an unknown key fails only when help is printed
            raise ArgumentError(f"add_argument: help names %({sorted(unknown)[0]}), which argparse help cannot show "
                                "here", hint=f"a help text may name {', '.join(f'%({k})s' for k in sorted(_HELP_FIELDS))}")
        try:
            self._parser.add_argument(*names, **options)
        except (ValueError, TypeError, _argparse.ArgumentError) as exc:
            raise ArgumentError(f"add_argument: {exc}") from None

    def add_argument_group(self, *args: Any, **kwargs: Any) -> "ArgumentParser":
        return self

    def set_defaults(self, **defaults: Any) -> None:
        self._parser.set_defaults(**defaults)

    def parse_args(self, args: Any = None, namespace: Any = None) -> "ParsedArguments":
        return self.parse_known_args(args)[0] if args is None else self._parsed(items(args), strict=True)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple:
        return self._parsed([] if args is None else items(args), strict=False), []

    def _parsed(self, args: list, strict: bool) -> "ParsedArguments":
        if not all(isinstance(a, str) for a in args):
            raise ArgumentError("parse_args takes a list of strings")
        try:
            values = vars(self._parser.parse_args(args) if strict else self._parser.parse_known_args(args)[0])
        except _argparse.ArgumentError as exc:
            raise ArgumentError(f"argparse: {exc}") from None
        return ParsedArguments(values)

    def print_help(self) -> None:
        show(self.format_help())

    def format_help(self) -> str:
        try:
            return self._parser.format_help()
        except (KeyError, ValueError, TypeError) as exc:  # a help text that is no % template: '%(x', '50%'
            raise ArgumentError(f"argparse: a help text cannot be formatted ({type(exc).__name__}: {exc})",
                                hint="write a literal percent sign in help as %%") from None


class ParsedArguments:
    """`args = parser.parse_args()`: each destination an attribute (`args.lr`)."""

    program_attributes: frozenset = frozenset()

    def __new__(cls, values: dict) -> "ParsedArguments":
        kind = type("Namespace", (ParsedArguments,), {"program_attributes": frozenset(values)})
        return object.__new__(kind)

    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)

    def program_set_attribute(self, name: str, value: Any) -> None:
        """`args.cuda = False`: a Namespace takes new attributes, as argparse's does (never one of its own
        methods, nor a `_name`)."""
        if name.startswith("_") or name not in self.__dict__ and hasattr(type(self), name):
            raise NotAllowedError(f"cannot assign to attribute '{name}' of a Namespace",
                                  hint="choose another name for the setting")
        self.__dict__[name] = value
        type(self).program_attributes = type(self).program_attributes | {name}

    def program_vars(self) -> dict:
        """`vars(args)`: the parsed values as a dict (a copy: the program cannot reach the object's own)."""
        return dict(self.__dict__)

    def __repr__(self) -> str:
        from gradcli.lang.formatting import to_repr
        return "Namespace(" + ", ".join(f"{k}={to_repr(v)}" for k, v in self.__dict__.items()) + ")"


# -- warnings ----------------------------------------------------------------------------------------
def warn(message: Any, category: Any = None, stacklevel: int = 1, **_: Any) -> None:
    from gradcli.lang.formatting import to_str
    name = category.name if isinstance(category, ProgramType) else "UserWarning"
    show(f"{name}: {to_str(message)}")


# -- numbers -----------------------------------------------------------------------------------------
class NumberKind(ProgramType):
    """`numbers.Number`, `numbers.Real`...: isinstance over Python's and NumPy's numbers."""

    module = "numbers."

    def __init__(self, name: str, types: tuple[type, ...]) -> None:
        self.name = self.__name__ = name
        self.types = types

    def covers(self, value: Any) -> bool:
        return isinstance(value, self.types)


def _numbers() -> Namespace:
    integral = (int, np.integer)
    real = (*integral, float, np.floating)
    return Namespace("numbers", {"Number": NumberKind("Number", real), "Complex": NumberKind("Complex", real),
                                 "Real": NumberKind("Real", real), "Rational": NumberKind("Rational", integral),
                                 "Integral": NumberKind("Integral", integral)})


# -- unicodedata -------------------------------------------------------------------------------------
def normalize(form: str, text: str) -> str:
    if not isinstance(text, str) or form not in ("NFC", "NFD", "NFKC", "NFKD"):
        raise ArgumentError("normalize(form, text): form is NFC, NFD, NFKC or NFKD")
    check_string(len(text) * 18)  # the most one character decomposes into
    return _unicodedata.normalize(form, text)


def _character(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(ch: Any, *default: Any) -> Any:
        if not isinstance(ch, str) or len(ch) != 1:
            raise ArgumentError(f"{fn.__name__}() takes one character")
        try:
            return fn(ch, *default)
        except (ValueError, KeyError) as exc:
            raise ArgumentError(f"unicodedata.{fn.__name__}: {exc}") from None
    call.__name__ = fn.__name__
    return call


SMALL: dict[str, Callable[[], Namespace]] = {
    "pprint": lambda: Namespace("pprint", {"pprint": pprint, "pformat": pformat, "pp": pprint,
                                           "PrettyPrinter": lambda *a, **k: PrettyPrinter(*a, **k)}),
    "time": lambda: Namespace("time", {"time": _time.time, "perf_counter": _time.perf_counter,
                                       "monotonic": _time.monotonic, "process_time": _time.process_time,
                                       "sleep": sleep}),
    "typing": _typing,
    "dataclasses": lambda: Namespace("dataclasses", dict(dataclasses_module.MEMBERS)),
    "argparse": lambda: Namespace("argparse", {"ArgumentParser": lambda *a, **k: ArgumentParser(*a, **k)}),
    "warnings": lambda: Namespace("warnings", {"warn": warn, "filterwarnings": lambda *a, **k: None,
                                               "simplefilter": lambda *a, **k: None,
                                               **{name: EXCEPTIONS[name] for name in (
                                                   "UserWarning", "DeprecationWarning", "RuntimeWarning",
                                                   "Warning")}}),
    "string": lambda: Namespace("string", {name: getattr(_string, name) for name in (
        "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits", "octdigits", "punctuation",
        "printable", "whitespace")} | {"capwords": lambda text, sep=None: _string.capwords(text, sep)}),
    "numbers": _numbers,
    "unicodedata": lambda: Namespace("unicodedata", {"normalize": normalize, **{fn.__name__: _character(fn) for fn in (
        _unicodedata.category, _unicodedata.name, _unicodedata.combining, _unicodedata.east_asian_width,
        _unicodedata.decimal, _unicodedata.digit, _unicodedata.numeric, _unicodedata.bidirectional,
        _unicodedata.mirrored, _unicodedata.decomposition)}}),
    "__future__": lambda: Namespace("__future__", {}),
}
