"""The names a program reaches of `torch.distributed`, `torch.multiprocessing`, `torch.nn.parallel`'s
DistributedDataParallel and `torch.utils.data.distributed` (gradcli/distributed: a world of one process), and
the parts of them that stay refused, each with its reason."""
from __future__ import annotations

from typing import Any, Callable

from gradcli.lang.namespace import Namespace

_MANY = "it needs other processes or machines, and gradcli runs one process"
_REFUSED = {
    "rpc": f"remote procedure calls: {_MANY}",
    "fsdp": f"fully sharded data parallel shards a model across ranks: {_MANY}",
    "tensor": f"distributed tensors and tensor parallelism place shards on other ranks: {_MANY}",
    "autograd": f"distributed autograd runs backward across RPC workers: {_MANY}",
    "optim": f"the distributed optimizer updates parameters held by RPC workers: {_MANY}",
    "checkpoint": "distributed checkpoints are files written by every rank: gradcli refuses file I/O",
    "nn": f"RemoteModule lives on another worker: {_MANY}",
    "algorithms": f"communication hooks and wrappers for many ranks: {_MANY}",
    "device_mesh": f"a device mesh lays out many ranks: {_MANY}",
    "pipelining": f"pipeline stages run on other ranks: {_MANY}",
}


_WORLD_OF_ONE = f"gradcli runs torch.distributed on a world of one; the rest {_MANY}"
_ONE_PROCESS = "gradcli runs one process: mp.spawn(fn, args=(...), nprocs=1) calls fn(0, *args) in it"
PATHS = {"torch.distributed": _WORLD_OF_ONE, "torch.distributed.ReduceOp": "",
         **{f"torch.distributed.{name}": reason for name, reason in _REFUSED.items()},
         "torch.multiprocessing": _ONE_PROCESS, "torch.utils.data.distributed": ""}
"""Every module path of `namespaces`, with its refusal, known before gradcli/distributed is imported."""


def namespaces(constructor: Callable[[type], Any]) -> dict[str, Namespace]:
    """Every module path, keyed by its dotted name; `constructor` makes a class callable by a program."""
    from gradcli.distributed import parallel as P, process_group as PG
    refused = {name: Namespace(f"torch.distributed.{name}", {}, refusal=reason) for name, reason in _REFUSED.items()}
    reduce_op = Namespace("torch.distributed.ReduceOp", {op.name: op for op in PG.ReduceOp})
    distributed = Namespace("torch.distributed", {**PG.NAMES, "ReduceOp": reduce_op, **refused},
                            refusal=_WORLD_OF_ONE)
    multiprocessing = Namespace("torch.multiprocessing", {
        "spawn": P.spawn, "set_start_method": P.set_start_method, "get_start_method": P.get_start_method},
        refusal=_ONE_PROCESS)
    data = Namespace("torch.utils.data.distributed", {"DistributedSampler": constructor(P.DistributedSampler)})
    return {"torch.distributed": distributed, "torch.distributed.ReduceOp": reduce_op,
            **{f"torch.distributed.{name}": space for name, space in refused.items()},
            "torch.multiprocessing": multiprocessing, "torch.utils.data.distributed": data}


def members() -> dict[type, frozenset]:
    """The attributes a program may read on DistributedDataParallel besides nn.Module's."""
    from gradcli.distributed import parallel as P
    return {P.DistributedDataParallel: frozenset({"module", "device_ids", "no_sync"})}

PARALLEL_REFUSAL = "scatter, gather, replicate and parallel_apply split a batch across GPUs, and gradcli has none"
