"""`torch.utils.data`: datasets, samplers and the DataLoader, drawing from the engine's generators."""
