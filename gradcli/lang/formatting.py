"""Text of values: `str`, `repr`, f-strings, `str.format` and `%`, as Python and PyTorch print them.

User text never reaches Python's own formatter together with an arbitrary object: a template is
split here (by `string.Formatter.parse`, which only parses), its fields must be positions or names
(never `{0.__class__}` or `{0[key]}`), a format spec must match the format mini-language with
widths and precisions under the limit, and only then is one plain number or string formatted by
`format()`. Tensors format as PyTorch's `Tensor.__format__` does: a 0-d tensor as its number,
others only without a spec, as their repr.
"""
from __future__ import annotations

import collections
import functools
import math
import re
import string
import types
from typing import Any

import numpy as np

from gradcli.engine.creation import resolve_dtype
from gradcli.engine.devices import Device
from gradcli.engine.forward_ad import UnpackedDualTensor
from gradcli.engine.narrow import name_of
from gradcli.engine.tensor import Tensor
from gradcli.engine.tensor_str import Size, tensor_repr
from gradcli.errors import ArgumentError, NotAllowedError, ValueDomainError
from gradcli.lang.namespace import Namespace
from gradcli.lang.objects import Instance
from gradcli.lang.objects import text as instance_text
from gradcli.lang.objects import without_address
from gradcli.lang.limits import MAX_STRING, check_string, check_width
from gradcli.lang.visits import running

_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[_,]?"
                   r"(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?", re.DOTALL)
_PERCENT = re.compile(r"%(?P<key>\([^)]*\))?(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
                      r"(?P<type>[diouxXeEfFgGcrsa%])?")
_FIELD_HINT = "name a variable or a position: '{}'.format(x), '{0}', '{loss:.4f}'.format(loss=v)"


CLASS_TEXTS: dict[int, tuple[Any, str]] = {}
"""id(a type's stand-in) -> (the stand-in, how Python prints the class: `<class 'torch.Tensor'>`), filled by
type_tests.register, so `print(type(x))` reads as in Python."""


class DtypeName(str):
    """`torch.float64` (or `torch.float`) in a program: its name, which every dtype= argument accepts, that
    prints as PyTorch prints the dtype (`torch.float64`; an alias by its dtype: `torch.float` is float32)."""

    def program_text(self) -> str:
        return f"torch.{name_of(resolve_dtype(str(self)))}"


def is_dtype(value: Any) -> bool:
    """A tensor's `dtype`, or a dtype named in the program (`torch.float64`)."""
    return isinstance(value, np.dtype) or isinstance(value, type) and issubclass(value, np.generic)


def to_str(value: Any) -> str:
    """`str(value)` for the values a program can hold."""
    if isinstance(value, str) and hasattr(type(value), "program_text"):  # a dtype's name: torch.float32
        return value.program_text()
    if isinstance(value, str):
        return value
    if isinstance(value, (Device, np.ndarray, np.generic)) or hasattr(type(value), "program_str"):
        return str(value)  # NumPy's own text for x.numpy(): [1. 2.]; an exception's message
    if isinstance(value, Instance):
        return instance_text(value, str)
    return to_repr(value)


def to_repr(value: Any, budget: list[int] | None = None) -> str:
    """`repr(value)`: PyTorch's tensor repr, Python's for numbers, strings and containers of them.

    Containers spend a budget of characters, so a list that holds itself, or one built by doubling
    (`xs = [xs, xs]` sixty times), fails at the string limit instead of running for ever.
    """
    if isinstance(value, (list, tuple)) and not isinstance(value, Size):
        budget = budget if budget is not None else running("repr") or [MAX_STRING]
        parts = []
        for item in value:
            text = to_repr(item, budget)
            budget[0] -= len(text) + 2
            if budget[0] < 0:
                check_string(MAX_STRING + 1)
            parts.append(text)
        inner = ", ".join(parts)
        if isinstance(value, list):
            return "[" + inner + "]"
        fields = getattr(type(value), "_fields", None)
        if fields is not None and len(fields) == len(parts) and (type(value).__module__.startswith(("gradcli.lang",
                                                                                                    "numpy"))
                                                                 or type(value) is UnpackedDualTensor):
            inner = ", ".join(f"{name}={part}" for name, part in zip(fields, parts))
        prefix = type(value).__name__ if fields is not None else ""
        return f"{prefix}({inner},)" if len(value) == 1 and not prefix else f"{prefix}({inner})"
    if type(value) is collections.OrderedDict:  # Python 3.11's text, within the budget
        return f"OrderedDict({to_repr(list(value.items()), budget)})" if value else "OrderedDict()"
    if isinstance(value, (dict, set)) and type(value) not in (dict, set):
        return repr(value)  # a collections facade's kind writes its own (bounded the same way)
    if isinstance(value, (dict, set)):
        budget = budget if budget is not None else running("repr") or [MAX_STRING]
        if not value:
            return "{}" if isinstance(value, dict) else "set()"
        parts = []
        for key in value:
            text = to_repr(key, budget) + (": " + to_repr(value[key], budget) if isinstance(value, dict) else "")
            budget[0] -= len(text) + 2
            if budget[0] < 0:
                check_string(MAX_STRING + 1)
            parts.append(text)
        return "{" + ", ".join(parts) + "}"
    if isinstance(value, Tensor):
        return tensor_repr(value)
    if isinstance(value, str) and hasattr(type(value), "program_text"):
        return value.program_text()
    if is_dtype(value):
        return f"torch.{name_of(value)}"  # a dtype as PyTorch prints it (torch.float32, torch.bfloat16)
    if isinstance(value, np.generic):
        return repr(value)  # NumPy's own scalar, as NumPy writes it: np.float64(1.5)
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, Instance):
        return instance_text(value, repr)
    known = CLASS_TEXTS.get(id(value)) if callable(value) else None
    return known[1] if known is not None and known[0] is value else _other_text(value, budget)


