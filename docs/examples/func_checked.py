import torch
from torch.func import hessian, jacfwd, jvp, vjp

def f(x):
    return (x.sin() * x ** 2).sum()

x = torch.tensor([0.5, -1.0, 2.0])
H = hessian(f)(x)
J = jacfwd(lambda t: t.exp() * t.sum())(x)
out, vjp_fn = vjp(lambda t: t.tanh() * t, x)
(g,) = vjp_fn(torch.tensor([1.0, 2.0, 3.0]))
value, tangent = jvp(f, (x,), (torch.tensor([1.0, 0.5, -1.0]),))
print(f"{tangent:.4f}")
