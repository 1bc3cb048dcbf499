"""`torch.autograd.forward_ad`: dual tensors, whose tangents ride along the forward pass.

While a `dual_level` is open, every op (through `Observe`, the one flag the ops read) looks up its
inputs' tangents and, when one has any, computes the output's by the op table's `jvp` rule. With
no level open no op pays anything more than that flag. Tangents are plain arrays kept beside their
tensors (weakly, by identity) in their level, and forgotten when the level closes, as PyTorch
forgets them. `torch.func.jvp` and `jacfwd` (func/transforms.py) open levels of their own.
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Iterator, NamedTuple

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.tensor import Observe, Tensor, _wrap
from gradcli.errors import ArgumentError, BackwardError, ShapeError


class Directions:
    """For `--check`: beside each dual tensor of a user's level (or of `torch.func.jvp`'s), its value as a
    recorded function of one scalar leaf `s` (at s = 0), x + s·v for a dual made from x with tangent v.
    The tangent of any result is then d(shadow)/ds, a derivative the checker proves in SymPy: the
    directional derivative, by the op table's SymPy meanings and never by a JVP rule. Off unless a
    checking runner turns it on; each level keeps its own shadows."""

    on = False


@contextlib.contextmanager
def directions(on: bool) -> Iterator[None]:
    """Follow dual tensors' shadows for one checked run."""
    previous, Directions.on = Directions.on, on
    try:
        yield
    finally:
        Directions.on = previous


def _keyed(table: dict, key_of: Any, value: Any) -> None:
    """`table[id(obj)] = (weak reference to obj, value)`, the entry gone with obj."""
    key = id(key_of)
    table[key] = (weakref.ref(key_of, lambda _, key=key: table.pop(key, None)), value)


def _found(table: dict, obj: Any) -> Any:
    entry = table.get(id(obj))
    return entry[1] if entry is not None and entry[0]() is obj else None


class Level:
    """One dual level: the tangents of the tensors made or computed in it, kept weakly by identity.

    `batch` is None for a user's `dual_level` and `torch.func.jvp` (a tangent has its tensor's shape)
    and n for `jacfwd`, whose tangents carry n directions at once along a leading axis: the function
    runs once, as under PyTorch's vmap of jvp, and each op computes every direction's tangent in one
    vectorised step (engine/forward_batched.py), or per direction where its rule has no batched form.

    A tangent is also found by the tensor's graph node, so that a value a backward pass unpacks from
    a node under create_graph (a new Tensor of the same node) carries the tangent of the tensor it
    was: forward-over-reverse (`jacfwd(jacrev(f))`, `jvp(grad(f))`) then sees every term.
    """

    def __init__(self, batch: int | None = None) -> None:
        self.batch = batch
        self.tangents: dict[int, tuple[weakref.ref, np.ndarray]] = {}
        self.by_node: dict[int, tuple[weakref.ref, np.ndarray]] = {}
        self.follow = Directions.on and batch is None
        self.shadows: dict[int, tuple[weakref.ref, Tensor]] = {}
        self.s: Tensor | None = None
        self.customs: list[type] = []
        """The program's Functions whose jvp gave a tangent in this level: a failing check names them."""

    def tangent(self, t: Any) -> np.ndarray | None:
        if type(t) is not Tensor:
            return None
        found = _found(self.tangents, t)
        if found is None and t._node is not None:
            found = _found(self.by_node, t._node)
        return found

    def set(self, t: Tensor, tangent: np.ndarray) -> None:
        _keyed(self.tangents, t, tangent)
        if t._node is not None:
            _keyed(self.by_node, t._node, tangent)

    def forget(self, t: Tensor) -> None:
        self.tangents.pop(id(t), None)
        self.shadows.pop(id(t), None)
        if t._node is not None:
            self.by_node.pop(id(t._node), None)

    def shadow(self, t: Any) -> Tensor | None:
        return _found(self.shadows, t) if type(t) is Tensor else None

    def rule(self, op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict) -> np.ndarray:
        """The output's tangent by the op's jvp rule: once, or once per direction of a batched level."""
        if self.batch is None:
            return _one_rule(op, tangents, out, arrays, params)
        from gradcli.engine import forward_batched
        from gradcli.engine.batched import Fallbacks, NoRule
        try:
            with paused():
                return forward_batched.tangents(op, tangents, out, arrays, params, self.batch)
        except NoRule as exc:
            Fallbacks.add(f"jacfwd ran the forward rule of '{op.name}' once per direction: {exc.what} has no "
                          "batching rule")
        return np.stack([_one_rule(op, tuple(None if v is None else v[k] for v in tangents), out, arrays, params)
                         for k in range(self.batch)])

    def __enter__(self) -> "Level":
        if not LEVELS:
            Observe.add(_propagate)
        LEVELS.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        LEVELS.remove(self)
        if not LEVELS:
            Observe.discard(_propagate)


