"""`torch.autograd.forward_ad`: dual tensors, whose tangents ride along the forward pass.

While a `dual_level` is open, every op (through `Observe`, the one flag the ops read) looks up its
inputs' tangents and, when one has any, computes the output's by the op table's `jvp` rule. With
no level open no op pays anything more than that flag. Tangents are plain arrays kept beside their
tensors (weakly, by identity) and forgotten when the level closes, as PyTorch forgets them.
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, NamedTuple

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.tensor import Observe, Tensor, _wrap
from gradcli.errors import ArgumentError, BackwardError, ShapeError

# id(tensor) -> (weak reference to it, its tangent array)
TANGENTS: dict[int, tuple[weakref.ref, np.ndarray]] = {}
_LEVELS: list[int] = []


class Directions:
    """For `--check`: beside each dual tensor, its value as a recorded function of one scalar leaf `s`
    (at s = 0), x + s·v for a dual made from x with tangent v. The tangent of any result is then
    d(shadow)/ds, a derivative the checker proves in SymPy: the directional derivative, by the op
    table's SymPy meanings and never by a JVP rule. Off unless a checking runner turns it on."""

    on = False
    s: Tensor | None = None
    shadows: dict[int, tuple[weakref.ref, Tensor]] = {}


@contextlib.contextmanager
def directions(on: bool) -> Iterator[None]:
    """Follow dual tensors' shadows for one checked run."""
    previous, Directions.on = Directions.on, on
    try:
        yield
    finally:
        Directions.on = previous


def shadow_of(t: Any) -> tuple[Tensor, Tensor] | None:
    """(t's shadow, the direction leaf s) when --check follows it, else None."""
    entry = Directions.shadows.get(id(t)) if type(t) is Tensor else None
    if entry is None or entry[0]() is not t or Directions.s is None:
        return None
    return entry[1], Directions.s


def _shadow(t: Tensor, make: Any) -> None:
    from gradcli.engine.tensor import GradMode
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        value = make()
    finally:
        GradMode.enabled = previous
    key = id(t)
    Directions.shadows[key] = (weakref.ref(t, lambda _, key=key: Directions.shadows.pop(key, None)), value)


def _follow(t: Tensor, op: O.Op, inputs: tuple, params: dict) -> None:
    """The shadow of an op's output: the op applied to its inputs' shadows (constants elsewhere)."""
    from gradcli.engine.tensor import apply
    parts = []
    for x in inputs:
        found = shadow_of(x)
        if found is None and tangent_of(x) is not None:
            return  # a tangent no shadow follows (a custom Function's jvp): neither can this one's
        parts.append(found[0] if found is not None else _wrap(x._data) if type(x) is Tensor else x)
    _shadow(t, lambda: apply(op, *parts, **params))


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


def tangent_of(t: Any) -> np.ndarray | None:
    if type(t) is not Tensor:
        return None
    entry = TANGENTS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def _set(t: Tensor, tangent: np.ndarray) -> None:
    key = id(t)
    TANGENTS[key] = (weakref.ref(t, lambda _, key=key: TANGENTS.pop(key, None)), tangent)


def _propagate(t: Tensor, op: O.Op, inputs: tuple, arrays: tuple, params: dict) -> None:
    """The observer: the output's tangent from its inputs' (nothing when no input has one)."""
    tangents = tuple(tangent_of(x) for x in inputs)
    if all(v is None for v in tangents):
        return
    if op.jvp is None:
        raise BackwardError(f"Trying to use forward AD with {op.name} that does not support it because it has not "
                            "been implemented yet.", hint="compute this derivative in reverse mode (backward or "
                                                          "torch.func.jacrev), which every op supports")
    out = t._data
    tangent = np.asarray(op.jvp(op, tangents, out, *arrays, **params))
    if tangent.shape != out.shape:
        tangent = np.broadcast_to(tangent, out.shape)
    _set(t, np.array(tangent, dtype=out.dtype))
    if Directions.on:
        _follow(t, op, inputs, params)


