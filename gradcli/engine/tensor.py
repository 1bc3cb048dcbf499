"""The Tensor and the recorded graph: the hot path of every program gradcli runs.

Kept lean on purpose (slots, no per-op validation beyond what NumPy cannot tell us) because the
per-op overhead target is below PyTorch's. Every op goes through `apply`, which runs the op
table's forward and, when any input requires grad, records a `Node` (PyTorch's `grad_fn`). The
elementwise ops, which a `while` loop repeats thousands of times, go through copies of `apply`
specialised to one op (`_elementwise`, `_elementwise1`): those are the operators and methods
themselves, so an op costs one Python call. All three record through `Node`'s constructor, the
one place that decides what a node keeps.
"""
from __future__ import annotations

import functools
import inspect
import math
import weakref
from typing import Any, Callable

import numpy as np

from gradcli.engine import budget
from gradcli.engine import narrow as N
from gradcli.engine import ops as O
from gradcli.engine.state import (INFERENCE, INFERENCE_SAVED, READS, RESHAPED, VMAP_LEVELS, Anomaly,  # noqa: F401
                                    GradMode, InferenceMode, Limits, Observe, SavedTensor, WeakIds, _root, _sequence,
                                    is_inference)
from gradcli.engine.ties import note_comparison
from gradcli.errors import ArgumentError, BackwardError, DtypeError, LimitError, ShapeError


def _inherit_view(t: "Tensor", sources: tuple) -> None:
    """A view (or detach, or .data) is an inference tensor exactly when what it views is, inside
    inference mode or not, as in PyTorch; any other result made in inference mode is one."""
    root = _root(t._data)
    for x in sources:
        if type(x) is Tensor and _root(x._data) is root:
            if is_inference(x):
                INFERENCE.add(t)
            else:
                INFERENCE.discard(t)
            return


def _refuse_saved_inference(inputs: tuple, saved: tuple, arrays: tuple) -> None:
    """PyTorch's refusal to record a node that keeps an inference tensor's values for its backward."""
    if saved is RELEASED or saved is inputs:
        return
    for x, kept, a in zip(inputs, saved, arrays):
        if type(x) is Tensor and kept is a and type(a) is np.ndarray and is_inference(x):
            raise BackwardError(INFERENCE_SAVED, hint="use x.clone() of the tensor made under inference_mode, or "
                                                      "make it under torch.no_grad() instead")


def _observe(t: "Tensor", op: O.Op, inputs: tuple, arrays: tuple, name: str | None, params: dict) -> None:
    if Anomaly.watching and Anomaly.first is None and not _finite(t._data):
        _watch(t, op, arrays, name, params)
    for fn in Observe.each:
        fn(t, op, inputs, arrays, params)


class Node:
    """One recorded op application: PyTorch's `grad_fn`.

    `inputs` keeps the graph's structure for good (parent Nodes, leaf Tensors, constants), so
    `--check` and `--explain` can walk it after backward; `needs` lists the positions of the inputs
    that required grad when it was recorded, the only ones backward visits.

    `saved` is the VJPs' input arguments on the NumPy path: like `inputs`, but with the array
    wherever a Tensor's value is read (a parent Node only gives its shape). When no value is read
    it is the `inputs` tuple itself, so a chain step allocates nothing more for the garbage
    collector to track. `saved_out` is the output array when a VJP reads it: an array, never the
    output Tensor, which would own its node in a reference cycle. `saved` is RELEASED when the
    VJPs read nothing at all, and None (with `saved_out`) once a backward without `retain_graph`
    has freed it. `cost`, set only on the nodes of ops that estimate their time (matmul, einsum, a
    factorization...), is the seconds their VJPs will take (about the forward's work per input that
    needs grad), which backward sums before it starts (`budget.refuse_backward`).
    """

    __slots__ = ("op", "name", "inputs", "needs", "params", "saved", "saved_out", "shape", "dtype", "seq",
                 "retained", "cost", "__weakref__")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def next_functions(self) -> tuple:
        """PyTorch's view of the parents: (node or AccumulateGrad or None, output number) per input."""
        return tuple((output_edge(x) if type(x) is Node else (AccumulateGrad.of(x), 0) if type(x) is Tensor and
                      x.requires_grad else (None, 0)) for x in self.listed_inputs())

    def listed_inputs(self) -> list:
        """The inputs `next_functions` lists (and node hooks' grad_inputs follow), in order."""
        numbers_listed = self.name not in _SCALAR_OVERLOADS
        return [x for x in self.inputs if type(x) is Node or type(x) is Tensor or numbers_listed]

    def unpack(self) -> tuple[tuple, "Tensor | None"]:
        """The saved values as Tensors on the graph, so a VJP under `create_graph` is differentiable.

        A kept value of a parent node comes back as a Tensor of that node, as PyTorch's saved
        variables do; the output comes back as a Tensor of this node.
        """
        tensors = []
        for a, x in zip(self.saved, self.inputs):
            if type(x) is Tensor:
                a = x
            elif type(x) is Node and type(a) is not Node:
                a = _on_graph(a, x)
            tensors.append(a)
        out = self.saved_out
        return tuple(tensors), None if out is None else _on_graph(out, self)

    @property
    def metadata(self) -> dict:
        return _metadata(self)

    def register_hook(self, hook: Callable[..., Any]) -> Any:
        from gradcli.engine.hooks import register_node_hook
        return register_node_hook(self, hook)

    def register_prehook(self, hook: Callable[..., Any]) -> Any:
        from gradcli.engine.hooks import register_prehook
        return register_prehook(self, hook)

    _saved_self = SavedTensor()
    _saved_other = SavedTensor()
    _saved_result = SavedTensor()
    _saved_exponent = SavedTensor()
    _saved_mat2 = SavedTensor()
    _saved_tensor = SavedTensor()
    _saved_alpha = SavedTensor()
    _saved_dim = SavedTensor()
    _saved_keepdim = SavedTensor()

    def apply(self, *grads: Any) -> Any:
        """`grad_fn.apply(g)`: a program's Function node runs its backward on these gradients."""
        from gradcli.engine.function import node_apply
        return node_apply(self, *grads)

    def __repr__(self) -> str:
        return f"<{self.name}>"


