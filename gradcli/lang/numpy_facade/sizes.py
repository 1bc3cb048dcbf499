"""How many elements a NumPy call will make, known before NumPy allocates them.

Most of NumPy's functions make nothing larger than their inputs together, or than the shape their
array arguments broadcast to (every ufunc, `where`, `clip`): `generic` bounds those. The functions
whose result grows with a number the program passes (a shape, a count, a repeat) are listed in
`GROWING`, each with the rule that sizes its result from its arguments alone.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np


def _count(value: Any) -> int:
    """Elements of an argument as NumPy will read it (nested lists are bounded by the language's limits)."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, (list, tuple)):
        return sum(_count(v) for v in value)
    return 1


def _shape(value: Any) -> tuple[int, ...]:
    return value.shape if isinstance(value, np.ndarray) else np.shape(value) if isinstance(value, (list, tuple)) \
        else ()


def _dims(shape: Any) -> list[int]:
    shape = shape.tolist() if isinstance(shape, np.ndarray) else shape
    return [int(shape)] if isinstance(shape, (int, np.integer)) else [int(d) for d in shape]


def _product(shape: Any) -> int:
    return math.prod(max(d, 0) for d in _dims(shape))


def generic(args: tuple, kwargs: dict) -> int:
    values = [*args, *kwargs.values()]
    total = sum(_count(v) for v in values)
    shapes = [_shape(v) for v in values if isinstance(v, np.ndarray)]
    try:
        return max(total, math.prod(np.broadcast_shapes(*shapes)) if shapes else 0)
    except ValueError:  # shapes that do not broadcast: NumPy raises (or joins them, within `total`)
        return total


def _arg(args: tuple, kwargs: dict, position: int, name: str, default: Any = None) -> Any:
    return args[position] if len(args) > position else kwargs.get(name, default)


def _arange(args: tuple, kwargs: dict) -> int:
    numbers = [a for a in args if not isinstance(a, (str, type, np.dtype))]
    start, stop, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers[:2], 1) if len(numbers) == 2 else \
        numbers[:3]
    start, stop, step = kwargs.get("start", start), kwargs.get("stop", stop), kwargs.get("step", step)
    if stop is None:
        start, stop = 0, start
    try:
        return max(math.ceil((float(stop) - float(start)) / float(step)), 0)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return 0  # NumPy's own error follows


def _spaced(args: tuple, kwargs: dict) -> int:
    return max(int(_arg(args, kwargs, 2, "num", 50)), 0) * max(generic(args[:2], {}), 1)


def _pad(args: tuple, kwargs: dict) -> int:
    array, width = np.asarray(args[0]) if args else np.asarray(kwargs.get("array")), _arg(args, kwargs, 1, "pad_width")
    widths = np.broadcast_to(np.asarray(width, dtype=np.int64), (array.ndim, 2))
    return math.prod(int(n) + int(w.sum()) for n, w in zip(array.shape, widths))


def _repeat(args: tuple, kwargs: dict) -> int:
    repeats = np.asarray(_arg(args, kwargs, 1, "repeats", 1))
    return _count(args[0]) * max(int(repeats.max()) if repeats.size else 0, 0)


def _tile(args: tuple, kwargs: dict) -> int:
    return _count(args[0]) * _product(_arg(args, kwargs, 1, "reps", 1))


def _matrix_product(args: tuple, kwargs: dict) -> int:
    a, b = (_shape(v) for v in args[:2])
    if not a or not b:
        return generic(args, kwargs)
    return math.prod(a[:-1]) * math.prod(b[:-2] + b[-1:])


def _tensordot(args: tuple, kwargs: dict) -> int:
    a, b = (_shape(v) for v in args[:2])
    axes = _arg(args, kwargs, 2, "axes", 2)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        return math.prod(a[:len(a) - n]) * math.prod(b[n:])
    first, second = ([x] if isinstance(x, int) else list(x) for x in axes)
    return math.prod(d for k, d in enumerate(a) if k not in first and k - len(a) not in first) * \
        math.prod(d for k, d in enumerate(b) if k not in second and k - len(b) not in second)


def _einsum(args: tuple, kwargs: dict) -> int:
    if not args or not isinstance(args[0], str):
        return generic(args, kwargs)
    inputs, _, output = args[0].replace(" ", "").partition("->")
    sizes: dict[str, int] = {}
    for labels, operand in zip(inputs.split(","), args[1:]):
        for label, size in zip(labels.replace("...", ""), _shape(operand)[-len(labels.replace("...", "")) or 0:]):
            sizes[label] = max(sizes.get(label, 1), size)
    if "->" not in args[0]:
        output = "".join(sorted(c for c in sizes if inputs.count(c) == 1))
    return math.prod(sizes.get(c, 1) for c in output) * max(generic(args[1:], {}), 1) if "..." in args[0] else \
        math.prod(sizes.get(c, 1) for c in output)


