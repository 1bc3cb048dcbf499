"""`torch.utils.data`: datasets, the DataLoader, `random_split` and `Subset`, with PyTorch's order.

A shuffled epoch comes in PyTorch's order only if the same draws are made: each pass over a
DataLoader first draws its base seed (one `random_()` of an int64) from the loader's generator
or the global one, whether it shuffles or not; a shuffling loader without a generator of its own
then draws a second int64 from the global generator, seeds a fresh generator with it and takes
`randperm(n)` from that; with `generator=g` the permutation comes from g itself (and g gives one
more when the pass ends, as PyTorch's sampler draws it). So the global generator moves on at every
epoch, as in PyTorch, and later `torch.rand` calls agree too.
"""
from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import kinds
from gradcli.engine.creation import generator_arg
from gradcli.engine.random import Generator
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError


def _int64_seed(generator: Generator) -> int:
    """`torch.empty((), dtype=torch.int64).random_(generator=g).item()`."""
    return int(generator.full_range(1, np.dtype(np.int64))[0])


class Dataset(kinds.Dataset):
    """The base of map-style datasets: `dataset[i]` and `len(dataset)`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class IterableDataset(Dataset, kinds.IterableDataset):
    """A dataset read by iterating over it (a DataLoader never shuffles one)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class TensorDataset(Dataset):
    def __init__(self, *tensors: Any) -> None:
        ts = [F._tensor_arg(t, "TensorDataset") for t in tensors]
        if any(t.ndim == 0 for t in ts) or len({t.shape[0] for t in ts}) > 1:
            raise ShapeError("Size mismatch between tensors",
                             hint="every tensor needs the same first dimension (one row per sample): "
                                  + ", ".join(str(tuple(t.shape)) for t in ts))
        self.tensors = tuple(ts)

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0] if self.tensors else 0


class Subset(Dataset):
    def __init__(self, dataset: Any, indices: Any) -> None:
        self.dataset = dataset
        self.indices = [int(i) for i in (indices.tolist() if isinstance(indices, Tensor) else list(indices))]

    def __getitem__(self, index: int) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Any, generator: Any = None) -> list[Subset]:
    """PyTorch's split: fractions become counts (the remainder dealt round-robin), then one randperm."""
    lengths = list(lengths)
    n = len(dataset)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and not all(
            isinstance(v, int) for v in lengths):
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueDomainError("Sum of input lengths does not equal the length of the input dataset!",
                               hint=f"the dataset has {n} samples; the lengths add up to {sum(lengths)}")
    order = generator_arg(generator, "random_split").permutation(n).tolist()
    splits, start = [], 0
    for length in lengths:
        splits.append(Subset(dataset, order[start:start + length]))
        start += length
    return splits


def default_collate(batch: list) -> Any:
    """Samples to a batch as PyTorch stacks them: tensors stacked, numbers to a tensor, tuples and
    dicts collated field by field, strings kept as a list."""
    first = batch[0]
    if isinstance(first, Tensor):
        return F.stack(batch)
    if isinstance(first, bool) or not isinstance(first, (int, float, np.integer, np.floating)):
        if isinstance(first, dict):
            return {key: default_collate([sample[key] for sample in batch]) for key in first}
        if isinstance(first, (tuple, list)):
            if len({len(sample) for sample in batch}) > 1:
                raise ShapeError("each element in list of batch should be of equal size",
                                 hint="every sample must have the same number of fields")
            fields = [default_collate(list(column)) for column in zip(*batch)]
            return tuple(fields) if isinstance(first, tuple) else fields
        if isinstance(first, str):
            return list(batch)
        raise ArgumentError(f"default_collate: batch must contain tensors, numbers, dicts or lists; found "
                            f"{type(first).__name__}", hint="return tensors or numbers from __getitem__")
    kind = np.int64 if isinstance(first, (int, np.integer)) else np.float64
    return _wrap(np.array(batch, dtype=kind))


class Sampler:
    """gradcli's samplers (`torch.utils.data.distributed.DistributedSampler`...): the indices of one pass, in
    order, which `DataLoader(sampler=...)` batches."""

    def indices(self) -> list[int]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices())


class RandomSampler(Sampler):
    """PyTorch's RandomSampler without replacement: a permutation from `generator`, or from a generator seeded
    by one int64 draw of the global one (so the global generator moves on as PyTorch's does). With a
    generator, one more permutation is drawn when the pass runs out, as PyTorch's sampler draws it."""

    program_attributes = frozenset({"data_source", "replacement", "num_samples", "generator"})

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: Any = None,
                 generator: Any = None) -> None:
        if replacement or num_samples is not None:
            raise ArgumentError("RandomSampler(): replacement= and num_samples= are not supported by gradcli",
                                hint="RandomSampler(dataset) draws a permutation; DataLoader(shuffle=True) does too")
        self.data_source, self.replacement, self.num_samples = data_source, False, len(data_source)
        self.generator = None if generator is None else generator_arg(generator, "RandomSampler")

    def indices(self) -> list[int]:
        n = len(self.data_source)
        if self.generator is None:
            return Generator(_int64_seed(generator_arg(None))).permutation(n).tolist()
        order = self.generator.permutation(n).tolist()
        self.generator.permutation(n)
        return order

    def __len__(self) -> int:
        return self.num_samples


