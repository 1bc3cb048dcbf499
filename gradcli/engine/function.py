"""`torch.autograd.Function`: a program's own forward and backward, recorded as one node.

`Fn.apply(*args)` runs the forward with gradients off (as PyTorch does), then records one node
named `<Fn>Backward` whose VJPs all come from one call of the program's `backward(ctx, *grads)`
(made at the first input the engine asks for, and handed out per input). The node is an ordinary
`Node` of a per-class `Op`, so the engine's backward, `create_graph`, hooks and freeing treat it
as any other: a backward written with tensor operations is itself differentiable (double
backward), and `once_differentiable` runs it with gradients off.

The engine keeps one output per node, so a Function with several differentiable outputs records
a node holding them all, packed flat, and one small node per output that places its gradient in
the packed one; the packed node runs after every output's node (it is older), so the program's
backward sees all the gradients at once, and those no path reached as zeros (or None after
`ctx.set_materialize_grads(False)`).
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine.tensor import FUNCTION_OUTPUT, READS, GradMode, Node, Tensor, _sequence, _wrap, record
from gradcli.errors import ArgumentError, BackwardError

RECORD_FORWARD = [False]
"""True while `--check` runs: the forward then runs with gradients on, over stand-ins of its inputs, so
its own primitives are recorded for the checker to replay; a plain run records nothing and pays nothing."""

@contextlib.contextmanager
def recording_forwards(on: bool) -> Iterator[None]:
    """While a checked program runs, each Function's forward records its primitives (`RECORD_FORWARD`)."""
    previous, RECORD_FORWARD[0] = RECORD_FORWARD[0], on
    try:
        yield
    finally:
        RECORD_FORWARD[0] = previous


SYMBOLIC: list[Callable[..., Any]] = []
"""The checker's replay of a recorded forward (`gradcli.check.custom` installs it when it loads)."""


