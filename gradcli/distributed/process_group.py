"""`torch.distributed` as a world of one process: gradcli runs one program in one process, so the default
process group it can honestly make has world size 1 and rank 0, and every collective has its one-process
result (all_reduce of one tensor is that tensor, all_gather fills a list of one, broadcast from rank 0 keeps
it). A larger world would wait for processes that never come; it is refused at once with the reason.

The texts of PyTorch's errors are its own (a collective before `init_process_group`, initialising twice,
NCCL on a CPU build, an env:// rendezvous without RANK): programs print them and tutorials catch them.
"""
from __future__ import annotations

import enum
from typing import Any

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, NotAllowedError, ValueDomainError

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
ONE_PROCESS = "gradcli runs one process: a world of one (rank 0, world_size=1) is what it can run"


class ReduceOp(enum.Enum):
    """`dist.ReduceOp.SUM`...; on a world of one each leaves the tensor as it is. Prints as PyTorch's
    `RedOpType.SUM`."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"

    def program_str(self) -> str:
        """print(op) shows str(op), as Python's print does (the language prints other objects by repr)."""
        return str(self)


class Work:
    """What a collective returns with `async_op=True`: already complete, since a world of one waits for nobody."""

    program_attributes = frozenset({"wait", "is_completed", "is_success"})

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "<torch.distributed.distributed_c10d.Work object>"


class _World:
    backend: str | None = None


def fresh() -> str | None:
    """Start a program outside any process group (as a new process starts), returning the one before."""
    previous, _World.backend = _World.backend, None
    return previous


def restore(previous: str | None) -> None:
    _World.backend = previous


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return _World.backend is not None


def is_nccl_available() -> bool:
    return False  # a CPU build


def is_gloo_available() -> bool:
    return True


def is_mpi_available() -> bool:
    return False


def get_default_backend_for_device(device: Any) -> str:
    kind = str(getattr(device, "type", device)).split(":")[0]
    if kind == "cpu":
        return "gloo"
    if kind == "cuda":
        return "nccl"
    raise ValueDomainError(f"Default backend not registered for device : {device}",
                           hint="gradcli's one device is the CPU: its backend is 'gloo'")


def init_process_group(backend: Any = None, init_method: Any = None, timeout: Any = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """The default group of a world of one. gradcli gives a program no environment variables (it cannot
    `import os`), so an env:// rendezvous reads none: rank and world_size come from the arguments, and
    MASTER_ADDR/MASTER_PORT are not needed by a world of one."""
    if is_initialized():
        raise ValueDomainError("trying to initialize the default process group twice!",
                               hint="call dist.destroy_process_group() first, or test dist.is_initialized()")
    name = "gloo" if backend is None else str(backend).lower()
    if name not in ("gloo", "nccl", "mpi", "cpu:gloo", "cuda:nccl", "cpu:gloo,cuda:nccl"):
        raise ArgumentError(f"Invalid backend: '{backend}'", hint="backend='gloo' runs on the CPU")
    if "nccl" in name and "gloo" not in name:
        raise NotAllowedError("Distributed package doesn't have NCCL built in",
                              hint="gradcli computes on the CPU: init_process_group('gloo', rank=0, world_size=1)")
    if name == "mpi":
        raise NotAllowedError("Distributed package doesn't have MPI built in",
                              hint="init_process_group('gloo', rank=0, world_size=1)")
    method = "env://" if init_method is None else str(init_method)
    if method.startswith("file://"):
        raise NotAllowedError("init_method='file://...' is not available: gradcli refuses file I/O",
                              hint="a world of one needs no rendezvous: init_process_group('gloo', rank=0, "
                                   "world_size=1)")
    if not method.startswith(("env://", "tcp://")):
        raise ValueDomainError(f"No rendezvous handler for {method.split('://')[0]}://",
                               hint="init_method='env://' (the default) or 'tcp://host:port'")
    if store is None and method.startswith("env://"):
        for variable, value in (("RANK", rank), ("WORLD_SIZE", world_size)):
            if value is None or value == -1:
                raise ValueDomainError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                       f"variable {variable} expected, but not set",
                                       hint="gradcli gives a program no environment: pass rank=0, world_size=1")
    world_size = 1 if world_size in (None, -1) else world_size
    rank = 0 if rank in (None, -1) else rank
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size != 1:
        raise NotAllowedError(f"init_process_group(world_size={world_size!r}): {ONE_PROCESS}",
                              hint="init_process_group('gloo', rank=0, world_size=1)")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank != 0:
        raise ValueDomainError(f"Invalid rank {rank!r}: a world of size 1 has only rank 0",
                               hint="init_process_group('gloo', rank=0, world_size=1)")
    _World.backend = "gloo"


