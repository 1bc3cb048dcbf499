"""`torch.func.vmap`: a function over a batch dimension, run once on the whole batch.

The function's inputs become batched tensors of a vmap level (engine/batched.py), and every op they meet
runs by its batching rule (func/batching.py). A function that meets an op or a path without one runs once
per example instead, its results stacked, with the same shapes and errors; `run --explain` says which and
why (engine/batched.Fallbacks). `--check` judges a vmap of a transform example by example (`traced`).
"""
from __future__ import annotations

from typing import Any, Callable

from gradcli.engine.batched import RANDOM_DRAW, Fallbacks, Level as BatchLevel, NoRule, unwrap, wrap
from gradcli.engine.modes import inside as _inside
from gradcli.engine.tensor import Tensor, check_elements
from gradcli.errors import ArgumentError, ShapeError
from gradcli.func.batching import install

MAX_BATCH = 100_000
"""Where vmap runs the function once per example, a batch past this is refused before the first call."""


def _in_dims(in_dims: Any, args: tuple, name: str) -> list[Any]:
    """One in_dim per positional argument (an int or None, or a tuple matching a tuple argument)."""
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        return [in_dims] * len(args)
    if isinstance(in_dims, tuple) and len(in_dims) == len(args):
        return list(in_dims)
    if isinstance(in_dims, tuple):
        raise ArgumentError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                            f"structure of `inputs`: in_dims has {len(in_dims)} entries but there are "
                            f"{len(args)} inputs", hint="give one in_dim per positional argument (None: not mapped)")
    raise ArgumentError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                        f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.",
                        hint="e.g. in_dims=0 or in_dims=(0, None)")


def _mapped(arg: Any, dim: Any, name: str, sizes: list[int]) -> Any:
    """`arg` with the mapped dimension normalised: (tensor, dim) pairs found in `sizes`, others untouched."""
    if dim is None:
        return arg
    if isinstance(arg, Tensor):
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ArgumentError(f"vmap({name}, ...): in_dim must be an int or None, got {dim!r}",
                                hint="e.g. in_dims=0")
        if not -arg.ndim <= dim < arg.ndim:
            raise ShapeError(f"vmap({name}, ...)(<inputs>): Got in_dim={dim} for some input, but that input is a "
                             f"Tensor of dimensionality {arg.ndim} so expected in_dim to satisfy "
                             f"-{arg.ndim} <= in_dim < {arg.ndim}.", hint="map over a dimension the input has")
        dim %= arg.ndim
        sizes.append(arg.shape[dim])
        return ("mapped", arg, dim)
    if isinstance(arg, (tuple, list)):
        dims = dim if isinstance(dim, (tuple, list)) else [dim] * len(arg)
        parts = [_mapped(a, d, name, sizes) for a, d in zip(arg, dims)]
        return tuple(parts) if isinstance(arg, tuple) else parts
    if isinstance(arg, dict):
        return {k: _mapped(v, dim, name, sizes) for k, v in arg.items()}
    raise ArgumentError(f"vmap({name}, in_dims=..., ...)(<inputs>): Got in_dim={dim} for an input but the input is "
                        f"of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use None as the "
                        "respective in_dim", hint="give None as the in_dim of a number or other non-tensor argument")


def _example(arg: Any, i: int) -> Any:
    if isinstance(arg, tuple) and len(arg) == 3 and arg[0] == "mapped" and isinstance(arg[1], Tensor):
        _, t, dim = arg
        return t[(slice(None),) * dim + (i,)]
    if isinstance(arg, (tuple, list)):
        parts = [_example(a, i) for a in arg]
        return tuple(parts) if isinstance(arg, tuple) else parts
    if isinstance(arg, dict):
        return {k: _example(v, i) for k, v in arg.items()}
    return arg


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> "Batched":
    """`torch.func.vmap`: f over a batch dimension, run once on the whole batch by the ops' batching rules
    (func/batching.py), or once per example when f meets an op without one; results at out_dims."""
    if not callable(func) or isinstance(func, Tensor):
        raise ArgumentError(f"vmap(): the first argument must be a function, not {type(func).__name__}",
                            hint="vmap(f)(xs) runs f on each xs[i]")
    if randomness not in ("error", "different", "same"):
        raise ArgumentError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}",
                            hint="randomness='error' (the default), 'different' or 'same'")
    if chunk_size is not None and (not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1):
        raise ArgumentError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})",
                            hint="chunk_size=None runs the whole batch at once")
    return Batched(func, in_dims, out_dims, chunk_size, randomness)


