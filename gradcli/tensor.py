"""The Tensor and the recorded graph: the hot path of every program gradcli runs.

Kept lean on purpose (slots, no per-op validation beyond what NumPy cannot tell us) because the
per-op overhead target is below PyTorch's. Every op goes through `apply`, which runs the op
table's forward and, when any input requires grad, records a `Node` (PyTorch's `grad_fn`).
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

import numpy as np

from gradcli import ops as O
from gradcli.errors import BackwardError, DtypeError, ShapeError, ValueDomainError

_sequence = itertools.count()


class GradMode:
    """Whether ops record a graph; switched off while gradcli computes things it won't differentiate."""

    enabled = True


class Limits:
    """Bounds that keep a typo from exhausting memory; set from the CLI options."""

    max_elements = 50_000_000


class Anomaly:
    """Records the first op whose output was not finite although its inputs were (for eval's warning)."""

    watching = False
    first: "Node | None" = None


class Node:
    """One recorded op application: PyTorch's `grad_fn`.

    `inputs` keeps the graph's structure for good (parent Nodes, leaf Tensors, constants), so
    `--check` and `--explain` can walk it after backward; `saved` holds what the VJPs need and is
    dropped after a backward without `retain_graph`.
    """

    __slots__ = ("op", "name", "inputs", "params", "saved", "shape", "dtype", "seq", "retained", "__weakref__")

    def __init__(self, op: O.Op, name: str, inputs: tuple, params: dict, saved: tuple | None,
                 shape: tuple, dtype: np.dtype) -> None:
        self.op = op
        self.name = name
        self.inputs = inputs
        self.params = params
        self.saved = saved
        self.shape = shape
        self.dtype = dtype
        self.seq = next(_sequence)
        self.retained = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def next_functions(self) -> tuple:
        """PyTorch's view of the parents: (node or AccumulateGrad or None, 0) per input."""
        out = []
        for x in self.inputs:
            if type(x) is Node:
                out.append((x, 0))
            elif type(x) is Tensor and x.requires_grad:
                out.append((AccumulateGrad(x), 0))
            else:
                out.append((None, 0))
        return tuple(out)

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad:
    """How PyTorch shows a leaf among a node's `next_functions`."""

    name = "AccumulateGrad"
    next_functions = ()

    def __init__(self, variable: "Tensor") -> None:
        self.variable = variable

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


RELEASED = ()


def apply(op: O.Op, *inputs: Any, name: str | None = None, **params: Any) -> "Tensor":
    """Run one op forward and record it when any input requires grad."""
    arrays = [x._data if type(x) is Tensor else x for x in inputs]
    try:
        out = op.forward(*arrays, **params)
    except (ValueError, IndexError) as exc:
        raise _shape_error(op, inputs, exc) from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    t = Tensor.__new__(Tensor)
    t._data = out
    t.grad = None
    t._retains = False
    t._node = None
    t.requires_grad = False
    if GradMode.enabled:
        for x in inputs:
            if type(x) is Tensor and x.requires_grad:
                saves = op.saves
                if saves:
                    saved = tuple(inputs) + ((t,) if "o" in saves else (None,))
                else:
                    saved = RELEASED
                t._node = Node(op, name or op.node,
                               tuple(x._node or x if type(x) is Tensor else x for x in inputs),
                               params, saved, out.shape, out.dtype)
                t.requires_grad = True
                break
    if Anomaly.watching and Anomaly.first is None and out.dtype.kind == "f" and not np.isfinite(out).all():
        if all(np.isfinite(a).all() for a in arrays if isinstance(a, (np.ndarray, float))):
            Anomaly.first = t._node or Node(op, name or op.node, (), params, RELEASED, out.shape, out.dtype)
    return t


def _shape_error(op: O.Op, inputs: tuple, exc: Exception) -> ShapeError:
    shapes = " and ".join(str(tuple(x.shape)) for x in inputs if isinstance(x, Tensor))
    return ShapeError(f"{op.name}: {exc} (input shapes {shapes})",
                      hint="check the shapes with x.shape; reshape, transpose (.T) or index to make them fit")


def check_elements(shape: tuple[int, ...], what: str) -> None:
    """Refuse a tensor past the element cap before NumPy tries to allocate it."""
    n = 1
    for s in shape:
        n *= int(s)
    if n > Limits.max_elements:
        from gradcli.errors import LimitError
        raise LimitError(f"{what} would have {n:,} elements (shape {tuple(shape)}), over the limit of "
                         f"{Limits.max_elements:,}",
                         hint="use smaller shapes, or raise the limit with --max-elements")


def broadcast_shape(op_name: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's broadcasting rule, with PyTorch's error text when shapes clash."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise ShapeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                f"dimension {i}: {op_name} of shapes {tuple(a)} and {tuple(b)} do not broadcast",
                hint="broadcasting lines shapes up from the right; each pair of sizes must be equal or one "
                     "of them 1. Reshape (x.reshape(...)), unsqueeze or transpose one operand")
        out.append(max(x, y))
    shape = tuple(out)
    check_elements(shape, f"the result of {op_name}")
    return shape


