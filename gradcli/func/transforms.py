"""`torch.func` (and `functorch`): function transforms built on the one backward engine.

A transform calls the function on fresh leaves (a view of an input that itself requires grad, so
that an outer transform or a later backward still reaches it) and differentiates the result with
`autograd.grad(create_graph=True)`: transforms nest (`jacfwd(jacrev(f))`, `vmap(grad(f))`) because
each level's result is on the graph of the level outside it. A result whose graph reaches none of
the caller's tensors is detached, as PyTorch's transforms hand back plain tensors.

`jvp` and `jacfwd` run the function in a forward-mode level of their own (engine/forward_ad.py): the
tangents are computed by the op table's jvp rules as the function runs, jacfwd's for every basis
direction at once. Inside vmap (func/vmap.py) the fresh leaves are batched, so every example is
differentiated at once; `jacrev` batches its own backward over every basis cotangent the same way.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine import forward_ad as FA
from gradcli.engine.autograd import grad as autograd_grad
from gradcli.engine.autograd import jacobian_on_graph
from gradcli.engine.backward import run_backward
from gradcli.engine.tensor import VMAP_LEVELS, Node, Tensor, _wrap, check_elements
from gradcli.engine.batched import Fallbacks, Level as BatchLevel, NoRule, levels_of, physical, rewrap, unwrap, wrap
from gradcli.engine.modes import Inside, inside as _inside
from gradcli.func.batching import install
from gradcli.func.vmap import Batched, vmap
from gradcli.errors import ArgumentError, BackwardError, ShapeError


def _leaves(tree: Any) -> list[Tensor]:
    """The tensors of a (nested) tuple, list or dict of tensors, in order."""
    if isinstance(tree, Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [t for part in tree for t in _leaves(part)]
    if isinstance(tree, dict):
        return [t for part in tree.values() for t in _leaves(part)]
    raise ArgumentError(f"Thing passed to transform API must be Tensor, got {type(tree)}",
                        hint="pass tensors (or tuples, lists or dicts of tensors) as the differentiated arguments")


def _is_tree(value: Any) -> bool:
    """Whether `value` is a tensor or a (nested) tuple, list or dict of nothing but tensors."""
    if isinstance(value, Tensor):
        return True
    parts = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list)) else None
    return parts is not None and all(_is_tree(p) for p in parts)


def _rebuild(tree: Any, values: Any) -> Any:
    """`tree` with its tensors replaced, in order, by the next of `values` (an iterator)."""
    if isinstance(tree, Tensor):
        return next(values)
    if isinstance(tree, tuple):
        return tuple(_rebuild(part, values) for part in tree)
    if isinstance(tree, list):
        return [_rebuild(part, values) for part in tree]
    return {k: _rebuild(part, values) for k, part in tree.items()}


def _fresh(x: Tensor) -> Tensor:
    """What the function sees: a view of `x` on its graph when `x` requires grad, else a new leaf.

    Inside vmaps that batch by rules, the leaf is every example's own (batched at every open level): each
    example's gradient then stays its own, as PyTorch's per-example gradients of a shared input."""
    from gradcli.engine.functions import view_as
    if not np.issubdtype(x.dtype, np.floating):
        raise BackwardError("only Tensors of floating point dtype can require gradients",
                            hint="make the input a float tensor, e.g. torch.tensor([1.0, 2.0])")
    if VMAP_LEVELS:
        x = _everywhere(x if x.requires_grad else x.detach())
    return view_as(x, x) if x.requires_grad else x.detach().requires_grad_(True)


def _everywhere(x: Tensor) -> Tensor:
    """`x` batched at every open vmap level: expanded (a view) where it was the same for every example."""
    from gradcli.engine.functions import expand, unsqueeze
    for level in list(VMAP_LEVELS):
        if unwrap(x, level) is x:
            x = wrap(expand(unsqueeze(x, 0), (level.size,) + tuple(x.shape)), level)
    return x


def _argnums(argnums: Any, args: tuple) -> tuple[tuple[int, ...], bool]:
    """The positions differentiated, and whether one was named alone (the result is then not a tuple)."""
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    nums = (argnums,) if single else tuple(argnums) if isinstance(argnums, (tuple, list)) else None
    if not nums or not all(isinstance(n, int) and not isinstance(n, bool) for n in nums):
        raise ArgumentError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}",
                            hint="e.g. argnums=0 or argnums=(0, 1)")
    for n in nums:
        if not -len(args) <= n < len(args):
            raise ArgumentError(f"Got argnum={n}, but only {len(args)} positional inputs",
                                hint="count the function's positional arguments from 0")
    return tuple(n % len(args) for n in nums), single


Seeds = Callable[[list[Tensor]], list[np.ndarray]]
"""The tangents forward mode starts from, one per fresh leaf (jvp's given ones, jacfwd's basis)."""


class Traced:
    """One call of the function on fresh leaves: what every transform differentiates.

    With `forward` (a level and its seeds), the call runs in that forward-mode level, the fresh leaves
    carrying the seeds as tangents: `self.level.tangent(output)` is then the JVP.
    """

    def __init__(self, func: Callable[..., Any], args: tuple, kwargs: dict, argnums: Any, has_aux: bool,
                 what: str, forward: tuple[FA.Level, Seeds] | None = None) -> None:
        self.nums, self.single = _argnums(argnums, args)
        self.trees = [args[n] for n in self.nums]
        self.given = [_leaves(tree) for tree in self.trees]
        self.callers = [x for xs in self.given for x in xs]
        """The caller's tensors the differentiated arguments are, in order (a check names its inputs by them)."""
        self.keep = any(x.requires_grad for xs in self.given for x in xs)
        self.xs = [[_fresh(x) for x in xs] for xs in self.given]
        call_args = list(args)
        for n, tree, xs in zip(self.nums, self.trees, self.xs):
            call_args[n] = _rebuild(tree, iter(xs))
        self.level = None
        if forward is None:
            with _inside():
                result = func(*call_args, **kwargs)
        else:
            self.level, seeds = forward
            with self.level, _inside(vmap=self.level.batch is not None):  # jacfwd: PyTorch's vmap of jvp
                for x, tangent in zip(self.flat, seeds(self.flat)):
                    FA.seed(self.level, physical(x), _physical_seed(tangent, x))
                result = func(*call_args, **kwargs)
        self.aux = None
        if has_aux:
            if not isinstance(result, tuple) or len(result) != 2:
                raise ArgumentError(f"{what}(f)(*args): output of function f should be a tuple: (output, aux) "
                                    "if has_aux is True", hint="return (output, aux) from the function")
            result, aux = result
            self.aux = _rebuild(aux, iter([t.detach() for t in _leaves(aux)])) if _is_tree(aux) else aux
        self.out = result

    @property
    def flat(self) -> list[Tensor]:
        return [x for xs in self.xs for x in xs]

    def shaped(self, values: list[Any]) -> Any:
        """Per-input values (one per fresh leaf, in order) in the shape of the differentiated arguments."""
        it = iter(values)
        parts = [_rebuild(tree, it) for tree in self.trees]
        return parts[0] if self.single else tuple(parts)

    def finish(self, t: Tensor) -> Tensor:
        """A result as the caller sees it: on the graph only when the caller's own tensors are on it."""
        return t if self.on_graph(t) else t.detach()

    def on_graph(self, t: Tensor) -> bool:
        """Whether a result computed from `t` must stay differentiable: the caller's tensors are on its graph
        (an outer transform's, or a closure's). Forward mode's tangents are plain values, so such a
        result is taken from the graph by reverse mode instead, for the outer level to differentiate."""
        return self.keep or _reaches_outside(t, self.flat)


