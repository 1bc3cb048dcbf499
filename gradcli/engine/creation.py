"""Making tensors: `tensor(...)`, the constructors, the random generator and the default dtype.

Constructors check the element cap before NumPy allocates, so `ones(100000, 100000)` is a clear
error at once rather than an out-of-memory kill.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.errors import ArgumentError, DtypeError, ValueDomainError
from gradcli.engine import narrow as N
from gradcli.engine.random import Generator
from gradcli.engine.tensor import READS, Tensor, _wrap, broadcast_shape, check_elements

_DTYPES = {"float64": np.float64, "float32": np.float32, "double": np.float64, "float": np.float32,
           "int64": np.int64, "long": np.int64, "int32": np.int32, "int16": np.int16,
           "short": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
           "float16": np.float16, "half": np.float16, "bfloat16": N.BFLOAT16}
DTYPE_NAMES = tuple(_DTYPES)


class Defaults:
    """The session's default float dtype (float64 unless --dtype says otherwise) and its generator."""

    dtype: type = np.float64
    generator: Generator = Generator(0)


def set_default_dtype(dtype: Any) -> None:
    resolved = resolve_dtype(dtype)
    if resolved is None or np.dtype(resolved).kind != "f":
        raise ArgumentError("only floating-point types are supported as the default type",
                         hint="torch.set_default_dtype(torch.float32) or torch.set_default_dtype(torch.float64)")
    Defaults.dtype = resolved


def get_default_dtype() -> np.dtype:
    return np.dtype(Defaults.dtype)


def manual_seed(seed: int) -> None:
    """Restart PyTorch's generator from `seed`: the draws that follow are PyTorch's own numbers.

    PyTorch takes any 64-bit seed, signed or not, and keeps its value modulo 2**64.
    """
    from gradcli.engine.functions import number_arg
    seed = int(number_arg(seed, "manual_seed", "seed", integer=True))
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ArgumentError("Overflow when unpacking long long", hint="a seed fits in 64 bits, e.g. manual_seed(0)")
    Defaults.generator = Generator(seed % 2 ** 64)


def initial_seed() -> int:
    return Defaults.generator.initial_seed()


def generator_arg(generator: Any, fn: str | None = None) -> Generator:
    """What a draw's `generator=` names: the global generator by default, else a program's `torch.Generator()`."""
    if generator is None:
        return Defaults.generator
    if not isinstance(generator, Generator):
        raise ArgumentError(f"{fn + '(): ' if fn else ''}generator must be a torch.Generator, not "
                            f"{type(generator).__name__}", hint="g = torch.Generator().manual_seed(0); pass generator=g")
    return generator


def resolve_dtype(dtype: Any) -> Any:
    if dtype is None:
        return None
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.")
        if name not in _DTYPES:
            raise DtypeError(f"unknown dtype {dtype!r}", hint="use float64 or float32")
        return _DTYPES[name]
    if N.is_bfloat16(dtype):
        return dtype
    if isinstance(dtype, (type, np.dtype)):
        return np.dtype(dtype).type
    raise DtypeError(f"dtype must be a dtype such as torch.float32, not {type(dtype).__name__}",
                     hint="e.g. dtype=torch.float64")


def as_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Data as PyTorch would read it: Python floats in the default dtype, ints as int64."""
    dtype = resolve_dtype(dtype)
    if READS and (isinstance(data, Tensor) or isinstance(data, (list, tuple)) and _first_leaf_is_tensor(data)):
        READS[-1] = True  # a tensor's values copied into a new one, as `.tolist()` would
    if isinstance(data, Tensor):
        arr = data._data
        return N.astype(arr, dtype) if dtype is not None and not N.same(arr.dtype, dtype) else arr.copy()
    if isinstance(data, (list, tuple)) and _first_leaf_is_tensor(data):
        kinds: list[np.dtype] = []
        data = _scalars(data, kinds)
        if dtype is None and kinds:
            dtype = np.result_type(*kinds)  # the elements' dtype (a float64 tensor stays float64)
    try:
        arr = np.array(data, dtype=dtype)
    except (ValueError, TypeError) as exc:
        raise ArgumentError(f"could not make a tensor from {_preview(data)}: {exc}",
                            hint="nested lists must be rectangular and hold numbers only") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise ArgumentError(f"could not make a tensor from {_preview(data)}", hint="use numbers only")
    if dtype is None and arr.dtype.kind == "f":
        arr = arr.astype(Defaults.dtype, copy=False)
    check_elements(arr.shape, "tensor", arr.dtype)
    return N.settle(arr)


def _first_leaf_is_tensor(data: list | tuple) -> bool:
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return isinstance(data, Tensor)


def _scalars(data: Any, kinds: list) -> Any:
    """PyTorch reads a tensor inside a list as the number it holds: `tensor([t])` of a one-element t
    has shape (1,) whatever t's own shape, and a longer tensor there is its error."""
    if isinstance(data, (list, tuple)):
        return [_scalars(v, kinds) for v in data]
    if isinstance(data, Tensor):
        kinds.append(data._data.dtype)
        if data._data.size != 1:
            raise ArgumentError("only one element tensors can be converted to Python scalars",
                                hint="stack tensors with torch.stack(list), or convert each with .item()")
        return data._data.reshape(()).item()
    return data


