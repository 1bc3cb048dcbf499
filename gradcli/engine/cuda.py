"""`torch.cuda`, `torch.backends.cudnn`, `torch.backends.cuda` and `torch.version` as PyTorch's CPU-only build has them.

Tutorials time their GPU code and set cuDNN's switches unconditionally (`torch.backends.cudnn.benchmark = True`,
`torch.cuda.synchronize()` before reading a clock). On a build without CUDA, PyTorch answers each of these in its
own way: the memory counters say 0, `empty_cache` does nothing, the switches keep what they are set to, and the
calls that need a device raise. gradcli answers exactly as that build does (checked against torch 2.13+cpu), so a
program behaves here as it would on a laptop without a GPU.
"""
from __future__ import annotations

from typing import Any

from gradcli.engine.devices import NO_CUDA
from gradcli.errors import ArgumentError, GradcliError, NameLookupError

_HINT = "gradcli, like PyTorch without a GPU, has no CUDA device: guard the line with `if torch.cuda.is_available():`"


def _no_cuda(*args: Any, **kwargs: Any) -> None:
    """What PyTorch's CPU build raises for a call that needs the GPU (an AssertionError in Python)."""
    raise GradcliError(NO_CUDA, hint=_HINT)


def no_accelerator(*args: Any, **kwargs: Any) -> None:
    """`torch.accelerator.set_device_index(0)` where there is no accelerator."""
    raise GradcliError("Cannot access accelerator device when none is available.", hint=_HINT)


def _missing_binding(binding: str) -> Any:
    """The calls that, on PyTorch's CPU build, reach for a C binding that build does not have."""
    def call(*args: Any, **kwargs: Any) -> None:
        raise NameLookupError(f"module 'torch._C' has no attribute '{binding}'", hint=_HINT)
    return call


def _no_bytes(device: Any = None) -> int:
    """The memory counters: no GPU memory was ever allocated, so PyTorch's CPU build says 0."""
    return 0


def _nothing(*args: Any, **kwargs: Any) -> None:
    """`torch.cuda.empty_cache()`: a no-op where CUDA was never initialised."""
    return None


def _false(*args: Any, **kwargs: Any) -> bool:
    return False


def event(*args: Any, **kwargs: Any) -> None:
    """`torch.cuda.Event(enable_timing=True)`: the CPU build has only the dummy class, which refuses to be made."""
    raise GradcliError("Tried to instantiate dummy base class Event", hint=_HINT)


class CudaDevice:
    """`torch.cuda.device(0)`: made without complaint, refused when a `with` enters it."""

    program_attributes: frozenset[str] = frozenset()

    def __init__(self, device: Any) -> None:
        self.device = device

    def __enter__(self) -> None:
        raise GradcliError("PyTorch was compiled without CUDA support", hint=_HINT)

    def __exit__(self, *exc: Any) -> bool:
        return False


def device(device: Any) -> CudaDevice:
    return CudaDevice(device)


NAMES: dict[str, Any] = {
    "synchronize": _no_cuda, "current_device": _no_cuda, "get_device_name": _no_cuda, "mem_get_info": _no_cuda,
    "get_device_capability": _no_cuda, "get_device_properties": _no_cuda,
    "set_device": _missing_binding("_cuda_setDevice"),
    "reset_peak_memory_stats": _missing_binding("_cuda_resetPeakMemoryStats"),
    "max_memory_allocated": _no_bytes, "memory_allocated": _no_bytes, "memory_reserved": _no_bytes,
    "max_memory_reserved": _no_bytes, "empty_cache": _nothing, "is_bf16_supported": _false,
    "is_initialized": _false, "Event": event, "device": device}
"""torch.cuda's members beyond `is_available`, `device_count` and the seeds (those are `devices`')."""