FUNCTION_OUTPUT = "function_output"
"""The op name of the node that places one output of a program's Function with several (see `function`)."""


def forward_nodes(ends: list[Node]) -> list[Node]:
    """The nodes a recorded forward made to reach `ends`, each once, in the order they ran: what a replay applies
    again (a Function's forward, followed under forward AD or in SymPy)."""
    nodes: dict[int, Node] = {}
    stack = list(ends)
    while stack:
        node = stack.pop()
        if id(node) not in nodes:
            nodes[id(node)] = node
            stack.extend(x for x in node.inputs if type(x) is Node)
    return sorted(nodes.values(), key=lambda n: n.seq)


def output_edge(node: Node) -> tuple[Node, int]:
    """(node, output number) as PyTorch shows an edge: a Function's several outputs come from its one node."""
    if node.op.name == FUNCTION_OUTPUT:
        state = node.params["state"]
        return state.node, state.differentiable[node.params["slot"]]
    return node, 0


def program_node(node: Node | None) -> Node | None:
    """The node a program sees as a tensor's `grad_fn`: a Function's own for each of its outputs."""
    return node if node is None else output_edge(node)[0]


class AccumulateGrad:
    """How PyTorch shows a leaf among a node's `next_functions`: one per leaf, as in PyTorch."""

    name = "AccumulateGrad"
    next_functions = ()
    _live: "weakref.WeakValueDictionary[int, AccumulateGrad]" = weakref.WeakValueDictionary()

    def __init__(self, variable: "Tensor") -> None:
        self.variable = variable

    @classmethod
    def of(cls, variable: "Tensor") -> "AccumulateGrad":
        """The leaf's accumulator; keyed by id, which stays unique while the accumulator holds the leaf."""
        acc = cls._live.get(id(variable))
        if acc is None:
            acc = cls._live[id(variable)] = cls(variable)
        return acc

    metadata = Node.metadata
    register_hook = Node.register_hook
    register_prehook = Node.register_prehook

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


_METADATA: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def _metadata(node: Any) -> dict:
    """`grad_fn.metadata`: a dict a program may fill, kept as long as the node (made on first use)."""
    found = _METADATA.get(node)
    if found is None:
        found = _METADATA[node] = {}
    return found


RELEASED = ()
_new_node = object.__new__  # Node has no __init__: a class call would run `record` through C, twice as dear


