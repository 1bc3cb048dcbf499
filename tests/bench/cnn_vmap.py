"""Per-sample gradients of a small CNN (conv, relu, max-pool, linear, cross-entropy): torch.func's
vmap(grad(f)) over 8 examples, as in PyTorch's per-sample-gradients tutorial. Read by
`bench_cnn_vmap.py` and `tests/test_check_cnn.py`."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad

torch.manual_seed(0)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))

model = Net()
params = {k: v.detach() for k, v in model.named_parameters()}

def loss_of(p, x, y):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return F.cross_entropy(out, y.unsqueeze(0))

xs = torch.randn(8, 1, 8, 8)
ys = torch.randint(0, 10, (8,))
g = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, xs, ys)
print(g["conv.weight"].shape, g["fc.bias"].shape)