def _bincount(args: tuple, kwargs: dict) -> int:
    values = np.asarray(args[0]) if args else np.asarray(kwargs.get("x"))
    top = int(values.max()) + 1 if values.size and values.dtype.kind in "iu" else 0
    return max(top, int(_arg(args, kwargs, 2, "minlength", 0) or 0))


def _squared(args: tuple, kwargs: dict) -> int:
    n = _count(args[0]) if args else 0
    return n * n


GROWING: dict[str, Callable[[tuple, dict], int]] = {
    "zeros": lambda a, k: _product(_arg(a, k, 0, "shape", ())),
    "ones": lambda a, k: _product(_arg(a, k, 0, "shape", ())),
    "empty": lambda a, k: _product(_arg(a, k, 0, "shape", ())),
    "full": lambda a, k: _product(_arg(a, k, 0, "shape", ())),
    "broadcast_to": lambda a, k: _product(_arg(a, k, 1, "shape", ())),
    "resize": lambda a, k: _product(_arg(a, k, 1, "new_shape", ())),
    "eye": lambda a, k: int(_arg(a, k, 0, "N", 0)) * int(_arg(a, k, 1, "M", None) or _arg(a, k, 0, "N", 0)),
    "tri": lambda a, k: int(_arg(a, k, 0, "N", 0)) * int(_arg(a, k, 1, "M", None) or _arg(a, k, 0, "N", 0)),
    "identity": lambda a, k: int(_arg(a, k, 0, "n", 0)) ** 2,
    "tril_indices": lambda a, k: 2 * int(_arg(a, k, 0, "n", 0)) * int(_arg(a, k, 2, "m", None) or _arg(a, k, 0, "n", 0)),
    "triu_indices": lambda a, k: 2 * int(_arg(a, k, 0, "n", 0)) * int(_arg(a, k, 2, "m", None) or _arg(a, k, 0, "n", 0)),
    "indices": lambda a, k: _product(_arg(a, k, 0, "dimensions", ())) * len(_dims(_arg(a, k, 0, "dimensions", ()))),
    "arange": _arange, "linspace": _spaced, "logspace": _spaced, "geomspace": _spaced,
    "meshgrid": lambda a, k: math.prod(_count(v) for v in a) * len(a),
    "outer": lambda a, k: _count(a[0]) * _count(a[1]) if len(a) > 1 else 0,
    "kron": lambda a, k: _count(a[0]) * _count(a[1]) if len(a) > 1 else 0,
    "vander": lambda a, k: _count(a[0]) * int(_arg(a, k, 1, "N", None) or _count(a[0])),
    "diag": _squared, "diagflat": _squared, "pad": _pad, "repeat": _repeat, "tile": _tile,
    "dot": _matrix_product, "matmul": _matrix_product, "inner": _matrix_product, "tensordot": _tensordot,
    "einsum": _einsum, "bincount": _bincount,
    "histogram2d": lambda a, k: _product(_arg(a, k, 2, "bins", 10)) ** (2 if isinstance(_arg(a, k, 2, "bins", 10), int) else 1),
}


def drawn(fn: Any, args: tuple, kwargs: dict) -> int:
    """Numbers a random function draws: `rand(d0, d1)`'s dimensions, or its `size=` (found where NumPy's
    documented signature puts it) times the elements each draw takes (`multivariate_normal`'s mean)."""
    name = fn.__name__
    if name in ("rand", "randn"):
        return _product(args)
    if name == "permutation" and args and isinstance(args[0], (int, np.integer)):
        return int(args[0])
    params = _parameters(fn)
    at = params.index("size") if "size" in params else len(args)
    size = kwargs.get("size", args[at] if at < len(args) else None)
    rest = [a for k, a in enumerate(args) if k != at]
    return (1 if size is None else _product(size)) * max(generic(tuple(rest), {}), 1)


def _parameters(fn: Any) -> list[str]:
    """`normal(loc=0.0, scale=1.0, size=None)`: the parameter names from the first line of NumPy's docstring."""
    head = (fn.__doc__ or "").strip().split("\n")[0]
    inside = head[head.find("(") + 1:head.rfind(")")]
    return [part.split("=")[0].strip() for part in inside.split(",")]


def estimate(name: str, args: tuple, kwargs: dict) -> int:
    """An upper bound on the elements `np.name(*args, **kwargs)` makes (0 when NumPy will refuse the call)."""
    rule = GROWING.get(name)
    try:
        return max(rule(args, kwargs) if rule is not None else 0, generic(args, kwargs))
    except (TypeError, ValueError, IndexError, OverflowError):
        return generic(args, kwargs)  # arguments NumPy itself will reject
