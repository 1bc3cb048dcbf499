"""Python's operator protocols for the objects of a program's classes: what `a + b`, `a == b`, `a < b`,
`x in a`, `-a`, `if a:`, `len(a)` and `for v in a` call, and in which order.

Only the special methods the program itself defined are called (each a program call, counted by the
budget); everything else is Python's default: `==` is identity, `!=` inverts `__eq__`, an object is
true, an operand that is not a program's object (a number, a tensor, a list) answers NotImplemented,
as Python's numbers and PyTorch's tensors do for objects they do not know. So `tensor + obj` and
`2 * obj` reach `obj.__radd__` / `obj.__rmul__`, and a right operand whose class derives from the
left's, and overrides the reflected method, goes first. What Python refuses is the program's own
TypeError or ValueError with Python's text, which its `except` may catch.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from gradcli.engine.tensor import Tensor
from gradcli.lang.exceptions import RaisedError, raise_python
from gradcli.lang.limits import Lazy
from gradcli.lang.objects import Instance

ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
              "@": "matmul"}
COMPARISONS = {"==": ("__eq__", "__eq__"), "!=": ("__ne__", "__ne__"), "<": ("__lt__", "__gt__"),
               "<=": ("__le__", "__ge__"), ">": ("__gt__", "__lt__"), ">=": ("__ge__", "__le__")}
UNARY = {"-": "__neg__", "+": "__pos__"}


def involved(*values: Any) -> bool:
    return any(isinstance(v, Instance) for v in values)


def own(value: Any, name: str) -> Callable[..., Any] | None:
    """The special method `name` as the program's class defines it (or inherits from a class of the program)."""
    if not isinstance(value, Instance):
        return None
    for klass in type(value).__mro__:
        if name in klass.__dict__.get("_gradcli_names", ()):
            return klass.__dict__[name]
    return None


def _name(value: Any) -> str:
    """A type as Python's messages name it."""
    return "Tensor" if isinstance(value, Tensor) else "NoneType" if value is None else type(value).__name__


def _dispatch(left: Any, right: Any, name: str, reflected: str, subclass_needs_override: bool) -> Any:
    """Python's order: the left operand's method, then the right's reflected one (first, when the right's class
    derives from the left's); NotImplemented from both is NotImplemented."""
    forward, backward = own(left, name), own(right, reflected)
    if type(left) is type(right) and subclass_needs_override:
        backward = None
    calls = [(forward, left, right), (backward, right, left)]
    if backward is not None and type(right) is not type(left) and issubclass(type(right), type(left)) and \
            (not subclass_needs_override or backward is not own(left, reflected)):
        calls.reverse()
    return _first(calls)


def _first(calls: list[tuple[Callable[..., Any] | None, Any, Any]]) -> Any:
    """The first answer other than NotImplemented of the methods in `calls` (each `(method, self, other)`)."""
    for method, a, b in calls:
        if method is not None:
            result = method(a, b)
            if result is not NotImplemented:
                return result
    return NotImplemented


def arithmetic(symbol: str, left: Any, right: Any) -> Any:
    stem = ARITHMETIC[symbol]
    result = _dispatch(left, right, f"__{stem}__", f"__r{stem}__", True)
    if result is NotImplemented:
        raise_python("TypeError", f"unsupported operand type(s) for {symbol}: '{_name(left)}' and '{_name(right)}'")
    return result


def compare(symbol: str, left: Any, right: Any, truth: Callable[[Any], bool]) -> Any:
    """`left symbol right` (== != < <= > >=); `truth` decides what an `__eq__` returned, for `!=`'s default."""
    name, reflected = COMPARISONS[symbol]
    if symbol == "!=":
        result = _dispatch_ne(left, right, truth)
    else:
        result = _dispatch(left, right, name, reflected, False)
    if result is not NotImplemented:
        return result
    if symbol in ("==", "!="):
        return (left is right) == (symbol == "==")
    raise_python("TypeError", f"'{symbol}' not supported between instances of '{_name(left)}' and '{_name(right)}'")


def _dispatch_ne(left: Any, right: Any, truth: Callable[[Any], bool]) -> Any:
    """`!=`: a class's `__ne__`, else its `__eq__` inverted (Python's default), tried on each side in turn."""
    def ne(value: Any) -> Callable[..., Any] | None:
        method = own(value, "__ne__")
        if method is not None:
            return method
        eq = own(value, "__eq__")
        if eq is None:
            return None

        def inverted(a: Any, b: Any) -> Any:
            result = eq(a, b)
            return result if result is NotImplemented else not truth(result)
        return inverted
    calls = [(ne(left), left, right), (ne(right), right, left)]
    if type(right) is not type(left) and issubclass(type(right), type(left)):
        calls.reverse()
    return _first(calls)


def unary(symbol: str, value: Any) -> Any:
    method = own(value, UNARY[symbol])
    if method is None:
        raise_python("TypeError", f"bad operand type for unary {symbol}: '{_name(value)}'")
    return method(value)


def truth(value: Instance) -> bool:
    """`if obj:`: its `__bool__` (which must return a bool), else whether its `__len__` is not 0, else True."""
    method = own(value, "__bool__")
    if method is not None:
        result = method(value)
        if type(result) is not bool:
            raise_python("TypeError", f"__bool__ should return bool, returned {_name(result)}")
        return result
    if own(value, "__len__") is not None or hasattr(type(value), "__len__"):
        return length(value) != 0
    return True


def length(value: Instance) -> int:
    """`len(obj)`, with Python's checks on what `__len__` returned."""
    method = own(value, "__len__") or getattr(type(value), "__len__", None)
    if method is None:
        raise_python("TypeError", f"object of type '{_name(value)}' has no len()")
    result = method(value)
    if not isinstance(result, int):
        raise_python("TypeError", f"'{_name(result)}' object cannot be interpreted as an integer")
    if result < 0:
        raise_python("ValueError", "__len__() should return >= 0")
    if result >= 2 ** 63:
        raise_python("OverflowError", "cannot fit 'int' into an index-sized integer")
    return int(result)


def iterate(value: Instance) -> Iterator[Any] | None:
    """`for v in obj`: its `__iter__` (which must return an iterator), else `__getitem__` from 0 until the program
    raises IndexError (Python's old protocol); None when the class defines neither."""
    method = own(value, "__iter__")
    if method is not None:
        result = method(value)
        if not hasattr(type(result), "__next__"):
            raise_python("TypeError", f"iter() returned non-iterator of type '{_name(result)}'")
        return result
    if own(value, "__getitem__") is not None:
        return Lazy(_by_index(value))
    return None


def _by_index(value: Instance) -> Iterator[Any]:
    get = own(value, "__getitem__")
    i = 0
    while True:
        try:
            item = get(value, i)
        except RaisedError as exc:
            if exc.value.type.name in ("IndexError", "StopIteration"):
                return
            raise
        yield item
        i += 1


def contains(item: Any, container: Instance, equal: Callable[[Any, Any], bool], truth: Callable[[Any], bool]) -> bool:
    """`item in obj`: its `__contains__` (its result's truth), else a search of what iterating it gives
    (`equal` and `truth` are the language's `==` and `if`)."""
    method = own(container, "__contains__")
    if method is not None:
        return truth(method(container, item))
    values = iterate(container)
    if values is None:
        raise_python("TypeError", f"argument of type '{_name(container)}' is not iterable")
    return any(v is item or equal(v, item) for v in (values if isinstance(values, Lazy) else Lazy(values)))
