import torch
import torch.autograd.forward_ad as fwAD

x = torch.tensor([1.0, 2.0])
with fwAD.dual_level():
    dx = fwAD.make_dual(x, torch.tensor([1.0, 0.0]))
    y = (dx.sin() * dx).exp().sum()
    primal, tangent = fwAD.unpack_dual(y)
    print(round(primal.item(), 4), round(tangent.item(), 4))
