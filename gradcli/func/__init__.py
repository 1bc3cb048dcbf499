"""`torch.func`: grad, vjp, jvp, jacrev, jacfwd, hessian and vmap as transforms of a program's function,
built on the engine's backward and forward AD."""
