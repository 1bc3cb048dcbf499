"""Training loops side by side: the same script under gradcli's runner and under PyTorch.

A script, not a test: timings depend on the machine and its load, so it reports ratios measured in
one run (issue 20's targets, per iteration: a LeNet-sized conv net's forward+backward <= 2.0x
PyTorch CPU's, with or without batch norm; an MLP training loop over a DataLoader <= 1.0x
PyTorch's). Each program runs twice, with few and with many iterations, and the difference is divided by the extra iterations, so
start-up (PyTorch's import, gradcli's parse) cancels out; both sides time themselves in-process.
Both run on one thread and are timed in CPU seconds: on a shared machine PyTorch's default of a
thread per core measured 10-20x slower than its single thread while others ran, which made the
ratio a measure of the load rather than of the code.
Usage: python tests/bench/bench_training.py --torch /path/to/python-with-torch
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
os.environ.update(ONE_THREAD)  # before NumPy is imported: its BLAS reads these once

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, installed or not
from gradcli.program.evaluation import Settings  # noqa: E402  (after the path insert)
from gradcli.program.scripts import run_file  # noqa: E402

LENET = """import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 4, 120), nn.ReLU(), nn.Linear(120, 10))
x = torch.randn(64, 1, 28, 28)
t = torch.randint(0, 10, (64,))
# loop
for i in range({n}):
    model.zero_grad()
    loss = F.cross_entropy(model(x), t)
    loss.backward()
"""

LENET_BN = LENET.replace("nn.Conv2d(1, 6, 5), nn.ReLU()", "nn.Conv2d(1, 6, 5), nn.BatchNorm2d(6), nn.ReLU()").replace(
    "nn.Conv2d(6, 16, 5), nn.ReLU()", "nn.Conv2d(6, 16, 5), nn.BatchNorm2d(16), nn.ReLU()")
"""The same net with batch norm after each convolution (training mode, so the batch's statistics)."""

MLP = """import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.fc2 = nn.Linear(64, 64)
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


X = torch.randn(64 * {n}, 10)
y = torch.randn(64 * {n}, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.MSELoss()
# loop
for xb, yb in loader:
    opt.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    opt.step()
"""

TIMED = "import time\n{setup}\nstart = time.process_time()\n{loop}\nprint(time.process_time() - start)\n"
"""The torch side times only its loop: its first calls spend seconds of CPU in lazy set-up, the same for any n."""


def gradcli_seconds(path: Path) -> float:
    settings = Settings(dtype="float32", max_steps=100_000_000, timeout=None)
    start = time.process_time()
    result = run_file(path, settings=settings)
    if result.status != "ok":
        raise SystemExit(f"{path}: {result.status} {result.error}")
    return time.process_time() - start


def torch_seconds(python: str, path: Path) -> float:
    """The torch side times its own loop (the import of torch is seconds of noise)."""
    out = subprocess.run([python, str(path)], check=True, capture_output=True, text=True,
                         env={**os.environ, **ONE_THREAD}).stdout
    return float(out.strip().splitlines()[-1])


def per_iteration(make: str, runner, short: int, long: int, directory: str, name: str, timed: bool,
                  repeats: int) -> float:
    """The least of `repeats` runs of each length (a shared machine only ever adds time)."""
    times = []
    for n in (short, long):
        body = make.format(n=n)
        path = Path(directory, f"{name}_{n}.py")
        setup, loop = body.split("# loop\n")
        path.write_text(TIMED.format(setup=setup, loop=loop) if timed else body, encoding="utf-8")
        times.append(min(runner(path) for _ in range(repeats)))
    return (times[1] - times[0]) / (long - short)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--torch", help="a Python interpreter with torch installed")
    parser.add_argument("--short", type=int, default=3)
    parser.add_argument("--long", type=int, default=23)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for name, program, target in (("lenet", LENET, 2.0), ("lenet_bn", LENET_BN, 2.0), ("mlp_dataloader", MLP, 1.0)):
            mine = per_iteration(program, gradcli_seconds, args.short, args.long, directory, name, False, args.repeats)
            line = f"{name:16} gradcli {mine * 1e3:8.2f} ms/iter"
            if args.torch:
                theirs = per_iteration(program, lambda p: torch_seconds(args.torch, p), args.short, args.long,
                                       directory, name + "_torch", True, args.repeats)
                line += f"   torch {theirs * 1e3:8.2f} ms/iter   ratio {mine / theirs:5.2f}x (target <= {target}x)"
            print(line)


if __name__ == "__main__":
    main()
