"""`torch.nn.utils.rnn`: batches of sequences of different lengths, padded or packed as PyTorch packs them.

A packed batch keeps, time step by time step, the rows of the sequences still going (`batch_sizes`),
longest sequence first; the recurrent layers (`nn/recurrent.py`) run each step on those rows only.
Packing and padding are indexing, joining and padding on the op table, so gradients flow through
them and `--check` covers them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.nn import functional as NF


class PackedSequence:
    """PyTorch's namedtuple of (data, batch_sizes, sorted_indices, unsorted_indices)."""

    program_attributes = frozenset({"data", "batch_sizes", "sorted_indices", "unsorted_indices"})

    def __init__(self, data: Tensor, batch_sizes: Tensor, sorted_indices: Tensor | None = None,
                 unsorted_indices: Tensor | None = None) -> None:
        self.data, self.batch_sizes = data, batch_sizes
        self.sorted_indices, self.unsorted_indices = sorted_indices, unsorted_indices

    def __iter__(self) -> Any:
        return iter((self.data, self.batch_sizes, self.sorted_indices, self.unsorted_indices))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        return tuple(self)[index]

    def __repr__(self) -> str:
        return (f"PackedSequence(data={self.data!r}, batch_sizes={self.batch_sizes!r}, "
                f"sorted_indices={self.sorted_indices!r}, unsorted_indices={self.unsorted_indices!r})")


def _indices(values: np.ndarray) -> Tensor:
    return _wrap(np.asarray(values, dtype=np.int64))


def _lengths(lengths: Any) -> np.ndarray:
    values = lengths._data if isinstance(lengths, Tensor) else np.asarray(lengths)
    if values.ndim != 1 or values.dtype.kind not in "iu" and not (values.dtype.kind == "f" and
                                                                 np.all(values == np.round(values))):
        raise ArgumentError("lengths must be a 1-D list or tensor of integers",
                            hint="one length per sequence, e.g. torch.tensor([3, 2, 1])")
    return values.astype(np.int64)


def pack_padded_sequence(input: Any, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    x = F._tensor_arg(input, "pack_padded_sequence")
    sizes = _lengths(lengths)
    if x.ndim < 2:
        raise ShapeError("pack_padded_sequence: the input needs a time and a batch dimension",
                         hint="(time, batch, *), or (batch, time, *) with batch_first=True")
    if batch_first:
        x = F.transpose(x, 0, 1)
    if len(sizes) != x.shape[1]:
        raise ShapeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} (batch_size="
                         f"{x.shape[1]})", hint="give one length per sequence of the batch")
    if len(sizes) and sizes.min() <= 0:
        raise ValueDomainError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                               "that is <= 0", hint="drop empty sequences from the batch")
    if len(sizes) and sizes.max() > x.shape[0]:
        raise ShapeError(f"a length of {int(sizes.max())} is longer than the padded input's {x.shape[0]} steps",
                         hint="the lengths count the real steps of each padded sequence")
    sorted_indices = unsorted_indices = None
    if enforce_sorted:
        if np.any(np.diff(sizes) > 0):
            raise ValueDomainError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                                   "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                                   "to sidestep this requirement if you do not need ONNX exportability.",
                                   hint="pass enforce_sorted=False, or sort the batch by length")
    else:
        order = np.argsort(-sizes, kind="stable")
        sorted_indices, unsorted_indices = _indices(order), _indices(np.argsort(order, kind="stable"))
        x, sizes = F.index_select(x, 1, sorted_indices), sizes[order]
    batch_sizes = np.array([int(np.sum(sizes > t)) for t in range(int(sizes.max()) if len(sizes) else 0)])
    data = F.cat([x[t, :int(n)] for t, n in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _indices(batch_sizes), sorted_indices, unsorted_indices)


def pad_packed_sequence(sequence: Any, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Any = None) -> tuple[Tensor, Tensor]:
    if not isinstance(sequence, PackedSequence):
        raise ArgumentError("pad_packed_sequence takes a PackedSequence",
                            hint="pack first: pack_padded_sequence(x, lengths)")
    sizes = [int(n) for n in sequence.batch_sizes._data]
    steps = len(sizes) if total_length is None else F.number_arg(total_length, "pad_packed_sequence",
                                                                  "total_length", integer=True)
    if steps < len(sizes):
        raise ValueDomainError(f"Expected total_length to be at least the length of the longest sequence in input, "
                               f"but got total_length={steps} and max sequence length being {len(sizes)}",
                               hint="total_length pads to at least the longest sequence")
    data, batch = sequence.data, sizes[0] if sizes else 0
    rows, start = [], 0
    value = float(F.number_arg(padding_value, "pad_packed_sequence", "padding_value"))
    widths = (0, 0) * (data.ndim - 1)
    for t in range(int(steps)):
        n = sizes[t] if t < len(sizes) else 0
        rows.append(NF.pad(data[start:start + n], widths + (0, batch - n), value=value))
        start += n
    padded = F.transpose(F.stack(rows, 0), 0, 1) if batch_first else F.stack(rows, 0)
    lengths = np.array([sum(1 for n in sizes if n > i) for i in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = F.index_select(padded, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices._data]
    return padded, _indices(lengths)


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    items = list(sequences) if isinstance(sequences, (list, tuple)) else None
    if not items or not all(isinstance(s, Tensor) and s.ndim >= 1 for s in items):
        raise ArgumentError("pad_sequence takes a non-empty list of tensors of shape (length, *)",
                            hint="e.g. pad_sequence([torch.ones(3, 2), torch.ones(1, 2)])")
    if padding_side not in ("left", "right"):
        raise ArgumentError(f"Expected padding_side to be one of left or right, but got {padding_side}.",
                            hint="padding_side='right' (the default) or 'left'")
    trailing = items[0].shape[1:]
    if any(s.shape[1:] != trailing for s in items):
        raise ShapeError("pad_sequence: every sequence must have the same trailing dimensions",
                         hint=f"the first has {tuple(trailing)} after its length")
    longest = max(s.shape[0] for s in items)
    value = float(F.number_arg(padding_value, "pad_sequence", "padding_value"))
    widths = (0, 0) * len(trailing)
    padded = [NF.pad(s, widths + ((0, longest - s.shape[0]) if padding_side == "right" else
                                  (longest - s.shape[0], 0)), value=value) for s in items]
    return F.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    lengths = [s.shape[0] for s in sequences] if isinstance(sequences, (list, tuple)) else []
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


NAMES = {"PackedSequence": PackedSequence, "pack_padded_sequence": pack_padded_sequence,
         "pad_packed_sequence": pad_packed_sequence, "pad_sequence": pad_sequence, "pack_sequence": pack_sequence}
"""`torch.nn.utils.rnn`'s members."""