def record(op: O.Op, name: str, inputs: tuple, mask: int, params: dict, plan: tuple | None, arrays: tuple,
           out: np.ndarray) -> Node:
    """Record one application: `mask` has bit i set when input i requires grad, `plan` is
    `op.plan(mask)`, `arrays` the inputs as the forward saw them (a Tensor's array, else the input).

    The one place a node is made, so every path keeps exactly what the plan asks for. Where a
    Tensor input is not kept, `inputs` already holds its node or leaf, and for any other input
    `arrays` and `inputs` hold the same object; so `saved` picks per position between the two
    tuples, and reuses one of them whole whenever it can (the common cases, with no allocation).
    """
    self = _new_node(Node)
    self.op = op
    self.name = name
    self.inputs = inputs
    self.needs = _NEEDS[mask] if mask < 4 else tuple(i for i in range(len(inputs)) if mask >> i & 1)
    self.params = params
    if plan is None:
        self.saved = RELEASED
        self.saved_out = None
    else:
        keep, keep_out = plan
        if keep is None:
            self.saved = inputs
        elif keep is True:
            self.saved = arrays
        elif keep == 0:  # of two inputs, the first only; a number is in `inputs` already
            self.saved = inputs if arrays[0] is inputs[0] else (arrays[0], inputs[1])
        elif keep == 1:
            self.saved = inputs if arrays[1] is inputs[1] else (inputs[0], arrays[1])
        else:
            self.saved = tuple(a if k else x for a, x, k in zip(arrays, inputs, keep))
        self.saved_out = out if keep_out else None
    if INFERENCE:
        _refuse_saved_inference(inputs, self.saved, arrays)
    self.shape = out.shape
    self.dtype = out.dtype
    self.seq = next(_sequence)
    self.retained = None
    return self


# PyTorch's overloads that take a Python number as a scalar argument, not as a (wrapped) tensor input:
# their next_functions list the tensor only (1 - x, x ** 2, 2 ** x)
_SCALAR_OVERLOADS = frozenset({"RsubBackward1", "PowBackward0", "PowBackward2"})
_NO_PARAMS: dict = {}
_NEEDS = ((), (0,), (1,), (0, 1))  # Node.needs by requires-grad mask, for masks of the first two inputs


def _on_graph(array: np.ndarray, node: Node) -> "Tensor":
    t = _wrap(array)
    t._node = node
    t.requires_grad = True
    return t


_F64 = np.dtype(np.float64)


def _narrowed(forward: Callable[..., Any], arrays: tuple, params: dict) -> tuple[tuple, np.ndarray] | None:
    """PyTorch's float type where NumPy widened integers to float64: (the arrays, the result), or None.

    NumPy computes int64 / int64, exp(int64), int64 * 0.5 and int64 + float32 in float64. PyTorch
    computes an integer (or bool) tensor with a float tensor in that tensor's float type, and with
    Python floats, or by an op whose result is a float, in the default dtype (float32 unless set). So
    a float64 result none of whose arrays is float64 is computed again with the integer arrays cast
    (an integer tensor never requires grad: the graph is the same, and reads the cast arrays).
    """
    target = None
    for a in arrays:
        if isinstance(a, np.ndarray):
            if a.dtype is _F64:
                return None
            if a.dtype.kind == "f":
                target = a.dtype
    if target is None:
        from gradcli.engine.creation import get_default_dtype
        target = get_default_dtype()
        if target == _F64:
            return None
    arrays = tuple([a.astype(target) if isinstance(a, np.ndarray) and a.dtype.kind in "iub" else a for a in arrays])
    out = forward(*arrays, **params)
    return arrays, out if type(out) is np.ndarray else np.asarray(out)


def apply(op: O.Op, *inputs: Any, name: str | None = None, **params: Any) -> "Tensor":
    """Run one op forward and record it when any input requires grad."""
    if VMAP_LEVELS:
        from gradcli.engine.batched import dispatch
        batched = dispatch(op, inputs, name, params)
        if batched is not None:
            return batched
    if len(inputs) == 1:
        x = inputs[0]
        arrays = (x._data,) if type(x) is Tensor else inputs
    else:
        arrays = tuple([x._data if type(x) is Tensor else x for x in inputs])
    seconds = 0.0
    if op.cost is not None:
        seconds = op.cost(*arrays, **params)
        budget.spend(seconds, op.name)
    if arrays and type(arrays[0]) is np.ndarray and arrays[0].nbytes >= budget.LARGE:
        budget.reserve(arrays[0].nbytes, f"the result of {op.name}")
    try:
        out = N.forward(op.forward, arrays, params) if N.SEEN else op.forward(*arrays, **params)
    except (ValueError, IndexError) as exc:
        raise _shape_error(op, inputs, exc) from None
    except TypeError:
        if not _refused_dtype(arrays):
            raise
        raise _dtype_error(op, arrays) from None
    if type(out) is not np.ndarray:
        out = out if isinstance(out, np.ndarray) else np.asarray(out)
    if out.dtype is _F64 and not (arrays and type(arrays[0]) is np.ndarray and arrays[0].dtype is _F64):
        arrays, out = _narrowed(op.forward, arrays, params) or (arrays, out)
    t = _wrap(out)
    if GradMode.enabled:
        mask = 0
        for i, x in enumerate(inputs):
            if type(x) is Tensor and x.requires_grad:
                mask |= 1 << i
        if mask:
            structure = tuple([x._node or x if type(x) is Tensor else x for x in inputs])
            t._node = record(op, name or op.node, structure, mask, params or _NO_PARAMS, op.plan(mask), arrays, out)
            t.requires_grad = True
            if seconds:
                budget.record_cost(t._node, seconds * len(t._node.needs))
    if out.base is not None and inputs and type(inputs[0]) is Tensor:
        V.record(t, inputs[0], op, params, name)
    if INFERENCE or InferenceMode.enabled:
        _inherit_view(t, inputs)
    if Observe.on:
        _observe(t, op, inputs, arrays, name, params)
    return t