BUILTIN_NAMES: dict[int, tuple[Any, str]] = {}
"""id(a builtin function) -> (it, its name in the program): `print(zip)` is `<built-in function zip>`, never the
Python function behind it (`zip_`); filled by python_builtins."""

_PLAIN_OF = {str: str, bytes: bytes, complex: complex, frozenset: frozenset, range: lambda r: r, slice: lambda s: s,
             type(None): lambda v: v, type(Ellipsis): lambda v: v}
_PLAIN = tuple(_PLAIN_OF)
"""Python's own values whose repr is their value (a str subclass shows as its text)."""


def _other_text(value: Any, budget: list[int] | None) -> str:
    """Text of a module, a function or an object of gradcli's own: as Python shows its kind, with no address and
    nothing of the Python object behind it (a facade is `<module 'random'>`, not its table of members)."""
    if isinstance(value, _PLAIN):
        return repr(next(convert for kind, convert in _PLAIN_OF.items() if isinstance(value, kind))(value))
    if isinstance(value, Namespace):
        return f"<module '{value.name}'>"
    if isinstance(value, types.MethodType):
        owner = value.__self__
        of = owner.__name__ if isinstance(owner, type) else type(owner).__name__
        return f"<bound method {of}.{_name_of(value.__func__)} of {to_repr(owner, budget)}>"
    if isinstance(value, functools.partial) and len(value.args) == 1:  # a classmethod bound to its class
        owner = value.args[0]
        return f"<bound method {_name_of(owner)}.{_name_of(value.func)} of {to_repr(owner, budget)}>"
    if isinstance(value, types.FunctionType) and hasattr(value, "__wrapped__"):  # a program's method in its class
        return f"<function {_name_of(value)}>"
    known = BUILTIN_NAMES.get(id(value))
    if known is not None and known[0] is value:
        return f"<built-in function {known[1]}>"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodWrapperType, type)):
        return f"<built-in function {_name_of(value)}>"
    if type(value).__repr__ is object.__repr__ or type(value).__module__ == "builtins":
        return f"<{_name_of(type(value))} object>"
    return without_address(repr(value))  # an object of gradcli's that writes its own text (a Module, a Size)


def _name_of(fn: Any) -> str:
    """A function's name as the program calls it: `zip` for gradcli's `zip_`, nothing of a Python closure's path."""
    name = getattr(fn, "__name__", "")
    name = name.rstrip("_") if isinstance(name, str) and name.rstrip("_").isidentifier() else ""
    return name or "function"


class Shown(str):
    """Text standing in for a container's value in a report: its repr is the text itself."""

    def __repr__(self) -> str:
        return str(self)


def format_value(value: Any, spec: str = "", conversion: str | None = None) -> str:
    """`format(value, spec)` after a `!s`/`!r`/`!a` conversion, for one f-string or str.format field."""
    if conversion not in (None, "s", "r", "a"):
        raise ArgumentError(f"Unknown conversion specifier {conversion}", hint="write !r, !s or !a")
    if conversion == "s":
        value = to_str(value)
    elif conversion == "r":
        value = to_repr(value)
    elif conversion == "a":
        value = ascii(to_repr(value))
    if isinstance(value, Tensor):
        if value.ndim == 0:
            value = value.item()
        elif spec:
            raise ArgumentError("unsupported format string passed to Tensor.__format__",
                                hint="format one number: f'{x.item():.4f}' or f'{x.sum():.4f}'")
        else:
            return tensor_repr(value)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        if not spec:
            return to_str(value)
        _check_spec(spec)
        try:
            text = format(value, spec)
        except ValueError as exc:
            raise ArgumentError(f"{exc}", hint=f"'{spec}' does not fit a {type(value).__name__}") from None
        check_string(len(text))
        return text
    if spec:
        raise ArgumentError(f"unsupported format string passed to {_type_of(value)}.__format__",
                            hint="format numbers and strings; convert the value first (x.item(), str(x))")
    return to_str(value)


