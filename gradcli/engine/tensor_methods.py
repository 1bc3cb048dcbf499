"""Tensor's methods that delegate: the functional API's reductions, shapes, linear algebra and elementwise
functions with arguments (x.sum(dim), x.clamp(0, 1), ...), logic and masks, conversions, random fills and
autograd's entry points (backward, detach, hooks). `Tensor` inherits them from `TensorMethods`.

This module is imported by `engine/tensor.py` just before the Tensor class, so the names that module
defines after the class (Tensor itself, and the functional API it imports at its end) are read
through it, `T.<name>`, at call time."""
from __future__ import annotations

import weakref
from typing import Any, Callable, Iterator

import numpy as np

from gradcli.engine import ops as O
from gradcli.engine import tensor as T
from gradcli.engine.state import GradMode, INFERENCE, InferenceMode, READS, is_inference
from gradcli.errors import ArgumentError, BackwardError, DtypeError, ShapeError, ValueDomainError

_TENSOR_TYPES = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor",
                 "int32": "torch.IntTensor", "int16": "torch.ShortTensor", "int8": "torch.CharTensor",
                 "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor"}
"""What `x.type()` answers, by dtype."""


class TensorMethods:
    """The delegating half of `Tensor` (no state of its own: `__slots__` is empty, as Tensor's are fixed)."""

    __slots__ = ()

    # -- autograd ---------------------------------------------------------------------
    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        from gradcli.engine.backward import run_backward
        run_backward((self,), (gradient,), retain_graph, create_graph)

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise BackwardError("can't retain_grad on Tensor that has requires_grad=False",
                                hint="only tensors that are part of a graph have a gradient to keep")
        if self._node is not None:
            self._node.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        node = self._node
        return node is not None and node.retained is not None and node.retained() is self

    def detach(self) -> "Tensor":
        """A new tensor on the same data, outside the graph; inside a Function's forward recorded for `--check`
        (`READS`), on the recorded graph through the identity (`ops.SEEN_THROUGH`), the forward's math."""
        t = T._wrap(self._data)
        if READS and GradMode.enabled and self.requires_grad:
            t._node = T.record(O.SEEN_THROUGH, O.SEEN_THROUGH.node, (self._node or self,), 1, T._NO_PARAMS, O.SEEN_THROUGH.plan(1),
                             (self._data,), self._data)
            t.requires_grad = True
        if INFERENCE or InferenceMode.enabled:
            T._inherit_view(t, (self,))
        return t

    def detach_(self) -> "Tensor":
        """The tensor itself, cut from the graph that made it (a leaf needing no grad), as PyTorch's `detach_`."""
        if self._node is not None and T.V.base(self) is not self:
            raise BackwardError("Can't detach views in-place. Use detach() instead.",
                                hint="y = x.detach() makes a new tensor on the same data")
        self._node = None
        self.requires_grad = False
        return self

    def is_inference(self) -> bool:
        """Whether this tensor was made under `torch.inference_mode()` (or views one)."""
        return is_inference(self)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if requires_grad and self._data.dtype.kind not in "fc":
            raise DtypeError("Only Tensors of floating point and complex dtype can require gradients",
                             hint=f"this tensor is {self._data.dtype}; make it float first, e.g. x.float() or "
                                  "write the numbers with a decimal point (1. instead of 1)")
        if requires_grad and not InferenceMode.enabled and is_inference(self):
            raise BackwardError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
                                hint="use a clone, which is a normal tensor: x = x.clone().requires_grad_()")
        if self._node is not None and not requires_grad:
            raise BackwardError("you can only change requires_grad flags of leaf variables. If you want to use a "
                                "computed variable in a subgraph that doesn't require differentiation use "
                                "var_no_grad = var.detach().",
                                hint="use .detach() to get a tensor outside the graph")
        self.requires_grad = bool(requires_grad)
        return self

    # -- random fills: PyTorch's draws, in place and outside any graph (torch.nn.init builds on them) --
    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> "Tensor":
        from_, to = T.F.number_arg(from_, "uniform_", "from"), T.F.number_arg(to, "uniform_", "to")
        if not float(from_) <= float(to):
            raise ArgumentError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}",
                                hint="give the lower bound first, e.g. w.uniform_(-0.1, 0.1)")
        return self._fill_random("check_uniform_bounds", "UniformBackward0",
                                 lambda gen, count, contiguous: gen.uniform(count, self.dtype, from_, to), generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> "Tensor":
        mean, std = T.F.number_arg(mean, "normal_", "mean"), T.F.number_arg(std, "normal_", "std")
        if not float(std) >= 0.0:
            raise ArgumentError(f"normal expects std >= 0.0, but found std {std:g}",
                                hint="a standard deviation is never negative")
        return self._fill_random("normal_kernel_cpu", "NormalBackward0",
                                 lambda gen, count, contiguous: gen.normal(count, self.dtype, mean, std, contiguous),
                                 generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> "Tensor":
        """1 with probability p (a number, or a tensor broadcast to this shape), else 0, in this tensor's dtype."""
        if isinstance(p, T.Tensor):
            if p._data.dtype.kind != "f":
                raise DtypeError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                 f"'{T.F._TORCH_NAMES.get(p.dtype.name, p.dtype.name)}'",
                                 hint="probabilities must be a float tensor")
            probs = np.broadcast_to(p._data, T.broadcast_shape("bernoulli_", self.shape, p.shape))
            if probs.shape != self.shape:
                raise ShapeError(f"bernoulli_: p of shape {p.shape} does not broadcast to {self.shape}",
                                 hint="p must broadcast to the shape of the tensor being filled")
            if not np.all((probs >= 0) & (probs <= 1)):
                raise ValueDomainError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.",
                                       hint="every probability must lie in [0, 1]")
            probs = probs.transpose(T._memory_order(self._data)).ravel()
        else:
            probs = float(T.F.number_arg(p, "bernoulli_", "p"))
            if not 0.0 <= probs <= 1.0:
                raise ValueDomainError(f"bernoulli_ expects p to be in [0, 1], but got p={probs:g}",
                                       hint="p is the probability of a 1")
        return self._fill_random(None, "BernoulliBackward1" if isinstance(p, T.Tensor) else "BernoulliBackward2",
                                 lambda gen, count, contiguous: gen.bernoulli(probs, count), generator)

    def random_(self, from_: Any = None, to: Any = None, *, generator: Any = None) -> "Tensor":
        """`random_()`, `random_(to)` and `random_(from, to)`: integers drawn as randint draws them."""
        if from_ is None and to is None:
            return self._fill_random(None, "RandomBackward2",
                                     lambda gen, count, contiguous: gen.full_range(count, self.dtype), generator)
        low, high = (0, from_) if to is None else (from_, to)
        low, high = (int(T.F.number_arg(b, "random_", name)) for b, name in ((low, "from"), (high, "to")))
        if low >= high:
            raise ArgumentError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}",
                                hint="the upper bound is exclusive: random_(0, 10) draws from 0 to 9")
        dtype = self._data.dtype
        if dtype.kind == "f":
            digits = np.finfo(dtype).nmant + 1
            lowest, highest, text = -2 ** digits, 2 ** digits, f"[-(2^{digits}), 2^{digits}]"
        else:
            lowest, highest = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
            text = f"[{lowest}, {highest}]"
        if not (lowest <= low and high - 1 <= highest):
            raise ArgumentError(f"random_: from={low} and to - 1={high - 1} must lie in {text} for a {dtype} tensor",
                                hint="PyTorch draws other numbers outside that range; narrow the bounds or use a "
                                     "float64 tensor")
        return self._fill_random(None, "RandomBackward1" if to is None else "RandomBackward0",
                                 lambda gen, count, contiguous: gen.integers(count, low, high).astype(self.dtype),
                                 generator)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> "Tensor":
        lambd = T.F.number_arg(lambd, "exponential_", "lambd")
        if not float(lambd) > 0.0:
            raise ArgumentError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}",
                                hint="λ is the rate: the mean of the draws is 1/λ")
        self._continuous_fill("Exponential")
        return self._fill_random(None, "ExponentialBackward0",
                                 lambda gen, count, contiguous: gen.exponential(count, self.dtype, lambd), generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> "Tensor":
        median, sigma = T.F.number_arg(median, "cauchy_", "median"), T.F.number_arg(sigma, "cauchy_", "sigma")
        if not float(sigma) > 0.0:
            raise ArgumentError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}",
                                hint="σ is the half width at half maximum: a positive number")
        self._continuous_fill("Cauchy")
        return self._fill_random(None, "CauchyBackward0",
                                 lambda gen, count, contiguous: gen.cauchy(count, self.dtype, median, sigma), generator)

    def _continuous_fill(self, family: str) -> None:
        if self._data.dtype.kind != "f":
            raise DtypeError(f"{family} distribution is a continuous probability distribution. dtype must be a "
                             f"floating point but you specified {T.F._TORCH_NAMES.get(self.dtype.name, self.dtype.name)}",
                             hint="make the tensor float first, e.g. x.float()")

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> "Tensor":
        from gradcli.engine.creation import multinomial
        return multinomial(self, num_samples, replacement, generator=generator)

    def _fill_random(self, kernel: str | None, node: str, draw: Callable[[Any, int, bool], np.ndarray],
                     generator: Any = None) -> "Tensor":
        """Overwrite the values with `draw(generator, count, contiguous)`, walked in memory order as PyTorch does;
        the generator is the global one unless the program passed its own `torch.Generator()`.

        The fill is an in-place update like any other (inplace.py): it bumps the version of a value
        some node saved, and on the graph it is PyTorch's `node`, whose gradient is zero.
        """
        from gradcli.engine.creation import generator_arg
        gen = generator_arg(generator)
        if kernel is not None and self._data.dtype.kind != "f":
            name = T.F._TORCH_NAMES.get(self.dtype.name, self.dtype.name)
            raise DtypeError(f"\"{kernel}\" not implemented for '{name}'",
                             hint="random floats need a float tensor; make it float first, e.g. x.float()")

        order, contiguous = T._memory_order(self._data), self._data.flags.c_contiguous

        def drawn() -> np.ndarray:
            data = np.empty(self.shape, dtype=self.dtype)
            view = data.transpose(order)
            view[...] = draw(gen, view.size, contiguous).reshape(view.shape)
            return data
        return T.I.overwrite(self, drawn, node)

    # -- conversion -------------------------------------------------------------------
    def all(self) -> "Tensor":
        """Whether every element is nonzero: a bool tensor outside the graph, as in PyTorch."""
        return T._wrap(np.asarray(np.all(self._data)))

    def any(self) -> "Tensor":
        """Whether some element is nonzero: a bool tensor outside the graph, as in PyTorch."""
        return T._wrap(np.asarray(np.any(self._data)))

    def item(self) -> float | int | bool:
        if READS:
            READS[-1] = True
        if self._data.size != 1:
            raise ValueDomainError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar",
                                   hint="index one element first (x[0].item()) or reduce (x.sum().item())")
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        if READS:
            READS[-1] = True
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        if READS:
            READS[-1] = True
        if self.requires_grad and GradMode.enabled and not READS:  # PyTorch allows it with gradients off (a
            # Function's forward, which --check records with them on)
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
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise ValueDomainError("only integer tensors of a single element can be converted to an index",
                                   hint="index with an integer, e.g. int(i.item())")
        return int(self._data.reshape(()))

    def __repr__(self) -> str:
        from gradcli.engine.tensor_str import tensor_repr
        return tensor_repr(self)

    # -- tests and logic: masks, with no gradient (engine/logical.py) ----------------------------
    def __and__(self, other: Any) -> "Tensor":
        return T.L.bitwise("&", self, other)

    def __rand__(self, other: Any) -> "Tensor":
        return T.L.bitwise("&", other, self)

    def __or__(self, other: Any) -> "Tensor":
        return T.L.bitwise("|", self, other)

    def __ror__(self, other: Any) -> "Tensor":
        return T.L.bitwise("|", other, self)

    def __xor__(self, other: Any) -> "Tensor":
        return T.L.bitwise("^", self, other)

    def __rxor__(self, other: Any) -> "Tensor":
        return T.L.bitwise("^", other, self)

    def __invert__(self) -> "Tensor":
        return T.L.invert(self)

    def __mod__(self, other: Any) -> "Tensor":
        return T.F.remainder(self, other)

    def __rmod__(self, other: Any) -> "Tensor":
        return T.F.remainder(other, self)

    # -- memory layout (the functions with methods are declared in their families: engine/functions/) --
    def contiguous(self) -> "Tensor":
        """Itself when its memory is in row-major order, else a row-major copy (CloneBackward0), as in
        PyTorch: what `view` needs after a transpose."""
        if self._data.flags.c_contiguous:
            return self
        out = self.clone()  # clone keeps the memory order, as PyTorch's does
        out._data = np.ascontiguousarray(out._data)
        return out

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def expand_as(self, other: "Tensor") -> "Tensor":
        return T.F.expand(self, T.F._tensor_arg(other, "expand_as").shape)

    def type(self, dtype: Any = None) -> Any:
        """`x.type(torch.float)` casts as `.to` does (the tutorials count correct guesses so), and so do a
        legacy tensor type (`x.type(torch.LongTensor)`) and its name (`x.type('torch.DoubleTensor')`); `x.type()`
        names the tensor type as PyTorch does, e.g. 'torch.FloatTensor'."""
        from gradcli.engine.creation import TENSOR_TYPES, resolve_dtype
        if dtype is None:
            return _TENSOR_TYPES.get(self._data.dtype.name, "torch.Tensor")
        named = {text: name for name, text in _TENSOR_TYPES.items()}
        target = TENSOR_TYPES.get(dtype) if callable(dtype) and not isinstance(dtype, type) else \
            np.dtype(named[dtype]).type if isinstance(dtype, str) and dtype in named else resolve_dtype(dtype)
        if target is None:
            raise ArgumentError(f"invalid type: {dtype!r}", hint="e.g. x.type(torch.float32)")
        return self if self._data.dtype == target else T.F.to_dtype(self, target)

    # -- memory and PyTorch's other spellings, which the census of tutorial code found (engine/storage.py) ----
    name = None
    """`x.name`: a tensor has no name unless named-tensor APIs give it one, which gradcli does not have."""
    is_cuda = False

    def element_size(self) -> int:
        return T.ST.element_size(self)

    def data_ptr(self) -> int:
        return T.ST.data_ptr(self)

    def stride(self, dim: int | None = None) -> Any:
        return T.ST.stride(self, dim)

    def resize(self, *sizes: Any) -> "Tensor":
        return T.ST.resize(self, *sizes)

    def resize_(self, *sizes: Any) -> "Tensor":
        return T.ST.resize_(self, *sizes)

    def resize_as_(self, other: Any) -> "Tensor":
        return T.ST.resize_as_(self, other)

    def squeeze_(self, dim: Any = None) -> "Tensor":
        node = "SqueezeBackward3" if dim is None else "SqueezeBackward5" if isinstance(dim, (tuple, list)) else \
            "SqueezeBackward4"
        return T.ST.reshaped_(self, lambda t: t.squeeze(dim), "squeeze_", node)

    def unsqueeze_(self, dim: int) -> "Tensor":
        return T.ST.reshaped_(self, lambda t: t.unsqueeze(dim), "unsqueeze_", "UnsqueezeBackward1")

    def t_(self) -> "Tensor":
        return T.ST.reshaped_(self, lambda t: t.t(), "t_", "TBackward1")

    def transpose_(self, dim0: int, dim1: int) -> "Tensor":
        return T.ST.reshaped_(self, lambda t: t.transpose(dim0, dim1), "transpose_", "TransposeBackward1")

    swapdims_ = transpose_

    def swapaxes_(self, axis0: int, axis1: int) -> "Tensor":
        """NumPy's names, PyTorch's only keywords for it."""
        return self.transpose_(axis0, axis1)

    def type_as(self, other: Any) -> "Tensor":
        return self.type(T.F._tensor_arg(other, "type_as").dtype)

    def select(self, dim: int, index: int) -> "Tensor":
        """`x.select(1, 2)` is `x[:, 2]`, recorded as SelectBackward0."""
        from gradcli.engine.functions.arguments import _dim
        d = _dim(dim, self.ndim)
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ArgumentError(f"select(): argument 'index' (position 2) must be int, not {type(index).__name__}",
                                hint="x.select(dim, i) picks one index along dim")
        if not -self.shape[d] <= index < self.shape[d]:
            raise ArgumentError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at "
                                f"dimension {dim}", hint=f"dimension {dim} has {self.shape[d]} entries")
        return self[(slice(None),) * d + (int(index),)]


    @property
    def real(self) -> "Tensor":
        """A real tensor's real part is the tensor itself (gradcli has no complex dtype)."""
        return self