def _elementwise1(op: O.Op, params: dict = _NO_PARAMS) -> Callable[["Tensor"], "Tensor"]:
    """`apply` for one Tensor, specialised to `op` and fixed `params`: the elementwise methods are these,
    and so is `x.norm()` with its defaults, which a training loop's stopping test calls every pass."""
    forward, plan, label = (functools.partial(op.forward, **params) if params else op.forward), op.plan(1), op.node

    def run(x: "Tensor") -> "Tensor":
        if type(x) is not Tensor:
            return apply(op, x, **params)
        data = x._data
        try:
            out = N.forward(forward, (data,), _NO_PARAMS) if N.SEEN else forward(data)
        except TypeError:
            if not _refused_dtype((data,)):
                raise
            raise _dtype_error(op, (data,)) from None
        if type(out) is not np.ndarray:
            out = out if isinstance(out, np.ndarray) else np.asarray(out)
        if data.dtype is not out.dtype and out.dtype is _F64:
            (data,), out = _narrowed(forward, (data,), _NO_PARAMS) or ((data,), out)
        t = Tensor.__new__(Tensor)
        t._data = out
        t.grad = None
        if x.requires_grad and GradMode.enabled:
            t._node = record(op, label, (x._node or x,), 1, params, plan, (data,), out)
            t.requires_grad = True
        else:
            t._node = None
            t.requires_grad = False
            if InferenceMode.enabled:
                INFERENCE.add(t)
        if Observe.on:
            _observe(t, op, (x,), (data,), None, params)
        return t

    return run


def _finite(out: np.ndarray) -> bool:
    """The watch's quick answer, paid by every op while eval watches: one C call (the sum of squares
    is finite exactly when every element is, unless a square overflows; `_watch` then decides, and
    eval's np.errstate keeps the overflow quiet). Only float outputs can hold a nan or inf."""
    return out.dtype.kind != "f" or math.isfinite(np.vdot(out, out))


def _watch(t: "Tensor", op: O.Op, arrays: tuple, name: str | None, params: dict) -> None:
    """Remember the first op that made a non-finite value out of finite inputs (eval's warning).

    Called only when `_finite` could not vouch for the output.
    """
    out = t._data
    if np.isfinite(out).all():
        return
    if all(np.isfinite(a).all() for a in arrays if isinstance(a, (np.ndarray, float))):
        Anomaly.first = t._node or record(op, name or op.node, (), 0, params, None, (), out)


_BOOL_MESSAGES = {
    "neg": "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
           "the `~` or `logical_not()` operator instead.",
    "sub": "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
           "operator instead.",
}


def _refused_dtype(arrays: Any) -> bool:
    """Whether NumPy's TypeError is about a non-float operand (the user's bool mask) rather than a bug."""
    return any(isinstance(a, np.ndarray) and a.dtype.kind != "f" for a in arrays)


def _dtype_error(op: O.Op, arrays: tuple) -> DtypeError:
    """NumPy refused the operands' dtypes (bools, mostly): PyTorch's text where it has one."""
    dtypes = " and ".join(str(np.asarray(a).dtype) for a in arrays)
    message = _BOOL_MESSAGES.get(op.name) if "bool" in dtypes else None
    return DtypeError(message or f"{op.name} is not supported for {dtypes} tensors",
                      hint="comparisons give bool tensors; make them float first, e.g. (x > 0).float()")


def _shape_error(op: O.Op, inputs: tuple, exc: Exception) -> ShapeError:
    shapes = " and ".join(str(tuple(x.shape)) for x in inputs if isinstance(x, Tensor))
    return ShapeError(f"{op.name}: {exc} (input shapes {shapes})",
                      hint="check the shapes with x.shape; reshape, transpose (.T) or index to make them fit")


