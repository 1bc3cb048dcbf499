"""A small sequence model trained by Adam: an LSTM then a GRU (input 8, hidden 16, sequences of 12, batch 4) and a
linear head on the last step, 200 iterations in float32. Read by `bench_tutorial_loops.py`."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.gru = nn.GRU(16, 16, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        out, _ = self.gru(out)
        return self.head(out[:, -1])


model = Recurrent()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(4, 12, 8)
y = x.sum(dim=(1, 2)).unsqueeze(1) / 10
for step in range(200):
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 49:
        print(step, loss.item())