class FunctionCtx:
    """The `ctx` a Function's forward and backward share. The program sets attributes on it freely;
    the engine's own fields start with '_', which a program can never read."""

    def __init__(self, needs: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs
        self._saved: tuple = ()
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self._materialize = True
        self._shown: tuple = ()
        """The outputs a separate setup_context was shown while the forward was recorded (see `_forward`)."""

    def save_for_backward(self, *tensors: Any) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise ArgumentError("save_for_backward can only save variables, but argument "
                                    f"{tensors.index(t)} is of type {type(t).__name__}",
                                    hint="save tensors with ctx.save_for_backward(x); keep other values as "
                                         "ctx attributes (ctx.k = k)")
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple:
        return self._saved

    def save_for_forward(self, *tensors: Any) -> None:
        """PyTorch's way to keep tensors for `jvp`; they are read back as `ctx.saved_tensors` there too."""
        self.save_for_backward(*tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)


CTX_MEMBERS = frozenset({"save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
                         "mark_non_differentiable", "set_materialize_grads", "save_for_forward"})
"""What a program may read on `ctx` besides the attributes it set."""


class Function:
    """The base a program's Function derives from; `apply` is all it offers (a Function is never instantiated)."""

    @staticmethod
    def forward(*args: Any) -> Any:
        raise BackwardError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise BackwardError("You must implement either the backward or vjp method for your custom "
                            "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return _apply(cls, args, kwargs)


def check_definition(cls: type) -> None:
    """Nothing to refuse yet beyond what the language refuses; the hook where a definition is judged."""


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`@once_differentiable`: the backward runs with gradients off, so it is never differentiated again."""
    @functools.wraps(fn, assigned=("__name__",), updated=())
    def backward(*args: Any, **kwargs: Any) -> Any:
        previous, GradMode.enabled = GradMode.enabled, False
        try:
            return fn(*args, **kwargs)
        finally:
            GradMode.enabled = previous
    return backward


EXTENDING = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def _supports_transforms(cls: type) -> None:
    """PyTorch runs a Function under torch.func's transforms only when it has a separate setup_context,
    and under vmap (jacfwd's too) only with vmap support."""
    from gradcli.engine.modes import Inside
    if cls.setup_context is Function.setup_context:
        raise BackwardError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
                            "jacrev, ...), it must override the setup_context staticmethod. " + EXTENDING,
                            hint="write forward(x) without ctx and a @staticmethod setup_context(ctx, inputs, "
                                 "output) that saves what backward needs")
    if Inside.vmaps and getattr(cls, "vmap", None) is None and getattr(cls, "generate_vmap_rule", False) is not True:
        raise BackwardError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                            "override and implement the vmap staticmethod or set generate_vmap_rule=True. " +
                            EXTENDING, hint="set generate_vmap_rule = True on the Function class")


def _apply(cls: type, args: tuple, kwargs: dict) -> Any:
    from gradcli.engine import forward_ad
    from gradcli.engine.modes import Inside
    if Inside.transforms:
        _supports_transforms(cls)
    levels = forward_ad.tangents_in(args) if forward_ad.LEVELS else None
    if not levels:
        return _apply_reverse(cls, args, kwargs)
    ctx_of: list = []
    followed = RECORD_FORWARD[0] and any(level.follow for level, _ in levels)
    with forward_ad.paused():  # the forward sees primals only; the tangent is the Function's own jvp
        output = _apply_reverse(cls, args, kwargs, ctx_of, followed)
    forward_ad.custom_jvp(cls, ctx_of[0], levels, output, args, ctx_of[1] if len(ctx_of) > 1 else None)
    return output


def _apply_reverse(cls: type, args: tuple, kwargs: dict, ctx_of: list | None = None, followed: bool = False) -> Any:
    """`followed`: --check follows dual tensors' shadows through this call (see `forward_ad.Directions`), so the
    forward is recorded over stand-ins of every float tensor argument even where none requires grad, and the
    record is handed back in `ctx_of` after the ctx (`Recorded`), for the shadow of its output."""
    needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    ctx = FunctionCtx(needs)
    if ctx_of is not None:
        ctx_of.append(ctx)
    differentiating = GradMode.enabled and any(needs)
    recording = RECORD_FORWARD[0] and (differentiating or followed)
    tracked = tuple(n or followed and isinstance(a, Tensor) and a.dtype.kind == "f" for a, n in zip(args, needs))
    stand_ins = tuple(_wrap(a._data).requires_grad_(True) if t else a for a, t in zip(args, tracked)) \
        if recording else args
    if recording:
        READS.append(False)
        since = next(_sequence)
    try:
        output = _forward(cls, ctx, stand_ins, kwargs, recording, args if recording else None)
    finally:
        read_out = READS.pop() if recording else False
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    if not (differentiating or recording):
        return output
    made = tuple(o._node if isinstance(o, Tensor) else None for o in outputs)  # before _record gives them its node
    wrapped = tuple(_fresh(o, stand_ins, ctx) if differentiating else _unrecorded(o, stand_ins, args)
                    for o in outputs)
    if recording:
        swap = {id(s): a for s, a in zip(stand_ins, args)}
        swap.update({id(o): w for o, w in zip(outputs, wrapped)})
        swap.update({id(o): w for o, w in zip(ctx._shown, wrapped) if o is not w})
        _settle(ctx, swap, since)
    differentiable = [k for k, o in enumerate(wrapped) if isinstance(o, Tensor) and
                      not any(o is t for t in ctx._non_differentiable) and o.dtype.kind in "fc"]
    recorded = Recorded(stand_ins, tuple((outputs[k], made[k]) for k in differentiable), differentiable, read_out) \
        if recording else None
    if followed and ctx_of is not None:
        ctx_of.append(recorded)
    if differentiating and differentiable:
        state = _record(cls, ctx, args, wrapped, differentiable)
        if recording:
            state.recorded = recorded.stand_ins, recorded.outputs
            state.read_out = read_out
    return wrapped[0] if single else wrapped


class Recorded(NamedTuple):
    """A forward recorded under --check: the stand-ins it ran on, its differentiable outputs (at positions
    `places` of what it returned) each with the node that made it (None: a stand-in returned as it is, or a
    constant), and whether it read values out of the graph (`tensor.READS`)."""

    stand_ins: tuple
    outputs: tuple
    places: list[int]
    read_out: bool


def _unrecorded(output: Any, stand_ins: tuple, args: tuple) -> Any:
    """An output of a forward recorded for --check alone (no input requires grad) as a plain run returns it:
    the argument itself for a stand-in returned as it is, a tensor without grad for one the recording made."""
    if not isinstance(output, Tensor):
        return output
    for s, a in zip(stand_ins, args):
        if output is s:
            return a
    return _wrap(output._data) if output.requires_grad else output


def _settle(ctx: FunctionCtx, swap: dict[int, Tensor], since: int) -> None:
    """What a recorded forward left on `ctx` as a plain run leaves it, so `--check` never changes the program.

    Stand-ins and outputs become the tensors the program holds (`swap`); any other tensor the recording
    made (a node numbered from `since`: `3 * x ** 2` saved for backward) is detached in place, as a
    forward run with gradients off makes it. Its recorded nodes stay for the checker's replay. Saved
    tensors, and ctx attributes with the lists, tuples and dicts in them, are what a backward reads.
    """
    def settled(value: Any) -> Any:
        if isinstance(value, Tensor):
            value = swap.get(id(value), value)
            if value._node is not None and value._node.seq >= since and all(value is not w for w in swap.values()):
                value._node, value.requires_grad = None, False
            return value
        if isinstance(value, list):
            value[:] = [settled(v) for v in value]
        elif isinstance(value, dict):
            value.update({k: settled(v) for k, v in value.items()})
        elif type(value) is tuple:
            return tuple(settled(v) for v in value)
        return value
    ctx._saved = settled(tuple(ctx._saved))
    for key, value in list(vars(ctx).items()):
        if not key.startswith("_"):
            setattr(ctx, key, settled(value))


def _forward(cls: type, ctx: FunctionCtx, args: tuple, kwargs: dict, recording: bool,
             originals: tuple | None = None) -> Any:
    """The program's forward, with gradients off (PyTorch's rule) unless its primitives are being recorded.

    A separate `setup_context` always runs with gradients off, on the program's own arguments (`originals`,
    when `args` are a recording's stand-ins) and the output as a plain run makes it (`_unrecorded`), so what
    it sees and saves (`output.requires_grad`, `3 * x ** 2`) is what it sees without --check."""
    previous, GradMode.enabled = GradMode.enabled, recording
    try:
        if cls.setup_context is not Function.setup_context:
            output = cls.forward(*args, **kwargs)
            GradMode.enabled = False
            if originals is None:
                cls.setup_context(ctx, args, output)
            else:
                single = not isinstance(output, tuple)
                shown = tuple(_unrecorded(o, args, originals) for o in ((output,) if single else output))
                ctx._shown = shown
                cls.setup_context(ctx, originals, shown[0] if single else shown)
            return output
        return cls.forward(ctx, *args, **kwargs)
    finally:
        GradMode.enabled = previous


def _fresh(output: Any, args: tuple, ctx: FunctionCtx) -> Any:
    """An output that is one of the inputs stays that tensor when the forward marked it dirty (modified in
    place); otherwise it becomes a new tensor on the same data, as PyTorch's outputs are."""
    if not isinstance(output, Tensor):
        return output
    if any(output is t for t in ctx._dirty):
        if output.requires_grad and output._node is None:
            raise BackwardError("a leaf Variable that requires grad has been used in an in-place operation.",
                                hint="modify a copy in the forward (x.clone()), or an input that needs no grad")
        return output
    if any(output is a for a in args) or output.requires_grad:
        return _wrap(output._data)
    return output


def _record(cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple, differentiable: list[int]) -> "_Backward":
    name = f"{cls.__name__}Backward"
    structure = tuple(a._node or a if isinstance(a, Tensor) else a for a in args)
    mask = sum(1 << i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad)
    state = _Backward(cls, ctx, args, outputs, differentiable)
    arrays = tuple(a._data if isinstance(a, Tensor) else a for a in args)
    op = _op(cls, len(args))
    if len(differentiable) == 1:
        out = outputs[differentiable[0]]
        node = record(op, name, structure, mask, {"state": state}, (None, False), arrays, out._data)
        out._node, out.requires_grad = node, True
    else:
        packed = np.concatenate([outputs[k]._data.ravel() for k in differentiable])
        node = record(op, name, structure, mask, {"state": state}, (None, False), arrays, packed)
        for slot, k in enumerate(differentiable):
            out = outputs[k]
            part = record(_PICK, name, (node,), 1, {"state": state, "slot": slot}, None, (packed,), out._data)
            out._node, out.requires_grad = part, True
    state.needs = node.needs
    state.node = node
    return state


@functools.cache
def _op(cls: type, inputs: int) -> O.Op:
    """The op a Function's nodes are recorded with: one VJP per input, each asking the one backward call."""
    def vjp(i: int) -> Callable[..., Any]:
        return lambda ns, g, out, *args, state: state.gradient(i, g, ns)
    return O.Op(name=cls.__name__, node=f"{cls.__name__}Backward", forward=_rerun,
                vjps=tuple(vjp(i) for i in range(inputs)), sym=_symbolic, rule="the program's own backward")


def runs_program(op: O.Op) -> bool:
    """Whether `op` is a program's Function: its VJPs call the program's own backward."""
    return op.forward is _rerun


def _rerun(*arrays: Any, state: "_Backward") -> np.ndarray:
    """The forward again on these values, with gradients off (the checker's finite differences call it)."""
    args = tuple(_wrap(np.asarray(v)) if isinstance(a, Tensor) else v for v, a in zip(arrays, state.args))
    output = _forward(state.cls, FunctionCtx(state.ctx.needs_input_grad), args, {}, False)
    outputs = output if isinstance(output, tuple) else (output,)
    parts = [outputs[k]._data for k in state.differentiable]
    return parts[0] if len(parts) == 1 else np.concatenate([p.ravel() for p in parts])


def _symbolic(meaning: Any, *args: Any, state: "_Backward") -> Any:
    return SYMBOLIC[0](meaning, state, args)


def _pick_vjp(ns: Any, g: Any, out: Any, packed: Any, *, state: "_Backward", slot: int) -> Any:
    return state.place(slot, g, ns)


def _pick(packed: Any, *, state: "_Backward", slot: int) -> Any:
    sizes = [int(np.prod(state.shapes[k][0])) for k in state.differentiable]
    start = sum(sizes[:slot])
    return np.asarray(packed)[start:start + sizes[slot]].reshape(state.shapes[state.differentiable[slot]][0])


def _pick_sym(meaning: Any, packed: Any, *, state: "_Backward", slot: int) -> Any:
    return _pick(packed, state=state, slot=slot)


_PICK = O.Op(name=FUNCTION_OUTPUT, node="FunctionOutputBackward", forward=_pick, vjps=(_pick_vjp,),
             sym=_pick_sym, rule="one output of a Function with several")


class _Backward:
    """One application's backward: the program's backward called once per backward pass, shared by its inputs."""

    def __init__(self, cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple, differentiable: list[int]) -> None:
        self.cls, self.ctx, self.args = cls, ctx, args
        self.shapes = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outputs]
        self.count = len(outputs)
        self.differentiable = differentiable
        self.received = [False] * len(differentiable)
        self.needs: tuple[int, ...] = ()
        self.node: Node | None = None
        self.cached: tuple | None = None
        self.recorded: tuple | None = None
        """Under --check: the stand-ins the forward ran on, and its differentiable outputs each with the node the
        forward made it by (None: a stand-in returned as it is, or a constant)."""
        self.read_out = False
        """Under --check: whether the forward read values out of the graph (`tensor.READS`)."""

    def structure_key(self) -> tuple:
        """What `--check`'s loop policy keys this application by (`check.policy.structure`): the Function and
        what it was applied to, never this object's identity (a training loop applies the Function anew each
        step; keyed by identity, each step was a new structure and paid a fresh SymPy attempt)."""
        return ("Function", self.cls.__qualname__, id(self.cls), self.ctx.needs_input_grad, tuple(self.differentiable),
                tuple(None if s is None else (tuple(s[0]), np.dtype(s[1]).str) for s in self.shapes))

    def place(self, slot: int, g: Any, ns: Any) -> Any:
        """An output's gradient put in its place in the packed gradient (zeros elsewhere)."""
        self.received[slot] = True
        sizes = [int(np.prod(self.shapes[k][0])) for k in self.differentiable]
        before, after = sum(sizes[:slot]), sum(sizes[slot + 1:])
        dtype = np.result_type(*[self.shapes[k][1] for k in self.differentiable])
        if type(g) is Tensor:
            from gradcli.engine import functions as F
            from gradcli.engine.creation import zeros
            return F.cat([zeros(before, dtype=dtype), F.reshape(g, -1), zeros(after, dtype=dtype)])
        return np.concatenate([np.zeros(before, dtype), np.ravel(g), np.zeros(after, dtype)])

    def gradient(self, i: int, g: Any, ns: Any) -> Any:
        if self.cached is None:
            self.cached = self._run(g)
        gi = self.cached[i]
        if i == self.needs[-1]:
            self.cached = None
        return gi

    def _run(self, g: Any) -> tuple:
        grads = self._incoming(g)
        result = self.cls.backward(self.ctx, *grads)
        self.received = [False] * len(self.differentiable)
        returned = result if isinstance(result, tuple) else (result,)
        name = f"{self.cls.__name__}Backward"
        if len(returned) < len(self.args) or any(r is not None for r in returned[len(self.args):]):
            raise BackwardError(f"function {name} returned an incorrect number of gradients (expected "
                                f"{len(self.args)}, got {len(returned)})",
                                hint=f"return one gradient per input of forward ({len(self.args)}), None for an "
                                     "input that needs none")
        out = []
        for i, (r, a) in enumerate(zip(returned, self.args)):
            if not isinstance(a, Tensor) or not a.requires_grad:
                out.append(None)
                continue
            if r is None:  # no gradient flows to this input on this path, as in PyTorch (not zeros)
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise BackwardError(f"function {name} returned a gradient of type {type(r).__name__} at index {i}",
                                    hint="return tensors (or None)")
            if r.shape != a.shape and _sums_down(a.shape, r.shape):  # PyTorch sums a broadcast gradient down
                if type(g) is Tensor:
                    from gradcli.engine import functions
                    r = O.unbroadcast(functions, r, a.shape)
                else:
                    r = _wrap(np.asarray(O.unbroadcast(O.NUMPY, r._data, a.shape)))
            if r.shape != a.shape:
                try:
                    np.broadcast_to(np.empty(r.shape), a.shape)
                    expandable = False
                except ValueError:
                    expandable = True
                if expandable or r._data.size != a._data.size and len(r.shape) > len(a.shape):
                    raise BackwardError(f"Function {name} returned an invalid gradient at index {i} - got "
                                        f"{list(r.shape)} but expected shape compatible with {list(a.shape)}",
                                        hint=f"the gradient for input {i} must have its shape {tuple(a.shape)}")
                r = r.expand(*a.shape) if type(g) is Tensor else _wrap(np.broadcast_to(r._data, a.shape))
            out.append(r if type(g) is Tensor else r._data)
        return tuple(out)

    def _incoming(self, g: Any) -> list:
        """The gradient of each output, as tensors, in the order forward returned them."""
        tensor = type(g) is Tensor
        grads: list[Any] = [None] * self.count
        if len(self.differentiable) == 1:
            k = self.differentiable[0]
            grads[k] = g if tensor else _wrap(g)
        else:
            start = 0
            for slot, k in enumerate(self.differentiable):
                shape = self.shapes[k][0]
                size = int(np.prod(shape))
                part = g[start:start + size].reshape(shape) if tensor else _wrap(g[start:start + size].reshape(shape))
                grads[k] = part if self.received[slot] or self.ctx._materialize else None
                start += size
        for k, known in enumerate(self.shapes):
            if grads[k] is None and known is not None and self.ctx._materialize:
                grads[k] = _wrap(np.zeros(known[0], known[1]))
        return grads


def node_apply(node: Node, *grads: Any) -> Any:
    """`grad_fn.apply(g)`: a Function node's backward called directly, its gradients as tensors."""
    state = node.params.get("state") if isinstance(node.params, dict) else None
    if not isinstance(state, _Backward):
        raise ArgumentError(f"{node.name}.apply is available on the nodes of a custom autograd.Function",
                            hint="call it on Fn.apply(x).grad_fn")
    if len(grads) != state.count or not all(isinstance(g, Tensor) for g in grads):
        raise ArgumentError(f"apply(): give one gradient tensor per output of the node ({state.count})")
    return state.cls.backward(state.ctx, *grads)


def _sums_down(shape: tuple, grad_shape: tuple) -> bool:
    """Whether an input of `shape` broadcasts to `grad_shape` (so its gradient is summed back, as PyTorch's
    engine does for a custom backward)."""
    try:
        return len(grad_shape) >= len(shape) and np.broadcast_shapes(shape, grad_shape) == tuple(grad_shape)
    except ValueError:
        return False
