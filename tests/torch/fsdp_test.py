"""FSDP on 4 CPU ranks over deepcomm and over gloo side by side, from the same initial parameters and
data: FSDP2 (fully_shard, each Linear its own unit, resharding after forward or not). FSDP1
(FullyShardedDataParallel) is not tested: this torch refuses it on CPU ("FSDP needs a non-CPU
accelerator device"), whatever the backend. Parameters are really sharded (each rank holds a quarter), and after
every step the deepcomm model's full parameters match gloo's within float-summation tolerance and
are bitwise identical on every rank. FSDP's traffic is all_gather_into_tensor and
reduce_scatter_tensor on flat buffers."""
import copy
import datetime

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import fully_shard

import harness
from ddp_test import check_step, make_model, step  # the DDP test's model and checks

STEPS = 6


def shard(model, group, n, flavour):
    """The model wrapped by FSDP over group; checks that each rank holds only its share."""
    total = sum(p.numel() for p in model.parameters())
    mesh = DeviceMesh.from_group(group, "cpu")
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh, reshard_after_forward=flavour == "fsdp2")
    fully_shard(model, mesh=mesh, reshard_after_forward=flavour == "fsdp2")
    local = sum(p.to_local().numel() for p in model.parameters())
    if local > (total + n * 64) // n:  # a quarter, plus padding of each flat shard
        raise AssertionError(f"{flavour}: a rank holds {local} of {total} parameters")
    return model


def full_parameters(model):
    return torch.cat([p.full_tensor().detach().reshape(-1) for p in model.parameters()])


def train(rank, n, url, flavour):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    gloo = dist.new_group(backend="gloo")
    models = {}
    for name, group in (("deepcomm", dist.group.WORLD), ("gloo", gloo)):
        model = shard(copy.deepcopy(make_model()), group, n, flavour)
        models[name] = (model, torch.optim.SGD(model.parameters(), lr=0.05))
    g = torch.Generator().manual_seed(100 + rank)
    for i in range(STEPS):
        x, y = torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g)
        step(models, x, y)
        ours = full_parameters(models["deepcomm"][0])
        ref = full_parameters(models["gloo"][0])
        check_step(ours, ref, n, gloo, f"{flavour} step {i}")
        if i == 0 and torch.equal(ours, torch.cat([p.reshape(-1) for p in make_model().parameters()])):
            raise AssertionError(f"{flavour}: the first step changed nothing")
    if rank == 0:
        print(f"{flavour}: {STEPS} steps match gloo, max difference {(ours - ref).abs().max():.3g}")


if __name__ == "__main__":
    harness.run(train, args=("fsdp2",))
    harness.run(train, args=("fsdp2-no-reshard",))