class Tensor:
    """A NumPy array with PyTorch's autograd attributes."""

    __slots__ = ("_data", "grad", "_node", "requires_grad", "_retains", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        from gradcli.creation import as_array
        self._data = as_array(data, dtype)
        self.grad = None
        self._node = None
        self._retains = False
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    # -- attributes -------------------------------------------------------------------
    @property
    def data(self) -> "Tensor":
        """A detached Tensor sharing memory, as in PyTorch (so `x.grad.data.zero_()` works)."""
        return _wrap(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value, dtype=self._data.dtype)

    @property
    def grad_fn(self) -> Node | None:
        return self._node

    creator = grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._node is None

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

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self._data.shape if dim is None else self._data.shape[dim]

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    # -- autograd ---------------------------------------------------------------------
    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        from gradcli.backward import run_backward
        run_backward((self,), (gradient,), retain_graph, create_graph)

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise BackwardError("can't retain_grad on Tensor that has requires_grad=False",
                                hint="only tensors that are part of a graph have a gradient to keep")
        if self._node is not None:
            import weakref
            self._node.retained = weakref.ref(self)
            self._retains = True

    @property
    def retains_grad(self) -> bool:
        return self._retains

    def detach(self) -> "Tensor":
        return _wrap(self._data)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if requires_grad and self._data.dtype.kind not in "fc":
            raise DtypeError("Only Tensors of floating point and complex dtype can require gradients",
                             hint=f"this tensor is {self._data.dtype}; make it float first, e.g. x.float() or "
                                  "write the numbers with a decimal point (1. instead of 1)")
        if self._node is not None and not requires_grad:
            raise BackwardError("you can only change requires_grad flags of leaf variables. If you want to use a "
                                "computed variable in a subgraph that doesn't require differentiation use "
                                "var_no_grad = var.detach().",
                                hint="use .detach() to get a tensor outside the graph")
        self.requires_grad = bool(requires_grad)
        return self

    def zero_(self) -> "Tensor":
        if self.requires_grad and self._node is None and GradMode.enabled:
            raise BackwardError("a leaf Variable that requires grad is being used in an in-place operation.",
                                hint="zero its gradient instead: x.grad.data.zero_() or x.grad.zero_()")
        if self._data.flags.writeable:
            self._data[...] = 0
        else:
            self._data = np.zeros_like(self._data)
        return self

    # -- conversion -------------------------------------------------------------------
    def item(self) -> float | int | bool:
        if self._data.size != 1:
            raise ValueDomainError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar",
                                   hint="index one element first (x[0].item()) or reduce (x.sum().item())")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise BackwardError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                "instead.", hint="write x.detach().numpy()")
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise ValueDomainError("len() of a 0-d tensor", hint="a 0-d tensor has no length; use .item()")
        return self._data.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueDomainError(f"Boolean value of Tensor with more than one value is ambiguous "
                                   f"(shape {self.shape})", hint="reduce it first: (x > 0).all() or (x > 0).any()")
        return bool(self._data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise ValueDomainError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        from gradcli.tensor_repr import tensor_repr
        return tensor_repr(self)

    # -- arithmetic (the hot path calls apply directly) ---------------------------------
    def __add__(self, other: Any) -> "Tensor":
        return _binary(O.ADD, self, other)

    def __radd__(self, other: Any) -> "Tensor":
        return _binary(O.ADD, other, self)

    def __sub__(self, other: Any) -> "Tensor":
        return _binary(O.SUB, self, other)

    def __rsub__(self, other: Any) -> "Tensor":
        return _binary(O.SUB, other, self, "RsubBackward1")

    def __mul__(self, other: Any) -> "Tensor":
        return _binary(O.MUL, self, other)

    def __rmul__(self, other: Any) -> "Tensor":
        return _binary(O.MUL, other, self)

    def __truediv__(self, other: Any) -> "Tensor":
        return _binary(O.DIV, self, other)

    def __rtruediv__(self, other: Any) -> "Tensor":
        """PyTorch computes `2 / x` as `x.reciprocal() * 2`, so its node is a MulBackward0."""
        return _binary(O.DIV, other, self, "MulBackward0")

    def __pow__(self, other: Any) -> "Tensor":
        return _binary(O.POW, self, other, "PowBackward1" if type(other) is Tensor else "PowBackward0")

    def __rpow__(self, other: Any) -> "Tensor":
        return _binary(O.POW, other, self, "PowBackward2")

    def __matmul__(self, other: Any) -> "Tensor":
        return F.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "Tensor":
        return F.matmul(other, self)

    def __neg__(self) -> "Tensor":
        return apply(O.NEG, self)

    def __pos__(self) -> "Tensor":
        return self

    def __abs__(self) -> "Tensor":
        return apply(O.ABS, self)

    def __getitem__(self, key: Any) -> "Tensor":
        return F.index(self, key)

    def _compare(self, other: Any, fn: Any) -> "Tensor":
        o = other._data if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and other.shape != self.shape:
            broadcast_shape("comparison", self.shape, other.shape)
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

    # -- elementwise methods --------------------------------------------------------------
    def exp(self) -> "Tensor":
        return apply(O.EXP, self)

    def log(self) -> "Tensor":
        return apply(O.LOG, self)

    def log1p(self) -> "Tensor":
        return apply(O.LOG1P, self)

    def sqrt(self) -> "Tensor":
        return apply(O.SQRT, self)

    def abs(self) -> "Tensor":
        return apply(O.ABS, self)

    def sign(self) -> "Tensor":
        return apply(O.SIGN, self)

    def sin(self) -> "Tensor":
        return apply(O.SIN, self)

    def cos(self) -> "Tensor":
        return apply(O.COS, self)

    def tan(self) -> "Tensor":
        return apply(O.TAN, self)

    def tanh(self) -> "Tensor":
        return apply(O.TANH, self)

    def sigmoid(self) -> "Tensor":
        return apply(O.SIGMOID, self)

    def relu(self) -> "Tensor":
        return apply(O.RELU, self)

    def neg(self) -> "Tensor":
        return apply(O.NEG, self)

    def softplus(self) -> "Tensor":
        return apply(O.SOFTPLUS, self)

    def pow(self, exponent: Any) -> "Tensor":
        return self.__pow__(exponent)

    def clamp(self, min: float | None = None, max: float | None = None) -> "Tensor":
        return F.clamp(self, min, max)

    clip = clamp

    # -- reductions, shapes and linear algebra live in functions.py -------------------------
    def sum(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return F.sum(self, dim, keepdim)

    def mean(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return F.mean(self, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return F.prod(self, dim, keepdim)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return F.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return F.min(self, dim, keepdim)

    def var(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
            correction: int | None = None) -> "Tensor":
        return F.var(self, dim, unbiased, keepdim, correction)

    def std(self, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
            correction: int | None = None) -> "Tensor":
        return F.std(self, dim, unbiased, keepdim, correction)

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> "Tensor":
        return F.norm(self, p, dim, keepdim)

    def softmax(self, dim: Any = None) -> "Tensor":
        return F.softmax(self, dim)

    def log_softmax(self, dim: Any = None) -> "Tensor":
        return F.log_softmax(self, dim)

    def matmul(self, other: Any) -> "Tensor":
        return F.matmul(self, other)

    def mm(self, other: Any) -> "Tensor":
        return F.mm(self, other)

    def dot(self, other: Any) -> "Tensor":
        return F.dot(self, other)

    def t(self) -> "Tensor":
        return F.t(self)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        return F.transpose(self, dim0, dim1)

    def permute(self, *dims: Any) -> "Tensor":
        return F.permute(self, *dims)

    def reshape(self, *shape: Any) -> "Tensor":
        return F.reshape(self, *shape)

    def view(self, *shape: Any) -> "Tensor":
        return F.reshape(self, *shape)

    def flatten(self) -> "Tensor":
        return F.flatten(self)

    def squeeze(self, dim: Any = None) -> "Tensor":
        return F.squeeze(self, dim)

    def unsqueeze(self, dim: int) -> "Tensor":
        return F.unsqueeze(self, dim)

    def expand(self, *sizes: Any) -> "Tensor":
        return F.expand(self, *sizes)

    def expand_as(self, other: "Tensor") -> "Tensor":
        return F.expand(self, other.shape)

    def float(self) -> "Tensor":
        return self if self._data.dtype == np.float32 else F.to_dtype(self, np.float32)

    def double(self) -> "Tensor":
        return self if self._data.dtype == np.float64 else F.to_dtype(self, np.float64)


def _wrap(array: np.ndarray) -> Tensor:
    """A leaf Tensor around an existing array (no copy, no grad)."""
    t = Tensor.__new__(Tensor)
    t._data = array
    t.grad = None
    t._node = None
    t.requires_grad = False
    t._retains = False
    return t


_NUMBER = (int, float, bool)


def _binary(op: O.Op, a: Any, b: Any, name: str | None = None) -> Tensor:
    """Elementwise binary op: checks broadcasting (PyTorch's message, the element cap) off the fast path."""
    ta, tb = type(a), type(b)
    if ta is Tensor and tb is Tensor:
        if a._data.shape != b._data.shape:
            broadcast_shape(op.name, a._data.shape, b._data.shape)
    elif not ((ta is Tensor and (tb in _NUMBER or isinstance(b, _NUMBER)))
              or (tb is Tensor and (ta in _NUMBER or isinstance(a, _NUMBER)))):
        a, b = F.as_operand(a, op), F.as_operand(b, op)
        if a.shape != b.shape:
            broadcast_shape(op.name, a.shape, b.shape)
    return apply(op, a, b, name=name)


from gradcli import functions as F  # noqa: E402  (functions builds on Tensor; methods resolve it at call time)
