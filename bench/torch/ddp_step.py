"""Time per DDP training step, 4 ranks on CPU: deepcomm (plain, and with the compressed hook)
against gloo, in one launch with the variants interleaved round by round, so that a change in the
machine's load hits them alike. Each rank trains the same MLP on its own random batches; a step is
forward, backward (DDP's all-reduces) and the optimizer; the all-reduce alone of a buffer of the
model's size is timed the same way. Prints medians over rounds of the per-step mean.

    PYTHONPATH=python:build/python:tests/torch DEEPCOMM_LIBRARY=build/libdeepcomm.so.0 \
        build-venv/bin/python bench/torch/ddp_step.py [--rounds 7] [--steps 10] [--width 1024]

Under a launcher that starts the ranks itself (deepcomm-run, e.g. on the namespace cluster of
bench/cluster/run_on_cluster.sh; torchrun), --store names the FileStore path every rank shares,
and the rank and size come from the launcher's variables (DEEPCOMM_RANK/DEEPCOMM_NRANKS, or
torchrun's RANK/WORLD_SIZE). On the cluster, gloo needs GLOO_SOCKET_IFNAME=eth0.
"""
import argparse
import datetime
import os
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import deepcomm.torch
import harness

SPEC = "topk:0.01,q8,huffman,ef"


def make_model(width):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width),
                               torch.nn.ReLU(), torch.nn.Linear(width, 10))


def bench(rank, n, url, rounds, steps, width):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=300))
    gloo = dist.new_group(backend="gloo")
    variants = {}
    for name, group, spec in (("deepcomm", dist.group.WORLD, None), ("deepcomm compressed", dist.group.WORLD, SPEC),
                              ("gloo", gloo, None)):
        ddp = DDP(make_model(width), process_group=group)
        if spec:
            ddp.register_comm_hook(deepcomm.torch.CompressionState(group, spec, start_iter=2),
                                   deepcomm.torch.compressed_allreduce_hook)
        variants[name] = (ddp, torch.optim.SGD(ddp.parameters(), lr=0.01), group)
    params = sum(p.numel() for p in variants["gloo"][0].parameters())
    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(32, width, generator=g), torch.randint(0, 10, (32,), generator=g)

    def step(ddp, opt):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        opt.step()

    for ddp, opt, _ in variants.values():  # warm-up: bucket rebuild, compression starts
        for _ in range(3):
            step(ddp, opt)
    buffer = torch.randn(params)
    times = {name: [] for name in variants}
    times.update({f"all-reduce {params * 4 / 2**20:.1f} MiB, {name}": [] for name in ("deepcomm", "gloo")})
    for _ in range(rounds):
        for name, (ddp, opt, group) in variants.items():
            dist.barrier(group=gloo)
            start = time.perf_counter()
            for _ in range(steps):
                step(ddp, opt)
            times[name].append((time.perf_counter() - start) / steps)
        for name, group in (("deepcomm", dist.group.WORLD), ("gloo", gloo)):
            dist.barrier(group=gloo)
            start = time.perf_counter()
            for _ in range(steps):
                dist.all_reduce(buffer, group=group)
            times[f"all-reduce {params * 4 / 2**20:.1f} MiB, {name}"].append((time.perf_counter() - start) / steps)
    if rank == 0:
        print(f"{n} ranks, MLP {width}-{width}-{width}-10 ({params} parameters), batch 32 per rank, "
              f"{rounds} rounds of {steps} steps; median of the rounds' mean step time (min-max):")
        for name, t in times.items():
            print(f"  {name:32s} {statistics.median(t) * 1e3:8.2f} ms  ({min(t) * 1e3:.2f}-{max(t) * 1e3:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--store", help="the FileStore path of ranks started by a launcher")
    a = parser.parse_args()
    if a.store:
        torch.set_num_threads(1)
        rank = int(os.environ.get("DEEPCOMM_RANK", os.environ.get("RANK", "-1")))
        nranks = int(os.environ.get("DEEPCOMM_NRANKS", os.environ.get("WORLD_SIZE", "0")))
        if rank < 0 or nranks < 1:
            parser.error("--store needs the launcher's DEEPCOMM_RANK/DEEPCOMM_NRANKS or RANK/WORLD_SIZE")
        bench(rank, nranks, f"file://{a.store}", a.rounds, a.steps, a.width)
        dist.destroy_process_group()
    else:
        harness.run(bench, args=(a.rounds, a.steps, a.width), deadline_s=1800)
