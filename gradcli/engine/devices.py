"""Where tensors live and what they default to: PyTorch's CPU-only boilerplate, so tutorials run as written.

gradcli has one device, the CPU. `torch.device('cuda' if torch.cuda.is_available() else 'cpu')`
therefore picks the CPU, `.to(device)` and `device=` are accepted for it, and asking for CUDA
itself is PyTorch's own error for a build without CUDA.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.creation import DTYPE_NAMES, resolve_dtype
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError

NO_CUDA = "Torch not compiled with CUDA enabled"
_KNOWN = ("cpu", "cuda", "mps", "xpu", "meta")


class Device:
    """`torch.device`: a type and an optional index, compared and printed as PyTorch does."""

    def __init__(self, kind: str, index: int | None = None) -> None:
        self.type = kind
        self.index = index

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Device) and (other.type, other.index) == (self.type, self.index)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


def device(spec: Any, index: int | None = None) -> Device:
    """`torch.device('cpu')`, `torch.device('cuda:0')`, `torch.device('cuda', 0)`."""
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str):
        raise ArgumentError(f"device(): expected a string such as 'cpu', not {type(spec).__name__}")
    kind, _, number = spec.partition(":")
    if kind not in _KNOWN or number and not number.isdigit():
        raise ArgumentError(f"Expected one of {', '.join(_KNOWN)} device type at start of device string: {spec}",
                            hint="gradcli runs on the CPU: torch.device('cpu')")
    return Device(kind, int(number) if number else index)


def check_device(spec: Any) -> None:
    """Accept the CPU; any other device is PyTorch's error on a machine without it."""
    if spec is None:
        return
    if device(spec).type != "cpu":
        raise ArgumentError(NO_CUDA, hint="gradcli computes on the CPU: use torch.device('cpu'), or "
                                          "torch.device('cuda' if torch.cuda.is_available() else 'cpu')")


def is_available() -> bool:
    """`torch.cuda.is_available()`: gradcli has no GPU."""
    return False


def device_count() -> int:
    return 0


def ignore_cuda_seed(seed: int) -> None:
    """`torch.cuda.manual_seed(_all)(n)`: PyTorch without a GPU accepts the seed and does nothing with it."""
    from gradcli.engine.functions import number_arg
    number_arg(seed, "manual_seed", "seed", integer=True)


def no_mps() -> bool:
    """`torch.backends.mps.is_available()`: gradcli has no Apple GPU either."""
    return False


def current_accelerator(check_available: bool = False) -> None:
    """`torch.accelerator.current_accelerator()`: None, as PyTorch's on a machine without one (its
    Quickstart writes `torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
    else "cpu"`)."""
    return None


def set_default_device(spec: Any) -> None:
    check_device(spec)


def to(x: Tensor, *args: Any, dtype: Any = None, copy: bool = False, non_blocking: bool = False) -> Tensor:
    """`x.to(device)`, `x.to(dtype)`, `x.to(device, dtype)`, `x.to(other)`: a dtype change or `x` itself."""
    from gradcli.engine.functions import to_dtype
    from gradcli.engine.narrow import same
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, str) and arg.removeprefix("torch.") in DTYPE_NAMES:
            dtype = arg
        elif isinstance(arg, np.dtype) or isinstance(arg, type) and issubclass(arg, np.generic):
            dtype = arg  # another tensor's dtype: mask.to(x.dtype)
        else:
            check_device(arg)
    if dtype is None or same(resolve_dtype(dtype), x.dtype):
        return x.clone() if copy else x
    return to_dtype(x, resolve_dtype(dtype))