def check_elements(shape: tuple[int, ...], what: str, dtype: Any = None) -> None:
    """Refuse a tensor past the element cap before NumPy tries to allocate it.

    The cap is a size in memory: `--max-elements` counts 8-byte elements (float64, int64), so a tensor of a
    narrower dtype may hold as many bytes (a float32 one twice as many elements), as the memory it takes is
    what `--max-memory` holds too. A shape whose dtype is not known yet counts as 8 bytes an element."""
    n = 1
    for s in shape:
        n *= int(s)
    itemsize = 8 if dtype is None else np.dtype(dtype).itemsize
    limit = Limits.max_elements * 8 // itemsize
    words = "" if itemsize == 8 else f" {np.dtype(dtype).name} elements (--max-elements counts 8-byte ones)"
    if n == 0 and shape and max(shape) > limit:  # empty, but its reductions would not be
        raise LimitError(f"{what} would have a dimension of {max(shape):,} (shape {tuple(shape)}), over the element "
                         f"limit of {limit:,}{words}", hint="use smaller shapes, or raise the limit with "
                                                           "--max-elements")
    if n > limit:
        raise LimitError(f"{what} would have {n:,} elements (shape {tuple(shape)}), over the limit of "
                         f"{limit:,}{words}",
                         hint="use smaller shapes, or raise the limit with --max-elements")
    budget.reserve(n * itemsize, what)