class DataLoader(kinds.DataLoader):
    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False, sampler: Any = None,
                 batch_sampler: Any = None, num_workers: int = 0, collate_fn: Any = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None, generator: Any = None,
                 prefetch_factor: Any = None, persistent_workers: bool = False) -> None:
        if batch_sampler is not None or sampler is not None and not isinstance(sampler, Sampler):
            raise ArgumentError("DataLoader(): batch_sampler, and samplers other than gradcli's own "
                                "(DistributedSampler), are not supported by gradcli",
                                hint="use shuffle=True (and generator=) for a random order")
        if sampler is not None and shuffle:
            raise ValueDomainError("sampler option is mutually exclusive with shuffle",
                                   hint="the sampler decides the order: leave shuffle out")
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool)
                                       or batch_size <= 0):
            raise ValueDomainError(f"batch_size should be a positive integer value, but got batch_size={batch_size}",
                                   hint="e.g. batch_size=64")
        self.iterable = isinstance(dataset, IterableDataset)
        if shuffle and self.iterable:
            raise ValueDomainError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                   f"shuffle={shuffle}", hint="an iterable dataset is read in its own order")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, bool(shuffle), drop_last
        self.collate_fn, self.num_workers = collate_fn, num_workers
        self.generator = None if generator is None else generator_arg(generator, "DataLoader")
        self.sampler = sampler

    def __len__(self) -> int:
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        if self.iterable:
            return self._iterable_batches()
        gen = generator_arg(self.generator, "DataLoader")
        _int64_seed(gen)  # the iterator's base seed, drawn when the pass begins, as PyTorch does
        return self._batches(gen)

    def _batches(self, gen: Generator) -> Iterator[Any]:
        """One pass, drawing when PyTorch's sampler draws: the permutation at the first batch, and, with
        `generator=g`, one more `randperm(n)` from g when the sampler runs out (PyTorch's RandomSampler
        takes it for its remainder of `num_samples % n`, none here), so g's next epoch is PyTorch's too.
        The sampler runs out while the last batch is gathered when that batch is a partial one, else at
        the request after the last batch."""
        order = list(range(len(self.dataset))) if self.sampler is None else self.sampler.indices()
        n = len(order)
        if self.shuffle:
            order = (gen if self.generator is not None else Generator(_int64_seed(gen))).permutation(n).tolist()
        own = self.shuffle and self.generator is not None
        if self.batch_size is None:
            yield from (self._collate_one(self.dataset[i]) for i in order)
            if own:
                gen.permutation(n)
            return
        size = self.batch_size
        stop = n - n % size if self.drop_last else n
        partial = stop % size != 0
        for start in range(0, stop, size):
            if own and partial and start + size >= stop:
                gen.permutation(n)
            yield self._batch(order[start:start + size])
        if own and not partial:
            gen.permutation(n)

    def _batch(self, indices: list[int]) -> Any:
        if self.collate_fn is None and type(self.dataset) is TensorDataset and \
                not any(t.requires_grad for t in self.dataset.tensors):
            key = np.asarray(indices, dtype=np.int64)
            return tuple(_wrap(t._data[key]) for t in self.dataset.tensors)
        samples = [self.dataset[i] for i in indices]
        return self.collate_fn(samples) if self.collate_fn is not None else default_collate(samples)

    def _collate_one(self, sample: Any) -> Any:
        return self.collate_fn(sample) if self.collate_fn is not None else sample

    def _iterable_batches(self) -> Iterator[Any]:
        _int64_seed(generator_arg(self.generator, "DataLoader"))
        batch: list = []
        for sample in self.dataset:
            if self.batch_size is None:
                yield self._collate_one(sample)
                continue
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch) if self.collate_fn is not None else default_collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch) if self.collate_fn is not None else default_collate(batch)


CLASSES: dict[str, type] = {cls.__name__: cls for cls in (Dataset, IterableDataset, TensorDataset, Subset,
                                                           DataLoader, RandomSampler)}
"""The classes of `torch.utils.data` a program can make, by name."""
FUNCTIONS = {"random_split": random_split, "default_collate": default_collate}

MEMBERS: dict[type, frozenset] = {TensorDataset: frozenset({"tensors"}), Subset: frozenset({"dataset", "indices"}),
                                  DataLoader: frozenset({"dataset", "batch_size", "drop_last"})}
"""The attributes a program may read on each."""
