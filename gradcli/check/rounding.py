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
"""
from __future__ import annotations

import math

import numpy as np

from gradcli.check.graph import Trace
from gradcli.engine.tensor import Node, Tensor


def growth(tr: Trace) -> float:
    """γ = k·u for the graph behind `tr` (0 when nothing in it is a float)."""
    dtypes = [np.dtype(n.dtype) for n in tr.nodes] + [np.dtype(t.dtype) for t in tr.leaves.values()]
    floats = [d for d in dtypes if d.kind == "f"]
    if not floats:
        return 0.0
    unit = max(float(np.finfo(d).eps) for d in floats) / 2
    sizes = [math.prod(n.shape) for n in tr.nodes] + [t._data.size for t in tr.leaves.values()]
    sizes += [x._data.size if type(x) is Tensor else np.size(x) for n in tr.nodes for x in n.inputs
              if type(x) is not Node]
    steps = 2 * len(tr.nodes) + math.ceil(math.log2(max(sizes, default=1) + 1))
    return steps * unit
