import torch
from torch.utils.data import TensorDataset, DataLoader

torch.manual_seed(0)
X = torch.arange(10.0)
loader = DataLoader(TensorDataset(X, X * X), batch_size=4, shuffle=True)
print(len(loader))
for xb, yb in loader:
    print(xb.tolist(), yb.tolist())
