"""The autograd engine: the op table, `Tensor`, the functions on tensors, backward, and the autograd API.

NumPy only. It knows no program text, no terminal and no SymPy; everything above it reads its
results as values.
"""
