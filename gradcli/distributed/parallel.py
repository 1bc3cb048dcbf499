"""What runs a model across processes, on a world of one: `DistributedDataParallel` (the module itself,
whose gradients an all_reduce over one rank leaves as they are), `DistributedSampler` (PyTorch's exact
index order for any rank of any number of replicas: the order is arithmetic, not communication), and
`torch.multiprocessing.spawn` with one process (the function called as rank 0, in this process).
"""
from __future__ import annotations

import math
from typing import Any, Callable

from gradcli.data.loading import Sampler
from gradcli.distributed import process_group as PG
from gradcli.engine.creation import randperm
from gradcli.engine.random import Generator
from gradcli.errors import ArgumentError, NotAllowedError, ValueDomainError
from gradcli.nn.modules import Module


class DistributedDataParallel(Module):
    """The wrapped module (registered as `module`, so `print(model)` and `state_dict()` show PyTorch's
    `module.` names), run whole: with one rank, averaging gradients across ranks changes nothing."""

    def __init__(self, module: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group: Any = None, bucket_cap_mb: Any = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs: Any) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise ArgumentError(f"DistributedDataParallel(): module must be an nn.Module, not "
                                f"{type(module).__name__}", hint="DistributedDataParallel(model) wraps a model")
        PG._world()
        if not any(p.requires_grad for p in module.parameters()):
            raise ValueDomainError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                                   "that requires a gradient.", hint="wrap a model with trainable parameters")
        self.module = module
        self.device_ids = None if device_ids is None else list(device_ids)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)

    def no_sync(self) -> "_NoSync":
        """Gradients accumulate locally inside; with one rank there is nothing to synchronise anyway."""
        return _NoSync()


class _NoSync:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


class DistributedSampler(Sampler):
    """PyTorch's DistributedSampler: a permutation seeded by `seed + epoch` (or the indices in order), padded
    by repeating its start to a multiple of `num_replicas` (or cut, with drop_last), then every
    `num_replicas`-th index from `rank`."""

    program_attributes = frozenset({"set_epoch", "num_replicas", "rank", "epoch", "seed", "shuffle", "drop_last",
                                    "num_samples", "total_size", "dataset"})

    def __init__(self, dataset: Any, num_replicas: Any = None, rank: Any = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        num_replicas = PG.get_world_size() if num_replicas is None else num_replicas
        rank = PG.get_rank() if rank is None else rank
        if isinstance(num_replicas, bool) or not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueDomainError(f"num_replicas must be a positive integer, not {num_replicas!r}",
                                   hint="DistributedSampler(dataset, num_replicas=1, rank=0)")
        if isinstance(rank, bool) or not isinstance(rank, int) or rank >= num_replicas or rank < 0:
            raise ValueDomainError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]",
                                   hint="each replica has a rank from 0 to num_replicas - 1")
        self.dataset, self.num_replicas, self.rank, self.epoch = dataset, num_replicas, rank, 0
        self.drop_last, self.shuffle, self.seed = bool(drop_last), bool(shuffle), int(seed)
        n = len(dataset)
        if self.drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def indices(self) -> list[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = randperm(n, generator=Generator(self.seed + self.epoch)).tolist()
        else:
            order = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(order)
            if padding <= len(order):
                order += order[:padding]
            elif order:
                order += (order * math.ceil(padding / len(order)))[:padding]
        else:
            order = order[:self.total_size]
        return order[self.rank:self.total_size:self.num_replicas]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch


def spawn(fn: Callable[..., Any], args: Any = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> None:
    """`mp.spawn(main, args=(world_size,), nprocs=1)`: main(0, *args), here, as the one process."""
    if nprocs != 1:
        raise NotAllowedError(f"torch.multiprocessing.spawn(nprocs={nprocs!r}): {PG.ONE_PROCESS}",
                              hint="mp.spawn(fn, args=(...), nprocs=1) calls fn(0, *args) in this process")
    if not callable(fn):
        raise ArgumentError(f"spawn(): fn must be a function, not {type(fn).__name__}",
                            hint="mp.spawn(main, args=(...), nprocs=1)")
    if not isinstance(args, tuple):
        raise ArgumentError(f"spawn(): args must be a tuple, not {type(args).__name__}", hint="args=(world_size,)")
    fn(0, *args)


def set_start_method(method: str, force: bool = False) -> None:
    """Accepted as PyTorch accepts it; one process starts nothing."""
    if method not in ("spawn", "fork", "forkserver"):
        raise ValueDomainError(f"cannot find context for {method!r}", hint="'spawn', 'fork' or 'forkserver'")


def get_start_method(allow_none: bool = False) -> str:
    return "spawn"
