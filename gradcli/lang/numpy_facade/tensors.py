"""NumPy's arrays into tensors as PyTorch makes them (`torch.from_numpy`, `torch.as_tensor`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.lang.numpy_facade import dispatch


def from_numpy(array: Any) -> Tensor:
    """`torch.from_numpy(a)`: the array's own dtype and memory (writing one writes the other, as in PyTorch)."""
    if not isinstance(array, np.ndarray):
        raise ArgumentError(f"expected np.ndarray (got {type(array).__name__})",
                            hint="torch.tensor(data) makes a tensor from a list")
    dispatch.inward(array, "torch.from_numpy")
    made = Tensor(array, dtype=array.dtype)
    if made._data.dtype == array.dtype and made._data.shape == array.shape:
        made._data = array
    return made


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`torch.as_tensor`: a tensor as it is, an array's memory as `from_numpy` shares it, else a new tensor."""
    from gradcli.engine.creation import resolve_dtype, tensor
    if isinstance(data, Tensor) and dtype is None:
        return data
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(resolve_dtype(dtype)) == data.dtype):
        return from_numpy(data)
    return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype)
