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
import importlib
from typing import Any

_PUBLIC = {
    "gradcli.engine.creation": "arange eye float_tensor full get_default_dtype linspace manual_seed ones ones_like rand "
                               "randn set_default_dtype tensor zeros zeros_like",
    "gradcli.errors": "GradcliError",
    "gradcli.program.evaluation": "evaluate",
    "gradcli.engine.autograd": "grad hessian jacobian",
    "gradcli.engine.functions": "abs add cat clamp cos div dot exp expand flatten index log log1p log_softmax matmul "
                                "max maximum mean min minimum mm mul neg norm outer permute pow prod relu reshape "
                                "sigmoid sign sin softmax softplus sqrt squeeze stack std sub sum t tan tanh transpose "
                                "unsqueeze var view where",
    "gradcli.engine.tensor": "Tensor",
}
_HOME = {name: module for module, names in _PUBLIC.items() for name in names.split()}

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext gradcli` in IPython or Jupyter: the `%gradcli` and `%%gradcli` magics. IPython looks
    for this function on the package; the magics live with the commands (gradcli.jupyter), loaded
    by name so that the public API never imports the command line that imports it."""
    importlib.import_module("gradcli.jupyter").load_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    """The public API loads on first use (PEP 562): `import gradcli.cli` for `gradcli --help` must not pay for
    the engine, the language and the program runner that `gradcli.evaluate` needs."""
    if name not in _HOME:
        raise AttributeError(f"module 'gradcli' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "GradcliError", "Tensor", "tensor", "evaluate", "grad", "jacobian", "hessian", "manual_seed",
    "set_default_dtype", "get_default_dtype", "arange", "eye", "full", "linspace", "ones", "ones_like", "rand",
    "randn", "zeros", "zeros_like", "float_tensor",
    "abs", "add", "cat", "clamp", "cos", "div", "dot", "exp", "expand", "flatten", "index", "log", "log1p",
    "log_softmax", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "mul", "neg", "norm", "outer",
    "permute", "pow", "prod", "relu", "reshape", "sigmoid", "sign", "sin", "softmax", "softplus", "sqrt", "squeeze",
    "stack", "std", "sub", "sum", "t", "tan", "tanh", "transpose", "unsqueeze", "var", "view", "where",
]
