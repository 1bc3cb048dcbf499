"""`torch.testing.assert_close`: PyTorch's comparison and its AssertionError texts, which a program may catch.

Tolerances default by dtype as PyTorch's do (float32: rtol 1.3e-6, atol 1e-5; float64 and Python floats:
1e-7 each; integers and bools: exact). Differences are computed in the tensors' dtype, so the numbers a
failure prints are PyTorch's.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.engine.tensor_str import Size
from gradcli.errors import ArgumentError, ValueDomainError
from gradcli.lang.exceptions import raise_python

_TOLERANCES = {np.dtype(np.float32): (1.3e-6, 1e-5), np.dtype(np.float64): (1e-7, 1e-7)}
_TORCH_NAMES = {"float32": "torch.float32", "float64": "torch.float64", "int64": "torch.int64",
                "int32": "torch.int32", "bool": "torch.bool"}


def _index(flat: int, shape: tuple[int, ...]) -> str:
    return repr(tuple(int(i) for i in np.unravel_index(flat, shape))) if shape else "()"


def _number(value: Any) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None) -> None:
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueDomainError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
                               hint="pass both, e.g. rtol=1e-5, atol=1e-8")
    numbers = (int, float)
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        _scalars(float(actual), float(expected), rtol, atol, equal_nan, msg)
        return
    if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
        raise ArgumentError(f"No comparison pair was able to handle inputs of type {type(actual).__name__} and "
                            f"{type(expected).__name__}.", hint="compare two tensors, or two numbers")
    a, e = actual._data, expected._data
    if a.shape != e.shape:
        raise_python("AssertionError", msg or f"The values for attribute 'shape' do not match: {Size(a.shape)} != "
                                              f"{Size(e.shape)}.")
    if check_dtype and a.dtype != e.dtype:
        raise_python("AssertionError", msg or f"The values for attribute 'dtype' do not match: "
                                              f"{_TORCH_NAMES.get(a.dtype.name, a.dtype.name)} != "
                                              f"{_TORCH_NAMES.get(e.dtype.name, e.dtype.name)}.")
    exact = a.dtype.kind in "biu"
    default = (0.0, 0.0) if exact else _TOLERANCES.get(a.dtype, (1e-7, 1e-7))
    rtol, atol = (default if rtol is None else (rtol, atol))
    work = np.float32 if exact else a.dtype  # PyTorch measures integer differences in the default float
    af, ef = a.astype(work), e.astype(work)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.abs(af - ef)
        close = diff <= atol + rtol * np.abs(ef)
        close |= af == ef
        if equal_nan:
            close |= np.isnan(af) & np.isnan(ef)
        if close.all():
            return
        relative = diff / np.abs(ef)
    if msg:
        raise_python("AssertionError", msg)
    flat_diff, flat_rel = diff.ravel(), relative.ravel()
    worst = int(np.argmax(np.where(np.isnan(flat_diff), np.inf, flat_diff)))
    worst_rel = int(np.argmax(np.where(np.isnan(flat_rel), np.inf, flat_rel)))
    wrong = int((~close).sum())
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {wrong} / {a.size} ({wrong / a.size:.1%})"]
    abs_text = _number(int(flat_diff[worst]) if exact else flat_diff[worst])
    lines.append(f"Greatest absolute difference: {abs_text} at index {_index(worst, a.shape)}"
                 + ("" if exact else f" (up to {atol} allowed)"))
    lines.append(f"Greatest relative difference: {_number(flat_rel[worst_rel])} at index "
                 f"{_index(worst_rel, a.shape)}" + ("" if exact else f" (up to {rtol} allowed)"))
    raise_python("AssertionError", "\n".join(lines))


def _scalars(actual: float, expected: float, rtol: float | None, atol: float | None, equal_nan: bool,
             msg: str | None) -> None:
    rtol, atol = (1e-7, 1e-7) if rtol is None else (rtol, atol)
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected) or actual == expected or (equal_nan and actual != actual and
                                                                    expected != expected):
        return
    relative = diff / abs(expected) if expected else float("inf")
    raise_python("AssertionError", msg or f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
                                          f"Absolute difference: {diff} (up to {atol} allowed)\n"
                                          f"Relative difference: {relative} (up to {rtol} allowed)")
