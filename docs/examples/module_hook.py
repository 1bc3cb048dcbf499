import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(3.0))

    def forward(self, x):
        return self.w * x


def double(module, grad_input, grad_output):
    print("grad_input", grad_input[0].tolist(), "grad_output", grad_output[0].tolist())
    return (grad_input[0] * 2,)


m = Scale()
handle = m.register_full_backward_hook(double)
x = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (m(x) ** 2).sum()
loss.backward()
print("x.grad", x.grad.tolist(), "w.grad", m.w.grad.item())
handle.remove()
