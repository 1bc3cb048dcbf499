"""`torch.X` made from a declaration: the op's `Signature` says which arguments it takes (dims, dtypes, keepdim,
numbers, operands) and its form says how they reach the op, so a function with arguments of its own is written
once, in its family of `engine/ops/`, like an elementwise function of one input.

A declared function binds its call as Python would (a wrong call's error comes from its `__signature__`, which
the language reads), reads each argument by its kind, and applies the op; `Tensor.X` is the same function, which
Python binds with the tensor as its input."""
from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple

from gradcli.engine import ops as O
from gradcli.engine.ops.op import REQUIRED, Arg, Composite, Signature
import numpy as np

from gradcli.engine.tensor import Tensor, _elementwise, _wrap, apply
from gradcli.engine.functions.arguments import _TORCH_NAMES, _dim, _dims, number_arg, _tensor_arg
from gradcli.engine.functions.shape import reshape, to_dtype
from gradcli.errors import ArgumentError, ValueDomainError


def _dims_of(value: Any, x: Tensor, fn: str) -> Any:
    """Reduction dims; a 0-d input reduces over everything whatever dim names (0 or -1), as in PyTorch."""
    return None if x.ndim == 0 else _dims(value, x.ndim)


def _count(value: Any, x: Tensor, fn: str, name: str) -> Any:
    return None if value is None else number_arg(value, fn, name, integer=True)


def _implicit_dim(value: Any, x: Tensor, fn: str) -> int:
    """softmax's dim: left out only where there is one way to read it (a tensor of at most one dimension)."""
    if value is None:
        if x.ndim > 1:
            raise ArgumentError(f"{fn}(): dim must be given for a tensor of {x.ndim} dimensions",
                                hint=f"e.g. {fn}(x, dim=1) to normalise each row")
        return 0
    return _dim(value, x.ndim)


def _norm_p(value: Any, x: Tensor, fn: str) -> float:
    """norm's p: a nonzero number, or 'fro' (2); gradcli has no p=0 (a count, not a norm to differentiate)."""
    if isinstance(value, str) and value == "fro":
        return 2.0
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value == 0:
        raise ArgumentError(f"{fn}(): p must be a nonzero number, 'fro', inf or -inf, got {value!r}",
                            hint="e.g. x.norm() for the Euclidean norm, x.norm(1), or x.norm(float('inf')); "
                                 "count nonzero elements with (x != 0).sum()")
    return float(value)


_READERS: dict[str, Callable[[Any, Tensor, str, str], Any]] = {
    "norm_p": lambda value, x, fn, name: _norm_p(value, x, fn),
    "dims": lambda value, x, fn, name: _dims_of(value, x, fn),
    "dim": lambda value, x, fn, name: _dim(value, x.ndim),
    "implicit_dim": lambda value, x, fn, name: _implicit_dim(value, x, fn),
    "flag": lambda value, x, fn, name: bool(value),
    "count": _count,
    "any": lambda value, x, fn, name: value,
}
"""How an argument of each kind is read, given the input tensor (`tensor`, `operand` and `dtype` are read by the
forms themselves, since they make or change the input)."""


def _float_input(x: Tensor, fn: str) -> None:
    if x.dtype.kind not in "fc":
        raise ValueDomainError(f"{fn}(): could not infer output dtype. Input dtype must be either a floating "
                               f"point or complex dtype. Got: {_TORCH_NAMES.get(x.dtype.name, x.dtype.name)}",
                               hint=f"this tensor is {x.dtype}; make it float first, e.g. x.float() or x.double()")


def _nonempty_input(x: Tensor, fn: str) -> None:
    if x.numel() == 0:
        raise ValueDomainError(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0.",
                               hint="an empty tensor has no largest, smallest or middle element")


_CHECKS: dict[str, Callable[[Tensor, str], None]] = {"float": _float_input, "nonempty": _nonempty_input}
"""What a declaration's `checks` require of the input, by name."""


class _Plan(NamedTuple):
    """What a declared function reads, worked out once from its declaration: the readers of its arguments
    after the input (by name), the checks of its input, and for a binary op its kernels (engine/tensor.py's
    `_elementwise`, the hot path `a + b` takes), the second naming the node when `other` is a number."""

    op: O.Op
    sig: Signature
    fn: str
    readers: tuple[tuple[str, Callable[[Any, Tensor, str, str], Any]], ...]
    checks: tuple[Callable[[Tensor, str], None], ...]
    kernels: tuple[Callable[[Any, Any], Tensor], ...]