class Switches:
    """A module of boolean switches (`torch.backends.cudnn`, `torch.backends.cuda.matmul`): each keeps what a
    program sets, a bool only, refused with PyTorch's words otherwise. `saved`/`restore` bracket one run, so one
    program's settings never reach the next. Each module is a class of its own (`switches`), since what a program
    may read is listed per class."""

    program_attributes: frozenset[str] = frozenset()

    def __init__(self, name: str, defaults: dict[str, bool], setters: dict[str, str],
                 functions: dict[str, Any]) -> None:
        self.name = name
        self.setters = setters
        self.values = dict(defaults)
        self.functions = functions

    def program_set_attribute(self, attr: str, value: Any) -> None:
        if attr not in self.values:
            raise ArgumentError(f"cannot assign to attribute '{attr}' of {self.name}",
                                hint=f"its switches are {', '.join(sorted(self.values))}")
        if not isinstance(value, bool):
            raise GradcliError(f"{self.setters[attr]} expects a bool, but got {type(value).__name__}",
                               hint=f"{self.name}.{attr} = True")
        self.values[attr] = value

    def __getattr__(self, attr: str) -> Any:
        values = self.__dict__.get("values", {})
        if attr in values:
            return values[attr]
        functions = self.__dict__.get("functions", {})
        if attr in functions:
            return functions[attr]
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"

    @property
    def members(self) -> dict[str, Any]:
        """What `from torch.backends.cudnn import ...` and `gradcli ops` read, as of a Namespace."""
        return {**self.values, **self.functions}

    def saved(self) -> dict[str, bool]:
        return dict(self.values)

    def restore(self, values: dict[str, bool]) -> None:
        self.values = dict(values)


def switches(name: str, defaults: dict[str, bool], setters: dict[str, str],
             functions: dict[str, Any] | None = None) -> Switches:
    kind = type("Switches", (Switches,), {"program_attributes": frozenset(defaults) | frozenset(functions or {})})
    return kind(name, defaults, setters, dict(functions or {}))


def _no_version() -> None:
    """`torch.backends.cudnn.version()`: None where cuDNN is not built in."""
    return None


CUDNN = switches("torch.backends.cudnn",
                 {"benchmark": False, "deterministic": False, "enabled": True, "allow_tf32": True},
                 {"benchmark": "set_benchmark_cudnn", "deterministic": "set_deterministic_cudnn",
                  "enabled": "set_enabled_cudnn", "allow_tf32": "set_allow_tf32_cublas"},
                 {"is_available": _false, "version": _no_version})
"""torch 2.13's own setter name for cudnn.allow_tf32 is set_allow_tf32_cublas: its error says so, and so does this."""
SWITCHES = (CUDNN,)


class MatmulPrecision:
    """`torch.set_float32_matmul_precision('high')`: kept and read back; gradcli's float32 matmul is always
    full precision ('highest' is what it computes), as PyTorch's CPU kernels are."""

    value = "highest"
    CHOICES = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """An unknown word leaves the setting as it was, as PyTorch does (it only warns)."""
    if precision in MatmulPrecision.CHOICES:
        MatmulPrecision.value = precision


def get_float32_matmul_precision() -> str:
    return MatmulPrecision.value


class _Matmul:
    """`torch.backends.cuda.matmul.allow_tf32`: PyTorch's other spelling of the matmul precision (True is
    'high', False 'highest'), so the two read each other's settings."""

    program_attributes = frozenset({"allow_tf32"})

    @property
    def allow_tf32(self) -> bool:
        return MatmulPrecision.value != "highest"

    def program_set_attribute(self, attr: str, value: Any) -> None:
        if attr != "allow_tf32":
            raise ArgumentError(f"cannot assign to attribute '{attr}' of torch.backends.cuda.matmul",
                                hint="its switch is allow_tf32")
        if not isinstance(value, bool):
            raise GradcliError(f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}",
                               hint="torch.backends.cuda.matmul.allow_tf32 = True")
        MatmulPrecision.value = "high" if value else "highest"


MATMUL = _Matmul()


def saved() -> tuple:
    """Every switch a program can set here, to put back after its run."""
    return tuple(s.saved() for s in SWITCHES) + (MatmulPrecision.value,)


def restore(values: tuple) -> None:
    for switches, kept in zip(SWITCHES, values):
        switches.restore(kept)
    MatmulPrecision.value = values[-1]