def tangents_in(args: tuple) -> tuple | None:
    """The tangents of a custom Function's arguments (None per argument without one), or None for none at all."""
    if not _LEVELS:
        return None
    tangents = tuple(tangent_of(a) for a in args)
    return tangents if any(t is not None for t in tangents) else None


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No tangents follow the ops run inside (a custom Function's forward, whose tangent is its jvp)."""
    Observe.discard(_propagate)
    try:
        yield
    finally:
        Observe.add(_propagate)


def custom_jvp(cls: type, ctx: Any, tangents: tuple, output: Any) -> None:
    """`Function.jvp(ctx, *tangents)`: its results become the outputs' tangents (zeros stand in for an
    argument without a tangent, as PyTorch materializes them)."""
    jvp = getattr(cls, "jvp", None)
    if jvp is None:
        raise BackwardError("You must implement the jvp function for custom autograd.Function to use it with "
                            "forward mode AD.", hint="define @staticmethod def jvp(ctx, *tangents) returning "
                                                     "the outputs' tangents")
    outputs = output if isinstance(output, tuple) else (output,)
    given = tuple(_wrap(t) if t is not None else None for t in tangents)
    result = jvp(ctx, *given)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outputs):
        raise ArgumentError(f"function {getattr(cls, '__name__', 'Function')}.jvp returned an incorrect number of "
                            f"forward gradients (expected {len(outputs)}, got {len(results)})",
                            hint="return one tangent per output of forward")
    for out, t in zip(outputs, results):
        if t is None or not isinstance(out, Tensor):
            continue
        if not isinstance(t, Tensor) or t.shape != out.shape:
            raise ShapeError(f"{getattr(cls, '__name__', 'Function')}.jvp returned a tangent of shape "
                             f"{getattr(t, 'shape', type(t).__name__)} for an output of shape {tuple(out.shape)}",
                             hint="return tangents shaped like the outputs")
        _set(out, np.array(t._data, dtype=out.dtype))


def carry(out: Tensor, t: Tensor) -> None:
    """An in-place update wrote `out` into `t`: `t` takes `out`'s tangent (or loses its own)."""
    tangent = tangent_of(out)
    if tangent is not None:
        _set(t, tangent)
    else:
        TANGENTS.pop(id(t), None)
    shadow = shadow_of(out)
    if shadow is not None:
        _shadow(t, lambda: shadow[0])
    else:
        Directions.shadows.pop(id(t), None)


class dual_level:
    """`with forward_ad.dual_level():` the scope in which dual tensors exist."""

    def __enter__(self) -> "dual_level":
        if not _LEVELS:
            Observe.add(_propagate)
        _LEVELS.append(len(_LEVELS))
        return self

    def __exit__(self, *exc: Any) -> None:
        _LEVELS.pop()
        if not _LEVELS:
            Observe.discard(_propagate)
            TANGENTS.clear()
            Directions.shadows.clear()
            Directions.s = None


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Tensor:
    """A tensor with `tensor`'s value (a view of it) that carries `tangent` through every op."""
    from gradcli.engine.functions import as_tensor, view_as
    if not _LEVELS:
        raise BackwardError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                            "enter_dual_level() first.", hint="make dual tensors inside 'with dual_level():'")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise ArgumentError("make_dual(tensor, tangent): both must be tensors",
                            hint="e.g. make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))")
    if not np.issubdtype(tensor.dtype, np.floating):
        raise ArgumentError(f"Expected primal to be floating point or complex, but got: torch.{tensor.dtype}",
                            hint="make the primal a float tensor")
    if tangent.shape != tensor.shape:
        raise ShapeError("Trying to set a forward gradient that has a different size than that of the original "
                         f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                         f"forward gradient is of size {list(tangent.shape)}.",
                         hint="give the tangent the primal's shape")
    dual = view_as(tensor, tensor) if tensor.requires_grad else _wrap(tensor._data)
    _set(dual, np.array(as_tensor(tangent)._data, dtype=tensor.dtype))
    if Directions.on:
        if Directions.s is None:
            Directions.s = _wrap(np.zeros((), tensor.dtype)).requires_grad_(True)
        direction = _wrap(tangent_of(dual))
        _shadow(dual, lambda: _wrap(np.array(tensor._data)) + Directions.s * direction)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent): the value without its tangent, and the tangent (None for a tensor without one)."""
    if not isinstance(tensor, Tensor):
        raise ArgumentError(f"unpack_dual() takes a tensor, not {type(tensor).__name__}", hint="unpack_dual(y)")
    tangent = tangent_of(tensor)
    if tensor.requires_grad:  # a view on the graph, as PyTorch's primal is; the value alone, without the tangent
        from gradcli.engine.functions import view_as
        primal = view_as(tensor, tensor)
        TANGENTS.pop(id(primal), None)
    else:
        primal = _wrap(tensor._data)
    return UnpackedDualTensor(primal, None if tangent is None else _wrap(tangent))


NAMES = {"dual_level": dual_level, "make_dual": make_dual, "unpack_dual": unpack_dual}
"""torch.autograd.forward_ad's members, as lang/builtins.py registers them."""
