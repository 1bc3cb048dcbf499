"""PyTorch's polynomial-fit example (y = sin(x) by a + bx + cx² + dx³, lr 1e-6), written in gradcli's
language: the one loop that `bench_check.py` (checking it) and `bench_scripts.py` (running it) time.

The starting coefficients are fixed, so the NumPy and PyTorch baselines can start from the same ones.
"""
START = {"a": 0.1, "b": -0.2, "c": 0.05, "d": 0.01}


def polynomial_fit(iterations: int, points: int = 2000, dtype: str = "float32") -> str:
    """The script's text: `points` samples in [-π, π], `iterations` steps of backward and four updates."""
    leaves = "\n".join(f"{k} = torch.tensor({v}, dtype=torch.{dtype}, requires_grad=True)" for k, v in START.items())
    updates = "\n".join(f"    {k}.data = {k}.data - lr * {k}.grad" for k in START)
    resets = "\n".join(f"    {k}.grad = None" for k in START)
    return f"""import torch
import numpy as np
x = torch.linspace(-np.pi, np.pi, {points}, dtype=torch.{dtype})
y = torch.sin(x)
{leaves}
lr = 1e-6
for t in range({iterations}):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    loss.backward()
{updates}
{resets}
final = loss.item()
"""
