from dataclasses import dataclass, field
import itertools
import torch

def running_mean():
    total, count = 0.0, 0
    while True:
        value = yield (total / count if count else None)
        total, count = total + value, count + 1

def batches(xs, size):
    for i in range(0, len(xs), size):
        yield xs[i:i + size]
    return "done"

def everything(xs):
    result = yield from batches(xs, 2)
    yield result

mean = running_mean()
next(mean)
print(mean.send(2.0), mean.send(4.0))
print(list(everything([1, 2, 3])))
print(next(n for n in itertools.count() if n * n > 50))

config = {"lr": 0.1, "epochs": 3}
keys = config.keys()
config |= {"seed": 0}
print(keys, keys - {"seed"} == {"lr", "epochs"})
for attempt in range(3):
    if attempt == 5:
        break
else:
    print("no break")

@dataclass
class Run:
    lr: float
    tags: list = field(default_factory=list)

print(Run(0.1), Run(0.2, ["sgd"]))
try:
    torch.ones(2, 3) @ torch.ones(2, 3)
except RuntimeError as e:
    print(e)
