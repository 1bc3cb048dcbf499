"""`torch.utils.checkpoint`: trade compute for memory by running a block again during backward.

`use_reentrant=True` (PyTorch's default while the argument is left out) is PyTorch's `CheckpointFunction`:
an `autograd.Function` whose forward runs the block with gradients off, so the graph shows one
`CheckpointFunctionBackward` node over the block's inputs, and whose backward runs the block again with
gradients on (the random stream put back where it stood, so dropout draws the same masks) and
backpropagates through that fresh graph, which also reaches the block's parameters. `--check` sees
the node as any Function's: its backward proven against its forward. `use_reentrant=False` records the
block's own nodes, as PyTorch's graph shows them.
"""
from __future__ import annotations

from typing import Any, Callable

from gradcli.engine.backward import run_backward
from gradcli.engine.function import Function
from gradcli.engine.modes import enable_grad
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        from gradcli.engine.creation import Defaults
        ctx.run_function, ctx.inputs = run_function, args
        ctx.rng = Defaults.generator.stash() if preserve_rng_state else None
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        from gradcli.engine.creation import Defaults
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in ctx.inputs]
        now = Defaults.generator.stash()
        if ctx.rng is not None:
            Defaults.generator.restore(ctx.rng)
        try:
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if ctx.rng is not None:
                Defaults.generator.restore(now)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise ArgumentError("none of output has requires_grad=True, this checkpoint() is not necessary",
                                hint="checkpoint a block whose output depends on tensors that require grad")
        run_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, *(a.grad if isinstance(a, Tensor) else None for a in inputs))


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: Any = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    if not callable(function):
        raise ArgumentError("checkpoint() takes the function (or module) to run first",
                            hint="e.g. y = checkpoint(block, x, use_reentrant=False)")
    if use_reentrant is False:
        return function(*args, **kwargs)
    if kwargs:
        raise ArgumentError("Unexpected keyword arguments: " + ",".join(kwargs),
                            hint="the reentrant checkpoint passes positional arguments only; or use_reentrant=False")
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: Any = None, **kwargs: Any) -> Any:
    """The modules run in `segments` parts: every part but the last checkpointed."""
    from gradcli.nn.modules import Module
    layers = list(functions.children()) if isinstance(functions, Module) else list(functions)
    size = len(layers) // segments if segments > 0 else 0
    if size == 0:
        raise ArgumentError(f"checkpoint_sequential: {segments} segments of {len(layers)} modules",
                            hint="use at least one module per segment")

    def run(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for layer in layers[start:end + 1]:
                x = layer(x)
            return x
        return forward
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(layers) - 1)(input)


NAMES = {"checkpoint": checkpoint, "checkpoint_sequential": checkpoint_sequential}
"""`torch.utils.checkpoint`'s members."""
