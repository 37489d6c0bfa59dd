"""The backend under torchrun, bootstrapped through its TCPStore (env://): `torchrun --standalone`
lets the kernel pick the store's port (port 0; the workers are handed the agent's store), and
DeepComm's rendezvous picks its own, so no port is chosen by the test. 4 workers: an all-reduce on
the world, on new_group subgroups, on a second group of every rank, and the object collectives.
Run without RANK it is the launcher; under torchrun each worker runs worker()."""
import os
import subprocess
import sys


def worker():
    import torch
    import torch.distributed as dist

    import deepcomm.torch  # noqa: F401  registers the backend

    dist.init_process_group("deepcomm")  # env://: torchrun's TCPStore
    rank, n = dist.get_rank(), dist.get_world_size()
    x = torch.full((100,), float(rank))
    dist.all_reduce(x)
    assert torch.equal(x, torch.full((100,), float(sum(range(n))))), x
    low, high = dist.new_group([0, 1]), dist.new_group([2, 3])
    y = torch.ones(7)
    dist.all_reduce(y, group=low if rank < 2 else high)
    assert torch.equal(y, torch.full((7,), 2.0)), y
    again = dist.new_group(list(range(n)))  # a second communicator of every rank
    z = torch.full((3,), float(rank + 1))
    dist.all_reduce(z, dist.ReduceOp.MAX, group=again)
    assert torch.equal(z, torch.full((3,), float(n))), z
    names = [None] * n
    dist.all_gather_object(names, f"worker {rank}")
    assert names == [f"worker {r}" for r in range(n)], names
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(f"torchrun: {n} workers passed")


def launch():
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4",
               "--max-restarts", "0", os.path.abspath(__file__)]
    try:
        result = subprocess.run(command, timeout=240)
    except subprocess.TimeoutExpired:
        sys.exit("torchrun did not finish within 240 s")
    sys.exit(result.returncode)


if __name__ == "__main__":
    worker() if "RANK" in os.environ else launch()
