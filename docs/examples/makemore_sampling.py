# The bigram sampling loop of Karpathy's makemore, with a random table in place of the counts.
import torch

g = torch.Generator().manual_seed(2147483647)
P = torch.randn((27, 27), generator=g).exp()
P = P / P.sum(1, keepdim=True)
for i in range(3):
    out = []
    ix = 0
    while True:
        ix = torch.multinomial(P[ix], num_samples=1, replacement=True, generator=g).item()
        if ix == 0:
            break
        out.append(ix)
    print(len(out), out[:6])
