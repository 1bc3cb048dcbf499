"""Per-sample gradients as in PyTorch's tutorial: its CNN (conv 1→32→64, max-pool, linear 9216→128→10), 64
MNIST-sized examples, float32, `vmap(grad(compute_loss), in_dims=(None, None, 0, 0))`. Read by bench_func.py,
which runs it under gradcli and under PyTorch; the last line is the workload's CPU and wall seconds."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)


class SimpleCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv2(F.relu(self.conv1(x))))
        x = torch.flatten(F.max_pool2d(x, 2), 1)
        return self.fc2(F.relu(self.fc1(x)))


model = SimpleCNN()
data = torch.randn(64, 1, 28, 28)
targets = torch.randint(10, (64,))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    predictions = functional_call(model, (params, buffers), (sample.unsqueeze(0),))
    return F.nll_loss(predictions, target.unsqueeze(0))


cpu, wall = time.process_time(), time.perf_counter()
grads = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print("result", [round(float(grads[k].abs().sum()), 2) for k in sorted(grads)])
print("seconds", cpu, wall)
