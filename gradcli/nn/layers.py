"""The layers of image and sequence models: convolutions, pooling, batch norm, channel dropout,
embeddings, unflatten and the module containers, on `nn.Module` and `nn/conv.py`.

Initialisation draws what PyTorch draws, in its order (a convolution's weight by kaiming_uniform_
with a=√5, then its bias from U(±1/√fan_in); an embedding from N(0, 1)), so the same seed gives the
same numbers; each `extra_repr` is PyTorch's, so `print(model)` reads the same.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import kinds
from gradcli.nn import init as I
from gradcli.nn import conv as C
from gradcli.nn import functional as NF
from gradcli.nn.modules import (Linear, Module, Parameter, UninitializedParameter, _default_dtype, _empty, _module,
                                weight_of)
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.engine.tensor_str import PARAMETERS
from gradcli.errors import ArgumentError, ShapeError


def _count(value: Any, cls: str, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise ArgumentError(f"{cls}(): {what} must be a positive integer, got {value!r}",
                            hint=f"e.g. nn.{cls}(1, 6, 5): 1 input channel, 6 output channels, 5x5 kernel"
                            if "Conv" in cls else f"{what} counts channels or entries")
    return int(value)


class _ConvNd(Module):
    nd = 2
    functional = staticmethod(C.conv2d)
    _shown_unless: tuple[tuple[str, int], ...] = (("padding", 0), ("dilation", 1))
    """The per-dimension options `extra_repr` prints, in PyTorch's order, when they differ from the default;
    a transposed convolution adds its output_padding, so one `extra_repr` serves both."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_channels = _count(in_channels, type(self).__name__, "in_channels")
        dt = self._configure(out_channels, kernel_size, stride, padding, dilation, groups, padding_mode, dtype)
        self._parameters["weight"] = _empty(self._weight_shape(), dt)
        self._parameters["bias"] = _empty((self.out_channels,), dt) if bias else None
        self.reset_parameters()

    def _configure(self, out_channels: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any, groups: int,
                   padding_mode: str, dtype: Any) -> Any:
        """Check and keep everything but the input channels (a lazy layer learns those later); the dtype."""
        name = type(self).__name__
        self.out_channels = _count(out_channels, name, "out_channels")
        self.groups = _count(groups, name, "groups")
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ArgumentError(f"{'in' if self.in_channels % self.groups else 'out'}_channels must be divisible by "
                                f"groups", hint="groups splits the channels into equal parts")
        if padding_mode != "zeros":
            raise ArgumentError(f"{name}(): padding_mode='{padding_mode}' is not supported by gradcli",
                                hint="padding_mode='zeros' (the default)")
        self.kernel_size = C.ntuple(kernel_size, self.nd, name, "kernel_size")
        self.stride = C.ntuple(stride, self.nd, name, "stride")
        self.dilation = C.ntuple(dilation, self.nd, name, "dilation")
        self.padding = padding if isinstance(padding, str) else C.ntuple(padding, self.nd, name, "padding")
        if padding == "same" and any(s != 1 for s in self.stride):
            raise ArgumentError("padding='same' is not supported for strided convolutions",
                                hint="use stride=1 with padding='same'")
        self.padding_mode = padding_mode
        from gradcli.engine.creation import resolve_dtype
        return resolve_dtype(dtype) or _default_dtype()

    def _weight_shape(self) -> tuple[int, ...]:
        return (self.out_channels, self.in_channels // self.groups) + self.kernel_size

    def reset_parameters(self) -> None:
        I.kaiming_uniform_(self._parameters["weight"], a=math.sqrt(5))
        if self._parameters["bias"] is not None:
            fan_in = self.in_channels // self.groups * math.prod(self.kernel_size)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            I.uniform_(self._parameters["bias"], -bound, bound)

    def forward(self, input: Any) -> Tensor:
        return type(self).functional(input, weight_of(self), self._parameters["bias"], self.stride,
                                     self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        for name, default in self._shown_unless:
            if getattr(self, name) != (default,) * self.nd:
                s += f", {name}={getattr(self, name)}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self._parameters["bias"] is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    nd = 1
    functional = staticmethod(C.conv1d)


class Conv2d(_ConvNd):
    nd = 2
    functional = staticmethod(C.conv2d)


def _materialize(module: Module, shapes: dict[str, tuple[int, ...]], becomes: type) -> None:
    """The first call: each parameter gets its shape in place (an optimizer made earlier holds the same
    tensors), the full layer's initialisation draws its values, and the module becomes that layer, as
    PyTorch's `cls_to_become` makes it (so print(model) shows Linear(...) from then on)."""
    from gradcli.engine.tensor_str import UNINITIALIZED
    for name, shape in shapes.items():
        p = module._parameters[name]
        if p is not None:
            p._data = np.empty(shape, p.dtype)
            UNINITIALIZED.discard(p)
    module.__class__ = becomes
    module.reset_parameters()


class LazyLinear(Linear):
    """nn.Linear whose in_features is the last size of the first input it sees."""

    def __init__(self, out_features: int, bias: bool = True, dtype: Any = None) -> None:
        Module.__init__(self)
        if not isinstance(out_features, (int, np.integer)) or isinstance(out_features, bool) or out_features < 0:
            raise ArgumentError(f"LazyLinear(): out_features must be a non-negative integer, got {out_features!r}",
                                hint="e.g. nn.LazyLinear(10): 10 outputs, the inputs counted at the first call")
        from gradcli.engine.creation import resolve_dtype
        dt = resolve_dtype(dtype) or _default_dtype()
        self.in_features, self.out_features = 0, int(out_features)
        self._parameters["weight"] = UninitializedParameter(dtype=dt)
        self._parameters["bias"] = UninitializedParameter(dtype=dt) if bias else None

    def forward(self, input: Any) -> Tensor:
        x = F._tensor_arg(input, "LazyLinear")
        if x.ndim == 0:
            raise ShapeError("LazyLinear: the input needs at least one dimension (its last size is in_features)",
                             hint="pass a batch, e.g. torch.rand(2, 20)")
        self.in_features = x.shape[-1]
        _materialize(self, {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)}, Linear)
        return Linear.forward(self, x)


class _LazyConvNd(_ConvNd):
    """A convolution whose in_channels is the channel size of the first input it sees."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_channels = 0
        dt = self._configure(out_channels, kernel_size, stride, padding, dilation, groups, padding_mode, dtype)
        self._parameters["weight"] = UninitializedParameter(dtype=dt)
        self._parameters["bias"] = UninitializedParameter(dtype=dt) if bias else None

    def forward(self, input: Any) -> Tensor:
        x = F._tensor_arg(input, type(self).__name__)
        if x.ndim not in (self.nd + 1, self.nd + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self.nd + 1}D (unbatched) or {self.nd + 2}D "
                             f"(batched) input, got {x.ndim}D", hint="(batch, channels, ...) or (channels, ...)")
        channels = x.shape[0] if x.ndim == self.nd + 1 else x.shape[1]
        if channels % self.groups:
            raise ShapeError("in_channels must be divisible by groups",
                             hint=f"the input has {channels} channels and the layer {self.groups} groups")
        self.in_channels = channels
        _materialize(self, {"weight": self._weight_shape(), "bias": (self.out_channels,)}, self.becomes)
        return _ConvNd.forward(self, x)


class LazyConv1d(_LazyConvNd):
    nd, becomes = 1, Conv1d


class LazyConv2d(_LazyConvNd):
    nd, becomes = 2, Conv2d


class MaxPool2d(Module):
    functional = staticmethod(C.max_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.padding, self.dilation = kernel_size, padding, dilation
        self.stride = kernel_size if stride is None else stride
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Any) -> Tensor:
        return C.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, " \
               f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class MaxPool1d(MaxPool2d):
    functional = staticmethod(C.max_pool1d)

    def forward(self, input: Any) -> Tensor:
        return C.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class MaxUnpool2d(Module):
    """Max pooling undone: each value back where its index says, zeros elsewhere."""
    nd = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = C.ntuple(kernel_size, self.nd, name, "kernel_size")
        self.stride = self.kernel_size if stride is None else C.ntuple(stride, self.nd, name, "stride")
        self.padding = C.ntuple(padding, self.nd, name, "padding")

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Tensor:
        unpool = C.max_unpool2d if self.nd == 2 else C.max_unpool1d
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    nd = 1


class AvgPool2d(Module):
    functional = staticmethod(C.avg_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Any = None) -> None:
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = kernel_size if stride is None else stride
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input: Any) -> Tensor:
        return C.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    functional = staticmethod(C.adaptive_avg_pool2d)

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Tensor:
        return C.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    functional = staticmethod(C.adaptive_avg_pool1d)

    def forward(self, input: Any) -> Tensor:
        return C.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    functional = staticmethod(C.adaptive_max_pool2d)

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Any) -> Tensor:
        return C.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _BatchNorm(Module):
    functional = staticmethod(C.batch_norm)
    dims: tuple[int, ...] = (2, 3)

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float = 0.1, affine: bool = True,
                 track_running_stats: bool = True, bias: bool = True) -> None:
        super().__init__()
        from gradcli.engine.creation import ones, zeros
        self.num_features = _count(num_features, type(self).__name__, "num_features")
        self.eps, self.momentum, self.affine = eps, momentum, affine
        self.track_running_stats = track_running_stats
        if affine:
            self._parameters["weight"] = Parameter(ones(self.num_features))
            self._parameters["bias"] = Parameter(zeros(self.num_features)) if bias else None
        self.bias_enabled = bias and affine
        self.register_buffer("running_mean", zeros(self.num_features) if track_running_stats else None)
        self.register_buffer("running_var", ones(self.num_features) if track_running_stats else None)
        self.register_buffer("num_batches_tracked",
                             _wrap(np.array(0, dtype=np.int64)) if track_running_stats else None)

    def forward(self, input: Any) -> Tensor:
        x = F._tensor_arg(input, type(self).__name__)
        if x.ndim not in self.dims:
            raise ShapeError(f"expected {' or '.join(f'{d}D' for d in self.dims)} input (got {x.ndim}D input)",
                             hint=f"{type(self).__name__} takes (batch, {self.num_features} channels, ...)")
        if x.shape[1] != self.num_features:
            raise ShapeError(f"running_mean should contain {x.shape[1]} elements not {self.num_features}",
                             hint=f"the input's dimension 1 has {x.shape[1]} channels; the layer was made for "
                                  f"{self.num_features}")
        use_batch = self.training or not self.track_running_stats
        momentum = self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if momentum is None:  # PyTorch's cumulative moving average
                momentum = 1.0 / int(self.num_batches_tracked._data)
        return C.batch_norm(x, self.running_mean if self.track_running_stats else None,
                            self.running_var if self.track_running_stats else None,
                            self._parameters.get("weight"), self._parameters.get("bias"), use_batch,
                            0.0 if momentum is None else momentum, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, " \
               f"bias={self.bias_enabled}, track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    dims = (4,)


class Dropout2d(Module):
    functional = staticmethod(C.dropout2d)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        from gradcli.nn.functional import _probability
        self.p, self.inplace = _probability(p, "Dropout2d"), inplace

    def forward(self, input: Any) -> Tensor:
        return C.dropout2d(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    functional = staticmethod(C.embedding)

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Any = None, max_norm: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if padding_idx is not None or max_norm is not None:
            raise ArgumentError("Embedding(): padding_idx and max_norm are not supported by gradcli",
                                hint="nn.Embedding(num_embeddings, embedding_dim)")
        self.num_embeddings = _count(num_embeddings, "Embedding", "num_embeddings")
        self.embedding_dim = _count(embedding_dim, "Embedding", "embedding_dim")
        from gradcli.engine.creation import resolve_dtype
        self._parameters["weight"] = _empty((self.num_embeddings, self.embedding_dim),
                                            resolve_dtype(dtype) or _default_dtype())
        I.normal_(self._parameters["weight"])

    def forward(self, input: Any) -> Tensor:
        return C.embedding(input, weight_of(self))

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: Any = None,
                        max_norm: Any = None) -> "Embedding":
        """An embedding whose weight is a copy of `embeddings` (rows × dim), frozen unless freeze=False; no
        random draw, as PyTorch's (which hands the weight to the constructor) makes none."""
        weights = F._tensor_arg(embeddings, "from_pretrained")
        if weights.ndim != 2:
            raise ShapeError("Embeddings parameter is expected to be 2-dimensional",
                             hint="from_pretrained takes a (num_embeddings, embedding_dim) matrix")
        if padding_idx is not None or max_norm is not None:
            raise ArgumentError("Embedding(): padding_idx and max_norm are not supported by gradcli",
                                hint="nn.Embedding.from_pretrained(weights, freeze=...)")
        module = cls.__new__(cls)
        Module.__init__(module)
        module.num_embeddings, module.embedding_dim = weights.shape
        module._parameters["weight"] = Parameter(_wrap(weights._data.copy()), requires_grad=not freeze)
        return module


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(F.ints_arg(unflattened_size, "Unflatten", "unflattened_size"))

    def forward(self, input: Any) -> Tensor:
        return F.unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class _Container(Module):
    """A module whose entries live in one of its registries, so they are the model's."""

    _registry = "_modules"
    """The registry: `_modules` or `_parameters`."""

    def _entries(self) -> dict[str, Any]:
        return getattr(self, self._registry)

    def __len__(self) -> int:
        return len(self._entries())


class _Positional(_Container):
    """What ModuleList and ParameterList share: entries by position ("0", "1", ...); each subclass's
    `append` checks and registers one entry."""

    _kind = ""
    """What an entry is, for messages: "modules", "parameters"."""
    _takes = ""
    """What the constructor takes an iterable of: "modules", "tensors"."""
    _taken = ""
    """An example of the iterable, for the constructor error's hint."""
    _used = ""
    """How a program uses the entries, for the no-forward error's hint."""

    def __init__(self, entries: Any = None) -> None:
        super().__init__()
        if entries is not None:
            self.extend(entries)

    def extend(self, entries: Any) -> Any:
        try:
            items = iter(entries)
        except TypeError:
            raise ArgumentError(f"{type(self).__name__} takes an iterable of {self._takes}, not "
                                f"{type(entries).__name__}", hint=f"e.g. {self._taken}") from None
        for entry in items:
            self.append(entry)
        return self

    def __getitem__(self, index: Any) -> Any:
        items = list(self._entries().values())
        if isinstance(index, slice):
            return type(self)(items[index])
        if not isinstance(index, (int, np.integer)) or not -len(items) <= index < len(items):
            raise ArgumentError(f"index {index} is out of range",
                                hint=f"this {type(self).__name__} has {len(items)} {self._kind}")
        return items[index]

    def __iter__(self) -> Any:
        return iter(list(self._entries().values()))

    def forward(self, *inputs: Any) -> Any:
        raise ArgumentError(f"{type(self).__name__} has no forward: use its {self._kind} in your own forward",
                            hint=self._used)


class _Named(_Container):
    """What ModuleDict and ParameterDict share: entries by name, in insertion order."""

    def __getitem__(self, key: str) -> Any:
        if key not in self._entries():
            raise ArgumentError(f"{type(self).__name__} has no key {key!r}", hint=f"keys: {', '.join(self._entries())}")
        return self._entries()[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._entries()

    def __iter__(self) -> Any:
        return iter(list(self._entries()))

    def keys(self) -> list[str]:
        return list(self._entries())

    def values(self) -> list[Any]:
        return list(self._entries().values())

    def items(self) -> list[tuple[str, Any]]:
        return list(self._entries().items())


class ModuleList(_Positional, kinds.ModuleList):
    """Sub-modules by position, registered so their parameters are the model's."""

    _kind = _takes = "modules"
    _taken = "nn.ModuleList([nn.Linear(2, 4), nn.ReLU()])"
    _used = "for layer in self.layers: x = layer(x)"

    def append(self, module: Any) -> "ModuleList":
        if not isinstance(module, Module):
            raise ArgumentError(f"ModuleList.append() takes a module, not {type(module).__name__}",
                                hint="e.g. layers.append(nn.Linear(4, 4))")
        self._modules[str(len(self._modules))] = module
        return self

    def __repr__(self) -> str:
        """PyTorch's: a run of modules that print alike is one line, `(0-2): 3 x Linear(...)`."""
        items = [(key, repr(m).replace("\n", "\n  ")) for key, m in self._modules.items()]
        lines, start = [], 0
        while start < len(items):
            end = start
            while end + 1 < len(items) and items[end + 1][1] == items[start][1]:
                end += 1
            key = items[start][0] if end == start else f"{items[start][0]}-{items[end][0]}"
            lines.append(f"({key}): " + ("" if end == start else f"{end - start + 1} x ") + items[start][1])
            start = end + 1
        name = type(self).__name__
        return f"{name}(\n  " + "\n  ".join(lines) + "\n)" if lines else f"{name}()"


class ModuleDict(_Named, kinds.ModuleDict):
    """Sub-modules by name, in insertion order."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        try:
            pairs = dict(modules or {})
        except (TypeError, ValueError):
            raise ArgumentError(f"ModuleDict takes a dict of modules (or name-module pairs), not "
                                f"{type(modules).__name__}", hint="e.g. nn.ModuleDict({'fc': nn.Linear(2, 2)})") from None
        for key, m in pairs.items():
            self[key] = m

    def __setitem__(self, key: str, module: Any) -> None:
        if not isinstance(key, str) or not isinstance(module, Module):
            raise ArgumentError("ModuleDict maps string keys to modules", hint="e.g. nn.ModuleDict({'fc': "
                                                                              "nn.Linear(2, 2)})")
        self._modules[key] = module


def _parameter(value: Any, where: str) -> Tensor:
    """What a parameter container holds: an nn.Parameter (a plain tensor is made one, as PyTorch does)."""
    if not isinstance(value, Tensor):
        raise ArgumentError(f"{where} takes tensors or nn.Parameter, not {type(value).__name__}",
                            hint="e.g. nn.ParameterList([nn.Parameter(torch.randn(3))])")
    return value if PARAMETERS.has(value) else Parameter(value)


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
                 "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                 "bool": "BoolTensor"}
"""`torch.typename` of a CPU tensor, which ParameterDict's print uses (ParameterList's writes the dtype)."""


def _parameter_lines(pairs: Any, typename: bool) -> str:
    """PyTorch's extra_repr of a parameter container: one `(key): Parameter containing: [...]` line each."""
    return "\n".join(f"  ({key}): Parameter containing: ["
                     f"{'torch.' + _TENSOR_TYPES.get(str(p.dtype), str(p.dtype)) if typename else f'torch.{p.dtype}'}"
                     f" of size {'x'.join(str(n) for n in p.shape)}]" for key, p in pairs)


class ParameterList(_Positional, kinds.ParameterList):
    """Parameters by position, registered so they are the model's (`for w in self.ws`)."""

    _registry = "_parameters"
    _kind = "parameters"
    _takes = "tensors"
    _taken = "nn.ParameterList([nn.Parameter(torch.ones(2))])"
    _used = "for w in self.weights: x = x * w"

    def append(self, value: Any) -> "ParameterList":
        self.register_parameter(str(len(self._parameters)), _parameter(value, "ParameterList.append()"))
        return self

    def extra_repr(self) -> str:
        return _parameter_lines(enumerate(self), typename=False)


class ParameterDict(_Named, kinds.ParameterDict):
    """Parameters by name, in insertion order."""

    _registry = "_parameters"

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def update(self, parameters: Any) -> None:
        try:
            pairs = dict(parameters)
        except (TypeError, ValueError):
            raise ArgumentError(f"ParameterDict takes a dict of tensors (or name-tensor pairs), not "
                                f"{type(parameters).__name__}", hint="e.g. nn.ParameterDict({'w': torch.ones(2)})") \
                from None
        for key, value in pairs.items():
            self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise ArgumentError("ParameterDict maps string keys to parameters", hint="e.g. pd['w'] = torch.ones(2)")
        self.register_parameter(key, _parameter(value, "ParameterDict"))

    def forward(self, *inputs: Any) -> Any:
        raise ArgumentError("ParameterDict has no forward: use its parameters in your own forward",
                            hint="x = x * self.params['w']")

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items(), typename=True)


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (
    Conv1d, Conv2d, LazyConv1d, LazyConv2d, LazyLinear, MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d, AvgPool2d,
    AdaptiveAvgPool2d, AdaptiveAvgPool1d, AdaptiveMaxPool2d, BatchNorm1d, BatchNorm2d, Dropout2d, Embedding, Unflatten, ModuleList, ModuleDict,
    ParameterList, ParameterDict)}
