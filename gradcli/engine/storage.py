"""What a tensor says about its memory, and the resizes that change it: `element_size`, `data_ptr`, `stride`,
`is_cuda`, `resize`, `resize_`, `resize_as_`.

A tensor's values are a NumPy array, which has PyTorch's row-major layout, its element sizes and (for the
views gradcli makes as views) its strides and offsets into the same memory, so these answers are read off
the array. Tutorials ask them to show that a view shares memory (`x.data_ptr() == y.data_ptr()`) or how big
a model is (`p.numel() * p.element_size()`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import inplace as I
from gradcli.engine import views as V
from gradcli.engine.state import GradMode, _root
from gradcli.engine.tensor import Tensor, apply, check_elements
from gradcli.errors import ArgumentError, ShapeError


def element_size(x: Tensor) -> int:
    """Bytes per element: 4 for float32, 8 for float64 and int64, 1 for bool."""
    return int(x._data.itemsize)


def data_ptr(x: Tensor) -> int:
    """The address of the first element: a view that starts where its base does shares it, as in PyTorch."""
    return _address(x._data)


def stride(x: Tensor, dim: int | None = None) -> Any:
    """Strides in elements (PyTorch's unit), not NumPy's bytes."""
    from gradcli.engine.functions.arguments import _dim
    steps = tuple(int(s) // x._data.itemsize for s in x._data.strides)
    return steps if dim is None else steps[_dim(dim, x.ndim)]


def _sizes(sizes: tuple, what: str) -> tuple[int, ...]:
    from gradcli.engine.functions.arguments import _shape_args
    dims = _shape_args(sizes)
    if any(s < 0 for s in dims):
        raise ArgumentError(f"{what}: Trying to create tensor with negative dimension {min(dims)}: {list(dims)}",
                            hint="every size must be 0 or more")
    check_elements(dims, what)
    return dims


def resize(x: Tensor, *sizes: Any) -> Tensor:
    """`x.resize(2, 3)`, deprecated in PyTorch but still in tutorials: autograd's Resize, which only reshapes
    (the same number of elements), recorded as `ResizeBackward`."""
    dims = _sizes(sizes, "resize")
    count = int(np.prod(dims, dtype=np.int64))
    if count != x.numel():
        wanted = "x".join(map(str, dims))
        have = "x".join(map(str, x.shape)) if x.shape else "scalar"
        raise ShapeError(f"requested resize to {wanted} ({count} elements in total), but the given tensor has a size "
                         f"of {have} ({x.numel()} elements). autograd's resize can only change the shape of a given "
                         "tensor, while preserving the number of elements. ",
                         hint="x.reshape(...) keeps the elements; x.resize_(...) on a tensor without grad can change "
                              "their number")
    from gradcli.engine import ops as O
    return apply(O.RESHAPE, x, shape=dims, name="ResizeBackward")


def resize_(x: Tensor, *sizes: Any) -> Tensor:
    """`x.resize_(n, m)` in place: the first elements kept in row-major order, new ones zeros (PyTorch leaves
    them uninitialised; gradcli's uninitialised memory is zeros, as `torch.empty`'s). PyTorch refuses it for a
    tensor that requires grad, in any gradient mode."""
    dims = _sizes(sizes, "resize_")
    if x.requires_grad:
        raise ShapeError("cannot resize variables that require grad",
                         hint="resize a detached copy (x.detach().clone().resize_(...)) or use x.reshape(...)")
    I.check_inference(x)  # no version bump: PyTorch's resize_ leaves the counter as it is
    count = int(np.prod(dims, dtype=np.int64))
    storage = _root(x._data)
    if x._data.flags.c_contiguous and storage.flags.c_contiguous and data_ptr(x) == _address(storage) and \
            count <= storage.size:
        x._data = storage.reshape(-1)[:count].reshape(dims)  # within its storage, which PyTorch keeps whole
    else:
        flat = x._data.reshape(-1)
        grown = np.zeros(count, dtype=x._data.dtype)
        grown[:min(count, flat.size)] = flat[:count]
        x._data = grown.reshape(dims)
    return x


def reshaped_(x: Tensor, shaped: Any, what: str, node: str) -> Tensor:
    """`x.squeeze_(...)`, `x.unsqueeze_(...)`, `x.t_()`, `x.transpose_(...)`: x takes the shape of `shaped(x)`
    (the out-of-place view, of the same memory), keeping its memory and its aliases. On the graph x also takes
    the view's node as its history, named as PyTorch names the in-place one (`node`: SqueezeBackward3,
    TBackward1...). A view of another tensor keeps its shape in gradcli: its base's write-back follows it."""
    I.check_leaf(x)  # a leaf that requires grad: PyTorch's refusal, unless gradients are off
    if x._node is not None and V.base_of(x) is not None:
        raise ArgumentError(f"{what} of a view in a graph is not supported by gradcli",
                            hint=f"write y = y.{what.rstrip('_')}(...), which records the same gradient")
    recorded = x._node is not None and GradMode.enabled
    out = shaped(x if recorded else x.detach())
    data = out._data
    x._data = data if np.shares_memory(data, x._data) else x._data.reshape(data.shape)
    if recorded and out._node is not None:
        out._node.name = node
        V.rebase(x, out._node)
    I.count_write(x)  # PyTorch bumps the version, so a node that saved x refuses backward
    return x


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def resize_as_(x: Tensor, other: Any) -> Tensor:
    if not isinstance(other, Tensor):
        raise ArgumentError(f"resize_as_(): argument 'the_template' must be Tensor, not {type(other).__name__}",
                            hint="x.resize_as_(y) takes y's shape")
    return resize_(x, *other.shape)

