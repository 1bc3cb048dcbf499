"""A small transformer encoder trained by AdamW: an embedding, two encoder layers (d_model 16, 2 heads, feed-forward
32, no dropout), mean pooling and a linear head, sequences of 10 tokens, batch 4, 200 iterations in float32. Read
by `bench_tutorial_loops.py`."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 16)
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 2)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


model = Encoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 20, (4, 10))
labels = torch.tensor([0, 1, 1, 0])
for step in range(200):
    loss = nn.functional.cross_entropy(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 49:
        print(step, loss.item())
