"""Fitting a network's energies and forces to the Lennard-Jones potential, as in functorch's example: the
forces are -d(energy)/dr by `vmap(jacrev(model))` over 1,000 distances, inside a training loop with Adam.
Read by bench_func.py (EPOCHS is its to set); the last line is the workload's CPU and wall seconds."""
import time

import torch
from torch import nn
from torch.func import jacrev, vmap
from torch.nn.functional import mse_loss

EPOCHS = 400
torch.manual_seed(0)
sigma, epsilon = 0.5, 4.0


def lennard_jones(r):
    return epsilon * ((sigma / r) ** 12 - (sigma / r) ** 6)


def lennard_jones_force(r):
    return -epsilon * ((-12 * sigma ** 12 / r ** 13) + (6 * sigma ** 6 / r ** 7))


r = torch.linspace(0.5, 2 * sigma, steps=1000, requires_grad=True)
drs = torch.outer(r, torch.tensor([1.0, 0, 0]))
norms = torch.norm(drs, dim=1).reshape(-1, 1)
training_energies = torch.stack(list(map(lennard_jones, norms))).reshape(-1, 1)
training_forces = torch.stack([force * dr for force, dr in zip(map(lennard_jones_force, norms), drs)])

model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                      nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))


def make_prediction(model, drs):
    norms = torch.norm(drs, dim=1).reshape(-1, 1)
    energies = model(norms)
    network_derivs = vmap(jacrev(model))(norms).squeeze(-1)
    return energies, -network_derivs * drs / norms


def loss_fn(energies, forces, predicted_energies, predicted_forces):
    return mse_loss(energies, predicted_energies) + 0.01 * mse_loss(forces, predicted_forces) / 3


optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
cpu, wall = time.process_time(), time.perf_counter()
for epoch in range(EPOCHS):
    optimiser.zero_grad()
    energies, forces = make_prediction(model, drs)
    loss = loss_fn(training_energies, training_forces, energies, forces)
    loss.backward(retain_graph=True)
    optimiser.step()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print("result", round(loss.item(), 4))
print("seconds", cpu, wall)
