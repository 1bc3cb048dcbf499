"""Mixed precision (`torch.autocast`, `torch.amp`, `torch.cuda.amp`) as PyTorch's CPU-only build has it.

Tutorials wrap their training step in `with torch.autocast("cuda"):` and scale the loss with
`torch.amp.GradScaler("cuda")`. Without a GPU, PyTorch disables both (with a warning): the block runs in
float32 and the scaler hands the loss back unchanged, steps the optimizer and keeps a scale of 1.0. gradcli
does the same. What PyTorch does run on the CPU, autocast to bfloat16 (`autocast("cpu")`: matmul, linear and
convolution compute in bfloat16) and an enabled `GradScaler("cpu")` (the loss times 65536), gradcli refuses
when the block is entered or the scaler made: it computes in float32 and float64 only, and a number computed
at another precision than PyTorch's would be a silent wrong number.
"""
from __future__ import annotations

from typing import Any

from gradcli.errors import ArgumentError, NotAllowedError

_DEVICES = ("cuda", "cpu", "xpu", "mps", "hpu", "xla", "mtia", "meta")


def _device_type(device_type: Any, what: str) -> str:
    if not isinstance(device_type, str) or device_type.split(":")[0] not in _DEVICES:
        raise ArgumentError(f"{what}: expected device_type to be a device type string such as 'cuda' or 'cpu', "
                            f"got {device_type!r}", hint=f"{what}('cuda'), which gradcli (as PyTorch without a "
                                                         "GPU) runs as a no-op")
    return device_type.split(":")[0]


class autocast:
    """`with torch.autocast(device_type, dtype=None, enabled=True):`: a no-op block for a device PyTorch has not
    got here; the CPU's bfloat16 autocast is refused on entry."""

    program_attributes = frozenset({"device", "fast_dtype"})

    def __init__(self, device_type: Any = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Any = None) -> None:
        self.device = _device_type(device_type, "autocast")
        self.fast_dtype = dtype
        self.enabled = bool(enabled)

    def __enter__(self) -> "autocast":
        if self.enabled and self.device == "cpu":
            dtype = "bfloat16" if self.fast_dtype is None else str(self.fast_dtype).removeprefix("torch.")
            raise NotAllowedError(f"autocast on the CPU runs matmul, linear and convolution in {dtype}, and gradcli "
                                  "computes in float32 and float64 only",
                                  hint="leave the autocast out, or pass enabled=False, to run the block in float32")
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "<torch.amp.autocast_mode.autocast object>"


def cuda_autocast(enabled: bool = True, dtype: Any = None, cache_enabled: Any = None) -> autocast:
    """`torch.cuda.amp.autocast()`: deprecated for `torch.amp.autocast('cuda')`, and a no-op without a GPU."""
    return autocast("cuda", dtype, enabled, cache_enabled)


class GradScaler:
    """`torch.amp.GradScaler('cuda')` without a GPU: disabled, so `scale` gives the loss back, `step` steps the
    optimizer, `update` and `unscale_` do nothing and the scale is 1.0, as PyTorch's CPU build answers."""

    program_attributes = frozenset({"scale", "step", "update", "unscale_", "get_scale", "is_enabled", "state_dict",
                                    "load_state_dict", "get_growth_factor", "get_backoff_factor",
                                    "get_growth_interval"})

    def __init__(self, device: Any = "cuda", init_scale: float = 65536.0, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        kind = _device_type(device, "GradScaler")
        if enabled and kind == "cpu":
            raise NotAllowedError("GradScaler('cpu') multiplies the loss by its scale (65536) for float16 training, "
                                  "which gradcli does not run", hint="leave the scaler out, or pass enabled=False")
        self.growth_factor, self.backoff_factor = float(growth_factor), float(backoff_factor)
        self.growth_interval = int(growth_interval)

    def scale(self, outputs: Any) -> Any:
        return outputs

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def unscale_(self, optimizer: Any) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return False

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: Any) -> None:
        return None

    def get_growth_factor(self) -> float:
        return self.growth_factor

    def get_backoff_factor(self) -> float:
        return self.backoff_factor

    def get_growth_interval(self) -> int:
        return self.growth_interval

    def __repr__(self) -> str:
        return "<torch.amp.grad_scaler.GradScaler object>"


def cuda_grad_scaler(init_scale: float = 65536.0, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                     growth_interval: int = 2000, enabled: bool = True) -> GradScaler:
    """`torch.cuda.amp.GradScaler()`: deprecated for `torch.amp.GradScaler('cuda')`, and disabled without a GPU."""
    return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
