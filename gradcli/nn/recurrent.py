"""`nn.RNN`, `nn.LSTM`, `nn.GRU` and their cells, composed of the differentiable ops (so `--check` proves
them like any other graph), with PyTorch's parameter names, shapes, initialisation order and texts.

A layer runs step by step over time: each step is the cell's arithmetic on the op table, and the
outputs are stacked (StackBackward0), joined across directions (CatBackward0) and turned batch-first
(TransposeBackward0) as PyTorch's outputs are named. Every parameter is drawn from U(±1/√hidden_size)
in registration order (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, then `_reverse`,
then the next layer), as `RNNBase.reset_parameters` does, so a seeded model holds PyTorch's numbers.
A packed batch (`nn/packing.py`) runs each step on the sequences still going, so the last hidden
state of each sequence is the one of its own last step.
"""
from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import functional as NF
from gradcli.nn import init as I
from gradcli.nn.modules import Module, _default_dtype, _empty
from gradcli.nn.packing import PackedSequence

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _size(value: Any, cls: str, what: str, least: int = 1) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ArgumentError(f"{what} should be of type int, got: {type(value).__name__}",
                            hint=f"e.g. nn.{cls}(10, 20): 10 input features, hidden state of 20")
    if value < least:
        raise ArgumentError(f"{what} must be greater than zero" if least else f"{what} must be non-negative",
                            hint=f"e.g. nn.{cls}(10, 20, num_layers=2)")
    return int(value)


def _dtype(dtype: Any) -> Any:
    from gradcli.engine.creation import resolve_dtype
    return resolve_dtype(dtype) or _default_dtype()