def destroy_process_group(group: Any = None) -> None:
    if not is_initialized():
        raise ValueDomainError("Process group cannot be None",
                               hint="destroy_process_group() ends a group init_process_group() made")
    _World.backend = None


def _world() -> None:
    if not is_initialized():
        raise ValueDomainError(_NOT_INITIALIZED, hint="dist.init_process_group('gloo', rank=0, world_size=1) first")


def get_rank(group: Any = None) -> int:
    _world()
    return 0


def get_world_size(group: Any = None) -> int:
    _world()
    return 1


def get_backend(group: Any = None) -> str:
    _world()
    return str(_World.backend)


def _done(async_op: bool) -> Work | None:
    return Work() if async_op else None


def _tensor(value: Any, fn: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise ArgumentError(f"{fn}(): tensor must be a torch.Tensor, not {type(value).__name__}",
                            hint=f"dist.{fn}(tensor) works on a tensor")
    return value


def _op(op: Any, fn: str) -> None:
    if not isinstance(op, ReduceOp):
        raise ArgumentError(f"{fn}(): op must be a dist.ReduceOp, not {type(op).__name__}",
                            hint="op=dist.ReduceOp.SUM")


def _root(rank: Any, fn: str, word: str) -> None:
    if rank != 0:
        raise ValueDomainError(f"ProcessGroupGloo::{fn}: invalid root rank: {rank}",
                               hint=f"a world of one has rank 0 only: {word}=0")


def _one(tensors: Any, fn: str, word: str) -> list:
    if not isinstance(tensors, list) or not all(isinstance(t, Tensor) for t in tensors):
        raise ArgumentError(f"{fn}(): {word} must be a list of tensors", hint=f"[torch.zeros_like(t)] for a world of one")
    if len(tensors) != 1:
        raise ValueDomainError(f"ProcessGroupGloo::{fn}: invalid {word.replace('_', ' ')} at index 0 (expected length "
                               f"1, got {len(tensors)})", hint="a world of one gathers one tensor")
    return tensors


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Work | None:
    """Of one rank's tensor, every reduction is that tensor: it is left as it is."""
    _world()
    _tensor(tensor, "all_reduce")
    _op(op, "all_reduce")
    return _done(async_op)


def reduce(tensor: Any, dst: int = 0, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Work | None:
    _world()
    _tensor(tensor, "reduce")
    _op(op, "reduce")
    _root(dst, "reduce", "dst")
    return _done(async_op)


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> Work | None:
    _world()
    _tensor(tensor, "broadcast")
    _root(src, "broadcast", "src")
    return _done(async_op)


def all_gather(tensor_list: Any, tensor: Any, group: Any = None, async_op: bool = False) -> Work | None:
    _world()
    _one(tensor_list, "allgather", "output_tensor_list")[0].copy_(_tensor(tensor, "all_gather"))
    return _done(async_op)


def gather(tensor: Any, gather_list: Any = None, dst: int = 0, group: Any = None,
           async_op: bool = False) -> Work | None:
    _world()
    _root(dst, "gather", "dst")
    _one(gather_list, "gather", "gather_list")[0].copy_(_tensor(tensor, "gather"))
    return _done(async_op)


def scatter(tensor: Any, scatter_list: Any = None, src: int = 0, group: Any = None,
            async_op: bool = False) -> Work | None:
    _world()
    _root(src, "scatter", "src")
    _tensor(tensor, "scatter").copy_(_one(scatter_list, "scatter", "scatter_list")[0])
    return _done(async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    _world()
    return _done(async_op)


NAMES: dict[str, Any] = {fn.__name__: fn for fn in (
    is_available, is_initialized, is_nccl_available, is_gloo_available, is_mpi_available,
    get_default_backend_for_device, init_process_group, destroy_process_group, get_rank, get_world_size, get_backend,
    all_reduce, reduce, broadcast, all_gather, gather, scatter, barrier)}
