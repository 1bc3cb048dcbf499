"""`torch.save` and `torch.load` without a file system: what a program saves lives for its run.

Tutorials save a model's `state_dict()` and load it into a fresh model a few lines later (or a
checkpoint dict with the optimizer's state and the epoch). A program may not write files, so a
save keeps a deep copy under its path, and a load gives a deep copy back: the round trip gives
PyTorch's numbers, and nothing outlives the run. Loading a path this run did not save is
Python's FileNotFoundError, with the reason in the hint.
"""
from __future__ import annotations

from typing import Any

from gradcli.errors import ArgumentError
from gradcli.lang.stdlib.copy_module import deepcopy
from gradcli.lang.stdlib.runtime import RESETS

_SAVED: dict[str, Any] = {}
RESETS.append(_SAVED.clear)


def _path(f: Any, fn: str) -> str:
    if not isinstance(f, str):
        raise ArgumentError(f"{fn}(): f must be a path (a string), not {type(f).__name__}",
                            hint="write the path: torch.save(model.state_dict(), 'model.pt'); gradcli opens no files")
    return f


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    _SAVED[_path(f, "save")] = deepcopy(obj)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *, weights_only: Any = None,
         mmap: Any = None, **pickle_load_args: Any) -> Any:
    path = _path(f, "load")
    if path not in _SAVED:
        raise ArgumentError(f"[Errno 2] No such file or directory: '{path}'",
                            hint="gradcli keeps what torch.save saves in memory for the run: save it earlier in "
                                 "the same program (files on disk are not read)")
    return deepcopy(_SAVED[path])
