"""`nn.DataParallel` as PyTorch's CPU build has it: with no GPU to split a batch over, it keeps the module
(registered as `module`, so `print(model)` and `state_dict()` show PyTorch's `module.` names) and runs it whole.

Tutorials wrap their model unconditionally (`model = nn.DataParallel(model)`) and unwrap it to save
(`model.module.state_dict()`); both work here as on a machine without CUDA.
"""
from __future__ import annotations

from typing import Any

from gradcli.errors import ArgumentError
from gradcli.nn.modules import Module


class DataParallel(Module):
    def __init__(self, module: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise ArgumentError(f"DataParallel(): module must be an nn.Module, not {type(module).__name__}",
                                hint="nn.DataParallel(model) wraps a model")
        self.module = module
        self.device_ids: list = []  # PyTorch's, without CUDA: whatever was asked, no device is used

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


LAYERS: dict[str, type] = {"DataParallel": DataParallel}
MEMBERS: dict[type, frozenset] = {DataParallel: frozenset({"module", "device_ids"})}
