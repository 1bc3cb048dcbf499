import torch
from torch.func import grad, jacrev, vmap

def f(x):
    return (x.sin() * x).sum()

x = torch.tensor([1.0, 2.0])
g = grad(f)(x)
J = jacrev(torch.sin)(x)
per_row = vmap(grad(f))(torch.tensor([[1.0, 2.0], [0.5, 0.0]]))
print(per_row.shape)