LEVELS: list[Level] = []
"""The open levels, innermost last: every op computes its output's tangent in each of them."""


def _one_rule(op: O.Op, tangents: tuple, out: np.ndarray, arrays: tuple, params: dict) -> np.ndarray:
    tangent = np.asarray(op.jvp(op, tangents, out, *arrays, **params))
    if tangent.shape != out.shape:
        tangent = np.broadcast_to(tangent, out.shape)
    return np.array(tangent, dtype=out.dtype)


def _current(what: str) -> Level:
    if not LEVELS:
        raise BackwardError(f"Trying to {what} for forward AD but no level exists, make sure to "
                            "enter_dual_level() first.", hint="make dual tensors inside 'with dual_level():'")
    return LEVELS[-1]


def shadow_of(t: Any, level: Level | None = None) -> tuple[Tensor, Tensor] | None:
    """(t's shadow, the direction leaf s) when --check follows it in `level` (the innermost), else None."""
    level = level or (LEVELS[-1] if LEVELS else None)
    shadow = level.shadow(t) if level is not None and level.s is not None else None
    return None if shadow is None else (shadow, level.s)


def _shadow(level: Level, t: Tensor, make: Any) -> None:
    from gradcli.engine.tensor import GradMode
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        value = make()
    finally:
        GradMode.enabled = previous
    _keyed(level.shadows, t, value)


def _follow(level: Level, t: Tensor, op: O.Op, inputs: tuple, params: dict) -> None:
    """The shadow of an op's output: the op applied to its inputs' shadows (constants elsewhere)."""
    from gradcli.engine.tensor import apply
    parts = []
    for x in inputs:
        found = level.shadow(x)
        if found is None and level.tangent(x) is not None:
            return  # a tangent no shadow follows (a custom Function's jvp): neither can this one's
        parts.append(found if found is not None else _wrap(x._data) if type(x) is Tensor else x)
    _shadow(level, t, lambda: apply(op, *parts, **params))


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


def tangent_of(t: Any) -> np.ndarray | None:
    """t's tangent in the innermost level (None outside every level, or for a tensor without one)."""
    return LEVELS[-1].tangent(t) if LEVELS else None


def _propagate(t: Tensor, op: O.Op, inputs: tuple, arrays: tuple, params: dict) -> None:
    """The observer: the output's tangent in each level from its inputs' (nothing when no input has one)."""
    for level in LEVELS:
        tangents = tuple(level.tangent(x) for x in inputs)
        if all(v is None for v in tangents):
            continue
        if op.jvp is None:
            raise BackwardError(f"Trying to use forward AD with {op.name} that does not support it because it has "
                                "not been implemented yet.", hint="compute this derivative in reverse mode (backward "
                                                                  "or torch.func.jacrev), which every op supports")
        level.set(t, level.rule(op, tangents, t._data, arrays, params))
        if level.follow:
            _follow(level, t, op, inputs, params)