def broadcast_shape(op_name: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's broadcasting rule, with PyTorch's error text when shapes clash."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    clashes = [i for i, (x, y) in enumerate(zip(pa, pb)) if x != y and x != 1 and y != 1]
    if clashes:  # PyTorch names the clash nearest the right, where it starts lining sizes up
        i = clashes[-1]
        raise ShapeError(
            f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at non-singleton "
            f"dimension {i}", explanation=f"{op_name} of shapes {tuple(a)} and {tuple(b)} do not broadcast",
            hint="broadcasting lines shapes up from the right; each pair of sizes must be equal or one "
                 "of them 1. Reshape (x.reshape(...)), unsqueeze or transpose one operand")
    shape = tuple(map(max, pa, pb))
    check_elements(shape, f"the result of {op_name}")
    return shape


_NUMBER = (int, float)


def _elementwise(op: O.Op, name: str | None = None) -> Callable[[Any, Any], "Tensor"]:
    """The forward of one binary elementwise op, with PyTorch's broadcasting message.

    Tensor with Tensor, or with a Python number, is the hot path, specialised per op so that the
    dunders are these functions themselves (one call deep); anything else (lists, NumPy scalars,
    bools) is normalised and sent through `apply`.
    """
    forward, plans, label = op.forward, op.plans, name or op.node

    def run(a: Any, b: Any) -> "Tensor":
        ta, tb = type(a), type(b)
        if ta is Tensor:
            x = a._data
            if tb is Tensor:
                y = b._data
                if x.dtype is not y.dtype:
                    return _general_binary(op, a, b, name)
                if x.shape != y.shape and x.shape and y.shape:  # a 0-d operand fits any shape
                    broadcast_shape(op.name, x.shape, y.shape)
            elif tb in _NUMBER:
                y = b
            else:
                return _general_binary(op, a, b, name)
        elif tb is Tensor and ta in _NUMBER:
            x, y = a, b._data
        else:
            return _general_binary(op, a, b, name)
        try:
            out = N.forward(forward, (x, y), _NO_PARAMS) if N.SEEN else forward(x, y)
        except TypeError:
            if not _refused_dtype((x, y)):
                raise
            raise _dtype_error(op, (x, y)) from None
        if type(out) is not np.ndarray:
            out = out if isinstance(out, np.ndarray) else np.asarray(out)
        if (x if ta is Tensor else y).dtype is not out.dtype and out.dtype is _F64:
            (x, y), out = _narrowed(forward, (x, y), _NO_PARAMS) or ((x, y), out)
        t = Tensor.__new__(Tensor)
        t._data = out
        t.grad = None
        mask = (ta is Tensor and a.requires_grad) | (tb is Tensor and b.requires_grad) << 1 if GradMode.enabled else 0
        if mask:
            structure = (a._node or a if ta is Tensor else a, b._node or b if tb is Tensor else b)
            t._node = record(op, label, structure, mask, _NO_PARAMS, plans[mask], (x, y), out)
            t.requires_grad = True
        else:
            t._node = None
            t.requires_grad = False
            if InferenceMode.enabled:
                INFERENCE.add(t)
        if Observe.on:
            _observe(t, op, (a, b), (x, y), name, _NO_PARAMS)
        return t

    return run


ADD = _elementwise(O.ADD)
SUB = _elementwise(O.SUB)
RSUB = _elementwise(O.SUB, "RsubBackward1")
MUL = _elementwise(O.MUL)
DIV = _elementwise(O.DIV)
RDIV = _elementwise(O.DIV, "MulBackward0")  # PyTorch computes 2 / x as x.reciprocal() * 2
POW = _elementwise(O.POW)
POW_TENSOR = _elementwise(O.POW, "PowBackward1")
RPOW = _elementwise(O.POW, "PowBackward2")
MAXIMUM = _elementwise(O.MAXIMUM)
MINIMUM = _elementwise(O.MINIMUM)


def _in_place(method: str) -> Callable[..., "Tensor"]:
    """`x.exp_()`, `x.clamp_(0, 1)` and their kind: the out-of-place method's result for the same arguments,
    written back into `x` by `inplace.update` (which keeps the version counter, the views and the graph right,
    and refuses a result the tensor's dtype cannot hold). A wrong call is told the method's usage."""
    def run(self: "Tensor", *args: Any, **kwargs: Any) -> "Tensor":
        return I.update(self, lambda: getattr(self, method)(*args, **kwargs))
    run.__name__ = run.__qualname__ = method + "_"
    run.__signature__ = inspect.signature(getattr(Tensor, method))  # type: ignore[attr-defined]
    return run


from gradcli.engine.tensor_methods import TensorMethods  # noqa: E402  (it reads what is defined above)


class Tensor(TensorMethods):
    """A NumPy array with PyTorch's autograd attributes."""

    __slots__ = ("_data", "grad", "_node", "requires_grad", "_untracked", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        from gradcli.engine.creation import as_array
        self._data = as_array(data, dtype)
        self.grad = None
        self._node = None
        self.requires_grad = False
        if InferenceMode.enabled:
            INFERENCE.add(self)
        if requires_grad:
            self.requires_grad_(True)

    # -- attributes -------------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        """A detached Tensor sharing memory, as in PyTorch (so `x.grad.data.zero_()` works), whose in-place
        writes bump no version (`_untracked`: left unset on every other tensor, read by `inplace`)."""
        alias = self.detach()
        alias._untracked = True
        return alias

    @data.setter
    def data(self, value: "Tensor") -> None:
        """Replace the values out of autograd's sight, as PyTorch's `x.data = ...`: the new data's shape and
        dtype become the tensor's (`layer.weight.data = w.t()`). A graph recorded before holds the old shape:
        `RESHAPED` notes the moment, and backward through such a graph into this tensor is refused rather than
        its gradient broadcast to the new shape."""
        data = value._data if isinstance(value, Tensor) else np.asarray(value, dtype=self._data.dtype)
        if self.requires_grad and data.dtype.kind not in "fc":
            raise DtypeError("data set to a tensor that requires gradients must be floating point or complex dtype",
                             hint="pass floats, e.g. torch.tensor([[0.3]])")
        if data.shape != self._data.shape:
            RESHAPED.mark(self)
        self._data = data

    @property
    def grad_fn(self) -> Node | None:
        return self._node

    creator = grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def device(self) -> Any:
        """`x.device`: the CPU, gradcli's one device (`torch.tensor(..., device=x.device)` then works)."""
        from gradcli.engine.devices import Device
        return Device("cpu")

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def T(self) -> "Tensor":
        return F.permute(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        """The last two dimensions swapped (a batch of matrices transposed); a number is itself, as in PyTorch."""
        return self._matrix_transpose("mT")

    @property
    def mH(self) -> "Tensor":
        """The conjugate transpose of a batch of matrices: mT, since gradcli's tensors are real."""
        return self._matrix_transpose("mH")

    @property
    def H(self) -> "Tensor":
        if self.ndim not in (0, 2):
            raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                             + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""),
                             hint="x.mH transposes the last two dimensions of a batch of matrices")
        return self._matrix_transpose("H")

    def _matrix_transpose(self, name: str) -> "Tensor":
        if self.ndim == 0:
            return self
        if self.ndim == 1:
            raise ShapeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got 1-D tensor.",
                             hint="a vector has nothing to transpose: x.unsqueeze(0) makes it a 1×n matrix")
        return F.transpose(self, -2, -1)

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        from gradcli.engine.tensor_str import Size
        return Size(self._data.shape) if dim is None else F.size(self, dim)

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel  # PyTorch's older name, in Karpathy's makemore


    __hash__ = object.__hash__


    # -- arithmetic: the operators are the elementwise kernels themselves (x.add(y) and its kin are declared) -----
    __add__ = ADD
    __sub__ = SUB
    __mul__ = MUL
    __truediv__ = DIV

    def __floordiv__(self, other: Any) -> "Tensor":
        return F.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> "Tensor":
        return F.floor_divide(other, self)

    __radd__ = ADD  # PyTorch computes 2 + x as x.add(2), and 2 * x as x.mul(2): the tensor comes first

    def __rsub__(self, other: Any) -> "Tensor":
        return RSUB(other, self)

    __rmul__ = MUL

    def __rtruediv__(self, other: Any) -> "Tensor":
        return RDIV(other, self)

    def __pow__(self, exponent: Any) -> "Tensor":
        return (POW_TENSOR if type(exponent) is Tensor else POW)(self, exponent)

    def __rpow__(self, other: Any) -> "Tensor":
        return RPOW(other, self)

    def __matmul__(self, other: Any) -> "Tensor":
        return F.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return F.matmul(other, self)

    def __pos__(self) -> "Tensor":
        return self

    def __getitem__(self, key: Any) -> "Tensor":
        return F.index(self, key)

    def _compare(self, other: Any, fn: Any) -> "Tensor":
        if type(other) in _NUMBER:
            o = other
        elif isinstance(other, Tensor):
            o = other._data
            if o.shape != self._data.shape:
                broadcast_shape("comparison", self.shape, other.shape)
        elif isinstance(other, (bool, np.number, np.bool_)):
            o = other
        else:
            raise ArgumentError(f"cannot compare a tensor with a {type(other).__name__}",
                                hint="compare with a number or another tensor")
        for t in (self, other):
            if isinstance(t, Tensor) and t.requires_grad:
                note_comparison(t._node if t._node is not None else t, self._data, o)
        return _wrap(np.asarray(fn(self._data, o)))

    def __lt__(self, other: Any) -> "Tensor":
        return self._compare(other, np.less)

    def __le__(self, other: Any) -> "Tensor":
        return self._compare(other, np.less_equal)

    def __gt__(self, other: Any) -> "Tensor":
        return self._compare(other, np.greater)

    def __ge__(self, other: Any) -> "Tensor":
        return self._compare(other, np.greater_equal)

    def __eq__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return self._compare(other, np.equal)

    def __ne__(self, other: Any) -> "Tensor":  # type: ignore[override]
        return self._compare(other, np.not_equal)


    # -- in-place updates: PyTorch's rules live in inplace.py ------------------------------
    def add_(self, other: Any, alpha: Any = 1) -> "Tensor":
        return I.add_(self, other, alpha)

    def sub_(self, other: Any, alpha: Any = 1) -> "Tensor":
        return I.sub_(self, other, alpha)

    def zero_(self) -> "Tensor":
        return I.zero_(self)

    def fill_(self, value: Any) -> "Tensor":
        return I.fill_(self, value)

    def copy_(self, src: Any) -> "Tensor":
        return I.copy_(self, src)

    def __setitem__(self, key: Any, value: Any) -> None:
        I.setitem(self, key, value)

    # -- methods the census of tutorial code found missing (engine/rearranging.py, creation.py) ----------
    def index_put_(self, indices: Any, values: Any, accumulate: bool = False) -> "Tensor":
        return I.index_put_(self, indices, values, accumulate)

    def put_(self, index: Any, source: Any, accumulate: bool = False) -> "Tensor":
        return I.put_(self, index, source, accumulate)

    def new(self, *data: Any) -> "Tensor":
        """The legacy constructor: `x.new(2, 3)` or `x.new(x.size())` uninitialised (zeros here), or `x.new([1, 2])`
        with that data, in x's dtype. A `torch.Size` is a shape, a list or tuple is data, as in PyTorch."""
        from gradcli.engine.tensor_str import Size
        if len(data) == 1 and not isinstance(data[0], (int, np.integer, Size)):
            return C.new_tensor(self, data[0])
        return C.new_full(self, data, 0)

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return C.new_full(self, size, 0, dtype, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return C.new_full(self, size, 1, dtype, requires_grad)

    new_empty = new_zeros  # uninitialised memory in PyTorch; zeros here, as torch.empty

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return C.new_full(self, (size,), fill_value, dtype, requires_grad)

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> "Tensor":
        return C.new_tensor(self, data, dtype, requires_grad)

    # -- devices (engine/devices.py) and whole-tensor comparison --------------------------------
    def to(self, *args: Any, **kwargs: Any) -> "Tensor":
        from gradcli.engine.devices import to
        return to(self, *args, **kwargs)

    def cpu(self) -> "Tensor":
        return self

    def cuda(self, device: Any = None) -> "Tensor":
        from gradcli.engine.devices import check_device
        check_device("cuda")
        return self

    def register_hook(self, hook: Any) -> Any:
        """Call `hook(grad)` when backward computes this tensor's gradient (engine/hooks.py)."""
        from gradcli.engine.hooks import register_hook
        return register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        """Call `hook(self)` once backward has accumulated into this leaf's `.grad` (engine/hooks.py)."""
        from gradcli.engine.hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)

    def equal(self, other: "Tensor") -> bool:
        """`torch.equal`: same shape and the same values (no broadcasting)."""
        return isinstance(other, Tensor) and self.shape == other.shape and bool(np.array_equal(self._data, other._data))

    __iadd__ = add_
    __isub__ = sub_


