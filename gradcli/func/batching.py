"""Batching rules: how each primitive maps over vmap's batch dimension.

A rule receives the op's inputs as physical values (a batched input carries the examples along its
first dimension; `batched[i]` says which do) and the op's parameters as one example sees them, and runs
the op once for every example: dims move one place right, shapes gain the batch in front, operands are
lined up so that NumPy's broadcasting never mixes examples. Most rules are declared with the op, by kind
(`Op.batching`: `broadcast`, `along_dim`, `along_given_dim`; an op flagged `elementwise` broadcasts), and
`KINDS` maps each kind to its rule here, since the engine imports no transform. Ops with their own structure
(matmul, addmm, shape changes, stack and cat) have rules of their own, registered by op name (`OWN`, which
`install` puts in the engine's `RULES`). An op with none of these makes vmap run the function once per example
(engine/batched.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import batched as B
from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, apply


def _ndim(x: Any, batched: bool) -> int:
    """One example's number of dimensions (a number has none)."""
    if not isinstance(x, Tensor):
        return 0
    return x.ndim - 1 if batched else x.ndim


def _padded(x: Tensor, rank: int) -> Tensor:
    """A batched value with size-1 dimensions after the batch, so one example has `rank` dimensions: NumPy
    then broadcasts it against unbatched operands without aligning the batch to one of their dimensions."""
    missing = rank - (x.ndim - 1)
    return x if missing <= 0 else F.reshape(x, (x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


def _shift(dim: Any, ndim: int) -> Any:
    """A dim (an int, a tuple of them, or None: every dim) of one example, as a dim of the physical value."""
    if dim is None:
        return tuple(range(1, ndim + 1))
    if isinstance(dim, (tuple, list)):
        return tuple(d % max(ndim, 1) + 1 for d in dim)
    return dim % max(ndim, 1) + 1


def _everyone(x: Any, batched: bool, size: int) -> Tensor:
    """An input as a batched value: unbatched, it is expanded (a view) to every example."""
    return x if batched else F.expand(F.unsqueeze(x, 0), (size,) + tuple(x.shape))


def elementwise(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """Each output element is its operands' at the same (broadcast) position: line the batch up and run."""
    rank = max(_ndim(x, b) for x, b in zip(inputs, batched))
    lined = [_padded(x, rank) if b else x for x, b in zip(inputs, batched)]
    return apply(op, *lined, name=name, **params)


def along_dim(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """A reduction or scan over `dim` (None: all of one example's dims): the dim moves past the batch."""
    (x,), ndim = inputs, inputs[0].ndim - 1
    if params.get("dim") is None and op.batching == "along_given_dim":
        raise B.NoRule(f"{op.name}() of a whole tensor")
    return apply(op, x, name=name, **{**params, "dim": _shift(params.get("dim"), ndim)})


def reshape(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    (x,) = inputs
    return apply(op, x, name=name, shape=(x.shape[0],) + tuple(params["shape"]))


def transpose(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    return apply(op, inputs[0], name=name, dim0=params["dim0"] + 1, dim1=params["dim1"] + 1)


def permute(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    return apply(op, inputs[0], name=name, dims=(0,) + tuple(d + 1 for d in params["dims"]))


def expand(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    shape = tuple(params["shape"])
    x = _padded(inputs[0], len(shape))
    return apply(op, x, name=name, shape=(x.shape[0],) + shape)


def _batch_key(key: Any) -> tuple:
    """An index of one example with the batch's slice in front. Advanced indices (arrays) that the key
    separates would move their dims before the batch's (NumPy's rule): such a key runs per example."""
    key = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, p in enumerate(key) if isinstance(p, np.ndarray)]
    if arrays and arrays[-1] - arrays[0] + 1 != len(arrays):
        raise B.NoRule("indexing with separated index arrays")
    return (slice(None),) + key


def index(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    return apply(op, inputs[0], name=name, key=_batch_key(params["key"]))


def index_put(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """Values added into zeros at key: every example's into its own block of a batch of zeros."""
    return apply(op, inputs[0], name=name, shape=(size,) + tuple(params["shape"]), key=_batch_key(params["key"]))


def scattered(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """scatter and scatter_add: the key (one index array per dim, gather's positions) gains the examples' own
    index in front, so each example writes only its own block; a shared input or source is every example's."""
    key = params["key"]
    if not all(isinstance(k, np.ndarray) for k in key):
        raise B.NoRule(f"{op.name} at a key that is not index arrays")
    rank = max((k.ndim for k in key), default=0)
    own = np.arange(size).reshape((size,) + (1,) * rank)
    (x, src), (bx, bs) = inputs, batched
    source = _everyone(src, bs, size) if isinstance(src, Tensor) else src
    return apply(op, _everyone(x, bx, size), source, name=name, key=(own,) + tuple(key))


def flip(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    (x,) = inputs
    return apply(op, x, name=name, dims=_shift(tuple(params["dims"]), x.ndim - 1))


def roll(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """Without dims an example rolls flattened: each example's row of the flattened batch rolls."""
    (x,), dims = inputs, params.get("dims")
    if dims is None:
        out = apply(op, F.reshape(x, (size, -1)), name=name, shifts=tuple(params["shifts"])[:1], dims=(1,))
        return F.reshape(out, tuple(x.shape))
    return apply(op, x, name=name, shifts=params["shifts"], dims=_shift(tuple(dims), x.ndim - 1))


def repeat(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    repeats = tuple(params["repeats"])
    return apply(op, _padded(inputs[0], len(repeats)), name=name, repeats=(1,) + repeats)


def trailing(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """An op of one input's last dims (tril, triu, constant padding): the batch is one more leading dim."""
    return apply(op, inputs[0], name=name, **params)


def diag_embed(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    (x,) = inputs
    rank = x.ndim  # one example's result has one dim more than the example
    dims = {k: params.get(k, d) % rank + 1 for k, d in (("dim1", -2), ("dim2", -1))}
    return apply(op, x, name=name, offset=params.get("offset", 0), **dims)


def extremum(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """max/min: along a dim, the dim shifts; of a whole example, amax/amin over its dims, whose ties share the
    gradient evenly as the whole-tensor max's do (max along a dim gives it to the first)."""
    if params.get("dim") is not None:
        return along_dim(op, name, inputs, batched, params, size)
    (x,) = inputs
    every = O.AMAX if op.name == "max" else O.AMIN
    return apply(every, x, name=name or op.node, dim=tuple(range(1, x.ndim)), keepdim=bool(params.get("keepdim")))


def layer_norm(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """Normalised over an example's last dims, which the batch leaves in place; a batched weight or bias (an
    ensemble's) lines up with the examples."""
    (x, w, b), (bx, bw, bb) = inputs, batched
    x = _everyone(x, bx, size)
    rank = x.ndim - 1
    w, b = (_padded(v, rank) if bv else v for v, bv in ((w, bw), (b, bb)))
    return apply(op, x, w, b, name=name, **params)


def batch_norm(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """Statistics per example and channel: the examples become channels of one batch norm ((N, B·C, ...)),
    weights, biases and running statistics repeated per example (or each example's own), then unfolded."""
    (x, w, b), (bx, bw, bb) = inputs, batched
    x = _everyone(x, bx, size)
    n, c = x.shape[1], x.shape[2]
    folded = F.reshape(F.transpose(x, 0, 1), (n, size * c) + tuple(x.shape[3:]))

    def per_channel(v: Any, bv: bool) -> Any:
        return F.reshape(_everyone(v, bv, size), (size * c,)) if isinstance(v, Tensor) else v
    stats = {k: None if params.get(k) is None else np.tile(params[k], size) for k in ("mean", "var")}
    out = apply(op, folded, per_channel(w, bw), per_channel(b, bb), name=name, eps=params["eps"], **stats)
    return F.transpose(F.reshape(out, (n, size, c) + tuple(out.shape[2:])), 0, 1)


def joined(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """stack and cat: every input batched (an unbatched one is every example's), the dim past the batch."""
    xs = [_everyone(x, b, size) for x, b in zip(inputs, batched)]
    return apply(op, *xs, name=name, dim=params["dim"] + 1)


def matmul(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """A batched operand's examples become rows of one product where the other operand is shared (as
    PyTorch folds them, so vmap's numbers are the batched call's to the last bit); otherwise vectors are
    made matrices and the batch dims lined up, NumPy's matmul then pairing example with example."""
    (a, b), (ba, bb) = inputs, batched
    na, nb = _ndim(a, ba), _ndim(b, bb)
    if ba and not bb and nb == 2:
        rows = F.reshape(a, (-1, a.shape[-1]))
        out = apply(op, rows, b, name=name)
        return F.reshape(out, tuple(a.shape[:-1]) + (b.shape[-1],))
    rank = max(na, nb, 2)
    am = F.unsqueeze(a, -2) if na == 1 else a
    bm = F.unsqueeze(b, -1) if nb == 1 else b
    am = _padded(am, rank) if ba else am
    bm = _padded(bm, rank) if bb else bm
    out = apply(op, am, bm, name=name)  # an unbatched operand has at most `rank` dims: it aligns with the examples
    if na == 1:
        out = F.squeeze(out, -2)
    return F.squeeze(out, -1) if nb == 1 else out


def addmm(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """c + a @ b: with only `a` batched (a linear layer's input), every example's rows in one addmm."""
    (c, a, b), (bc, ba, bb) = inputs, batched
    if ba and not bb and not bc:
        out = apply(op, c, F.reshape(a, (-1, a.shape[-1])), b, name=name)
        return F.reshape(out, tuple(a.shape[:-1]) + (b.shape[-1],))
    product = matmul(O.MATMUL, None, [a, b], [ba, bb], {}, size)
    return elementwise(O.ADD, None, [c, product], [bc, True], {}, size)


def convolution(op: O.Op, name: str | None, inputs: list, batched: list[bool], params: dict, size: int) -> Tensor:
    """A shared kernel: the examples' samples side by side in one convolution. A kernel per example (the
    per-example gradients of a shared weight): the examples side by side as groups of one grouped convolution."""
    (x, w, b), (bx, bw, bb) = inputs, batched
    if not bw and not bb:
        out = apply(op, F.reshape(x, (-1,) + tuple(x.shape[2:])), w, b, name=name, **params)
        return F.reshape(out, tuple(x.shape[:2]) + tuple(out.shape[1:]))
    xb, wb = _everyone(x, bx, size), _everyone(w, bw, size)
    n, o = xb.shape[1], wb.shape[1]
    grouped = F.reshape(F.transpose(xb, 0, 1), (n, -1) + tuple(xb.shape[3:]))
    kernels = F.reshape(wb, (-1,) + tuple(wb.shape[2:]))
    bias = F.reshape(_everyone(b, bb, size), (-1,)) if isinstance(b, Tensor) else b
    out = apply(op, grouped, kernels, bias, name=name, **{**params, "groups": size * params["groups"]})
    return F.transpose(F.reshape(out, (n, size, o) + tuple(out.shape[2:])), 0, 1)


KINDS = {"broadcast": elementwise, "along_dim": along_dim, "along_given_dim": along_dim}
"""The rules an op declares by kind (`Op.batching`, in its family of the op table)."""


def derive(op: O.Op) -> Any:
    """The rule the op table declares: its `batching` kind, or `broadcast` for an op flagged `elementwise`."""
    return KINDS.get(op.batching or ("broadcast" if op.elementwise else ""))


OWN = {"reshape": reshape, "transpose": transpose, "permute": permute, "expand": expand, "stack": joined,
       "cat": joined, "matmul": matmul, "addmm": addmm, "convolution": convolution,
       "index": index, "index_put": index_put, "scatter": scattered, "scatter_add": scattered, "flip": flip,
       "roll": roll, "repeat": repeat, "tril": trailing, "triu": trailing, "pad": trailing, "diag_embed": diag_embed,
       "max": extremum, "min": extremum, "layer_norm": layer_norm, "batch_norm": batch_norm}
"""Rules by op name for the ops with a structure of their own."""


def install() -> None:
    """Give the engine the rules (it imports no transform); vmap calls this before its first batched run."""
    if not B.GENERIC:
        B.RULES.update(OWN)
        B.GENERIC.append(derive)
