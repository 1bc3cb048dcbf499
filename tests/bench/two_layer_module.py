"""The two-layer net as an nn.Module (linear1, clamp, linear2), MSELoss(reduction='sum') and SGD, 500 iterations in
float32: the module form of PyTorch's two-layer-net tutorial. Read by `bench_tutorial_loops.py`."""
import torch


class TwoLayerNet(torch.nn.Module):
    def __init__(self, d_in, hidden, d_out):
        super().__init__()
        self.linear1 = torch.nn.Linear(d_in, hidden)
        self.linear2 = torch.nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.linear2(self.linear1(x).clamp(min=0))


N, D_in, H, D_out = 64, 1000, 100, 10
x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
model = TwoLayerNet(D_in, H, D_out)
loss_fn = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
for t in range(500):
    loss = loss_fn(model(x), y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