def _declare_methods() -> None:
    """`Tensor.X` (and its aliases) for every method the op table declares: the one-input kernels
    themselves; `-x` and `abs(x)` are the same kernels."""
    kernels: dict[int, Callable] = {}
    for name, op in O.named("methods", unary=True).items():
        setattr(Tensor, name, kernels.setdefault(id(op), _elementwise1(op)))
    Tensor.__neg__, Tensor.__abs__ = Tensor.neg, Tensor.abs


_declare_methods()


def _wrap(array: np.ndarray) -> Tensor:
    """A leaf Tensor around an existing array (no copy, no grad)."""
    t = Tensor.__new__(Tensor)
    t._data = array
    t.grad = None
    t._node = None
    t.requires_grad = False
    if InferenceMode.enabled:
        INFERENCE.add(t)
    return t


def _memory_order(array: np.ndarray) -> tuple[int, ...]:
    """The axes from the largest stride to the smallest: a transposed view then reads in memory order."""
    return tuple(sorted(range(array.ndim), key=lambda axis: -abs(array.strides[axis])))


def _general_binary(op: O.Op, a: Any, b: Any, name: str | None, **params: Any) -> Tensor:
    a, b = F.as_operand(a, op), F.as_operand(b, op)
    if VMAP_LEVELS and (type(a) not in _PLAIN or type(b) not in _PLAIN):
        return apply(op, a, b, name=name, **params)
    if type(a) is Tensor and type(b) is Tensor and a._data.dtype != b._data.dtype:
        a, b = _promote(a, b)
    shape_a, shape_b = np.shape(a._data if type(a) is Tensor else a), np.shape(b._data if type(b) is Tensor else b)
    if shape_a != shape_b:
        broadcast_shape(op.name, shape_a, shape_b)
    return apply(op, a, b, name=name, **params)