"""The module classes of this file, by their `torch.nn` name."""

MEMBERS: dict[type, frozenset] = {
    **dict.fromkeys((Conv1d, Conv2d, LazyConv1d, LazyConv2d), frozenset({
        "weight", "bias", "in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups"})),
    **dict.fromkeys((MaxPool1d, MaxPool2d, AvgPool2d, MaxUnpool1d, MaxUnpool2d),
                    frozenset({"kernel_size", "stride", "padding"})),
    **dict.fromkeys((AdaptiveAvgPool2d, AdaptiveAvgPool1d, AdaptiveMaxPool2d), frozenset({"output_size"})),
    **dict.fromkeys((BatchNorm1d, BatchNorm2d), frozenset({"weight", "bias", "running_mean", "running_var",
                                                            "num_batches_tracked", "num_features", "eps",
                                                            "momentum"})),
    Dropout2d: frozenset({"p"}), Embedding: frozenset({"weight", "num_embeddings", "embedding_dim"}),
    Unflatten: frozenset({"dim", "unflattened_size"}), ModuleList: frozenset({"append", "extend"}),
    ModuleDict: frozenset({"keys", "values", "items"}), ParameterList: frozenset({"append", "extend"}),
    ParameterDict: frozenset({"keys", "values", "items", "update"}),
    LazyLinear: frozenset({"weight", "bias", "in_features", "out_features"}),
}
"""The attributes a program may read on each, beside the module API."""
