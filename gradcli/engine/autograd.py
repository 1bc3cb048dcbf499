"""`grad`, `jacobian` and `hessian`: PyTorch's functional autograd, built on the one backward engine.

Jacobians are repeated vector-Jacobian products over one retained graph (one backward per output
element); Hessians differentiate a `create_graph=True` gradient once more. Layouts are PyTorch's:
output shape + input shape.

With `create_graph=True` the functionals of torch.autograd.functional return tensors on a graph, as
PyTorch's do: an input that requires grad is traced through a view of itself (not a detached copy),
and every vector-Jacobian product is itself recorded, so a later backward reaches the inputs.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from gradcli.engine import budget
from gradcli.engine.backward import run_backward, vector_jacobian_rows
from gradcli.errors import ArgumentError, BackwardError, ShapeError
from gradcli.engine.tensor import VMAP_LEVELS, Tensor, _wrap, check_elements


def as_list(x: Any) -> list:
    """One tensor or a sequence of them, as a list (None: none)."""
    if x is None:
        return []
    return list(x) if isinstance(x, (list, tuple)) else [x]


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """d(outputs)/d(inputs) without touching `.grad`, as `torch.autograd.grad`. With `is_grads_batched` the first
    dimension of each grad_output is a batch of vectors: one backward pass each (the graph kept between them),
    their gradients stacked, as PyTorch's vmap over the backward pass returns them."""
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if materialize_grads and allow_unused is False:
        raise ArgumentError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                            "allow_unused=False.", hint="drop allow_unused=False")
    allow_unused = bool(allow_unused or materialize_grads)
    outs, ins = as_list(outputs), as_list(inputs)
    if not outs or not ins:
        raise ArgumentError("grad() needs at least one output and one input",
                            hint="e.g. grad(y, x) or grad(y, [x, w])")
    gos = as_list(grad_outputs) or [None] * len(outs)
    if len(gos) != len(outs):
        raise ArgumentError(f"grad_outputs has {len(gos)} entries but there are {len(outs)} outputs",
                            hint="give one gradient per output, in the same order")
    levels = None
    if VMAP_LEVELS:
        from gradcli.engine.batched import for_backward
        outs, ins, gos, levels = for_backward(outs, ins, gos)
    for x in ins:
        if not isinstance(x, Tensor) or not x.requires_grad:
            raise BackwardError("One of the differentiated Tensors does not require grad",
                                hint="the inputs of grad() must be tensors created with requires_grad=True "
                                     "(or computed from one)")
    batched_cotangent = levels is not None and any(k for _, k in levels)  # a vjp_fn vmapped over its cotangents
    found = run_backward(outs, gos, retain_graph, create_graph or batched_cotangent, inputs=ins)
    if batched_cotangent and not create_graph:
        found = [None if g is None else g.detach() for g in found]
    result = []
    for k, (x, g) in enumerate(zip(ins, found)):
        if g is None and materialize_grads:
            g = np.zeros(x.shape, x.dtype)
        if g is None:
            if not allow_unused:
                raise BackwardError(f"The differentiated Tensor at index {k} appears to not have been used in the "
                                    "graph. Set allow_unused=True if this is the desired behavior.",
                                    hint="every input passed to grad() must be used to compute the output")
            result.append(None)
            continue
        result.append(g if isinstance(g, Tensor) else _wrap(np.array(np.broadcast_to(g, x.shape))))
    if levels is not None:
        from gradcli.engine.batched import restacked
        result = [None if g is None else restacked(g, *lv) for g, lv in zip(result, levels)]
    return tuple(result)



