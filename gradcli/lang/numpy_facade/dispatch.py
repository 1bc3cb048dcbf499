"""One way into NumPy for every listed name: arguments checked in, the result's size bounded before
NumPy allocates it, results checked out.

In: numbers, strings (a dtype's or a mode's name), None, slices, dtypes, ndarrays of numbers, tensors
(as PyTorch hands them to NumPy: a tensor that requires grad is PyTorch's error) and lists and tuples
of these. A function, a program's object or anything else is refused before NumPy sees it, so
NumPy never calls back into the program. Out: ndarrays of numbers (never of objects or strings),
NumPy's scalars, Python's numbers, dtypes, and tuples and lists of these.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from gradcli.engine.modes import GradMode
from gradcli.engine.tensor import READS, Limits, Tensor
from gradcli.errors import ArgumentError, LimitError, NotAllowedError, ShapeError
from gradcli.lang import type_tests
from gradcli.lang.exceptions import ProgramType
from gradcli.lang.numpy_facade.sizes import estimate

NUMERIC_KINDS = "biufc"
_PYTHON_TYPES = {"int": int, "float": float, "bool": bool, "complex": complex}


class ScalarType(str):
    """`np.float32`: a dtype's name wherever a dtype is taken (`astype`, `dtype=`, `==` with a dtype)
    that, called, makes NumPy's scalar or array of that type, through the same checks."""

    def __call__(self, value: Any = 0) -> Any:
        return call(f"np.{self}", getattr(np, str(self)), value)

    def program_text(self) -> str:
        return f"<class 'numpy.{np.dtype(str(self)).name if self != 'bool_' else 'bool'}'>"


class DtypeText(str):
    """NumPy's dtype (`a.dtype`, `np.dtype('float32')`): prints as NumPy's (`float32`, where a tensor's is
    `torch.float32`) and is taken wherever a dtype is (`astype(a.dtype)`, `a.dtype == np.float32`)."""

    def program_text(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"dtype('{self}')"


def inward(value: Any, where: str) -> Any:
    """A program's value as NumPy may take it, or the refusal that names it."""
    if value is None or isinstance(value, (bool, int, float, complex, str, slice, np.dtype, np.generic)) or \
            value is Ellipsis:
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise _not_numbers(where, value.dtype)
        return value
    if isinstance(value, Tensor):
        if READS:  # a Function's forward recorded for --check: its values leave the graph
            READS[-1] = True
        elif value.requires_grad and GradMode.enabled:
            raise ArgumentError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                "instead.", hint="write x.detach() before handing a tensor to NumPy")
        return value._data
    if isinstance(value, (list, tuple)):
        converted = [inward(v, where) for v in value]
        if all(c is v for c, v in zip(converted, value)):
            return value  # the program's own list, which np.random.shuffle(xs) shuffles in place
        return converted if isinstance(value, list) else tuple(converted)
    known = type_tests.stand_in_name(value)
    if known in _PYTHON_TYPES:
        return _PYTHON_TYPES[known]  # dtype=int, astype(float): Python's own types, as NumPy reads them
    if isinstance(value, type) and issubclass(value, np.generic):
        return value
    if isinstance(value, ProgramType) and value.name == "object":
        raise _not_numbers(where, "object")
    what = "a function" if callable(value) else f"a {type(value).__name__}"
    raise NotAllowedError(f"{where} does not take {what}",
                          hint="gradcli hands NumPy numbers, arrays, tensors and lists of them")


def _not_numbers(where: str, dtype: Any) -> NotAllowedError:
    return NotAllowedError(f"{where}: an array of {dtype} is not supported",
                           hint="gradcli's NumPy works on arrays of numbers")