def _preview(data: Any) -> str:
    text = repr(data)
    return text if len(text) < 60 else text[:57] + "..."


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """`torch.tensor(data)`: a NumPy array (or NumPy number) keeps its own float dtype, as in PyTorch; Python
    floats take the default dtype."""
    first = data
    while isinstance(first, (list, tuple)) and first:  # torch.tensor([np.ones(2), np.zeros(2)]): float64 too
        first = first[0]
    if dtype is None and isinstance(first, np.ndarray) and first.dtype.kind == "f":
        dtype = first.dtype
    if dtype is None and isinstance(data, np.generic) and data.dtype.kind == "f":
        dtype = data.dtype
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def float_tensor(*data: Any, requires_grad: bool = False) -> Tensor:
    """`torch.FloatTensor([...])` and `torch.Tensor([...])`: float32 data, or `FloatTensor(2, 3)` uninitialised (zeros here)."""
    if len(data) == 1 and not isinstance(data[0], (int, np.integer)):
        return Tensor(data[0], requires_grad=requires_grad, dtype=np.float32)
    return _filled(data, 0.0, np.float32, requires_grad)


def _shape(size: tuple) -> tuple[int, ...]:
    from gradcli.engine.functions import _shape_args
    shape = _shape_args(size)
    if any(s < 0 for s in shape):
        raise ArgumentError(f"negative dimension in shape {shape}", hint="sizes must be >= 0")
    check_elements(shape, "the requested tensor")
    return shape


def _sized(shape: tuple, size: Any) -> tuple:
    """The shape given as `ones(2, 3)`, `ones((2, 3))` or, as PyTorch also takes it, `ones(size=(2, 3))`."""
    if size is None:
        return shape
    if shape:
        raise ArgumentError("the size was given twice, by position and as size=", hint="write ones(2, 3) or "
                                                                                      "ones(size=(2, 3))")
    return (size,)


def _filled(size: tuple, value: float, dtype: Any, requires_grad: bool) -> Tensor:
    dtype = resolve_dtype(dtype) or Defaults.dtype
    return _leaf(np.full(_shape(size), value, dtype=dtype), requires_grad)