def _one_input(plan: _Plan, values: dict[str, Any]) -> tuple[Tensor, dict[str, Any]]:
    """The input as a tensor (cast first when a `dtype` is given, as PyTorch accumulates in that type), checked,
    with every other argument read into the op's params."""
    fn = plan.fn
    x = _tensor_arg(values.pop("input"), fn)
    dtype = values.pop("dtype", None)
    if dtype is not None:
        from gradcli.engine.creation import resolve_dtype
        x = to_dtype(x, resolve_dtype(dtype))
    for check in plan.checks:
        check(x, fn)
    for name, read in plan.readers:
        values[name] = read(values[name], x, fn, name)
    prepare = plan.sig.prepare
    return x, values if prepare is None else prepare(values)


def _reduction(plan: _Plan, values: dict[str, Any]) -> Tensor:
    x, params = _one_input(plan, values)
    op = plan.op
    name = op.node[:-1] + ("0" if params.get("dim") is None else "1") if plan.sig.numbered else None
    return apply(op, x, name=name, **params)


def _scan(plan: _Plan, values: dict[str, Any]) -> Tensor:
    """Along one dim; a 0-d input is scanned as one element, as in PyTorch."""
    x, params = _one_input(plan, values)
    if x.ndim == 0:
        return reshape(apply(plan.op, reshape(x, 1), **params), ())
    return apply(plan.op, x, **params)


class MaxMin(NamedTuple):
    """What PyTorch's `max(dim)` returns: the values and where they are."""

    values: Tensor
    indices: Tensor


def _extremum(plan: _Plan, values: dict[str, Any]) -> Tensor | MaxMin:
    """PyTorch's three overloads of max and min: of every element (node X1), along `dim` with where it is
    (values, indices; node X0), and of two tensors elementwise (`max(x, y)` is `maximum(x, y)`)."""
    fn, op, dim = plan.fn, plan.op, values["dim"]
    if isinstance(dim, Tensor):
        return plan.kernels[0](values["input"], dim)
    x = _tensor_arg(values["input"], fn)
    if x.numel() == 0:
        raise ValueDomainError(f"{fn}(): expected a non-empty tensor",
                               hint="an empty tensor has no largest or smallest element")
    if dim is None:
        return apply(op, x, dim=None, keepdim=False, name=op.node[:-1] + "1")
    d, keepdim = _dim(dim, x.ndim), bool(values["keepdim"])
    return MaxMin(apply(op, x, dim=(d,), keepdim=keepdim, name=op.node), arg_along(plan.sig.indices, x, d, keepdim))


def arg_along(arg: Any, x: Tensor, d: int | None, keepdim: bool) -> Tensor:
    """Indices (int64, outside the graph) along d, or of the flattened tensor (d None), first on ties. Inside
    vmap they are taken on every example at once, past the examples' leading dims."""
    from gradcli.engine.batched import levels_of, physical, rewrap
    levels = levels_of(x)
    lead, data = len(levels), physical(x)._data
    if d is None:
        idx = arg(data.reshape(data.shape[:lead] + (-1,)), axis=lead)
        shape = data.shape[:lead] + ((1,) * x.ndim if keepdim else ())
    else:
        data = data.reshape(data.shape[:lead] + (1,)) if x.ndim == 0 else data
        idx = arg(data, axis=d + lead)
        shape = data.shape[:lead + d] + ((1,) if keepdim and x.ndim else ()) + data.shape[lead + d + 1:]
    return rewrap(_wrap(np.asarray(idx, dtype=np.int64).reshape(shape)), levels)


def _binary(plan: _Plan, values: dict[str, Any]) -> Tensor:
    """Two operands with PyTorch's broadcasting and promotion: a `tensor` argument must be one (or become one),
    an `operand` may stay a number, and at least one of them is a tensor."""
    fn = plan.fn
    first, second = plan.sig.args[:2]
    a, b = values[first.name], values[second.name]
    a, b = two_operands(_tensor_arg(a, fn) if first.kind == "tensor" else a,
                        _tensor_arg(b, fn) if second.kind == "tensor" else b, fn)
    return plan.kernels[-1 if type(b) is not Tensor else 0](a, b)


def two_operands(a: Any, b: Any, fn: str) -> tuple[Any, Any]:
    """A binary op needs a tensor: of two numbers (or lists) the first becomes one."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = _tensor_arg(a, fn)
    return a, b


_FORMS: dict[str, Callable[[_Plan, dict[str, Any]], Any]] = {
    "reduction": _reduction, "scan": _scan, "binary": _binary, "extremum": _extremum}
"""How the read arguments reach the op, by the declaration's `form`."""


