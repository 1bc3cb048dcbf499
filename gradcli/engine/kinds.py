"""The kinds of the torch library's objects, as empty classes the library's classes derive from.

The language tests values against `nn.Module`, `nn.Sequential`, `optim.Optimizer`, `utils.data.Dataset`...
on every attribute, index and loop, and must not import the library to do it: a one-line `gradcli eval`
never loads `gradcli.nn`. `isinstance(value, kinds.Module)` is one C-level test that needs no import (nothing
is a Module before `gradcli.nn` is loaded, and every Module is one after). The library derives from these
(`class Module(kinds.Module)`); nothing else does.
"""
from __future__ import annotations


class Module:
    """torch.nn.Module."""


class Sequential:
    """torch.nn.Sequential."""


class ModuleList:
    """torch.nn.ModuleList."""


class ModuleDict:
    """torch.nn.ModuleDict."""


class ParameterList:
    """torch.nn.ParameterList."""


class ParameterDict:
    """torch.nn.ParameterDict."""


class Optimizer:
    """torch.optim.Optimizer."""


class LRScheduler:
    """torch.optim.lr_scheduler.LRScheduler."""


class Dataset:
    """torch.utils.data.Dataset."""


class IterableDataset:
    """torch.utils.data.IterableDataset."""


class DataLoader:
    """torch.utils.data.DataLoader."""
