"""DDP training of a small model on 4 CPU ranks, over deepcomm and over gloo side by side from the
same initial parameters and data: after every step the deepcomm model's parameters match gloo's
within float-summation tolerance and are bitwise identical on every rank. The same with PowerSGD,
whose hook issues a nested all-reduce from a future callback and waits on it, in one bucket: with
several, gloo's reference deadlocks (its 2 threads both block in PowerSGD callbacks). With several
buckets (their callbacks' all-reduces interleave with the autograd thread's), deepcomm alone: the
parameters stay identical on every rank.
The compressed hook (deepcomm.torch.compressed_allreduce_hook) trains a classifier to within the
compression issue's tolerance of dense (0.5 points of test accuracy), identically on every rank,
and reports its statistics."""
import copy
import datetime

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd
from torch.nn.parallel import DistributedDataParallel as DDP

import deepcomm.torch
import harness

STEPS = 8


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


def step(models, x, y):
    """One SGD step of every (model, optimizer) in models on the same batch."""
    for model, opt in models.values():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()


def check_step(ours, ref, n, gloo, what):
    """ours (this rank's parameters over deepcomm) matches ref (over gloo) within float-summation
    tolerance and is bitwise the same on every rank."""
    if not torch.isfinite(ours).all() or not torch.allclose(ours, ref, rtol=1e-5, atol=1e-6):
        raise AssertionError(f"{what}: parameters differ from gloo's by up to {(ours - ref).abs().max()}")
    everyone = [torch.empty_like(ours) for _ in range(n)]
    dist.all_gather(everyone, ours, group=gloo)
    if not all(torch.equal(everyone[0], e) for e in everyone):
        raise AssertionError(f"{what}: parameters differ between ranks")


def train(rank, n, url, hook):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    world = dist.group.WORLD
    gloo = dist.new_group(backend="gloo")
    models = {}
    small_buckets = hook != "powersgd"
    reference = hook != "powersgd-small-buckets"
    for name, group in (("deepcomm", world), ("gloo", gloo))[:2 if reference else 1]:
        ddp = DDP(copy.deepcopy(make_model()), process_group=group, bucket_cap_mb=0.01 if small_buckets else 25)
        if hook.startswith("powersgd"):
            state = powersgd.PowerSGDState(process_group=group, matrix_approximation_rank=2, start_powerSGD_iter=3,
                                           min_compression_rate=1.5, random_seed=7)
            ddp.register_comm_hook(state, powersgd.powerSGD_hook)
        models[name] = (ddp, torch.optim.SGD(ddp.parameters(), lr=0.05))
    g = torch.Generator().manual_seed(100 + rank)
    for i in range(STEPS):
        x, y = torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g)
        step(models, x, y)
        ours = torch.cat([p.detach().reshape(-1) for p in models["deepcomm"][0].parameters()])
        ref = torch.cat([p.detach().reshape(-1) for p in models["gloo"][0].parameters()]) if reference else ours
        check_step(ours, ref, n, gloo, f"{hook} step {i}")
    if rank == 0:
        print(f"{hook}: {STEPS} steps match gloo, max difference {(ours - ref).abs().max():.3g}")


COMPRESSED_STEPS = 300
COMPRESSED_SPEC = "topk:0.05,q8,huffman,ef"


def teacher_data(count, seed):
    # Labels of a fixed random linear teacher: learnable, the same data on every rank.
    teacher = torch.randn(32, 10, generator=torch.Generator().manual_seed(1))
    x = torch.randn(count, 32, generator=torch.Generator().manual_seed(seed))
    return x, (x @ teacher).argmax(1)


def compressed(rank, n, url):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    train_x, train_y = teacher_data(16 * n * COMPRESSED_STEPS, seed=2)
    test_x, test_y = teacher_data(4000, seed=3)
    accuracy = {}
    for spec in (None, COMPRESSED_SPEC):
        ddp = DDP(make_model(), bucket_cap_mb=0.01)  # several buckets, each its own residual
        state = None
        if spec:
            state = deepcomm.torch.CompressionState(None, spec, start_iter=2)
            ddp.register_comm_hook(state, deepcomm.torch.compressed_allreduce_hook)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        for i in range(COMPRESSED_STEPS):
            batch = slice((i * n + rank) * 16, (i * n + rank + 1) * 16)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(ddp(train_x[batch]), train_y[batch]).backward()
            opt.step()
        with torch.no_grad():
            accuracy[spec] = (ddp.module(test_x).argmax(1) == test_y).float().mean().item()
        params = torch.cat([p.detach().reshape(-1) for p in ddp.parameters()])
        everyone = [torch.empty_like(params) for _ in range(n)]
        dist.all_gather(everyone, params)
        if not all(torch.equal(everyone[0], e) for e in everyone):
            raise AssertionError(f"{spec}: parameters differ between ranks")
    buckets = len(state.last_stats)
    totals = state.totals
    if buckets < 2 or len(state.residuals) != buckets or totals["plain_calls"] < 2:
        raise AssertionError(f"{buckets} buckets compressed, {len(state.residuals)} residuals, {totals}")
    if totals["calls"] != (COMPRESSED_STEPS - 2) * buckets or totals["wire_bytes"] * 4 > totals["raw_bytes"]:
        raise AssertionError(f"statistics: {totals}")
    if any(s["ratio"] <= 1 or s["raw_bytes"] == 0 or s["total_seconds"] <= 0 for s in state.last_stats.values()):
        raise AssertionError(f"statistics: {state.last_stats}")
    if accuracy[COMPRESSED_SPEC] < accuracy[None] - 0.005:
        raise AssertionError(f"{COMPRESSED_SPEC}: test accuracy {accuracy[COMPRESSED_SPEC]:.4f}, dense {accuracy[None]:.4f}")
    if rank == 0:
        print(f"{COMPRESSED_SPEC}: test accuracy {accuracy[COMPRESSED_SPEC]:.4f}, dense {accuracy[None]:.4f}; "
              f"{buckets} buckets, {totals['raw_bytes']}/{totals['wire_bytes']} bytes raw/wire, "
              f"{totals['codec_seconds']:.3f} s in the codecs")


if __name__ == "__main__":
    harness.run(train, args=("allreduce",))
    harness.run(train, args=("powersgd",))
    harness.run(train, args=("powersgd-small-buckets",))
    harness.run(compressed)