def tangents_in(args: tuple) -> list[tuple[Level, tuple]]:
    """Per level, the tangents of a custom Function's arguments (None per argument without one); only the
    levels where some argument has one."""
    found = []
    for level in LEVELS:
        tangents = tuple(level.tangent(a) for a in args)
        if any(v is not None for v in tangents):
            found.append((level, tangents))
    return found


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No tangents follow the ops run inside (a custom Function's forward, whose tangent is its jvp)."""
    Observe.discard(_propagate)
    try:
        yield
    finally:
        Observe.add(_propagate)


def custom_jvp(cls: type, ctx: Any, levels: list[tuple[Level, tuple]], output: Any, args: tuple,
               recorded: Any = None) -> None:
    """`Function.jvp(ctx, *tangents)`: its results become the outputs' tangents (zeros stand in for an
    argument without a tangent, as PyTorch materializes them). Under jacfwd (a batched level) it runs
    once per direction (the Function's vmap support was required when it was called).

    In a level --check follows, the outputs' shadows are the forward's `recorded` primitives (see
    `engine.function.Recorded`) replayed on the arguments' shadows, so the tangent the program's jvp
    returned is judged against the derivative of the forward, never against the jvp itself."""
    if getattr(cls, "jvp", None) is None:
        raise BackwardError("You must implement the jvp function for custom autograd.Function to use it with "
                            "forward mode AD.", hint="define @staticmethod def jvp(ctx, *tangents) returning "
                                                     "the outputs' tangents")
    outputs = output if isinstance(output, tuple) else (output,)
    for level, tangents in levels:
        if level.batch is None:
            found = _custom_tangents(cls, ctx, tangents, outputs)
        else:
            per = [_custom_tangents(cls, ctx, tuple(None if v is None else v[k] for v in tangents), outputs)
                   for k in range(level.batch)]
            found = [None if per[0][i] is None else np.stack([p[i] for p in per]) for i in range(len(outputs))]
        for out, tangent in zip(outputs, found):
            if tangent is not None:
                level.set(out, tangent)
        if cls not in level.customs:
            level.customs.append(cls)
        if level.follow and recorded is not None and not recorded.read_out:
            _follow_forward(level, cls, args, outputs, recorded)


def _follow_forward(level: Level, cls: type, args: tuple, outputs: tuple, recorded: Any) -> None:
    """The shadows of a Function's outputs: its recorded forward's nodes applied again, in order, to the
    arguments' shadows (constants elsewhere). Only primitives run, never the program's forward: nothing it
    prints, draws or counts happens twice. A forward that read values out of the graph is not followed
    (those values would be constants), nor one whose arguments have no shadow here."""
    from gradcli.engine.tensor import GradMode, Node, apply, forward_nodes
    given = {id(s): level.shadow(a) for s, a in zip(recorded.stand_ins, args) if isinstance(a, Tensor)}
    if all(v is None for v in given.values()):
        return
    values: dict[int, Tensor] = {}

    def resolve(x: Any) -> Any:
        if type(x) is Node:
            return values[id(x)]
        if type(x) is Tensor:
            found = given.get(id(x))
            return found if found is not None else _wrap(x._data)
        return x
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        for node in forward_nodes([node for _, node in recorded.outputs if node is not None]):
            values[id(node)] = apply(node.op, *[resolve(x) for x in node.inputs], name=node.name, **node.params)
    finally:
        GradMode.enabled = previous
    for k, (made, node) in zip(recorded.places, recorded.outputs):
        out = outputs[k]
        if isinstance(out, Tensor):
            shadow = resolve(made if node is None else node)
            _keyed(level.shadows, out, shadow)


def _custom_tangents(cls: type, ctx: Any, tangents: tuple, outputs: tuple) -> list[np.ndarray | None]:
    name = getattr(cls, "__name__", "Function")
    result = cls.jvp(ctx, *(_wrap(t) if t is not None else None for t in tangents))
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outputs):
        raise ArgumentError(f"function {name}.jvp returned an incorrect number of forward gradients (expected "
                            f"{len(outputs)}, got {len(results)})", hint="return one tangent per output of forward")
    found: list[np.ndarray | None] = []
    for out, t in zip(outputs, results):
        if t is None or not isinstance(out, Tensor):
            found.append(None)
            continue
        if not isinstance(t, Tensor) or t.shape != out.shape:
            raise ShapeError(f"{name}.jvp returned a tangent of shape {getattr(t, 'shape', type(t).__name__)} for an "
                             f"output of shape {tuple(out.shape)}", hint="return tangents shaped like the outputs")
        found.append(np.array(t._data, dtype=out.dtype))
    return found


def carry(out: Tensor, t: Tensor) -> None:
    """An in-place update wrote `out` into `t`: `t` takes `out`'s tangent (or loses its own) in each level."""
    for level in LEVELS:
        tangent = level.tangent(out)
        if tangent is not None:
            level.set(t, tangent)
        else:
            level.forget(t)
        shadow = level.shadow(out)
        if shadow is not None:
            _shadow(level, t, lambda: shadow)


class dual_level(Level):
    """`with forward_ad.dual_level():` the scope in which dual tensors exist; they are forgotten with it."""


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Tensor:
    """A tensor with `tensor`'s value (a view of it) that carries `tangent` through every op."""
    from gradcli.engine.functions import as_tensor
    current = _current("create a dual Tensor")
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
    from gradcli.engine.functions import view_as
    dual = view_as(tensor, tensor) if tensor.requires_grad else _wrap(tensor._data)
    seed(current, dual, np.array(as_tensor(tangent)._data, dtype=tensor.dtype))
    return dual


def seed(level: Level, t: Tensor, tangent: np.ndarray) -> None:
    """Give `t` its tangent in `level` (and, when the level is followed, its shadow t + s·tangent)."""
    level.set(t, tangent)
    if level.follow:
        if level.s is None:
            level.s = _wrap(np.zeros((), t.dtype)).requires_grad_(True)
        direction = _wrap(tangent)
        _shadow(level, t, lambda: _wrap(np.array(t._data)) + level.s * direction)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent): the value without its tangent, and the tangent (None for a tensor without one)."""
    if not isinstance(tensor, Tensor):
        raise ArgumentError(f"unpack_dual() takes a tensor, not {type(tensor).__name__}", hint="unpack_dual(y)")
    tangent = tangent_of(tensor)
    if tensor.requires_grad:  # a view on the graph, as PyTorch's primal is; the value alone, without the tangent
        from gradcli.engine.functions import view_as
        primal = view_as(tensor, tensor)
        for each in LEVELS:
            each.forget(primal)
    else:
        primal = _wrap(tensor._data)
    return UnpackedDualTensor(primal, None if tangent is None else _wrap(tangent))


NAMES = {"dual_level": dual_level, "make_dual": make_dual, "unpack_dual": unpack_dual}
"""torch.autograd.forward_ad's members, as lang/builtins.py registers them."""