def _batched_grad(outputs: Any, inputs: Any, grad_outputs: Any, retain_graph: bool | None, create_graph: bool,
                  allow_unused: bool | None, materialize_grads: bool) -> tuple[Tensor | None, ...]:
    gos = as_list(grad_outputs)
    if not gos or any(not isinstance(g, Tensor) or g.ndim == 0 for g in gos):
        raise ArgumentError("is_grads_batched=True needs grad_outputs: tensors whose first dimension is the batch",
                            hint="e.g. grad(y, x, torch.eye(y.numel()).view(-1, *y.shape), is_grads_batched=True)")
    count = gos[0].shape[0]
    if any(g.shape[0] != count for g in gos):
        raise ShapeError("is_grads_batched=True: every grad_output needs the same batch size (its first dimension)",
                         hint=f"the first grad_output has {count}")
    rows = [grad(outputs, inputs, [g[k] for g in gos], True if k < count - 1 else retain_graph, create_graph,
                 allow_unused=allow_unused, materialize_grads=materialize_grads) for k in range(count)]
    from gradcli.engine.functions import stack
    return tuple(None if column[0] is None else stack(list(column)) for column in zip(*rows))


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Any = None, inputs: Any = None) -> None:
    """`torch.autograd.backward`: the gradients of several outputs (each with its own starting gradient)
    accumulated into the leaves' `.grad` in one pass, as `sum(t.backward(g))` would."""
    if inputs is not None:
        raise ArgumentError("torch.autograd.backward(inputs=...) is not supported by gradcli",
                            hint="use torch.autograd.grad(outputs, inputs) for the gradients of chosen tensors")
    outs = as_list(tensors)
    grads = as_list(grad_tensors if grad_tensors is not None else grad_variables) or [None] * len(outs)
    if len(grads) != len(outs):
        raise ArgumentError(f"grad_tensors has {len(grads)} entries but there are {len(outs)} tensors",
                            hint="give one starting gradient per tensor, in the same order")
    run_backward(outs, grads, retain_graph, create_graph)


def as_tensor_backward(args: list, kwargs: dict) -> tuple[Callable[..., None], list, dict] | None:
    """`torch.autograd.backward(t, g, ...)` of one tensor as the call `t.backward(g, ...)` it is, so a script
    runner checks it as it checks any backward; None for several tensors (or arguments it does not know)."""
    names = ("tensors", "grad_tensors", "retain_graph", "create_graph")
    if len(args) > len(names) or set(kwargs) - set(names):
        return None
    given = {**dict(zip(names, args)), **kwargs}
    tensors, gradient = given.get("tensors"), given.get("grad_tensors")
    if isinstance(tensors, (list, tuple)) and len(tensors) == 1:
        tensors = tensors[0]
        gradient = gradient[0] if isinstance(gradient, (list, tuple)) and len(gradient) == 1 else gradient
    if not isinstance(tensors, Tensor) or isinstance(gradient, (list, tuple)):
        return None
    return tensors.backward, [gradient], {k: given[k] for k in ("retain_graph", "create_graph") if k in given}


def _names(inputs: Sequence[Tensor], names: Sequence[str] | None) -> list[str]:
    return list(names) if names is not None else [f"input {k}" for k in range(len(inputs))]


def jacobian_of(output: Tensor, inputs: Sequence[Tensor], names: Sequence[str] | None = None,
                output_name: str = "output") -> list[np.ndarray]:
    """The Jacobian of an already recorded output: one VJP per output element, graph retained.

    Each block is checked against the element cap before it is allocated; `names` label the
    inputs in that error.
    """
    for name, x in zip(_names(inputs, names), inputs):
        check_elements(output.shape + x.shape, f"the Jacobian ∂{output_name}/∂{name}",
                       np.result_type(output.dtype, x.dtype))
    blocks = [np.zeros(output.shape + x.shape, dtype=np.result_type(output.dtype, x.dtype)) for x in inputs]
    if not output.requires_grad:
        return blocks
    n = output.numel()
    budget.refuse_backward([output._node], f"the Jacobian's {n:,} backward passes", n)
    rows = [block.reshape((n,) + block.shape[output.ndim:]) for block in blocks]
    unit = np.zeros(output.shape, dtype=output.dtype)
    flat = unit.reshape(-1)

    def units() -> Iterator[np.ndarray]:
        for k in range(n):
            flat[:] = 0
            flat[k] = 1
            yield unit
    for k, found in enumerate(vector_jacobian_rows(output, list(inputs), units())):
        for row, g in zip(rows, found):
            if g is not None:
                row[k] = g
    return blocks


