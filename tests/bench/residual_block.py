import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


torch.manual_seed(0)
block = Block(6)
x = torch.randn(2, 3, 6)
loss = block(x).pow(2).mean()
loss.backward()
print(round(loss.item(), 4))
