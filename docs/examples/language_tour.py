import random
from collections import Counter
import torch

random.seed(0)
config = {"lr": 0.25, "steps": 2}

def descend(w, *, lr, steps):
    for _ in range(steps):
        loss = (w ** 2).sum()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad.zero_()
    return w

w = descend(torch.tensor([1.0, -2.0], requires_grad=True), **config)
print(w)
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except RuntimeError as e:
    print("caught", type(e).__name__)
print(round(random.random(), 6), Counter("hello").most_common(1))