def jacobian_on_graph(output: Tensor, inputs: Sequence[Tensor]) -> list[Tensor]:
    """`jacobian_of` under create_graph: each row a recorded VJP, the rows stacked on the graph.

    A block that does not depend on the inputs comes back without a graph, as in PyTorch.
    """
    from gradcli.engine.functions import stack
    for k, x in enumerate(inputs):
        check_elements(output.shape + x.shape, f"the Jacobian of the output by input {k}",
                       np.result_type(output.dtype, x.dtype))
    dtypes = [np.result_type(output.dtype, x.dtype) for x in inputs]
    n = output.numel()
    if not output.requires_grad or n == 0:
        return [_wrap(np.zeros(output.shape + x.shape, dtype=d)) for x, d in zip(inputs, dtypes)]
    rows: list[list[Tensor]] = [[] for _ in inputs]
    for k in range(n):
        unit = np.zeros(n, dtype=output.dtype)
        unit[k] = 1
        found = grad(output, list(inputs), grad_outputs=_wrap(unit.reshape(output.shape)), retain_graph=True,
                     create_graph=True, allow_unused=True)
        for row, x, d, g in zip(rows, inputs, dtypes, found):
            row.append(_wrap(np.zeros(x.shape, dtype=d)) if g is None else g)
    return [stack(row).reshape(output.shape + x.shape) for row, x in zip(rows, inputs)]


def hessian_of(output: Tensor, inputs: Sequence[Tensor], names: Sequence[str] | None = None,
               output_name: str = "the output") -> list[list[np.ndarray]]:
    """Second derivatives of a one-element output: blocks[a][b] has shape inputs[a] + inputs[b].

    Every block is checked against the element cap before any is allocated.
    """
    if output.numel() != 1:
        raise BackwardError(f"the Hessian needs a scalar output, but '{output_name}' has shape "
                            f"{tuple(output.shape)}",
                            hint=f"use the Jacobian for a vector output (gradcli jacobian), or reduce it to one "
                                 f"number first (e.g. end the program with out = {output_name}.sum())")
    labels = _names(inputs, names)
    for a, x in zip(labels, inputs):
        for b, y in zip(labels, inputs):
            check_elements(x.shape + y.shape, f"the Hessian block ∂²{output_name}/∂{a}∂{b}",
                           np.result_type(x.dtype, y.dtype))
    first = grad(output, list(inputs), create_graph=True, allow_unused=True)
    blocks = []
    for x, g in zip(inputs, first):
        row_blocks = [np.zeros(x.shape + y.shape, dtype=np.result_type(x.dtype, y.dtype)) for y in inputs]
        if g is not None and g.requires_grad:
            flat = g.reshape(-1)
            for k in range(flat.numel()):
                second = grad(flat[k], list(inputs), retain_graph=True, allow_unused=True)
                for block, h in zip(row_blocks, second):
                    if h is not None:
                        block.reshape((flat.numel(),) + block.shape[x.ndim:])[k] = h._data
        blocks.append(row_blocks)
    return blocks


