import torch

w = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(5):
    optimizer.step()
    scheduler.step()
    print(epoch, scheduler.get_last_lr())
