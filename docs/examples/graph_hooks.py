import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)
s = (x * 2).exp().sum()
node = s.grad_fn
while node is not None:
    print(node.name())
    node = node.next_functions[0][0] if node.next_functions else None

def pack(t):
    print("pack", tuple(t.shape))
    return t

def unpack(t):
    print("unpack", tuple(t.shape))
    return t

with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (x * x).sum()
h1 = y.grad_fn.register_prehook(lambda grad_outputs: print("before SumBackward0"))
h2 = x.register_post_accumulate_grad_hook(lambda t: print("x.grad is now", t.grad.tolist()))
y.backward()
print((x * x).grad_fn._saved_self is x)