def _traced(f: Callable[..., Any], inputs: Any, what: str, hint: str, create_graph: bool
            ) -> tuple[list[Tensor], bool, Tensor]:
    """Call `f` on fresh leaves copied from `inputs` (one input or a sequence), as torch.autograd.functional does.

    Under create_graph an input that requires grad is passed as a view of itself instead, so the
    results stay differentiable with respect to it.
    """
    from gradcli.engine.functions import as_tensor, view_as
    if not callable(f) or isinstance(f, Tensor):
        raise ArgumentError(f"{what}(): the first argument must be a function, not {type(f).__name__}",
                            hint=f"pass the function, then the inputs: {what}(f, x)")
    single = not isinstance(inputs, (list, tuple))
    xs = [view_as(x, x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
          for x in map(as_tensor, as_list(inputs))]
    out = f(*xs)
    if not isinstance(out, Tensor):
        raise ArgumentError(f"{what}(): the function must return a tensor", hint=hint)
    return xs, single, out


def _single_element(out: Tensor, what: str) -> None:
    if out.numel() != 1:
        raise BackwardError(f"The Tensor returned by the function given to {what} should contain a single element",
                            hint="reduce the output to one number, e.g. return y.sum()")


def _strict(out: Tensor, strict: bool) -> None:
    if strict and not out.requires_grad:
        raise BackwardError("Output 0 of the user-provided function does not require gradients. The outputs must be "
                            "computed in a differentiable manner from the input when running in strict mode.",
                            hint="compute the output from the inputs, or pass strict=False")


def jacobian(f: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """`torch.autograd.functional.jacobian`: a Tensor for one input, else a tuple of Tensors.

    `vectorize` and `strategy` only change how PyTorch computes it; the numbers are the same.
    """
    return traced_jacobian(f, inputs, create_graph, strict, vectorize, strategy)[0]


def hessian(f: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """`torch.autograd.functional.hessian`: a Tensor for one input, else a tuple of tuples."""
    return traced_hessian(f, inputs, create_graph, strict, vectorize, outer_jacobian_strategy)[0]


def traced_jacobian(f: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
                    vectorize: bool = False, strategy: str = "reverse-mode") -> tuple[Any, list[Tensor], Tensor]:
    """`jacobian`, with the fresh leaves and the output it differentiated: what a check replays."""
    xs, single, out = _traced(f, inputs, "jacobian", "return one tensor computed from the inputs", create_graph)
    _strict(out, strict)
    blocks = jacobian_on_graph(out, xs) if create_graph else [_wrap(b) for b in jacobian_of(out, xs)]
    return (blocks[0] if single else tuple(blocks)), xs, out


def traced_hessian(f: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
                   vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"
                   ) -> tuple[Any, list[Tensor], Tensor]:
    """`hessian`, with the fresh leaves and the output it differentiated: what a check replays."""
    xs, single, out = _traced(f, inputs, "hessian",
                              "return one tensor with a single element computed from the inputs", create_graph)
    _strict(out, strict)
    _single_element(out, "hessian")
    if create_graph:
        blocks = [jacobian_on_graph(g, xs) for g in _gradients(out, xs, None, True)]
    else:
        blocks = [[_wrap(b) for b in row] for row in hessian_of(out, xs)]
    return (blocks[0][0] if single else tuple(tuple(row) for row in blocks)), xs, out


def _vector(v: Any, like: Sequence[Tensor], single: bool, message: str) -> list[Tensor]:
    """`v` as one tensor per entry of `like`, with PyTorch's rule for leaving it out (one element only)."""
    from gradcli.engine.functions import as_tensor
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise ArgumentError(message, hint="pass v, a tensor of the same shape")
        return [_wrap(np.ones(like[0].shape, dtype=like[0].dtype))]
    vs = [as_tensor(t) for t in as_list(v)] if not single or isinstance(v, (list, tuple)) else [as_tensor(v)]
    if len(vs) != len(like) or any(a.shape != b.shape for a, b in zip(vs, like)):
        raise ArgumentError(f"v has the wrong shape: expected {[tuple(t.shape) for t in like]}, got "
                            f"{[tuple(t.shape) for t in vs]}", hint="give v the shape of what it multiplies")
    return vs


def _gradients(out: Tensor, xs: list[Tensor], v: list[Tensor], create_graph: bool) -> list[Tensor]:
    """v^T J for each input, zeros where the output does not depend on it."""
    if not out.requires_grad:
        return [_wrap(np.zeros(x.shape, dtype=x.dtype)) for x in xs]
    found = grad(out, xs, grad_outputs=v, create_graph=create_graph, allow_unused=True)
    return [_wrap(np.zeros(x.shape, dtype=x.dtype)) if g is None else g if create_graph else g.detach()
            for x, g in zip(xs, found)]


def _shaped(values: list[Tensor], single: bool) -> Any:
    return values[0] if single else tuple(values)


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """`torch.autograd.functional.vjp`: (func(inputs), v^T J)."""
    return traced_vjp(func, inputs, v, create_graph, strict)[0]


def traced_vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
               strict: bool = False) -> tuple[tuple[Tensor, Any], list[Tensor], Tensor]:
    """`vjp`, with the fresh leaves and the output it differentiated: what a check replays."""
    xs, single, out = _traced(func, inputs, "vjp", "return one tensor computed from the inputs", create_graph)
    _strict(out, strict)
    vs = _vector(v, [out], True, "The vector v can only be None if the user-provided function returns a single "
                                 "Tensor with a single element.")
    gs = _gradients(out, xs, vs, create_graph)
    return ((out if create_graph else out.detach()), _shaped(gs, single)), xs, out


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Tensor]:
    """`torch.autograd.functional.jvp`: (func(inputs), J v), J built row by row from the one engine."""
    return traced_jvp(func, inputs, v, create_graph, strict)[0]


def traced_jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
               strict: bool = False) -> tuple[tuple[Tensor, Tensor], list[Tensor], Tensor]:
    """`jvp`, with the fresh leaves and the output whose (retained) Jacobian it contracted."""
    xs, single, out = _traced(func, inputs, "jvp", "return one tensor computed from the inputs", create_graph)
    _strict(out, strict)
    vs = _vector(v, xs, single, "The vector v can only be None if the input to the user-provided function is a "
                                "single Tensor with a single element.")
    if create_graph:
        from gradcli.engine.functions import tensordot
        terms = [tensordot(block, u, x.ndim) for block, x, u in zip(jacobian_on_graph(out, xs), xs, vs)]
        return (out, sum(terms[1:], terms[0])), xs, out
    total = np.zeros(out.shape, dtype=out.dtype)
    for block, x, u in zip(jacobian_of(out, xs), xs, vs):
        total = total + np.tensordot(block, u._data, axes=x.ndim)
    return (out.detach(), _wrap(np.asarray(total, dtype=out.dtype))), xs, out