def _reaches_outside(t: Tensor, fresh: list[Tensor]) -> bool:
    """Whether `t`'s graph reaches a leaf that requires grad other than this transform's own (inside vmap, on
    the physical graph)."""
    if not t.requires_grad:
        return False
    t = physical(t)
    own = {id(physical(x)) for x in fresh}
    seen, todo = set(), [t._node]
    while todo:  # iterative: a graph may be a long chain
        node = todo.pop()
        for x in node.inputs:
            if type(x) is Tensor and x.requires_grad and id(x) not in own:
                return True
            if type(x) is Node and id(x) not in seen:
                seen.add(id(x))
                todo.append(x)
    return False


def _scalar(out: Any, what: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise ArgumentError(f"{what}(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}",
                            hint="return a tensor with one element, e.g. y.sum()")
    if out.numel() != 1 or out.ndim != 0:
        raise ShapeError(f"{what}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                         f"{out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?",
                         hint="reduce the output to one number, e.g. return y.sum()")
    return out


def _gradients(out: Tensor, xs: list[Tensor], cotangent: Any = None) -> list[Tensor]:
    """d out / d xs on the graph (create_graph), zeros where out does not depend on an input."""
    if not out.requires_grad:
        return [_wrap(np.zeros(x.shape, dtype=x.dtype)) for x in xs]
    found = autograd_grad(out, xs, grad_outputs=cotangent, retain_graph=True, create_graph=True, allow_unused=True)
    return [_wrap(np.zeros(x.shape, dtype=x.dtype)) if g is None else g for x, g in zip(xs, found)]


class Transform:
    """A transformed function: what `grad(f)`, `jacrev(f)`... return, and what a program then calls.

    `remake(g)` is the same transform of another function g (grad, jacrev and jacfwd without aux);
    `--check` uses it to judge a transform of a transform (`jacfwd(jacrev(f))`, `hessian(f)`) by the
    second derivatives of f's own output, never by the recorded graph of the inner derivative (which
    the inner VJPs built, so judging it would repeat them).
    """

    def __init__(self, what: str, func: Callable[..., Any], run: Callable[..., Any], *,
                 remake: Callable[[Callable[..., Any]], "Transform"] | None = None, argnums: Any = None,
                 same_as: "Transform | None" = None) -> None:
        if not callable(func) or isinstance(func, Tensor):
            raise ArgumentError(f"{what}(): the first argument must be a function, not {type(func).__name__}",
                                hint=f"pass the function itself: {what}(f)(x)")
        self.what = what
        self.func = func
        self.run = run
        self.remake = remake
        self.argnums = argnums
        self.same_as = same_as
        self.__name__ = f"{what}({getattr(func, '__name__', 'f')})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.run(*args, **kwargs)[0]

    @property
    def judged_as(self) -> str:
        """How --check judges a call: "jacobian" (of f's output by the differentiated argument) or "hessian"."""
        if self.same_as is not None:
            return self.same_as.judged_as
        inner = self.func
        second = type(inner) is Transform and inner.remake is not None and self.remake is not None and \
            type(self.argnums) in (int, tuple) and inner.argnums == self.argnums and type(inner.func) is not Transform
        return "hessian" if second else "jacobian"

    def traced(self, *args: Any, **kwargs: Any) -> tuple[Any, Traced, list[Tensor]]:
        """The result, the call it differentiated, and the result's Jacobian blocks by fresh leaf (for --check).

        For a transform judged as a Hessian the call is the inner transform's call of f, named by the
        caller's tensors.
        """
        if self.same_as is not None:
            return self.same_as.traced(*args, **kwargs)
        if self.judged_as != "hessian":
            return self.run(*args, **kwargs)
        calls: list[Traced] = []

        def inner(*a: Any, **k: Any) -> Any:
            value, tr, _ = self.func.run(*a, **k)
            calls.append(tr)
            return value
        value, outer, blocks = self.remake(inner).run(*args, **kwargs)
        calls[0].callers = outer.callers
        return value, calls[0], blocks

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"


def grad_and_value(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Transform:
    """`torch.func.grad_and_value`: (gradient, value), or ((gradient, (value, aux)) with has_aux."""
    def run(*args: Any, **kwargs: Any) -> tuple[Any, Traced, list[Tensor]]:
        tr = Traced(func, args, kwargs, argnums, has_aux, "grad_and_value")
        out = _scalar(tr.out, "grad_and_value")
        gs = [tr.finish(g) for g in _gradients(out, tr.flat)]
        value = tr.finish(out)
        return (tr.shaped(gs), value if not has_aux else (value, tr.aux)), tr, gs
    return Transform("grad_and_value", func, run)


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Transform:
    """`torch.func.grad`: the gradient of a function returning one number, by its argument(s) `argnums`."""
    inner = grad_and_value(func, argnums, has_aux)

    def run(*args: Any, **kwargs: Any) -> tuple[Any, Traced, list[Tensor]]:
        (gs, value), tr, blocks = inner.run(*args, **kwargs)
        return (gs, value[1]) if has_aux else gs, tr, blocks
    return Transform("grad", func, run, remake=None if has_aux else lambda g: grad(g, argnums), argnums=argnums)


def _outputs(out: Any, what: str) -> tuple[list[Tensor], bool]:
    if isinstance(out, Tensor):
        return [out], True
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, Tensor) for o in out):
        return list(out), False
    raise ArgumentError(f"{what}(f, ...): expected f(*args) to return a Tensor or a tuple of Tensors, "
                        f"got {type(out)}", hint="return tensors from the function")


def jacrev(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           chunk_size: int | None = None) -> Transform:
    """`torch.func.jacrev`: the Jacobian blocks (output shape + input shape) of f by its argument(s)."""
    if chunk_size is not None and (type(chunk_size) is not int or chunk_size < 1):
        raise ArgumentError("jacrev: `chunk_size` should be greater than 0.",
                            hint="chunk_size=None (the default) lets gradcli choose")
    return _jacobian("jacrev", func, argnums, has_aux, forward=False, chunk_size=chunk_size)


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Transform:
    """`torch.func.jacfwd`: the Jacobian by forward mode, one JVP per input element, all in one call of f.

    The call runs in a batched level whose seeds are the basis directions (PyTorch's vmap of jvp),
    so each op applies its jvp rule once per direction and an op without one is refused as PyTorch
    refuses it. A Jacobian that must stay on the graph (see `Traced.on_graph`) comes from reverse mode.
    """
    return _jacobian("jacfwd", func, argnums, has_aux, forward=True)


def _jacobian(what: str, func: Callable[..., Any], argnums: Any, has_aux: bool, forward: bool,
              chunk_size: int | None = None) -> Transform:
    def run(*args: Any, **kwargs: Any) -> tuple[Any, Traced, list[Tensor]]:
        level = FA.Level(batch=0) if forward else None
        if forward:
            install()  # the batching rules give every direction's tangent at once
        tr = Traced(func, args, kwargs, argnums, has_aux, what,
                    forward=None if level is None else (level, lambda xs: _basis(level, xs)))
        tree = tr.out if not isinstance(tr.out, Tensor) and _is_tree(tr.out) and _leaves(tr.out) else None
        outs, single_out = (_leaves(tree), False) if tree is not None else _outputs(tr.out, what)
        xs = tr.flat
        per_output = []
        for out in outs:
            for x in xs:
                check_elements(out.shape + x.shape, f"the Jacobian of {what}", np.result_type(out.dtype, x.dtype))
            if level is not None and not (out.requires_grad and tr.on_graph(out)):
                per_output.append(_forward_blocks(level.tangent(physical(out)), out, xs))
            elif out.requires_grad:
                per_output.append([tr.finish(b) for b in _reverse_blocks(out, xs, chunk_size)])
            else:
                per_output.append([_wrap(np.zeros(out.shape + x.shape, dtype=x.dtype)) for x in xs])
        shaped = [tr.shaped(blocks) for blocks in per_output]
        result = shaped[0] if single_out else _rebuild(tree, iter(shaped))  # a dict of gradients: a dict of blocks
        return (result, tr.aux) if has_aux else result, tr, per_output[0] if single_out else []
    return Transform(what, func, run, argnums=argnums,
                     remake=None if has_aux else lambda g: _jacobian(what, g, argnums, False, forward, chunk_size))


BASIS_BYTES = 64 * 2 ** 20
"""The most memory one batch of jacrev's basis cotangents takes (an n-element output has an n×n basis): a larger
basis runs in chunks of rows, as PyTorch's chunk_size does, so a 16,384-element output's Jacobian does not
first need a 1 GiB identity."""


def _reverse_blocks(out: Tensor, xs: list[Tensor], chunk_size: int | None = None) -> list[Tensor]:
    """jacrev's blocks by one backward of every basis cotangent at once (or of each chunk of them), batched by
    the ops' batching rules (PyTorch's is_grads_batched); by one backward per output element inside vmap, or
    where a VJP meets an op without a rule."""
    from gradcli.engine.functions import cat
    n = out.numel()
    if VMAP_LEVELS or n <= 1:
        return jacobian_on_graph(out, xs)
    install()
    step = chunk_size or max(1, BASIS_BYTES // (n * out.dtype.itemsize))
    try:
        chunks = [_reverse_rows(out, xs, start, min(step, n - start)) for start in range(0, n, step)]
    except NoRule as exc:
        Fallbacks.add(f"jacrev ran one backward per output element: {exc.what} has no batching rule")
        return jacobian_on_graph(out, xs)
    blocks = []
    for k, x in enumerate(xs):
        dtype = np.result_type(out.dtype, x.dtype)
        parts = [chunk[k] for chunk in chunks]
        if parts[0] is None:
            blocks.append(_wrap(np.zeros(out.shape + x.shape, dtype=dtype)))
            continue
        rows = parts[0] if len(parts) == 1 else cat(parts, 0)
        block = rows.reshape(tuple(out.shape) + tuple(x.shape))
        blocks.append(block if block.dtype == dtype else block.to(dtype))
    return blocks


def _reverse_rows(out: Tensor, xs: list[Tensor], start: int, rows: int) -> list[Tensor | None]:
    """The Jacobian's rows start..start+rows (one per output element, input-shaped) by one batched backward of
    those basis cotangents; None for an input the output does not reach."""
    from gradcli.engine.functions import expand, unsqueeze
    n = out.numel()
    basis = np.zeros((rows, n), dtype=out.dtype)
    basis[np.arange(rows), start + np.arange(rows)] = 1
    with BatchLevel(rows) as level:
        found = run_backward([out], [wrap(_wrap(basis.reshape((rows,) + tuple(out.shape))), level)], True, True,
                             inputs=xs)
    parts: list[Tensor | None] = []
    for x, g in zip(xs, found):
        if g is None:  # the graph does not reach x: so for every chunk
            parts.append(None)
            continue
        phys = unwrap(g, level)
        parts.append(expand(unsqueeze(g, 0), (rows,) + tuple(x.shape)) if phys is g else phys)  # phys is g: every row's
    return parts


def _basis(level: FA.Level, xs: list[Tensor]) -> list[np.ndarray]:
    """One direction per element of all the inputs together: input j's seed is its rows of the identity."""
    sizes = [x.numel() for x in xs]
    n = sum(sizes)
    level.batch = n
    seeds, offset = [], 0
    for x, size in zip(xs, sizes):
        check_elements((n, size), "jacfwd's basis directions", x.dtype)
        seed = np.zeros((n, size), dtype=x.dtype)
        seed[offset + np.arange(size), np.arange(size)] = 1
        seeds.append(seed.reshape((n,) + tuple(x.shape)))
        offset += size
    return seeds


def _forward_blocks(tangent: np.ndarray | None, out: Tensor, xs: list[Tensor]) -> list[Tensor]:
    """Jacobian blocks (output shape + input shape) from the output's batched tangent (direction first).

    Inside vmap the tangent is the physical output's (every example's, after the direction): each block is
    then every example's, batched as the output is."""
    phys, levels = physical(out), levels_of(out)
    blocks, offset = [], 0
    for x in xs:
        size, dtype = x.numel(), np.result_type(out.dtype, x.dtype)
        if tangent is None:
            blocks.append(_wrap(np.zeros(out.shape + x.shape, dtype=dtype)))
        else:
            rows = tangent[offset:offset + size].reshape((size,) + tuple(phys.shape))
            block = np.ascontiguousarray(np.moveaxis(rows, 0, -1)).reshape(tuple(phys.shape) + tuple(x.shape))
            blocks.append(rewrap(_wrap(block.astype(dtype, copy=False)), levels))
        offset += size
    return blocks


def _physical_seed(seed: np.ndarray, x: Tensor) -> np.ndarray:
    """A tangent given for one example (after any directions) as the physical leaf's: every example's the same."""
    shape = physical(x).shape
    if len(shape) == x.ndim:
        return seed
    lead, k = len(shape) - x.ndim, seed.ndim - x.ndim
    return np.broadcast_to(seed.reshape(seed.shape[:k] + (1,) * lead + tuple(x.shape)), seed.shape[:k] + tuple(shape))


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Transform:
    """`torch.func.hessian`: jacfwd(jacrev(f)), blocks of shape output + input + input."""
    outer = jacfwd(jacrev(func, argnums), argnums)
    return Transform("hessian", func, outer.run, same_as=outer)


class VjpFunction:
    """The `vjp_fn` of `torch.func.vjp`: one gradient per primal for cotangents shaped like the outputs."""

    def __init__(self, tr: Traced, outs: list[Tensor], single_out: bool) -> None:
        self.tr, self.outs, self.single_out = tr, outs, single_out
        self.__name__ = "vjp_fn"

    def __call__(self, *cotangents: Any) -> tuple:
        return self.traced(*cotangents)[0]

    def traced(self, *cotangents: Any) -> tuple[tuple, Traced, list[Tensor], list[Tensor]]:
        """The gradients, the call they differentiate, its outputs and the cotangents (for --check)."""
        from gradcli.engine.functions import as_tensor
        tr, outs = self.tr, self.outs
        cts = list(cotangents[0]) if len(cotangents) == 1 and not self.single_out else list(cotangents)
        if len(cts) != len(outs) or any(not isinstance(c, Tensor) or c.shape != o.shape for c, o in zip(cts, outs)):
            raise ShapeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                             f"outputs to the function: {len(outs)} tensor(s) of shape(s) "
                             f"{[tuple(o.shape) for o in outs]}", hint="pass one cotangent per output, shaped like it")
        live = [(o, as_tensor(c)) for o, c in zip(outs, cts) if o.requires_grad]
        if not live:
            gs = [_wrap(np.zeros(x.shape, dtype=x.dtype)) for x in tr.flat]
        else:
            found = autograd_grad([o for o, _ in live], tr.flat, grad_outputs=[c for _, c in live],
                                  retain_graph=True, create_graph=True, allow_unused=True)
            gs = [_wrap(np.zeros(x.shape, dtype=x.dtype)) if g is None else g for x, g in zip(tr.flat, found)]
        it = iter([tr.finish(g) for g in gs])
        return tuple(_rebuild(tree, it) for tree in tr.trees), tr, outs, cts

    def __repr__(self) -> str:
        return "<function vjp_fn>"


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """`torch.func.vjp`: (f(*primals), vjp_fn), where vjp_fn(cotangents) gives one gradient per primal."""
    if not callable(func) or isinstance(func, Tensor):
        raise ArgumentError(f"vjp(): the first argument must be a function, not {type(func).__name__}",
                            hint="vjp(f, x) returns (f(x), vjp_fn)")
    tr = Traced(func, primals, {}, tuple(range(len(primals))), has_aux, "vjp")
    outs, single_out = _outputs(tr.out, "vjp")
    value = tr.finish(outs[0]) if single_out else tuple(tr.finish(o) for o in outs)
    vjp_fn = VjpFunction(tr, outs, single_out)
    return (value, vjp_fn, tr.aux) if has_aux else (value, vjp_fn)


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> Any:
    """`torch.func.jvp`: (f(*primals), J·tangents) by forward mode, f run once in a level of its own."""
    return traced_jvp(func, primals, tangents, strict=strict, has_aux=has_aux)[0]


def traced_jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
               has_aux: bool = False) -> tuple[Any, Traced, list[Tensor], list[Tensor]]:
    """`jvp`'s result, the call it ran (whose level follows shadows under --check), its outputs and tangents."""
    from gradcli.engine.functions import tensordot
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise ArgumentError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. "
                                "E.g. it should be valid to call f(*primals).",
                                hint="wrap single tensors in a tuple: jvp(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise ArgumentError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
                            f"Got primals with structure {len(primals)} and tangents with structure {len(tangents)}",
                            hint="give one tangent per primal")
    vs = [t for tree in tangents for t in _leaves(tree)]
    for p, v in zip([x for tree in primals for x in _leaves(tree)], vs):
        if v.shape != p.shape:
            raise ShapeError("Trying to set a forward gradient that has a different size than that of the original "
                             f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                             f"forward gradient is of size {list(v.shape)}.", hint="give each tangent its primal's shape")
    level = FA.Level()
    tr = Traced(func, primals, {}, tuple(range(len(primals))), has_aux, "jvp",
                forward=(level, lambda xs: [np.array(v._data, dtype=x.dtype) for x, v in zip(xs, vs)]))
    outs, single_out = _outputs(tr.out, "jvp")
    results = []
    for out in outs:
        if out.requires_grad and tr.on_graph(out):
            terms = [tensordot(b, v, x.ndim) for b, x, v in zip(jacobian_on_graph(out, tr.flat), tr.flat, vs)]
            results.append(tr.finish(sum(terms[1:], terms[0])))
        else:
            tangent = level.tangent(physical(out))
            results.append(_wrap(np.zeros(out.shape, dtype=out.dtype)) if tangent is None else
                           rewrap(_wrap(tangent), levels_of(out)))
    values = [tr.finish(o) for o in outs]
    pair = (values[0], results[0]) if single_out else (tuple(values), tuple(results))
    return ((*pair, tr.aux) if has_aux else pair), tr, outs, results


