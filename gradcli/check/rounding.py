"""How far gradcli's own floating-point arithmetic may stray from the exact gradient: the tolerance model.

A gradient computed in float32 over a 2,000-term sum is not within 1e-4 of the exact value
because float32 is wrong, but because each of its roundings (relative size u) is relative to
the terms it combines, not to their sum. The model is the classic running error bound:

    |computed - exact| <= γ · M,   γ = k · u

where M is the derivative evaluated with the magnitudes of every term (no cancellation: see
`calculus.AbsoluteEvaluator` and `Calculus.slope(absolute=True)`), u the unit roundoff of the
least precise float dtype in the graph, and k the number of roundings on a path through it:
two per node (its forward and its VJP) plus log2 of the largest array a reduction may sum
(NumPy sums pairwise). A correct float32 gradient stays inside it; a wrong VJP errs by a
fraction of the gradient itself, which is many times γ·M unless the sum cancels to ~k·u of
its terms.

Where SymPy cannot take the graph, M is not known inside its sums, and a float32 gradient that
cancels there (a net near its fit) strays further than the top sum's magnitudes allow. There
`own_rounding` measures float32's own rounding: the same VJPs replayed in float32 and in float64
at the same point differ by that rounding alone. The VJPs serve the allowance only, never the
witness: a wrong VJP is as wrong in both replays, so the difference cannot hide it, and neither
replay is the gradient under test, so an error made outside the VJPs is not hidden either.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.check.graph import CUT, Trace, widened
from gradcli.engine import narrow
from gradcli.engine import ops as O
from gradcli.engine.function import runs_program
from gradcli.engine.tensor import Node, Tensor


def growth(tr: Trace) -> float:
    """γ = k·u for the graph behind `tr` (0 when nothing in it is a float)."""
    dtypes = [np.dtype(n.dtype) for n in tr.nodes] + [np.dtype(t.dtype) for t in tr.leaves.values()]
    floats = [d for d in dtypes if d.kind == "f"]
    if not floats:
        return 0.0
    unit = max(narrow.eps(d) for d in floats) / 2  # bfloat16's 2**-7 too: ~3 significant digits
    sizes = [math.prod(n.shape) for n in tr.nodes] + [t._data.size for t in tr.leaves.values()]
    sizes += [x._data.size if type(x) is Tensor else np.size(x) for n in tr.nodes for x in n.inputs
              if type(x) is not Node]
    steps = 2 * len(tr.nodes) + math.ceil(math.log2(max(sizes, default=1) + 1))
    return steps * unit


def own_rounding(tr: Trace, values: dict[Any, Any], native: dict[Any, Any],
                 weights: np.ndarray) -> dict[int, np.ndarray] | None:
    """float32's own rounding of ∂(Σ weights·output)/∂leaf, by id: the graph's own VJPs replayed in the
    program's dtypes at `native` (`numeric.forward(..., native=True)`) less the same in float64 at `values`.

    Both replays are the checker's, never the gradient under test, so an error made outside the
    VJPs (in backward's accumulation, say) is not taken for rounding. A hooked tensor's gradient is
    what its hook returned (`Trace.cuts`), as in the backward verified. None where a node's VJP is a
    program's own backward (a Function): it is not run again.
    """
    wide = _gradients(tr, values, weights, True)
    own = _gradients(tr, native, weights, False) if wide is not None else None
    if wide is None or own is None:
        return None
    return {key: np.asarray(own[key], dtype=np.float64) - wide[key] for key in wide if key in own}


def _gradients(tr: Trace, values: dict[Any, Any], weights: np.ndarray, wide: bool) -> dict[int, np.ndarray] | None:
    """The VJP replay of `own_rounding`: in float64 (`wide`) or in the dtypes the values have."""
    root = tr.root
    if type(root) is not Node:
        return None
    dtype = np.float64 if wide else np.dtype(root.dtype)
    grads: dict[Any, Any] = {root: np.broadcast_to(np.asarray(weights, dtype=dtype), root.shape)}
    with np.errstate(all="ignore"):
        for node in reversed(tr.nodes):
            cut = tr.cuts.get(node)
            g = grads.pop(node, None) if cut is None else _as(cut.gradient, wide, node.dtype)
            if g is None and not (cut is not None and cut.inputs):
                continue
            if runs_program(node.op) and not (cut is not None and cut.inputs):
                return None
            args = [widened(tr.resolve(x, values)) if wide else tr.resolve(x, values) for x in node.inputs]
            out = values[(CUT, node)] if cut is not None else values[node]
            for i in node.needs:
                x = node.inputs[i]
                if cut is not None and cut.inputs:
                    if cut.inputs[i] is None:
                        continue
                    gi = _as(cut.inputs[i], wide, _dtype(x))
                else:
                    gi = g if node.op is O.CAST else node.op.vjps[i](O.NUMPY, g, out, *args, **node.params)
                gi = O.unbroadcast(O.NUMPY, _as(gi, wide, _dtype(x)), tuple(x.shape))
                key = x if type(x) is Node else id(x)
                grads[key] = grads[key] + gi if key in grads else gi
    return {id(t): grads[id(t)] for t in tr.leaves.values() if id(t) in grads}


def _as(g: Any, wide: bool, dtype: Any) -> np.ndarray:
    return np.asarray(g, dtype=np.float64 if wide else dtype)


def _dtype(x: Any) -> np.dtype:
    return x._data.dtype if type(x) is Tensor else np.dtype(x.dtype)
