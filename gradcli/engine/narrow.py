"""`torch.bfloat16`, emulated: NumPy has no bfloat16, so such a tensor holds float32 values that are all exact
bfloat16 numbers, and every result is rounded back to bfloat16.

That is how PyTorch's CPU kernels compute most bfloat16 ops: in float32 ("opmath"), rounded once per op;
reductions and matmul accumulate in float32 and round at the end. The array is a `BFloat16Array` (an ndarray
subclass, so NumPy's own ufuncs, reductions and matmul reach `__array_ufunc__`, which rounds), and its dtype is
`BFLOAT16`: float32 for NumPy, carrying PyTorch's name in its metadata, so the rest of the engine computes on it
as on float32 and only the places that name a dtype ask `name_of`. (torch.float16 needs none of this: NumPy's
float16 computes each op in float32 and rounds, as PyTorch's CPU kernels do.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

_F32 = np.dtype(np.float32)
BFLOAT16 = np.dtype(np.float32, metadata={"torch": "bfloat16"})
"""PyTorch's bfloat16, as the dtype of the arrays that hold its values (NumPy computes on it as float32)."""


def is_bfloat16(dtype: Any) -> bool:
    """Whether a dtype is bfloat16: NumPy compares dtypes without their metadata, so `==` cannot tell."""
    return isinstance(dtype, np.dtype) and dtype.metadata is not None and dtype.metadata.get("torch") == "bfloat16"


def name_of(dtype: Any) -> str:
    """A dtype's name as PyTorch spells it after `torch.`: bfloat16 where NumPy would say float32."""
    return "bfloat16" if is_bfloat16(dtype) else np.dtype(dtype).name


def same(a: Any, b: Any) -> bool:
    """dtype equality that tells bfloat16 from float32."""
    return np.dtype(a) == np.dtype(b) and is_bfloat16(a) == is_bfloat16(b)


def eps(dtype: Any) -> float:
    """The dtype's machine epsilon: 2**-7 for bfloat16 (8 significant bits), NumPy's for the others."""
    return 2.0 ** -7 if is_bfloat16(dtype) else float(np.finfo(dtype).eps)


def round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as PyTorch's float -> bfloat16 rounds:
    the upper 16 bits of the float32 pattern, plus the carry of the lower 16; a nan stays a nan."""
    f = np.array(_plain(values) if isinstance(values, np.ndarray) else values, dtype=_F32, order="C")
    bits = f.view(np.uint32)
    rounded = ((bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) & np.uint32(0xFFFF0000))
    out = np.asarray(rounded).view(_F32)  # a 0-d operation gives a NumPy scalar
    nan = np.isnan(f)
    if nan.any():
        out = np.asarray(np.where(nan, np.float32(np.nan), out))
    return out


def as_bfloat16(values: Any) -> "BFloat16Array":
    """Values (any float or integer array or number) as a bfloat16 array, rounded."""
    global SEEN
    SEEN = True
    return np.ndarray.view(round_to_bfloat16(values), dtype=BFLOAT16, type=BFloat16Array)


SEEN = False
"""Whether any bfloat16 array was made: until then `op_result` has nothing to look for (float32 programs pay
one test per op)."""


def forward(function: Any, arrays: tuple, params: dict) -> np.ndarray:
    """One op's forward as PyTorch's kernel computes it for bfloat16 operands: on their float32 values, rounded
    once at the end (softmax, a linear layer, mean, a loss: one rounding, not one per NumPy step)."""
    if not any(isinstance(a, BFloat16Array) for a in arrays):
        return function(*arrays, **params)
    if "dtype" in params:  # a cast, or an op told its result's dtype: that dtype stands
        return function(*arrays, **params)
    out = function(*[_plain(a) for a in arrays], **params)
    return op_result(out if isinstance(out, np.ndarray) else np.asarray(out), arrays)


def fused(function: Any, *arrays: Any) -> np.ndarray:
    """`function` of arrays as one PyTorch kernel computes it (`p.add_(g, alpha=-lr)`): for bfloat16 operands
    on their float32 values, rounded once."""
    return forward(function, arrays, {})


def op_result(out: np.ndarray, arrays: tuple) -> np.ndarray:
    """An op's result as PyTorch types it when NumPy's function (einsum, concatenate, where, linalg) returned a
    plain array for bfloat16 operands: rounded to bfloat16 unless PyTorch's promotion leaves it."""
    if (SEEN and type(out) is np.ndarray and out.dtype.kind == "f"
            and any(isinstance(a, BFloat16Array) for a in arrays) and _stays_bfloat16(arrays)):
        return as_bfloat16(out)
    return out


