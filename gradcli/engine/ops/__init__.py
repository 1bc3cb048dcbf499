"""THE op table: one entry per primitive, holding everything gradcli knows about it, by family.

An entry is the NumPy forward, one VJP per differentiable input, the SymPy meaning used by
`--check`, PyTorch's node name and a one-line rule for `--explain` and `gradcli ops`. Everything
about an op's calculus lives here; the other places only give it a name a caller can reach.

Adding an elementwise function is one declaration (`_unary(...)` in `elementwise.py`, see `SINC`) and its test: the
primitive (forward, VJP, node name, rule, kink) and its public names (`torch.X`, `Tensor.X`,
aliases, `X_`), its `element` meaning for `--check` and its `domain`. From the declarations are derived
the tensor functions (`engine/functions.py`) and `NUMPY` (so the two VJP namespaces cannot drift), the
Tensor methods, `FUNCTIONS`, `TENSOR_METHODS` and `OP_OF` in `lang/builtins.py`, and the checker's `S`
(`check/meaning.py`), float evaluators (`check/calculus.py`) and domains (`check/domains.py`). `K`
(`check/kinks.py`) is a vocabulary of kink kinds that a `kink` rule picks from, not a table per function.
A primitive with arguments of its own (a reduction, a view, a loss) still has a hand-written
`torch.X` in `engine/functions.py` that normalises them; `tests/test_op_table.py` and
`tests/test_declarations.py` fail when the tables disagree.

VJPs are written once against a namespace `ns` that is either `NUMPY` (plain arrays, the fast
path) or the tensor functions (so `create_graph=True` records a differentiable backward graph
from the very same lines). Broadcasting is never undone here: the engine calls `unbroadcast`.

SymPy meanings receive `S`, the symbolic namespace of `gradcli.check.meaning`, so this module
never imports SymPy.
"""
from __future__ import annotations

from typing import Any

from gradcli.engine.ops import elementwise, linalg, nn, reductions, sampling, shape
from gradcli.engine.ops.linalg import Singular, variadic
from gradcli.engine.ops.numpy_namespace import numpy_namespace
from gradcli.engine.ops.op import (Element, Names, Op, broadcast_axes, diagonal_jvp, linear_jvp, product_jvp,
                                   reduced_shape, sum_linear_jvp, transposed_jvp, unbroadcast)

FAMILIES = (elementwise, linalg, reductions, shape, nn, sampling)
"""The rooms of the table: elementwise functions, linear algebra, reductions and scans, indexing and shape,
the primitives of torch.nn.functional, and the differentiable draws of torch.distributions. Each lists its
primitives in its own `OPS`."""

TABLE: tuple[Op, ...] = tuple(op for family in FAMILIES for op in family.OPS)

globals().update({name: value for family in FAMILIES for name, value in vars(family).items()
                  if name.isupper() and isinstance(value, Op)})
"""Every primitive by its constant's name (`ops.ADD`, `ops.SINC`), wherever its family declares it."""


def named(kind: str) -> dict[str, Op]:
    """Every declared name of one kind (`functions`: torch.X; `methods`: Tensor.X) and its primitive."""
    return {name: op for op in TABLE if op.names for name in getattr(op.names, kind)}


NUMPY: Any = numpy_namespace(TABLE)