def _check_spec(spec: str) -> None:
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ArgumentError(f"Invalid format specifier '{spec}'",
                            hint="write a format such as :.4f, :>8, :e or :d")
    for part in ("width", "precision"):
        if match.group(part):
            check_width(int(match.group(part)), part)


def format_template(template: str, args: tuple, kwargs: dict) -> str:
    """`template.format(*args, **kwargs)` with fields that are positions or names only."""
    try:
        pieces = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ArgumentError(f"{exc}", hint="write a literal brace twice: '{{' or '}}'") from None
    out: list[str] = []
    numbered = [field == "" for _, field, _, _ in pieces if field is not None and (field == "" or field.isdigit())]
    if any(numbered) and not all(numbered):
        raise ArgumentError("cannot switch between automatic field numbering and manual field specification",
                            hint="number every field ('{0} {1}') or none ('{} {}')")
    automatic = 0
    size = 0
    for literal, field, spec, conversion in pieces:
        out.append(literal)
        size += len(literal)
        if field is None:
            continue
        if field == "":
            field, automatic = str(automatic), automatic + 1
        if spec and "{" in spec:
            raise NotAllowedError("nested replacement fields in a format spec are not supported",
                                  hint="write the width into the template: '{:10.4f}'")
        text = format_value(_field_value(field, args, kwargs), spec or "", conversion)
        out.append(text)
        size += len(text)
        check_string(size)
    return "".join(out)


def _field_value(field: str, args: tuple, kwargs: dict) -> Any:
    if field.isdigit():
        index = int(field)
        if index >= len(args):
            raise ArgumentError(f"Replacement index {index} out of range for positional args tuple",
                                hint=f"the template has a field {{{index}}} but {len(args)} values were given")
        return args[index]
    if field.isidentifier():
        if field not in kwargs:
            raise ArgumentError(f"format(): no value for the field '{field}'",
                                hint=f"pass it by name: .format({field}=...)")
        return kwargs[field]
    raise NotAllowedError(f"format field '{field}' is not supported: fields are positions or names, never "
                          "attributes or indices of a value", hint=_FIELD_HINT)


def percent_format(template: str, values: Any) -> str:
    """`template % values`, printf-style, through the same checked formatting as f-strings."""
    items = list(values) if type(values) is tuple else [values]
    out: list[str] = []
    position = 0
    used = 0
    size = 0
    for match in _PERCENT.finditer(template):
        out.append(template[position:match.start()])
        position = match.end()
        kind = match.group("type")
        if kind is None:
            raise ArgumentError(f"incomplete format at '{template[match.start():match.start() + 10]}'",
                                hint="write %% for a percent sign")
        if kind == "%" and match.group(0) == "%%":
            out.append("%")
            continue
        if match.group("key") is not None or "*" in (match.group("width") or "") + (match.group("precision") or ""):
            raise NotAllowedError("'%(name)s' and '*' widths are not supported in %-formatting",
                                  hint="use an f-string: f'{loss:.4f}'")
        if used >= len(items):
            raise ArgumentError("not enough arguments for format string",
                                hint=f"the template has more fields than the {len(items)} values given")
        text = _percent_field(items[used], match)
        used += 1
        out.append(text)
        size += len(text)
        check_string(size)
    out.append(template[position:])
    if used < len(items):
        raise ArgumentError("not all arguments converted during string formatting",
                            hint="give one value per % field, as a tuple: '%d %f' % (a, b)")
    return "".join(out)


def _percent_field(value: Any, match: re.Match) -> str:
    kind, flags = match.group("type"), match.group("flags")
    width, precision = match.group("width") or "", match.group("precision")
    align = "<" if "-" in flags else ""
    sign = "+" if "+" in flags else " " if " " in flags else ""
    zero = "0" if "0" in flags and not align else ""
    alternate = "#" if "#" in flags else ""
    dot = f".{precision}" if precision is not None else ""
    if kind in "sra":
        text = {"s": to_str, "r": to_repr, "a": lambda v: ascii(to_repr(v))}[kind](value)
        return format_value(text, f"{align or '>'}{width}{dot}")
    number = value.item() if isinstance(value, Tensor) and value.numel() == 1 else value
    if isinstance(number, (np.integer, np.floating)):
        number = number.item()
    if not isinstance(number, (int, float, bool)):
        raise ArgumentError(f"%{kind} format: a real number is required, not {_type_of(value)}",
                            hint="format a number: '%.4f' % loss.item()")
    if kind in "diu":
        if isinstance(number, float) and not math.isfinite(number):
            raise ValueDomainError(f"cannot convert float {'NaN' if number != number else 'infinity'} to integer")
        number, kind = int(number), "d"
    elif kind in "oxXc" and not isinstance(number, int):
        raise ArgumentError(f"%{kind} format: an integer is required, not {type(number).__name__}")
    return format_value(number, f"{align}{sign}{alternate}{zero}{width}{dot}{kind}")


def _type_of(value: Any) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    return "NoneType" if value is None else type(value).__name__
