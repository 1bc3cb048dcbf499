"""`torch.compile`: PyTorch traces the model or function and generates kernels for it; the numbers it computes
are the eager ones (up to the order of float operations a fused kernel may change). gradcli has no compiler,
so the compiled model is the model itself, wrapped as PyTorch wraps it (`OptimizedModule` with the model as
`_orig_mod`, so `print(model)` and `state_dict()` show PyTorch's names), and a compiled function is the
function."""
from __future__ import annotations

from typing import Any, Callable

from gradcli.errors import ArgumentError, ValueDomainError
from gradcli.nn.modules import Module

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class OptimizedModule(Module):
    def __init__(self, module: Module) -> None:
        super().__init__()
        self.add_module("_orig_mod", module)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._modules["_orig_mod"](*args, **kwargs)


def compile_model(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None, backend: Any = "inductor",
            mode: Any = None, options: Any = None, disable: bool = False) -> Any:
    """`torch.compile(model)`, `@torch.compile` and `@torch.compile(mode=...)` (which returns the decorator)."""
    if mode is not None and mode not in MODES:
        raise ValueDomainError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}",
                               hint="mode='default' (gradcli runs the model as written whatever the mode)")
    if model is None:
        return lambda fn: compile_model(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if isinstance(model, Module):
        return model if disable else OptimizedModule(model)
    if not callable(model):
        raise ArgumentError(f"A callable function is expected, but {type(model)} is provided.",
                            hint="torch.compile(model) or torch.compile(function)")
    return model


NAMES: dict[str, Callable[..., Any]] = {"compile": compile_model}