def python_signature(args: tuple[Arg, ...]) -> inspect.Signature:
    """The declared arguments as Python's signature: what a wrong call is told, and `usage:` in its hint."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return inspect.Signature([inspect.Parameter(a.name, kinds[a.keyword], annotation=a.kind,
                                                default=inspect.Parameter.empty if a.default is REQUIRED else a.default)
                              for a in args])


def _binder(args: tuple[Arg, ...]) -> Callable[[tuple, dict], dict[str, Any]]:
    """The arguments a call gives, by name, with the defaults of the rest: Python's binding, without
    `inspect`'s cost on every call. A call that does not fit raises TypeError, which the language turns
    into the user's error from `python_signature` (the same words `inspect` would give)."""
    names = [a.name for a in args]
    positional = sum(not a.keyword for a in args)
    defaults = {a.name: a.default for a in args if a.default is not REQUIRED}
    required = [a.name for a in args if a.default is REQUIRED]

    def bind(given: tuple, keywords: dict) -> dict[str, Any]:
        if len(given) > positional:
            raise TypeError("too many positional arguments")
        values = dict(defaults)
        values.update(zip(names, given))
        if not keywords and not required:
            return values
        for key, value in keywords.items():
            if key not in defaults and key not in required or names.index(key) < len(given):
                raise TypeError(f"got an unexpected or repeated keyword argument '{key}'")
            values[key] = value
        for name in required:
            if name not in values:
                raise TypeError(f"missing a required argument: '{name}'")
        return values
    return bind


def declared_function(op: O.Op) -> Callable[..., Any]:
    """`torch.X` for an op whose names carry a `Signature` with a form (not `written`)."""
    sig = op.names.signature
    kernels = (_elementwise(op), _elementwise(op, sig.scalar_node)) if sig.form == "binary" else \
        (declared_function(sig.pair),) if sig.pair else ()
    plan = _Plan(op, sig, op.name, tuple((a.name, _READERS[a.kind]) for a in sig.args[1:] if a.kind in _READERS),
                 tuple(_CHECKS[c] for c in sig.checks), kernels)
    form, bind = _FORMS[sig.form], _binder(sig.args)

    def call(*args: Any, **kwargs: Any) -> Any:
        return form(plan, bind(args, kwargs))
    call.__name__ = call.__qualname__ = op.name
    call.__signature__ = python_signature(sig.args)  # type: ignore[attr-defined]
    return call


def declared(ops: tuple[O.Op, ...]) -> dict[str, Callable[..., Any]]:
    """`torch.X` under each of its names, for every op of a family that declares a form."""
    made = {}
    for op in ops:
        if op.names and op.names.signature and op.names.signature.form != "written":
            function = declared_function(op)
            made.update({name: function for name in op.names.functions or (op.name,)})
    return made



def composite_method(composite: Composite) -> Callable[..., Any]:
    """`Tensor.X` of a declared composite: the function itself where PyTorch's method takes the same arguments;
    else the function with the tensor put in its place (`input_at`), the arguments after it packed into the
    function's one sequence (`packs`), and the method's keywords given the function's names (`renamed`). Its
    `__signature__` is the method's, which a wrong call is told (`x.where(condition, other)`)."""
    if composite.method is not None:
        return composite.method
    function, at, renamed = composite.function, composite.input_at, dict(composite.renamed)
    if not (at or composite.packs or renamed):
        return function
    params = list(inspect.signature(function).parameters.values())
    input_name = params[at].name
    tensor = params.pop(at).replace(name="self")
    if composite.packs:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return function(self, *((args[0] if len(args) == 1 else args,) if args or not kwargs else ()), **kwargs)
        params = [params[0].replace(kind=inspect.Parameter.VAR_POSITIONAL, default=inspect.Parameter.empty)]
    else:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            for mine, theirs in renamed.items():
                if theirs in kwargs:  # the function's name for it is not the method's
                    raise TypeError(f"got an unexpected keyword argument '{theirs}'")
                if mine in kwargs:
                    kwargs[theirs] = kwargs.pop(mine)
            if len(args) < at:  # the arguments before the tensor come by keyword (`x.polygamma(n=1)`)
                return function(*args, **{input_name: self}, **kwargs)
            return function(*args[:at], self, *args[at:], **kwargs)
        given = {theirs: mine for mine, theirs in renamed.items()}
        params = [p.replace(name=given.get(p.name, p.name)) for p in params]
    method.__name__ = method.__qualname__ = composite.methods[0]
    method.__doc__ = function.__doc__
    method.__signature__ = inspect.Signature([tensor, *params])  # type: ignore[attr-defined]
    return method
