"""DeepComm as a torch.distributed backend, for CPU tensors (docs/pytorch.md).

    import torch.distributed as dist
    import deepcomm.torch                      # registers the "deepcomm" backend
    dist.init_process_group("deepcomm")        # under torchrun; or init_method="file://...", rank=, world_size=

Each process group (the world, every new_group) is one DeepComm communicator, bootstrapped through
the group's c10d store. CUDA tensors are refused until DeepComm's GPU path exists.
CompressionState and compressed_allreduce_hook run DeepComm's compressed all-reduce as a DDP
communication hook (compression.py).
"""
import pkgutil

import torch  # loads libtorch before the extension, which links it
import torch.distributed as dist

__path__ = pkgutil.extend_path(__path__, __name__)

from . import _C  # noqa: E402  (after torch, and after __path__ reaches a build tree's _C)

from .compression import CompressionState, compressed_allreduce_hook  # noqa: E402

__all__ = ["BACKEND_NAME", "CompressionState", "compressed_allreduce_hook"]

BACKEND_NAME = "deepcomm"


def _create_backend(store, rank, size, timeout):
    return _C.create_backend(store, rank, size, timeout)


if BACKEND_NAME not in dist.Backend.backend_list:
    dist.Backend.register_backend(BACKEND_NAME, _create_backend, devices=["cpu"])
