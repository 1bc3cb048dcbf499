"""The batched part of PyTorch's Jacobians/Hessians tutorial (batch 64, Din 31, Dout 33, float32): the batched
Jacobian by vmap(jacrev) and by jacrev of the summed output (which must agree), by vmap(jacfwd), and the
batched Hessian by vmap(hessian). Read by bench_func.py; the last line is the workload's CPU and wall seconds."""
import time

import torch
import torch.nn.functional as F
from torch.func import hessian, jacfwd, jacrev, vmap

torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


weight, bias, x = torch.randn(33, 31), torch.randn(33), torch.randn(64, 31)
cpu, wall = time.process_time(), time.perf_counter()
jacobian0 = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
forward = vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
hess = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
assert torch.allclose(jacobian0, jacobian1)
print("result", [round(float(t.abs().sum()), 2) for t in (jacobian0, forward, hess)], tuple(hess.shape))
print("seconds", cpu, wall)
