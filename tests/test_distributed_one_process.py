"""torch.distributed on a world of one: the same printed text and numbers as PyTorch's gloo group of one,
DistributedSampler's exact index order, and a clear refusal (exit 2) for anything needing more processes."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradcli.errors import GradcliError, NotAllowedError, ValueDomainError
from gradcli.lang import distributed_names
from gradcli.lang.parser import DISTRIBUTED_MODULES
from gradcli.lang.builtins import MODULES
from tests.language_helpers import fails, run, torch_printed

PROGRAM = (Path(__file__).parent / "fixtures" / "distributed_world_of_one.py").read_text()


def test_a_ddp_training_script_prints_what_torch_prints():
    """The script as tutorials write it (mp.spawn, init_process_group, DDP, DistributedSampler with set_epoch,
    all_reduce, all_gather); torch runs main(0, 1) itself, since its spawn needs a __main__ guard."""
    import os
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29541")
    expected = torch_printed(PROGRAM.replace("mp.spawn(main, args=(1,), nprocs=1)", "main(0, 1)"))
    assert "\n".join(run(PROGRAM).printed).splitlines() == expected


@pytest.mark.parametrize("kwargs, expected", [
    # hand-derived from torch's rule: pad by repeating the start, then every num_replicas-th from rank
    ("num_replicas=3, rank=1, shuffle=False", [1, 4, 7, 0]),
    ("num_replicas=3, rank=2, shuffle=False, drop_last=True", [2, 5, 8]),
    ("num_replicas=4, rank=3, shuffle=False", [3, 7, 1]),
    ("num_replicas=1, rank=0, shuffle=True, seed=5", None),
])
def test_distributed_sampler_orders_as_torch(kwargs: str, expected: list | None):
    source = ("import torch\nfrom torch.utils.data.distributed import DistributedSampler\n"
              "ds = torch.utils.data.TensorDataset(torch.arange(10))\n"
              f"s = DistributedSampler(ds, {kwargs})\norder = list(s)\ns.set_epoch(1)\nagain = list(s)\nn = len(s)\n")
    ours = run(source)
    if expected is None:
        theirs = torch_printed(source + "print(order)\nprint(again)\nprint(n)\n")
        assert [str(ours["order"]), str(ours["again"]), str(ours["n"])] == theirs
    else:
        assert ours["order"] == expected == ours["again"] and ours["n"] == len(expected)


INIT = "import torch\nimport torch.distributed as dist\n"


@pytest.mark.parametrize("source, kind, words", [
    (INIT + "dist.init_process_group('gloo', rank=0, world_size=2)", NotAllowedError, "gradcli runs one process"),
    (INIT + "dist.init_process_group('gloo', rank=1, world_size=1)", ValueDomainError, "Invalid rank 1"),
    (INIT + "dist.init_process_group('gloo')", ValueDomainError,
     "environment variable RANK expected, but not set"),
    (INIT + "dist.init_process_group('nccl', rank=0, world_size=1)", NotAllowedError,
     "Distributed package doesn't have NCCL built in"),
    (INIT + "dist.init_process_group('gloo', init_method='file:///tmp/x', rank=0, world_size=1)", NotAllowedError,
     "refuses file I/O"),
    (INIT + "dist.get_rank()", ValueDomainError, "Default process group has not been initialized"),
    (INIT + "dist.all_reduce(torch.ones(2))", ValueDomainError, "Default process group has not been initialized"),
    (INIT + "dist.init_process_group('gloo', rank=0, world_size=1)\ndist.init_process_group('gloo', rank=0, "
     "world_size=1)", ValueDomainError, "trying to initialize the default process group twice!"),
    (INIT + "dist.init_process_group('gloo', rank=0, world_size=1)\ndist.broadcast(torch.ones(2), src=1)",
     ValueDomainError, "invalid root rank: 1"),
    (INIT + "dist.init_process_group('gloo', rank=0, world_size=1)\n"
            "dist.all_gather([torch.zeros(2), torch.zeros(2)], torch.ones(2))", ValueDomainError,
     "expected length 1, got 2"),
    (INIT + "dist.init_process_group('gloo', rank=0, world_size=1)\ndist.all_reduce(torch.ones(2), op='sum')",
     GradcliError, "op must be a dist.ReduceOp"),
    (INIT + "dist.destroy_process_group()", ValueDomainError, "Process group cannot be None"),
    (INIT + "dist.rpc.init_rpc('worker', rank=0, world_size=1)", NotAllowedError,
     "'torch.distributed.rpc.init_rpc' is not available: remote procedure calls"),
    ("from torch.distributed.fsdp import FullyShardedDataParallel", NotAllowedError, "fully sharded"),
    ("import torch.multiprocessing as mp\nmp.spawn(print, nprocs=2)", NotAllowedError, "gradcli runs one process"),
    ("import torch.multiprocessing as mp\nmp.Process(target=print)", NotAllowedError, "mp.spawn(fn"),
    ("import torch\ntorch.nn.parallel.scatter(torch.ones(2), [0])", NotAllowedError, "split a batch across GPUs"),
    ("import torch\ntorch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1, 1))", ValueDomainError,
     "Default process group has not been initialized"),
    ("import torch\nfrom torch.utils.data.distributed import DistributedSampler\n"
     "DistributedSampler([1, 2], num_replicas=2, rank=2)", ValueDomainError,
     "Invalid rank 2, rank should be in the interval [0, 1]"),
])
def test_what_one_process_cannot_do_is_told(source: str, kind: type, words: str):
    error = fails(source, kind)
    assert words in str(error)


def test_refusals_exit_2_with_what_where_and_how(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "two.py"
    script.write_text(INIT + "dist.init_process_group('gloo', rank=0, world_size=2)\n")
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert "two.py:3" in done.stdout + done.stderr
    assert "hint: init_process_group('gloo', rank=0, world_size=1)" in done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_every_distributed_module_the_parser_admits_exists():
    made = set(distributed_names.namespaces(lambda cls: cls)) - {"torch.distributed.ReduceOp"}
    assert made == set(DISTRIBUTED_MODULES)
    assert DISTRIBUTED_MODULES <= set(MODULES)