class Batched:
    """What `vmap(f)` returns: f run on the mapped inputs, batched by rules or once per example."""

    def __init__(self, func: Callable[..., Any], in_dims: Any, out_dims: Any, chunk_size: int | None = None,
                 randomness: str = "error") -> None:
        self.func, self.in_dims, self.out_dims, self.chunk_size = func, in_dims, out_dims, chunk_size
        self.randomness = randomness
        self.name = getattr(func, "__name__", "f")
        self.__name__ = f"vmap({self.name})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self.func, args, kwargs, by_rules=True)

    @property
    def transform(self) -> Any:
        """The function under every vmap of a nest (`vmap(vmap(grad(f)))`: grad(f))."""
        inner = self.func
        while type(inner) is Batched:
            inner = inner.func
        return inner

    def traced(self, *args: Any, **kwargs: Any) -> tuple[Any, list[tuple[Any, list[Tensor]]]]:
        """For --check of `vmap(grad(f))` and kin (vmaps nested too): the result, and each example's trace and
        Jacobian blocks (per example, so that each is judged on its own)."""
        calls: list[tuple[Any, list[Tensor]]] = []

        def example(*a: Any, **k: Any) -> Any:
            if type(self.func) is Batched:
                value, inner = self.func.traced(*a, **k)
                calls.extend(inner)
                return value
            value, tr, blocks = self.func.traced(*a, **k)
            calls.append((tr, blocks))
            return value
        return self._run(example, args, kwargs, by_rules=False), calls

    def _run(self, func: Callable[..., Any], args: tuple, kwargs: dict, by_rules: bool) -> Any:
        name, in_dims = self.name, self.in_dims
        if not args:
            raise ArgumentError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                                "trying to vmap over a function with no inputs. The latter is unsupported.",
                                hint="pass the batched tensors as positional arguments")
        sizes: list[int] = []
        mapped = [_mapped(a, d, name, sizes) for a, d in zip(args, _in_dims(in_dims, args, name))]
        if not sizes:
            raise ArgumentError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                                "Tensor mapped over a dimension (in_dims are all None)",
                                hint="give at least one tensor argument an in_dim")
        if len(set(sizes)) > 1:
            raise ShapeError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension", hint="give every mapped input the same batch size")
        n = sizes[0]
        if by_rules:
            try:
                return self._chunks(func, mapped, kwargs, n)
            except NoRule as exc:
                if exc.what == RANDOM_DRAW and self.randomness == "error":
                    raise ArgumentError("vmap: called random operation while in randomness error mode. Please either "
                                        "use the 'same' or 'different' randomness flags on vmap or perform the "
                                        "randomness operation out of vmap",
                                        hint="vmap(f, randomness='different') draws for each example, 'same' once "
                                             "for all") from None
                Fallbacks.add(f"vmap({name}) ran once per example: {exc.what} has no batching rule")
        if n > MAX_BATCH:
            from gradcli.errors import LimitError
            raise LimitError(f"vmap over {n:,} examples: gradcli runs this function once per example, at most "
                             f"{MAX_BATCH:,}", hint="vmap over a smaller batch")
        with _inside(vmap=True):
            results = [func(*[_example(a, i) for a in mapped], **kwargs) for i in range(n)]
        return _stacked(results, self.out_dims, name)

    def _chunks(self, func: Callable[..., Any], mapped: list, kwargs: dict, n: int) -> Any:
        """The batch in chunks of chunk_size (one chunk by default), each run once by the batching rules."""
        from gradcli.engine.functions import narrow
        step = self.chunk_size or n
        if step >= n:
            return self._batched(func, mapped, kwargs, n)
        parts = []
        for start in range(0, n, step):
            size = min(step, n - start)
            part = [_narrowed_arg(a, start, size, narrow) for a in mapped]
            parts.append(self._batched(func, part, kwargs, size))
        return _joined(parts, self.out_dims)

    def _batched(self, func: Callable[..., Any], mapped: list, kwargs: dict, n: int) -> Any:
        install()
        with BatchLevel(n, self.randomness) as level, _inside(vmap=True):
            result = func(*[_batched_arg(a, level) for a in mapped], **kwargs)
            return _out(result, self.out_dims, level, n, self.name)

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"


