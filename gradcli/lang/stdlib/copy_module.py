"""`copy`: copy and deepcopy of what a program holds, tensors as PyTorch copies them.

`deepcopy` of a tensor is a new leaf with its own data, the same `requires_grad` and a copy of
its `.grad`; PyTorch refuses to deep-copy a tensor inside a graph (a non-leaf), and so does this.
Containers are copied item by item against the list limit (a memo keeps shared and circular
references shared). Modules and optimizers are gradcli's own objects, copied by Python's
attribute by attribute with the tensors inside them copied the same way.
"""
from __future__ import annotations

import copy as _python_copy
from collections import OrderedDict
from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.engine.tensor_str import PARAMETERS
from gradcli.errors import ArgumentError, BackwardError
from gradcli.lang.library import Module, Optimizer
from gradcli.lang.namespace import Namespace
from gradcli.lang.limits import check_list

_LEAVES_ONLY = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                "moment.")


def _tensor_copy(tensor: Tensor) -> Tensor:
    if not tensor.is_leaf:
        raise BackwardError(_LEAVES_ONLY, hint="deep-copy the leaf, or copy t.detach() (a leaf) instead")
    out = Tensor(tensor._data.copy(), dtype=tensor.dtype)
    if tensor in PARAMETERS:
        from gradcli.nn.modules import Parameter  # loaded already: the tensor is one of its Parameters
        out = Parameter(out, requires_grad=tensor.requires_grad)
    elif tensor.requires_grad:
        out.requires_grad_(True)
    if tensor.grad is not None:
        out.grad = Tensor(tensor.grad._data.copy(), dtype=tensor.grad.dtype)
    return out


def deepcopy(value: Any, memo: dict | None = None) -> Any:
    memo = {} if memo is None else memo
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, Tensor):
        out: Any = _tensor_copy(value)
    elif isinstance(value, list):
        check_list(len(value))
        out = memo[id(value)] = []
        out.extend(deepcopy(v, memo) for v in value)
    elif isinstance(value, tuple) and type(value) is tuple:
        out = tuple(deepcopy(v, memo) for v in value)
    elif type(value) in (dict, OrderedDict) or isinstance(value, dict) and hasattr(type(value), "emptied"):
        check_list(len(value))  # an OrderedDict is a state_dict; `emptied` is a defaultdict's or a Counter's
        out = memo[id(value)] = value.emptied() if hasattr(type(value), "emptied") else type(value)()
        for key, item in value.items():
            out[deepcopy(key, memo)] = deepcopy(item, memo)
    elif type(value) is set:
        out = {deepcopy(v, memo) for v in value}
    elif isinstance(value, (Module, Optimizer)):
        out = memo[id(value)] = object.__new__(type(value))
        for name, item in vars(value).items():
            out.__dict__[name] = deepcopy(item, memo)
    elif value is None or isinstance(value, (bool, int, float, str)) or callable(value):
        out = value
    elif isinstance(value, np.ndarray):
        out = value.copy()
    else:
        raise ArgumentError(f"deepcopy of a {type(value).__name__} is not supported",
                            hint="deepcopy copies tensors, lists, tuples, dicts (a state_dict too), sets, modules and optimizers")
    memo[id(value)] = out
    return out


def copy(value: Any) -> Any:
    if isinstance(value, (list, dict, set)):
        return value.copy()
    if isinstance(value, Tensor):
        return _tensor_copy(value) if value.is_leaf else value.clone()
    if isinstance(value, (Module, Optimizer)):
        return _python_copy.copy(value)
    return value


COPY = Namespace("copy", {"copy": copy, "deepcopy": lambda value, memo=None: deepcopy(value)})
COPY.members["deepcopy"].__name__ = "deepcopy"
