"""The autograd engine: the op table, `Tensor`, the functions on tensors, backward, and the autograd API.

NumPy only. It knows no program text, no terminal and no SymPy; everything above it reads its
results as values.
"""

from gradcli.engine import tensor as _core  # noqa: E402,F401
# The engine's one way in. Tensor's module, the functional API and the op table import each other (one autograd,
# as in PyTorch), and the circle closes only when entered through Tensor's module: `import gradcli.engine.functions`
# first would find the functions half-made. So whichever engine module a caller imports first, the core comes first.