def _batched_arg(arg: Any, level: BatchLevel) -> Any:
    """A mapped input as one example of `level` (its mapped dim moved first, a view)."""
    from gradcli.engine.functions import movedim
    if _is_mapped(arg):
        _, t, dim = arg
        return wrap(t if dim == 0 else movedim(t, dim, 0), level)
    if isinstance(arg, (tuple, list)):
        parts = [_batched_arg(a, level) for a in arg]
        return tuple(parts) if isinstance(arg, tuple) else parts
    if isinstance(arg, dict):
        return {k: _batched_arg(v, level) for k, v in arg.items()}
    return arg


def _narrowed_arg(arg: Any, start: int, size: int, narrow: Callable[..., Tensor]) -> Any:
    if _is_mapped(arg):
        _, t, dim = arg
        return ("mapped", narrow(t, dim, start, size), dim)
    if isinstance(arg, (tuple, list)):
        parts = [_narrowed_arg(a, start, size, narrow) for a in arg]
        return tuple(parts) if isinstance(arg, tuple) else parts
    if isinstance(arg, dict):
        return {k: _narrowed_arg(v, start, size, narrow) for k, v in arg.items()}
    return arg


def _is_mapped(arg: Any) -> bool:
    return isinstance(arg, tuple) and len(arg) == 3 and arg[0] == "mapped" and isinstance(arg[1], Tensor)


def _check_stackable(result: Any, out_dims: int, n: int, name: str) -> None:
    """Batched and per-sample vmap refuse the same results in the same words, whichever way they stack."""
    if not isinstance(result, Tensor):
        raise ArgumentError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(result)}. Did you "
                            "mean to set out_dims= to None for output?", hint="return tensors from the function")
    if not -(result.ndim + 1) <= out_dims < result.ndim + 1:
        raise ShapeError(f"Dimension out of range (expected to be in range of [{-(result.ndim + 1)}, {result.ndim}], "
                         f"but got {out_dims})", hint="out_dims must be a dimension of the stacked result")
    check_elements((n,) + tuple(result.shape), "vmap's stacked result", result.dtype)


def _out(result: Any, out_dims: Any, level: BatchLevel, n: int, name: str) -> Any:
    """f's result with the level's examples at out_dims: a result no example changes is every example's."""
    from gradcli.engine.functions import expand, movedim, unsqueeze
    if isinstance(result, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(result)
        return tuple(_out(r, d, level, n, name) for r, d in zip(result, dims))
    if isinstance(result, list):
        return [_out(r, out_dims, level, n, name) for r in result]
    if isinstance(result, dict):
        return {k: _out(r, out_dims, level, n, name) for k, r in result.items()}
    if out_dims is None:
        if unwrap(result, level) is not result:
            raise NoRule("out_dims=None for a batched result")
        return result
    _check_stackable(result, out_dims, n, name)
    phys = unwrap(result, level)
    if phys is result:
        phys = expand(unsqueeze(result, 0), (n,) + tuple(result.shape))
    dim = out_dims % (result.ndim + 1)
    return phys if dim == 0 else movedim(phys, 0, dim)


def _joined(parts: list[Any], out_dims: Any) -> Any:
    from gradcli.engine.functions import cat
    first = parts[0]
    if isinstance(first, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(first)
        return tuple(_joined([p[k] for p in parts], d) for k, d in enumerate(dims))
    if isinstance(first, list):
        return [_joined([p[k] for p in parts], out_dims) for k in range(len(first))]
    if isinstance(first, dict):
        return {k: _joined([p[k] for p in parts], out_dims) for k in first}
    if out_dims is None:
        return first
    return cat(parts, dim=out_dims)


def _stacked(results: list[Any], out_dims: Any, name: str) -> Any:
    from gradcli.engine.functions import stack
    first = results[0]
    if isinstance(first, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(first)
        return tuple(_stacked([r[k] for r in results], d, name) for k, d in enumerate(dims))
    if isinstance(first, dict):
        return {k: _stacked([r[k] for r in results], out_dims, name) for k in first}
    if out_dims is None:
        return first
    _check_stackable(first, out_dims, len(results), name)
    return stack(results, dim=out_dims)
