"""torch.distributed, torch.nn.parallel.DistributedDataParallel, torch.utils.data.distributed and
torch.multiprocessing.spawn on a world of one process (process_group.py, parallel.py)."""
