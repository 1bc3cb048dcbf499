"""What tutorials ask about dtypes beyond the dtype itself: `torch.finfo` (machine epsilon, the largest float,
the smallest normal), and the legacy `torch.set_default_tensor_type`, which sets the default float dtype by a
tensor type's name (`torch.FloatTensor`, `'torch.DoubleTensor'`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.narrow import is_bfloat16
from gradcli.engine.creation import Defaults, float_tensor, resolve_dtype, set_default_dtype
from gradcli.errors import ArgumentError

_FLOAT_TENSOR_TYPES = {"torch.FloatTensor": np.float32, "torch.DoubleTensor": np.float64}


class FInfo:
    """`torch.finfo(torch.float32)`: NumPy's figures for the same IEEE format, printed as PyTorch prints them."""

    program_attributes = frozenset({"bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"})

    def __init__(self, dtype: np.dtype) -> None:
        if is_bfloat16(dtype):  # NumPy has no bfloat16: float32's exponent with 8 bits of significand
            self.bits, self.dtype, self.eps, self.resolution = 16, "bfloat16", 2.0 ** -7, 0.01
            self.max = float((2 - 2.0 ** -7) * 2.0 ** 127)
            self.min, self.tiny = -self.max, float(np.finfo(np.float32).smallest_normal)
            self.smallest_normal = self.tiny
            return
        info = np.finfo(dtype)
        self.bits, self.dtype = int(info.bits), np.dtype(dtype).name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)  # PyTorch's: NumPy gives float16 0.0010004

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


def finfo(dtype: Any = None) -> FInfo:
    resolved = Defaults.dtype if dtype is None else resolve_dtype(dtype)
    if resolved is None or np.dtype(resolved).kind != "f":
        raise ArgumentError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'", hint="torch.finfo(torch.float32) or torch.finfo(torch.float64)")
    return FInfo(np.dtype(resolved))  # a bfloat16 dtype keeps its metadata through np.dtype


def set_default_tensor_type(t: Any) -> None:
    """PyTorch's deprecated spelling of set_default_dtype, by tensor type: the CUDA types are refused as on a CPU
    build, the integer ones as set_default_dtype refuses them."""
    name = "torch.FloatTensor" if t is float_tensor else t if isinstance(t, str) else None
    if name is None:
        raise ArgumentError(f"set_default_tensor_type(): expected a tensor type or its name, not {type(t).__name__}",
                            hint="torch.set_default_dtype(torch.float32) is the current spelling")
    if name.startswith("torch.cuda."):
        raise ArgumentError(f"type {name} not available. Torch not compiled with CUDA enabled.",
                            hint="gradcli computes on the CPU: torch.set_default_tensor_type('torch.FloatTensor')")
    if name not in _FLOAT_TENSOR_TYPES:
        raise ArgumentError("only floating-point types are supported as the default type",
                         hint="torch.set_default_tensor_type('torch.FloatTensor') or 'torch.DoubleTensor'")
    set_default_dtype(_FLOAT_TENSOR_TYPES[name])