def astype(array: np.ndarray, dtype: Any) -> np.ndarray:
    """`array.astype(dtype)` where dtype may be bfloat16: into it rounds, out of it is exact."""
    if is_bfloat16(dtype):
        return as_bfloat16(array.astype(np.float32) if array.dtype.kind in "iub" else array)
    plain = array.view(np.ndarray).view(_F32) if isinstance(array, BFloat16Array) else array
    return plain.astype(dtype)


def settle(array: np.ndarray) -> np.ndarray:
    """A new array whose dtype says bfloat16 (NumPy filled it: `zeros(..., dtype=BFLOAT16)`) as a rounded
    BFloat16Array; any other array as it is."""
    if type(array) is np.ndarray and array.dtype.metadata is not None and is_bfloat16(array.dtype):
        return as_bfloat16(array.view(_F32))
    return array


def plain(x: Any) -> Any:
    """A bfloat16 array's float32 values (a view), on which NumPy computes without rounding; anything else as
    it is."""
    return np.ndarray.view(x, dtype=_F32, type=np.ndarray) if isinstance(x, BFloat16Array) else x


_plain = plain


def unrounded(array: Any, dtype: Any) -> bool:
    """Whether an array meant as bfloat16 is not a rounded BFloat16Array (NumPy carried the dtype's metadata
    into a plain result)."""
    return is_bfloat16(dtype) and not isinstance(array, BFloat16Array)


def _stays_bfloat16(inputs: tuple) -> bool:
    """PyTorch's promotion with a bfloat16 operand: a float tensor of another dtype wins over it when it has
    dimensions (or when every bfloat16 operand is 0-d); numbers, integer and bool tensors do not."""
    dimensioned = any(isinstance(x, BFloat16Array) and x.ndim for x in inputs)
    for x in inputs:
        if type(x) is np.ndarray and x.dtype.kind in "fc" and (x.ndim or not dimensioned):
            return False
    return True


class BFloat16Array(np.ndarray):
    """float32 storage of bfloat16 values: every ufunc (arithmetic, functions, reductions, matmul) computes on
    the float32 values and rounds its float results to bfloat16, unless PyTorch's promotion leaves bfloat16."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*[_plain(x) for x in inputs], **kwargs)
        if method == "at":
            if isinstance(inputs[0], BFloat16Array):
                _plain(inputs[0])[...] = round_to_bfloat16(_plain(inputs[0]))
            return result
        if out is not None:
            for o in out:
                if isinstance(o, BFloat16Array):
                    _plain(o)[...] = round_to_bfloat16(_plain(o))
            return out[0] if len(out) == 1 else out
        keep = _stays_bfloat16(inputs)
        if isinstance(result, tuple):
            return tuple(self._settled(r, keep) for r in result)
        return self._settled(result, keep)

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> np.ndarray:  # type: ignore[override]
        """Out of bfloat16 the values are exact (a plain array); into it they already are."""
        if is_bfloat16(dtype):
            return self.copy() if kwargs.get("copy", True) else self
        return _plain(self).astype(dtype, *args, **kwargs)

    @staticmethod
    def _settled(result: Any, keep: bool) -> Any:
        result = np.asarray(result)
        if keep and result.dtype.kind == "f":
            return as_bfloat16(result)
        return result
