"""`repr(tensor)` the way PyTorch prints it, so pasted tutorial output looks familiar."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from gradcli.engine.creation import get_default_dtype
from gradcli.engine.tensor import WeakIds

if TYPE_CHECKING:
    from gradcli.engine.tensor import Tensor


class Size(tuple):
    """`torch.Size`: a tuple of ints that prints as PyTorch prints a shape."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(int(s)) for s in self)}])"

    __str__ = __repr__


PARAMETERS = WeakIds()
"""The tensors `nn.Parameter` made, by id: PyTorch prints a parameter as `Parameter containing:`."""


def nonfinite_text(v: float) -> str | None:
    """`"nan"`, `"inf"` or `"-inf"` for a non-finite number, None for a finite one."""
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return None


def format_numbers(arr: np.ndarray) -> tuple[str, str] | None:
    """PyTorch's float style: `3.` when all are integral, `4.5000` fixed, or `1.0000e+08` scientific."""
    if arr.dtype.kind != "f" or arr.size == 0:
        return None
    finite = np.abs(arr[np.isfinite(arr)]).astype(np.float64)
    nonzero = finite[finite != 0]
    integral = finite.size == 0 or bool(np.all(np.floor(finite) == finite))
    big, small = (nonzero.max(), nonzero.min()) if nonzero.size else (0.0, 0.0)
    sci = nonzero.size > 0 and (big / small > 1000.0 or big > 1e8 or small < 1e-4)
    if integral and not (nonzero.size and big > 1e8):
        return ("int", "{:.0f}.")
    return ("sci", "{:.4e}") if sci else ("fixed", "{:.4f}")


def tensor_repr(t: "Tensor") -> str:
    arr = t._data
    style = format_numbers(arr)
    if style is None:
        body = np.array2string(arr, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
    else:
        fmt = style[1]

        def cell(v: float) -> str:
            return nonfinite_text(v) or fmt.format(v)
        width = max((len(cell(v)) for v in arr.reshape(-1)[:2000]), default=1)
        body = np.array2string(arr, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3,
                               formatter={"float_kind": lambda v: cell(v).rjust(width)})
    extras = []
    if arr.dtype.kind == "f" and arr.dtype != get_default_dtype() or (
            arr.dtype.kind in "iub" and arr.dtype not in (np.int64, np.bool_)):
        extras.append(f"dtype=torch.{arr.dtype}")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    text = "tensor(" + body + "".join(", " + e for e in extras) + ")"
    return "Parameter containing:\n" + text if PARAMETERS.has(t) else text