_PLAIN = (Tensor, *_NUMBER)
"""Operands that are no batched tensor."""


def _promote(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's rule where it differs from NumPy's: a 0-d float tensor does not widen a dimensioned one.

    `FloatTensor([1.]) + tensor(2.5)` stays float32 in PyTorch (NumPy would give float64), so the
    0-d operand is cast (differentiably) to the other's dtype.
    """
    da, db = a._data.dtype, b._data.dtype
    if da.kind == "f" and db.kind == "f" and (a.ndim == 0) != (b.ndim == 0):
        if a.ndim == 0:
            return F.to_dtype(a, db), b
        return a, F.to_dtype(b, da)
    return a, b


from gradcli.engine import functions as F  # noqa: E402  (functions builds on Tensor; methods resolve it at call time)
from gradcli.engine import inplace as I  # noqa: E402  (the same, for the in-place methods)
from gradcli.engine import views as V  # noqa: E402  (the same, for the views ops make)
from gradcli.engine import logical as L  # noqa: E402  (the same, for masks)
from gradcli.engine import rearranging as R  # noqa: E402  (the same, for the census's functions)
from gradcli.engine import creation as C  # noqa: E402  (the same, for new_zeros and its kin)
from gradcli.engine import storage as ST  # noqa: E402  (the same, for memory: strides, resize_)


def _declare_delegates() -> None:
    """`Tensor.X` (and its aliases) for every function declared with arguments of its own, and every composite:
    `torch.X` itself, which Python binds with the tensor as its input (`x.sum(1)` is `torch.sum(x, 1)`, and
    a wrong call is told the usage without `input`), one method per primitive and no call in between."""
    for name, op in O.named("methods").items():
        if op.names.signature:
            setattr(Tensor, name, getattr(F, op.name))
    from gradcli.engine.functions.declared import composite_method
    for composite in F.COMPOSITES + R.COMPOSITES:  # declared with their names (functions/, rearranging.py)
        method = composite_method(composite)
        for name in composite.methods:
            setattr(Tensor, name, method)
    in_place = [*O.named("in_place_methods"), *(name for c in F.COMPOSITES + R.COMPOSITES for name in c.in_place_methods)]
    for name in in_place:  # x.X_(...) where the declaration says PyTorch has it
        setattr(Tensor, name, _in_place(name[:-1]))


_declare_delegates()
Tensor.__imul__, Tensor.__itruediv__, Tensor.__ipow__ = Tensor.mul_, Tensor.div_, Tensor.pow_  # declared in place
for _name, _fn in L.FUNCTIONS.items():  # x.isnan(), x.eq(3), m.logical_and(n): torch.NAME with the tensor first
    setattr(Tensor, _name, _fn)