def _cell_step(mode: str, x_part: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor, b_hh: Tensor | None,
               w_hr: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """One step of the cell: `x_part` is x·W_ihᵀ + b_ih, already computed for the whole sequence."""
    hidden = NF.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = F.chunk(x_part + hidden, 4, 1)
        c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
        h = F.sigmoid(o) * F.tanh(c)
        return (h if w_hr is None else NF.linear(h, w_hr)), c
    if mode == "GRU":
        xr, xz, xn = F.chunk(x_part, 3, 1)
        hr, hz, hn = F.chunk(hidden, 3, 1)
        r, z = F.sigmoid(xr + hr), F.sigmoid(xz + hz)
        n = F.tanh(xn + r * hn)
        return n + z * (h - n), None
    pre = x_part + hidden
    return (F.tanh(pre) if mode == "RNN_TANH" else F.relu(pre)), None


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the stacked, optionally bidirectional layers and their parameters."""

    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = _size(input_size, name, "input_size", 0)
        self.hidden_size = _size(hidden_size, name, "hidden_size")
        self.num_layers = _size(num_layers, name, "num_layers")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ArgumentError("dropout should be a number in range [0, 1] representing the probability of an "
                                "element being zeroed", hint="e.g. dropout=0.2 between stacked layers")
        self.bias, self.batch_first, self.dropout = bool(bias), bool(batch_first), float(dropout)
        self.bidirectional = bool(bidirectional)
        self.proj_size = _size(proj_size, name, "proj_size", 0)
        if self.proj_size and self.mode != "LSTM":
            raise ArgumentError("proj_size argument is only supported for LSTM, not RNN or GRU",
                                hint="drop proj_size, or use nn.LSTM")
        if self.proj_size >= self.hidden_size:
            if self.proj_size:
                raise ArgumentError("proj_size has to be smaller than hidden_size",
                                    hint=f"hidden_size is {self.hidden_size}")
        dt = _dtype(dtype)
        gate_size = _GATES[self.mode] * self.hidden_size
        out = self.proj_size or self.hidden_size
        for layer in range(self.num_layers):
            for suffix in self._suffixes():
                width = self.input_size if layer == 0 else out * len(self._suffixes())
                names = {f"weight_ih_l{layer}{suffix}": (gate_size, width),
                         f"weight_hh_l{layer}{suffix}": (gate_size, out)}
                if self.bias:
                    names.update({f"bias_ih_l{layer}{suffix}": (gate_size,), f"bias_hh_l{layer}{suffix}": (gate_size,)})
                if self.proj_size:
                    names[f"weight_hr_l{layer}{suffix}"] = (self.proj_size, self.hidden_size)
                for key, shape in names.items():
                    self._parameters[key] = _empty(shape, dt)
        self.reset_parameters()

    def _suffixes(self) -> tuple[str, ...]:
        return ("", "_reverse") if self.bidirectional else ("",)

    def reset_parameters(self) -> None:
        """PyTorch's: every parameter from U(±1/√hidden_size), in registration order."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            I.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A cuDNN memory layout in PyTorch; nothing to do on gradcli's CPU."""

    @property
    def all_weights(self) -> list[list[Tensor]]:
        per = 4 if self.bias else 2
        params = list(self._parameters.values())
        per += 1 if self.proj_size else 0
        return [params[i:i + per] for i in range(0, len(params), per)]

    def _layer_parameters(self, layer: int, suffix: str) -> tuple[Any, ...]:
        p = self._parameters
        return (p[f"weight_ih_l{layer}{suffix}"], p[f"weight_hh_l{layer}{suffix}"], p.get(f"bias_ih_l{layer}{suffix}"),
                p.get(f"bias_hh_l{layer}{suffix}"), p.get(f"weight_hr_l{layer}{suffix}"))

    # -- forward ----------------------------------------------------------------------------------
    def forward(self, input: Any, hx: Any = None) -> Any:
        name = type(self).__name__
        packed = input if isinstance(input, PackedSequence) else None
        if packed is not None:
            x, sizes = packed.data, [int(b) for b in packed.batch_sizes._data]
            batch, batched = sizes[0] if sizes else 0, True
            self._check_input(x, 2)
        else:
            x = F._tensor_arg(input, name)
            if x.ndim not in (2, 3):
                raise ShapeError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D instead",
                                 hint="(sequence, batch, features), (batch, sequence, features) with batch_first=True,"
                                      " or (sequence, features) for one sequence")
            batched = x.ndim == 3
            self._check_input(x, x.ndim)
            if not batched:
                x = F.unsqueeze(x, 1)
            elif self.batch_first:
                x = F.transpose(x, 0, 1)
            batch, sizes = x.shape[1], [x.shape[1]] * x.shape[0]
        h0, c0 = self._initial(hx, x, batch, batched, packed)
        if packed is not None and packed.sorted_indices is not None:
            h0 = F.index_select(h0, 1, packed.sorted_indices)
            c0 = None if c0 is None else F.index_select(c0, 1, packed.sorted_indices)
        layer_input = x if packed is not None else F.reshape(x, (-1, x.shape[-1]))
        hs, cs = [], []
        for layer in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(self._suffixes()):
                k = layer * len(self._suffixes()) + d
                out, h, c = self._direction(layer_input, sizes, h0[k], None if c0 is None else c0[k],
                                            self._layer_parameters(layer, suffix), reverse=d == 1)
                outputs.append(out)
                hs.append(h)
                cs.append(c)
            layer_input = outputs[0] if len(outputs) == 1 else F.cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = NF.dropout(layer_input, self.dropout, True)
        h_n = F.stack(hs, 0)
        c_n = F.stack(cs, 0) if self.mode == "LSTM" else None
        if packed is not None:
            if packed.unsorted_indices is not None:
                h_n = F.index_select(h_n, 1, packed.unsorted_indices)
                c_n = None if c_n is None else F.index_select(c_n, 1, packed.unsorted_indices)
            output: Any = PackedSequence(layer_input, packed.batch_sizes, packed.sorted_indices,
                                         packed.unsorted_indices)
        else:
            output = F.reshape(layer_input, (x.shape[0], batch, -1))
            if not batched:
                output, h_n = F.squeeze(output, 1), F.squeeze(h_n, 1)
                c_n = None if c_n is None else F.squeeze(c_n, 1)
            elif self.batch_first:  # PyTorch turns an RNN's and a GRU's output in place (TransposeBackward1)
                output = apply(O.TRANSPOSE, output, dim0=0, dim1=1,
                               name="TransposeBackward0" if self.mode == "LSTM" else "TransposeBackward1")
        return (output, (h_n, c_n)) if self.mode == "LSTM" else (output, h_n)

    def _check_input(self, x: Tensor, ndim: int) -> None:
        if x.shape[-1] != self.input_size:
            raise ShapeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                             f"{x.shape[-1]}", hint=f"the layer was made with input_size={self.input_size}; the "
                                                     "features are the input's last dimension")
        if x.dtype != self._parameters["weight_ih_l0"].dtype:
            raise ArgumentError(f"input must have the type {self._parameters['weight_ih_l0'].dtype}, got type "
                                f"{x.dtype}", hint="convert the input (x.float()) or the layer (model.double())")

    def _initial(self, hx: Any, x: Tensor, batch: int, batched: bool, packed: Any) -> tuple[Tensor, Tensor | None]:
        """h0 (and c0) of shape (layers·directions, batch, size): zeros unless given, checked as PyTorch checks."""
        count = self.num_layers * len(self._suffixes())
        out = self.proj_size or self.hidden_size
        if hx is None:
            h0 = _wrap(np.zeros((count, batch, out), x.dtype))
            c0 = _wrap(np.zeros((count, batch, self.hidden_size), x.dtype)) if self.mode == "LSTM" else None
            return h0, c0
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2 or not all(isinstance(t, Tensor) for t in hx):
                raise ArgumentError("LSTM's initial state is a tuple (h_0, c_0) of tensors",
                                    hint="lstm(x, (h0, c0)), each of shape (num_layers * num_directions, batch, "
                                         "hidden_size)")
            h0, c0 = hx
            if not batched or packed is None:
                want = 3 if batched else 2
                if h0.ndim != want or c0.ndim != want:
                    raise ShapeError(f"For {'batched 3' if batched else 'unbatched 2'}-D input, hx and cx should "
                                     f"also be {want}-D but got ({h0.ndim}-D, {c0.ndim}-D) tensors",
                                     hint="(num_layers * num_directions, batch, hidden_size)" if batched else
                                     "(num_layers * num_directions, hidden_size)")
            if not batched:
                h0, c0 = F.unsqueeze(h0, 1), F.unsqueeze(c0, 1)
            _expect(h0, (count, batch, out), "Expected hidden[0] size", batched)
            _expect(c0, (count, batch, self.hidden_size), "Expected hidden[1] size", batched)
            return h0, c0
        h0 = F._tensor_arg(hx, type(self).__name__)
        if packed is None and h0.ndim != (3 if batched else 2):
            raise ShapeError(f"For {'batched 3' if batched else 'unbatched 2'}-D input, hx should also be "
                             f"{3 if batched else 2}-D but got {h0.ndim}-D tensor",
                             hint="(num_layers * num_directions, batch, hidden_size)" if batched else
                             "(num_layers * num_directions, hidden_size)")
        if not batched:
            h0 = F.unsqueeze(h0, 1)
        _expect(h0, (count, batch, out), "Expected hidden size", batched)
        return h0, None

    def _direction(self, x: Tensor, sizes: list[int], h: Tensor, c: Tensor | None, params: tuple[Any, ...],
                   reverse: bool) -> tuple[Tensor, Tensor, Tensor | None]:
        """One layer in one direction over the (time·batch, features) rows of `x`, step by step; `sizes` are
        the rows of each step (all the batch, or a packed batch's shrinking counts)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = params
        projected = NF.linear(x, w_ih, b_ih)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        steps = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
        outputs: list[Tensor | None] = [None] * len(sizes)
        whole = all(n == sizes[0] for n in sizes)
        for t in steps:
            n = sizes[t]
            part = projected[int(starts[t]):int(starts[t]) + n]
            h_in = h if whole else h[:n]
            c_in = c if whole or c is None else c[:n]
            h_new, c_new = _cell_step(self.mode, part, h_in, c_in, w_hh, b_hh, w_hr)
            outputs[t] = h_new
            h = h_new if whole else F.cat([h_new, h[n:]], 0)
            if c is not None:
                c = c_new if whole else F.cat([c_new, c[n:]], 0)
        return F.cat(outputs, 0), h, c

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _expect(t: Tensor, shape: tuple[int, ...], what: str, batched: bool) -> None:
    if tuple(t.shape) != shape:
        shown = list(shape) if batched else [shape[0], shape[2]]
        got = list(t.shape) if batched else [t.shape[0], t.shape[2]]
        raise ShapeError(f"{what} {tuple(shown)}, got {got}",
                         hint="initial states are (num_layers * num_directions, batch, hidden_size)")


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x·W_ihᵀ + b_ih + h·W_hhᵀ + b_hh) (or relu)."""

    def __init__(self, *args: Any, nonlinearity: str | None = None, **kwargs: Any) -> None:
        if len(args) > 3:  # PyTorch's positional order: input_size, hidden_size, num_layers, nonlinearity, bias...
            if nonlinearity is not None:
                raise ArgumentError("RNN() got multiple values for argument 'nonlinearity'")
            nonlinearity, args = args[3], args[:3] + args[4:]
        self.nonlinearity = "tanh" if nonlinearity is None else nonlinearity
        if self.nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.",
                                hint="nonlinearity='tanh' (the default) or 'relu'")
        object.__setattr__(self, "mode", "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU")
        if "proj_size" in kwargs:
            raise ArgumentError("RNN() got an unexpected keyword argument 'proj_size'", hint="proj_size is LSTM's")
        _forwarded(self, args, kwargs)
        super().__init__(*args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n))."""

    mode = "LSTM"


class GRU(RNNBase):
    """Gated recurrent unit (PyTorch's form: n = tanh(W_in·x + b_in + r∘(W_hn·h + b_hn)))."""

    mode = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ArgumentError("GRU() got an unexpected keyword argument 'proj_size'", hint="proj_size is LSTM's")
        _forwarded(self, args, kwargs)
        super().__init__(*args, **kwargs)


def _forwarded(layer: RNNBase, args: tuple, kwargs: dict) -> None:
    """RNN's and GRU's arguments go on to RNNBase, as PyTorch's do: ones that do not fit it are the user's mistake."""
    try:
        inspect.signature(RNNBase.__init__).bind(layer, *args, **kwargs)
    except TypeError as exc:
        raise ArgumentError(f"{type(layer).__name__}(): {exc}", hint=f"e.g. nn.{type(layer).__name__}(input_size=4, "
                                                                     "hidden_size=8)") from None


class RNNCellBase(Module):
    """One step of a recurrent layer: `weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`, drawn as the layers'."""

    mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = _size(input_size, name, "input_size", 0)
        self.hidden_size = _size(hidden_size, name, "hidden_size")
        self.bias = bool(bias)
        dt, gates = _dtype(dtype), _GATES[self.mode] * self.hidden_size
        self._parameters["weight_ih"] = _empty((gates, self.input_size), dt)
        self._parameters["weight_hh"] = _empty((gates, self.hidden_size), dt)
        self._parameters["bias_ih"] = _empty((gates,), dt) if bias else None
        self._parameters["bias_hh"] = _empty((gates,), dt) if bias else None
        self.reset_parameters()

    reset_parameters = RNNBase.reset_parameters

    def forward(self, input: Any, hx: Any = None) -> Any:
        name = type(self).__name__
        x = F._tensor_arg(input, name)
        if x.ndim not in (1, 2):
            raise ShapeError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead",
                             hint="(batch, input_size), or (input_size,) for one sample")
        if x.shape[-1] != self.input_size:
            raise ShapeError(f"input has inconsistent input_size: got {x.shape[-1]} expected {self.input_size}",
                             hint=f"the cell was made with input_size={self.input_size}")
        batched = x.ndim == 2
        x = x if batched else F.unsqueeze(x, 0)
        states = self._states(hx, x, batched)
        p = self._parameters
        h, c = _cell_step(self.mode, NF.linear(x, p["weight_ih"], p["bias_ih"]), states[0],
                          states[1] if self.mode == "LSTM" else None, p["weight_hh"], p["bias_hh"])
        if not batched:
            h = F.squeeze(h, 0)
            c = None if c is None else F.squeeze(c, 0)
        return (h, c) if self.mode == "LSTM" else h

    def _states(self, hx: Any, x: Tensor, batched: bool) -> list[Tensor]:
        count = 2 if self.mode == "LSTM" else 1
        if hx is None:
            return [_wrap(np.zeros((x.shape[0], self.hidden_size), x.dtype)) for _ in range(count)]
        given = list(hx) if self.mode == "LSTM" and isinstance(hx, (tuple, list)) else [hx]
        if len(given) != count or not all(isinstance(t, Tensor) for t in given):
            raise ArgumentError(f"{type(self).__name__}'s state is " + ("a tuple (h, c) of tensors" if count == 2
                                                                         else "a tensor h"),
                                hint="each of shape (batch, hidden_size)")
        states = []
        for k, t in enumerate(given):
            if t.ndim != (2 if batched else 1):
                raise ShapeError(f"{type(self).__name__}: Expected hidden to be {2 if batched else 1}D, got {t.ndim}D "
                                 "instead", hint="(batch, hidden_size), or (hidden_size,) for one sample")
            t = t if batched else F.unsqueeze(t, 0)
            if tuple(t.shape) != (x.shape[0], self.hidden_size):
                raise ShapeError(f"hidden{f'[{k}]' if count == 2 else ''} has inconsistent hidden_size: got "
                                 f"{t.shape[1]}, expected {self.hidden_size}" if t.shape[1] != self.hidden_size else
                                 f"Input batch size {x.shape[0]} doesn't match hidden{k if count == 2 else ''} batch "
                                 f"size {t.shape[0]}", hint="(batch, hidden_size)")
            states.append(t)
        return states

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ArgumentError(f"Unknown nonlinearity: {nonlinearity}", hint="nonlinearity='tanh' or 'relu'")
        self.nonlinearity = nonlinearity
        object.__setattr__(self, "mode", "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU")
        super().__init__(input_size, hidden_size, bias, device, dtype)


class LSTMCell(RNNCellBase):
    mode = "LSTM"


class GRUCell(RNNCellBase):
    mode = "GRU"


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell)}
"""The module classes of this file, by their `torch.nn` name."""

_COMMON = frozenset({"input_size", "hidden_size", "bias"})
MEMBERS: dict[type, frozenset] = {
    **dict.fromkeys((RNN, LSTM, GRU), _COMMON | {"num_layers", "batch_first", "dropout", "bidirectional", "proj_size",
                                                 "flatten_parameters", "all_weights", "nonlinearity"}),
    **dict.fromkeys((RNNCell, LSTMCell, GRUCell), _COMMON | {"nonlinearity"}),
}
"""The attributes a program may read on each, beside the module API (parameters read by name too)."""
