"""gradcli: tensor programs in, autograd gradients out, each one provable by SymPy.

The engine half of the package (`Tensor`, the functions, the constructors, `grad`/`jacobian`/
`hessian`) imports NumPy only; SymPy is loaded by `gradcli.check` when a check asks for it.

NumPy's BLAS gets one thread unless OPENBLAS_NUM_THREADS says otherwise, set before NumPy is first
imported: gradcli's tensors are tutorial-sized, and on a shared two-core machine BLAS's spinning
threads made a 64x1000 @ 1000x100 float64 product take 23 ms of CPU instead of 0.4 ms, most of a
checked training loop's time.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from gradcli.engine.creation import (arange, eye, float_tensor, full, get_default_dtype, linspace, manual_seed, ones,
                              ones_like, rand, randn, set_default_dtype, tensor, zeros, zeros_like)
from gradcli.errors import GradcliError
from gradcli.program.evaluation import evaluate
from gradcli.engine.autograd import grad, hessian, jacobian
from gradcli.engine.functions import (abs, add, cat, clamp, cos, div, dot, exp, expand, flatten, index, log, log1p,
                               log_softmax, matmul, max, maximum, mean, min, minimum, mm, mul, neg, norm, outer,
                               permute, pow, prod, relu, reshape, sigmoid, sign, sin, softmax, softplus, sqrt, squeeze,
                               stack, std, sub, sum, t, tan, tanh, transpose, unsqueeze, var, view, where)
from gradcli.engine.tensor import Tensor

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext gradcli` in IPython or Jupyter: the `%gradcli` and `%%gradcli` magics. IPython looks
    for this function on the package; the magics live with the commands (gradcli.jupyter), loaded
    by name so that the public API never imports the command line that imports it."""
    import importlib
    importlib.import_module("gradcli.jupyter").load_ipython_extension(ipython)


__all__ = [
    "GradcliError", "Tensor", "tensor", "evaluate", "grad", "jacobian", "hessian", "manual_seed",
    "set_default_dtype", "get_default_dtype", "arange", "eye", "full", "linspace", "ones", "ones_like", "rand",
    "randn", "zeros", "zeros_like", "float_tensor",
    "abs", "add", "cat", "clamp", "cos", "div", "dot", "exp", "expand", "flatten", "index", "log", "log1p",
    "log_softmax", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "mul", "neg", "norm", "outer",
    "permute", "pow", "prod", "relu", "reshape", "sigmoid", "sign", "sin", "softmax", "softplus", "sqrt", "squeeze",
    "stack", "std", "sub", "sum", "t", "tan", "tanh", "transpose", "unsqueeze", "var", "view", "where",
]
