"""The functional API (`gradcli.exp(x)`, `gradcli.matmul(a, b)`, ...) over the op table, by family.

This is where arguments are normalised (dims, shapes, keys) and user mistakes become errors with
PyTorch's text, so the op table stays pure. The module doubles as the namespace VJPs use under
`create_graph=True`: every name `ops.NUMPY` has, this package has with the same signature.

The families (`arguments`, `elementwise`, `shape`, `reductions`, `linalg`, `twins`) import one way, in
that order; this package re-exports their public names (and the few private helpers other parts use).
"""
from __future__ import annotations

from gradcli.engine.functions.arguments import *  # noqa: F401,F403
from gradcli.engine.functions.elementwise import *  # noqa: F401,F403
from gradcli.engine.functions.shape import *  # noqa: F401,F403
from gradcli.engine.functions.reductions import *  # noqa: F401,F403
from gradcli.engine.functions.linalg import *  # noqa: F401,F403
from gradcli.engine.functions.twins import *  # noqa: F401,F403
from gradcli.engine.functions.arguments import _dim, _shape_args, _tensor_arg, _type_name  # noqa: F401
from gradcli.engine.functions.arguments import _TORCH_NAMES  # noqa: F401
from gradcli.engine.functions import elementwise as _elementwise, linalg as _linalg, reductions as _reductions, \
    shape as _shape

COMPOSITES = _elementwise.COMPOSITES + _shape.COMPOSITES + _reductions.COMPOSITES + _linalg.COMPOSITES
"""Every family's functions declared with their names (each family's `COMPOSITES`)."""
