"""Issue 34's second red team: fifteen programs whose own gradients are wrong in a subtle way must fail
`--check` at the line that computed them, and fifteen correct tutorial-style programs must pass.

The wrong ones: a program's `autograd.Function` backward or jvp, a backward under a hook, a backward right
once but wrong when differentiated again, wrong inside transformed calls (`torch.func.grad`, `jacobian`,
`hessian`), scale errors in float32 and float64, one wrong element in a tensor of 3,600. The correct
ones sit where a naive checker fails or says too little: kinks, a ReLU net near its fit, softmax of
logits near 1000, `relu(x)**2` at 0, an LSTM, attention, LayerNorm, distributions' `log_prob` and
`rsample`. A wrong program's failing line is marked `# fails here`.
"""
from __future__ import annotations

import pytest

from gradcli.check import checker
from gradcli.program.scripts import run_file

CUSTOM = """import torch
from torch.autograd import Function
"""

WRONG = {
    "cube backward misses its factor 3": CUSTOM + """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x ** 2
x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
Cube.apply(x).sum().backward()  # fails here
""",
    "sigmoid backward from its input instead of its output": CUSTOM + """
class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x * (1 - x)
x = torch.tensor([0.3, -0.8, 1.2], requires_grad=True)
loss = (Sigmoid.apply(x) * torch.tensor([1.0, 2.0, -1.0])).sum()
loss.backward()  # fails here
""",
    "product backward swaps one factor": CUSTOM + """
class Product(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b
    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * b
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, -1.0], requires_grad=True)
Product.apply(a, b).sum().backward()  # fails here
""",
    "broadcast bias summed twice": CUSTOM + """
class AddBias(Function):
    @staticmethod
    def forward(ctx, x, b):
        return x + b
    @staticmethod
    def backward(ctx, g):
        return g, 2 * g.sum(0)
x = torch.randn(4, 3, requires_grad=True)
b = torch.zeros(3, requires_grad=True)
(AddBias.apply(x, b) ** 2).mean().backward()  # fails here
""",
    "custom jvp of exp returns x·t": CUSTOM + """from torch.func import jvp
class Exp(Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return x * t
x = torch.tensor([0.5, 1.0, -0.5], dtype=torch.float64)
_, t = jvp(Exp.apply, (x,), (torch.ones(3, dtype=torch.float64),))  # fails here
""",
    "wrong backward below a doubling hook": CUSTOM + """
class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * (1 - y)
x = torch.tensor([0.2, -0.7, 1.1], requires_grad=True)
y = Tanh.apply(x)
y.register_hook(lambda g: g * 2)
(y * y).sum().backward()  # fails here
""",
    "backward right once, its derivative dropped": CUSTOM + """
class Sin(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.slope = torch.cos(x)
        return torch.sin(x)
    @staticmethod
    def backward(ctx, g):
        return g * ctx.slope
x = torch.tensor([0.4, 1.3], dtype=torch.float64, requires_grad=True)
w = torch.tensor([2.0, -1.0], dtype=torch.float64, requires_grad=True)
(gx,) = torch.autograd.grad((Sin.apply(x) * w).sum(), x, create_graph=True)
loss = (gx * x).sum()
loss.backward()  # fails here
""",
    "wrong backward inside torch.func.grad": CUSTOM + """from torch.func import grad
class Square(Function):
    @staticmethod
    def forward(x):
        return x * x
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x
x = torch.tensor([1.0, -2.0, 0.5])
print(grad(lambda v: Square.apply(v).sum())(x))  # fails here
""",
    "custom jvp through dual numbers, float32": CUSTOM + """import torch.autograd.forward_ad as fwAD
class Log1p(Function):
    @staticmethod
    def forward(x):
        return torch.log1p(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return t / (2 + x)
x = torch.tensor([0.5, 2.0, 0.1])
with fwAD.dual_level():
    y = Log1p.apply(fwAD.make_dual(x, torch.tensor([1.0, -1.0, 2.0])))
    t = fwAD.unpack_dual(y).tangent  # fails here
""",
    "1% too big on gradients of 1e-6, float32": CUSTOM + """
class Square(Function):
    @staticmethod
    def forward(ctx, w):
        ctx.save_for_backward(w)
        return w * w
    @staticmethod
    def backward(ctx, g):
        w, = ctx.saved_tensors
        return g * 2.02 * w
w = torch.tensor([0.3, -1.2, 0.8, 2.5], requires_grad=True)
loss = 1e-6 * Square.apply(w).sum()
loss.backward()  # fails here
""",
    "1e-4 relative error, float64": CUSTOM + """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3.0003 * x ** 2
x = torch.tensor([0.7, -1.1, 1.9], dtype=torch.float64, requires_grad=True)
Cube.apply(x).sum().backward()  # fails here
""",
    "one wrong element of 3,600": CUSTOM + """
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        out = g * 2 * x
        out[37, 11] = out[37, 11] * 3
        return out
torch.manual_seed(0)
x = torch.randn(60, 60, dtype=torch.float64, requires_grad=True)
Square.apply(x).sum().backward()  # fails here
""",
    "wrong backward inside a Jacobian of several rows": CUSTOM + """
class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(torch.exp(x))
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * torch.sigmoid(-x)
x = torch.tensor([0.5, -1.0, 2.0])
J = torch.autograd.functional.jacobian(lambda v: Softplus.apply(v) * 2, x)  # fails here
""",
    "backward that ignores its incoming gradient": CUSTOM + """
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
c = torch.tensor([0.5, -1.0, 2.0])
(Square.apply(x) * c).sum().backward()  # fails here
""",
    "Hessian through a backward made of constants": CUSTOM + """
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.slope = 3 * x ** 2
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        return g * ctx.slope
x = torch.tensor([1.0, -0.5], dtype=torch.float64)
H = torch.autograd.functional.hessian(lambda v: Cube.apply(v).sum(), x)  # fails here
""",
}

