import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Dropout(0.25), nn.Linear(6 * 14 * 14, 10))
print(model)
print(sum(p.numel() for p in model.parameters()))