def outward(value: Any, where: str) -> Any:
    """What NumPy returned, as the program may hold it."""
    if isinstance(value, np.dtype):
        return DtypeText(value.name)
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise NotAllowedError(f"{where} made an array of {value.dtype}, which gradcli does not hand to a program",
                                  hint="gradcli's NumPy works on arrays of numbers")
        return value
    if isinstance(value, np.generic):
        if value.dtype.kind not in NUMERIC_KINDS:
            raise NotAllowedError(f"{where} made a {value.dtype} value, which gradcli does not hand to a program")
        return value
    if isinstance(value, tuple):  # NumPy's namedtuples (SVDResult, SlogdetResult) keep their kind
        converted = [outward(v, where) for v in value]
        return type(value)(*converted) if hasattr(type(value), "_fields") else tuple(converted)
    if isinstance(value, list):
        return [outward(v, where) for v in value]
    raise NotAllowedError(f"{where} made a {type(value).__name__}, which gradcli does not hand to a program")


def check_size(where: str, count: int) -> None:
    if count > Limits.max_elements:
        raise LimitError(f"{where} would make {count:,} elements, over the limit of {Limits.max_elements:,}",
                         hint="make a smaller array, or raise the limit with --max-elements N")


def call(where: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, NumPy's function or bound method, checked in, sized and checked out."""
    return run(where, fn, args, kwargs, lambda a, k: estimate(where.rpartition(".")[2], a, k))


def run(where: str, fn: Callable[..., Any], args: tuple, kwargs: dict,
        count: Callable[[tuple, dict], int]) -> Any:
    """`call`, with the rule that counts the result's elements from the (checked) arguments."""
    tensors = any(isinstance(a, Tensor) for a in args)
    if "out" in kwargs and not _arrays(kwargs["out"]):  # NumPy writes the program's own array: `np.add(a, 1, out=a)`
        raise NotAllowedError(f"{where}: 'out=' takes a NumPy array", hint="assign the result: y = np.f(x)")
    args = tuple(inward(a, where) for a in args)
    kwargs = {k: inward(v, where) for k, v in kwargs.items()}
    try:
        elements = count(args, kwargs)
    except (TypeError, ValueError, IndexError, OverflowError):
        elements = 0  # arguments NumPy itself rejects below
    check_size(where, elements)
    try:
        with np.errstate(all="ignore"):
            result = fn(*args, **kwargs)
    except (ValueError, TypeError, IndexError, np.linalg.LinAlgError, AttributeError, OverflowError) as exc:
        kind = ShapeError if "shape" in str(exc) or "broadcast" in str(exc) else ArgumentError
        raise kind(f"{where}: {exc}", hint=f"check the arguments of {where}(), as NumPy documents them") from None
    if tensors and isinstance(fn, np.ufunc) and isinstance(result, np.ndarray):
        from gradcli.engine.creation import tensor
        return tensor(result)  # a ufunc of a tensor is a tensor, as PyTorch's __array_wrap__ makes it
    return outward(result, where)


def _arrays(out: Any) -> bool:
    return type(out) is np.ndarray or isinstance(out, tuple) and bool(out) and all(type(o) is np.ndarray for o in out)


def function(where: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's `fn` as a program calls it (`np.vstack`, `np.linalg.norm`); a ufunc of two inputs also has its
    `.reduce` (`np.logical_or.reduce(masks)`), sized and checked as the call is."""
    if isinstance(fn, np.ufunc) and fn.nin == 2:
        return BinaryUfunc(where, fn)

    @functools.wraps(fn, assigned=("__name__", "__doc__"))
    def numpy_function(*args: Any, **kwargs: Any) -> Any:
        return call(where, fn, *args, **kwargs)
    return numpy_function


class BinaryUfunc:
    """`np.add`, `np.logical_or`...: called as the function, and `.reduce(arrays, axis=0)` along an axis."""

    program_attributes = frozenset({"reduce", "__name__"})

    def __init__(self, where: str, ufunc: np.ufunc) -> None:
        self.where, self.ufunc, self.__name__ = where, ufunc, ufunc.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call(self.where, self.ufunc, *args, **kwargs)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return call(f"{self.where}.reduce", self.ufunc.reduce, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<ufunc '{self.ufunc.__name__}'>"
