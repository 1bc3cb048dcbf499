"""`torch.optim`: the optimizers, L-BFGS and the learning-rate schedulers, stepping parameters in place
through the engine's in-place ops."""