CORRECT = {
    "abs and max at their kinks": """import torch
x = torch.tensor([0.0, 1.5, -2.0, 1.5], requires_grad=True)
(x.abs().sum() + x.max() + torch.relu(x).sum()).backward()
print(x.grad)
""",
    "a ReLU net near its fit, float32": """import torch
import torch.nn as nn
torch.manual_seed(0)
x = torch.linspace(-2, 2, 32).unsqueeze(1)
y = x.abs()
model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(150):
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item() < 0.05)
""",
    "cross entropy of logits near 1000": """import torch
import torch.nn.functional as F
logits = torch.tensor([[1000.0, 999.0, 998.5], [-1000.0, 1000.0, 999.9]], requires_grad=True)
F.cross_entropy(logits, torch.tensor([0, 2])).backward()
print(logits.grad)
""",
    "relu(x)**2 at 0, float32": """import torch
x = torch.tensor([0.0, 1.0, -2.0, 0.0], requires_grad=True)
(torch.relu(x) ** 2 * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
print(x.grad)
""",
    "a squared hinge at its margin": """import torch
scores = torch.tensor([1.0, 0.5, -0.2, 2.0], requires_grad=True)
labels = torch.tensor([1.0, 1.0, -1.0, 1.0])
torch.clamp(1 - labels * scores, min=0).pow(2).mean().backward()
print(scores.grad)
""",
    "an LSTM over a short sequence": """import torch
import torch.nn as nn
torch.manual_seed(0)
lstm = nn.LSTM(3, 4)
x = torch.randn(5, 2, 3, requires_grad=True)
out, (h, c) = lstm(x)
(out.pow(2).mean() + h.sum()).backward()
print(x.grad.shape)
""",
    "multi-head attention": """import torch
import torch.nn as nn
torch.manual_seed(0)
attn = nn.MultiheadAttention(4, 2, batch_first=True)
q = torch.randn(1, 3, 4, requires_grad=True)
out, weights = attn(q, q, q)
out.sum().backward()
print(q.grad.shape)
""",
    "LayerNorm then Linear": """import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.LayerNorm(5), nn.Linear(5, 2))
x = torch.randn(3, 5)
net(x).tanh().sum().backward()
print(net[0].weight.grad)
""",
    "Normal log_prob by its parameters": """import torch
from torch.distributions import Normal
mu = torch.tensor([0.5, -1.0], requires_grad=True)
log_sigma = torch.tensor([0.1, -0.3], requires_grad=True)
x = torch.tensor([[0.2, 0.0], [1.0, -2.0], [0.4, -1.1]])
loss = -Normal(mu, log_sigma.exp()).log_prob(x).sum()
loss.backward()
print(mu.grad, log_sigma.grad)
""",
    "a reparameterized sample": """import torch
import torch.nn.functional as F
from torch.distributions import Normal
torch.manual_seed(0)
mu = torch.tensor([0.3, -0.2, 1.0], requires_grad=True)
raw = torch.tensor([0.0, 0.5, -1.0], requires_grad=True)
z = Normal(mu, F.softplus(raw)).rsample((4,))
(z ** 2).mean().backward()
print(mu.grad)
""",
    "a Function whose backward is differentiable": """import torch
from torch.autograd import Function
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([0.5, -1.5], requires_grad=True)
(gx,) = torch.autograd.grad(Square.apply(x).pow(2).sum(), x, create_graph=True)
gx.sum().backward()
print(x.grad)
""",
    "a halving hook inside a small net": """import torch
torch.manual_seed(0)
w = torch.randn(3, 2, requires_grad=True)
x = torch.randn(4, 3)
h = torch.tanh(x @ w)
h.register_hook(lambda g: g * 0.5)
h.pow(2).sum().backward()
print(w.grad)
""",
    "per-sample gradients by vmap(grad)": """import torch
from torch.func import grad, vmap
w = torch.tensor([0.5, -1.0, 2.0])
xs = torch.tensor([[1.0, 0.0, 2.0], [0.5, 1.5, -1.0]])
ys = torch.tensor([1.0, -0.5])
def loss(w, x, y):
    return (torch.dot(w, x) - y) ** 2
print(vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys))
""",
    "a GRU cell unrolled": """import torch
import torch.nn as nn
torch.manual_seed(0)
cell = nn.GRUCell(2, 3)
h = torch.zeros(1, 3)
for t in range(4):
    h = cell(torch.randn(1, 2), h)
h.sum().backward()
print(cell.weight_hh.grad.shape)
""",
    "a categorical policy's log_prob and entropy": """import torch
from torch.distributions import Categorical
logits = torch.tensor([[0.2, 1.0, -0.5], [2.0, 0.0, 0.3]], requires_grad=True)
dist = Categorical(logits=logits)
actions = torch.tensor([1, 2])
returns = torch.tensor([1.5, -0.5])
loss = -(dist.log_prob(actions) * returns).mean() - 0.01 * dist.entropy().mean()
loss.backward()
print(logits.grad)
""",
}


def _run(tmp_path, source):
    path = tmp_path / "prog.py"
    path.write_text(source)
    return run_file(path, checker())


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_gradient_fails_at_its_line(tmp_path, name):
    source = WRONG[name]
    line = next(n for n, text in enumerate(source.splitlines(), 1) if text.endswith("# fails here"))
    result = _run(tmp_path, source)
    assert result.status == "failed", (result.status, result.sites)
    assert [s.line for s in result.sites if s.failed] == [line]


@pytest.mark.parametrize("name", CORRECT)
def test_a_correct_program_passes(tmp_path, name):
    result = _run(tmp_path, CORRECT[name])
    assert result.status == "ok", (result.status, result.sites, result.warnings)
    assert result.sites and not any(s.failed for s in result.sites)
    assert sum(s.calls - s.unchecked for s in result.sites) >= 1