def _leaf(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = _wrap(N.settle(array))
    if requires_grad:
        t.requires_grad_(True)
    return t


def ones(*shape: Any, size: Any = None, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    return _filled(_sized(shape, size), 1.0, dtype, requires_grad)


def zeros(*shape: Any, size: Any = None, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    return _filled(_sized(shape, size), 0.0, dtype, requires_grad)


def full(size: Any, fill_value: float, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Without `dtype=`, the fill value's kind decides, as in PyTorch: bool, int64, else the default float."""
    from gradcli.engine.functions import number_arg
    size = tuple(size) if isinstance(size, (list, tuple)) else (size,)
    if dtype is None and isinstance(fill_value, (bool, int, np.integer, np.bool_)):
        kind = np.bool_ if isinstance(fill_value, (bool, np.bool_)) else np.int64
        return _leaf(np.full(_shape(size), fill_value, dtype=kind), requires_grad)
    return _filled(size, float(number_arg(fill_value, "full", "fill_value")), dtype, requires_grad)


def ones_like(x: Tensor, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    return full_like(x, 1.0, requires_grad, dtype, name="ones_like")


def zeros_like(x: Tensor, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    return full_like(x, 0.0, requires_grad, dtype, name="zeros_like")


def empty_like(x: Tensor, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Uninitialised memory in PyTorch; zeros here, as `torch.empty`, since a program must not read garbage."""
    return full_like(x, 0.0, requires_grad, dtype, name="empty_like")


def full_like(x: Tensor, fill_value: float, requires_grad: bool = False, dtype: Any = None, *,
              name: str = "full_like") -> Tensor:
    """x's shape, and x's dtype unless `dtype=` names another (`ones_like(x, dtype=torch.int32)`)."""
    from gradcli.engine.functions import _tensor_arg, number_arg
    x = _tensor_arg(x, name)
    return _filled(x.shape, float(number_arg(fill_value, name, "fill_value")), dtype or x.dtype, requires_grad)


def eye(n: int, m: int | None = None, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    shape = _shape((n, n if m is None else m))
    return _leaf(np.eye(*shape, dtype=resolve_dtype(dtype) or Defaults.dtype), requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, requires_grad: bool = False,
           dtype: Any = None) -> Tensor:
    """Integers give int64, as in PyTorch; any float argument gives the default float dtype."""
    from gradcli.engine.functions import number_arg
    if end is None:
        start, end = 0, start
    start, end, step = (number_arg(v, "arange", name) for v, name in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise ArgumentError("arange: step must be nonzero", hint="e.g. arange(0, 1, 0.25)")
    span = (float(end) - float(start)) / float(step)
    if not np.isfinite(span):
        raise ArgumentError(f"arange: cannot count the steps from {start} to {end} by {step}",
                            hint="start, end and step must be finite numbers")
    count = max(0, int(np.ceil(span)))
    check_elements((count,), "arange")
    integral = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = resolve_dtype(dtype) or (np.int64 if integral else Defaults.dtype)
    return _leaf(np.arange(start, end, step, dtype=dt) if count else np.empty(0, dtype=dt), requires_grad)


def range_(start: float, end: float, step: float = 1, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`torch.range`, deprecated but still in tutorials: like arange but the end is included, and floats by
    default whatever the arguments (PyTorch's `torch.range(0, 3)` is `tensor([0., 1., 2., 3.])`)."""
    from gradcli.engine.functions import number_arg
    start, end, step = (number_arg(v, "range", name) for v, name in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0 or not np.isfinite((float(end) - float(start)) / float(step)):
        raise ArgumentError("range: step must be nonzero and the bounds finite", hint="e.g. torch.range(0, 1, 0.25)")
    count = max(0, int(np.floor((float(end) - float(start)) / float(step))) + 1)
    check_elements((count,), "range")
    dt = resolve_dtype(dtype) or Defaults.dtype
    return _leaf((start + np.arange(count) * step).astype(dt), requires_grad)


def linspace(start: float, end: float, steps: int, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ArgumentError("linspace: steps must be a non-negative integer", hint="e.g. linspace(0, 1, 5) for five points")
    check_elements((steps,), "linspace")
    return _leaf(np.linspace(float(start), float(end), int(steps), dtype=resolve_dtype(dtype) or Defaults.dtype),
                 requires_grad)


def _random(size: tuple, dtype: Any, requires_grad: bool, fill: Callable[[Tensor], Tensor]) -> Tensor:
    """A new tensor filled in place, as PyTorch makes `empty(size).uniform_()` (one code path for both)."""
    t = fill(_wrap(np.empty(_shape(size), dtype=resolve_dtype(dtype) or Defaults.dtype)))
    t._data = N.settle(t._data)
    return t.requires_grad_(True) if requires_grad else t


def rand(*shape: Any, size: Any = None, generator: Any = None, requires_grad: bool = False,
         dtype: Any = None) -> Tensor:
    return _random(_sized(shape, size), dtype, requires_grad, lambda t: t.uniform_(generator=generator))


def randn(*shape: Any, size: Any = None, generator: Any = None, requires_grad: bool = False,
          dtype: Any = None) -> Tensor:
    return _random(_sized(shape, size), dtype, requires_grad, lambda t: t.normal_(generator=generator))


def rand_like(x: Tensor, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    from gradcli.engine.functions import _tensor_arg
    x = _tensor_arg(x, "rand_like")
    return rand(x.shape, requires_grad=requires_grad, dtype=dtype or x.dtype)


def randn_like(x: Tensor, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    from gradcli.engine.functions import _tensor_arg
    x = _tensor_arg(x, "randn_like")
    return randn(x.shape, requires_grad=requires_grad, dtype=dtype or x.dtype)


def randint(*args: Any, low: int | None = None, high: int | None = None, size: Any = None, generator: Any = None,
            requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """`randint(high, size)` or `randint(low, high, size)` (positional or by keyword): int64 unless dtype says."""
    positional = list(args)
    if size is None and positional and isinstance(positional[-1], (tuple, list)):
        size = positional.pop()
    if high is None and positional:
        high = positional.pop()
    if low is None and positional:
        low = positional.pop()
    low = 0 if low is None else low
    if positional or size is None or not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool)
                                             for b in (low, high)):
        raise ArgumentError("randint() takes (high, size) or (low, high, size) with integer bounds",
                            hint="e.g. torch.randint(0, 10, (3,)) for three integers from 0 to 9")
    low, high = int(low), int(high)
    if low >= high:
        raise ArgumentError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}",
                            hint="the upper bound is exclusive: randint(low, high) draws from low to high-1")
    shape = _shape((size,) if isinstance(size, (int, np.integer)) else tuple(size))
    values = generator_arg(generator, "randint").integers(_count(shape), low, high)
    return _leaf(values.astype(resolve_dtype(dtype) or np.int64).reshape(shape), requires_grad)


def randperm(n: int, generator: Any = None, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    shape = _shape((n,))
    order = generator_arg(generator, "randperm").permutation(shape[0])
    return _leaf(order.astype(resolve_dtype(dtype) or np.int64), requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, generator: Any = None, requires_grad: bool = False,
           dtype: Any = None) -> Tensor:
    """`torch.normal`: numbers and a size, or tensors of means and/or standard deviations (broadcast).

    With tensors PyTorch draws standard normals first, then scales by std and shifts by mean, in
    that order, so the roundings are its own.
    """
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise ArgumentError("normal() with a number mean and std needs a size",
                                hint="e.g. torch.normal(0., 1., size=(2, 3)), or pass a tensor of means")
        return _random((size,), dtype, requires_grad, lambda t: t.normal_(mean, std, generator=generator))
    if isinstance(std, Tensor) and np.any(std._data < 0):
        raise ArgumentError("normal expects all elements of std >= 0.0", hint="a standard deviation is never negative")
    like = mean if isinstance(mean, Tensor) else std
    shape = like.shape
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        shape = broadcast_shape("normal", mean.shape, std.shape)
    out = _random(shape, like.dtype, False,
                  lambda t: t.normal_(0.0, 1.0 if isinstance(std, Tensor) else std, generator=generator))
    if isinstance(std, Tensor):
        out._data = (out._data * std._data).astype(out.dtype)
    out._data = (out._data + (mean._data if isinstance(mean, Tensor) else mean)).astype(out.dtype)
    return out


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """`torch.bernoulli`: 1 with probability `input` per element (or `p` for every element), in input's dtype."""
    from gradcli.engine.functions import _tensor_arg
    input = _tensor_arg(input, "bernoulli")
    out = _wrap(np.empty(input.shape, dtype=input.dtype))  # row-major even for an expanded input, as ATen fills it
    return out.bernoulli_(input if p is None else p, generator=generator)


def multinomial(input: Any, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Tensor:
    """Category indices drawn with the probabilities (any nonnegative weights) in each row, by PyTorch's CPU
    algorithms, so a seeded generator gives its numbers.

    Without replacement, or for one sample: q ~ Exp(1) per weight (one `exponential_` over the input's
    shape), then the largest weight / q (argmax, or the top num_samples). With replacement: per row the
    running sum in the input's dtype, divided by the total, searched (first entry >= u) for one float64
    uniform per sample, row by row.
    """
    from gradcli.engine.functions import _TORCH_NAMES, _tensor_arg, number_arg
    p = _tensor_arg(input, "multinomial")
    if p.dtype.kind != "f":
        raise DtypeError(f"multinomial only supports floating-point dtypes for input, got: "
                         f"{_TORCH_NAMES.get(p.dtype.name, p.dtype.name)}", hint="weights are floats: p.float()")
    if p.ndim not in (1, 2):
        raise ArgumentError("prob_dist must be 1 or 2 dim", hint="one row of weights, or a batch of rows")
    n = int(number_arg(num_samples, "multinomial", "num_samples", integer=True))
    if n <= 0:
        raise ArgumentError("cannot sample n_sample <= 0 samples", hint="num_samples counts the draws per row")
    categories = p.shape[-1]
    if not replacement and n > categories:
        raise ArgumentError("cannot sample n_sample > prob_dist.size(-1) samples without replacement",
                            hint="pass replacement=True to draw a category more than once")
    rows = p._data.reshape(-1, categories)
    gen = generator_arg(generator, "multinomial")
    if not replacement or n == 1:
        if not (np.all(rows >= 0) and np.all(np.isfinite(rows))):
            raise ValueDomainError("probability tensor contains either `inf`, `nan` or element < 0",
                                   hint="weights must be finite and nonnegative")
        if np.any(rows.sum(axis=1) == 0):
            raise ValueDomainError("invalid multinomial distribution (sum of probabilities <= 0)",
                                   hint="each row needs a positive weight")
        q = rows / gen.exponential(rows.size, rows.dtype, 1.0).reshape(rows.shape)
        picks = np.argsort(-q, axis=1, kind="stable")[:, :n]
    else:
        negative = not np.all(rows >= 0)  # a nan fails this test first, as in the kernel
        if negative or not np.all(np.isfinite(rows)):
            raise ValueDomainError("invalid multinomial distribution (encountering probability entry "
                                   f"{'< 0' if negative else '= infinity or NaN'})",
                                   hint="weights must be finite and nonnegative")
        totals = np.cumsum(rows, axis=1)  # sequential, in the input's dtype, as the kernel adds
        if np.any(totals[:, -1] <= 0):
            raise ValueDomainError("invalid multinomial distribution (sum of probabilities <= 0)",
                                   hint="each row needs a positive weight")
        cum = (totals / totals[:, -1:]).astype(np.float64)
        cum[:, -1] = 1.0
        u = gen.standard_uniform(rows.shape[0] * n, np.float64).reshape(rows.shape[0], n)
        picks = np.stack([np.searchsorted(c, row, side="left") for c, row in zip(cum, u)])
    return _leaf(picks.astype(np.int64).reshape(p.shape[:-1] + (n,)), False)


def _count(shape: tuple[int, ...]) -> int:
    return int(np.prod(shape, dtype=np.int64))


# -- constructors the census of tutorial code found missing (docs/coverage.md) --------------------------------
def _integer_tensor(dtype: type, name: str) -> Callable[..., Tensor]:
    def make(*data: Any) -> Tensor:
        if len(data) == 1 and not isinstance(data[0], (int, np.integer)):
            return Tensor(data[0], dtype=dtype)
        return _filled(data, 0, dtype, False)
    make.__name__ = name
    make.__doc__ = f"`torch.{name}([...])`: {np.dtype(dtype).name} data, or `{name}(2, 3)` uninitialised (zeros here)."
    return make


long_tensor = _integer_tensor(np.int64, "LongTensor")
int_tensor = _integer_tensor(np.int32, "IntTensor")
byte_tensor = _integer_tensor(np.uint8, "ByteTensor")


def double_tensor(data: Any, requires_grad: bool = False) -> Tensor:
    """`torch.DoubleTensor([...])`: float64 data."""
    return Tensor(data, requires_grad=requires_grad, dtype=np.float64)


TENSOR_TYPES: dict[Callable[..., Tensor], Any] = {float_tensor: np.float32, double_tensor: np.float64,
                                                  long_tensor: np.int64, int_tensor: np.int32, byte_tensor: np.uint8}
"""PyTorch's legacy tensor types, by the dtype each stands for: `x.type(torch.LongTensor)` casts to it."""


def new_full(x: Tensor, size: tuple, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`x.new_full(size, v)` and its kin (`size` as the call gave it): a new tensor in x's dtype unless told."""
    return _filled(size, fill_value, resolve_dtype(dtype) or x.dtype, requires_grad)


def new_tensor(x: Tensor, data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return Tensor(data, requires_grad=requires_grad, dtype=dtype or x.dtype)