def _second(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
            what: str) -> tuple[tuple[Tensor, Any], list[Tensor], Tensor | None]:
    """hvp and vhp: differentiate (grad f) . v once more; for a twice-differentiable f both are H v.

    Besides the value, the fresh leaves and the scalar (grad f) . v whose gradient is the answer:
    a check judges that gradient as it judges `grad` of a create_graph result.
    """
    xs, single, out = _traced(func, inputs, what, "return one tensor with a single element", create_graph)
    _strict(out, strict)
    _single_element(out, what)
    vs = _vector(v, xs, single, "The vector v can only be None if the input to the user-provided function is a "
                                "single Tensor with a single element.")
    first = _gradients(out, xs, [_wrap(np.ones(out.shape, dtype=out.dtype))], True)
    dot = None
    for g, u in zip(first, vs):
        if g.requires_grad:
            term = (g * u).sum()
            dot = term if dot is None else dot + term
    second = _gradients(dot, xs, [_wrap(np.ones((), dtype=out.dtype))], create_graph) if dot is not None else \
        [_wrap(np.zeros(x.shape, dtype=x.dtype)) for x in xs]
    return ((out if create_graph else out.detach()), _shaped(second, single)), xs, dot


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """`torch.autograd.functional.hvp`: (func(inputs), H v)."""
    return traced_hvp(func, inputs, v, create_graph, strict)[0]


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Any]:
    """`torch.autograd.functional.vhp`: (func(inputs), v^T H)."""
    return traced_vhp(func, inputs, v, create_graph, strict)[0]


def traced_hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
               strict: bool = False) -> tuple[tuple[Tensor, Any], list[Tensor], Tensor | None]:
    return _second(func, inputs, v, create_graph, strict, "hvp")


def traced_vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
               strict: bool = False) -> tuple[tuple[Tensor, Any], list[Tensor], Tensor | None]:
    return _second(func, inputs, v, create_graph, strict, "vhp")


TRACED: dict[Callable[..., Any], Callable[..., tuple[Any, list[Tensor], Tensor]]] = {
    jacobian: traced_jacobian, hessian: traced_hessian, vjp: traced_vjp, jvp: traced_jvp,
    hvp: traced_hvp, vhp: traced_vhp}
"""The functionals that trace a function of their own, by the variant that also returns what it traced."""
