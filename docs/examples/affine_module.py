import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([2.0, -1.0]))
        self.b = nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        return (self.w * x).sum() + self.b


m = Affine()
out = m(torch.tensor([3.0, 4.0]))
out.backward()
print([n for n, _ in m.named_parameters()], m.w.grad.tolist(), m.b.grad.item())