def check_kind(func: Any) -> str | None:
    """How `--check` judges a call of `func` when it is one of this module's: "transform" (a Transform
    with a kind), "vjp_fn", "jvp", "vmap" (of such a Transform); None for anything else."""
    if type(func) is Transform:
        return "transform"
    if type(func) is VjpFunction:
        return "vjp_fn"
    if func is jvp:
        return "jvp"
    if type(func) is Batched and type(func.transform) is Transform:
        return "vmap"
    return None


# -- functional_call ------------------------------------------------------------------------------------------

def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = (), kwargs: dict | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """`torch.func.functional_call`: the module run with the given tensors in place of its parameters."""
    from gradcli.nn.modules import Module
    if not isinstance(module, Module):
        raise ArgumentError(f"functional_call(): expected a module, got {type(module).__name__}",
                            hint="functional_call(model, params, (x,))")
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) else \
        [parameter_and_buffer_dicts]
    given: dict[str, Tensor] = {}
    for d in dicts:
        if not isinstance(d, dict):
            raise ArgumentError(f"functional_call(): expected a dict of tensors by name, got {type(d).__name__}",
                                hint="e.g. dict(model.named_parameters())")
        given.update(d)
    owners = _parameter_owners(module)
    unknown = [k for k in given if k not in owners]
    if unknown or (strict and set(owners) - set(given)):
        missing = sorted(set(owners) - set(given)) if strict else []
        raise ArgumentError(f"Error(s) in reparametrizing for {type(module).__name__}: unexpected key(s): "
                            f"{', '.join(map(repr, unknown))}; missing key(s): {', '.join(map(repr, missing))}.",
                            hint="use the names of model.named_parameters()")
    saved = {k: owners[k][0]._parameters[owners[k][1]] for k in given}
    try:
        for k, t in given.items():
            owner, attr = owners[k]
            owner._parameters[attr] = t
        call_args = args if isinstance(args, tuple) else (args,)
        return module(*call_args, **(kwargs or {}))
    finally:
        for k, t in saved.items():
            owner, attr = owners[k]
            owner._parameters[attr] = t


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """`torch.func.stack_module_state`: the parameters and buffers of same-class modules, each name's stacked
    along a new first dim (for vmap over an ensemble); the stacked parameters are new leaves."""
    from gradcli.engine.functions import stack
    from gradcli.nn.modules import Module
    models = list(models) if isinstance(models, (list, tuple)) else None
    if models is None or not all(isinstance(m, Module) for m in models):
        raise ArgumentError("stack_module_state(): expected a list of modules",
                            hint="stack_module_state([model0, model1, ...])")
    if not models:
        raise ArgumentError("stack_module_state: Expected at least one model, got 0.", hint="pass a list of models")
    if any(type(m) is not type(models[0]) for m in models):
        raise ArgumentError("stack_module_state: Expected all models to be of the same class.",
                            hint="an ensemble stacks copies of one architecture")
    if any(m.training != models[0].training for m in models):
        raise ArgumentError("stack_module_state: Expected all models to have the same training/eval mode.",
                            hint="call .train() or .eval() on every model first")

    def stacked(kind: str) -> dict[str, Tensor]:
        named = [dict(getattr(m, kind)()) for m in models]
        return {k: stack([d[k].detach() for d in named]).requires_grad_(named[0][k].requires_grad) for k in named[0]}
    return stacked("named_parameters"), stacked("named_buffers")


def _parameter_owners(module: Any, prefix: str = "") -> dict[str, tuple[Any, str]]:
    found = {prefix + name: (module, name) for name in module._parameters}
    for name, child in module._modules.items():
        found.update(_parameter_owners(child, prefix + name + "."))
    return found


NAMES: dict[str, Callable[..., Any]] = {
    "grad": grad, "grad_and_value": grad_and_value, "vjp": vjp, "jvp": jvp, "jacrev": jacrev, "jacfwd": jacfwd,
    "hessian": hessian, "vmap": vmap, "functional_call": functional_call, "stack_module_state": stack_module_state}
"""torch.func's members, as `lang/builtins.py` registers them (functorch has the same)."""

