"""Every collective of the deepcomm backend against gloo's result on the same inputs, 4 ranks on
CPU: all-reduce for each ReduceOp and dtype, the coalesced forms, gathers, scatters, all-to-all
(even and uneven), send/recv, barrier, object collectives, non-contiguous tensors, futures with
callbacks (and a get_future wait that lets go of the GIL), subgroups, and inputs the backend (and
its compressed all-reduce) must refuse. Inputs hold small integers, so every sum is exact and
results must be equal, not close. Where gloo lacks an operation (AVG, PREMUL_SUM, some dtypes) the
reference is computed from every rank's inputs, which each rank can generate."""
import datetime
import threading
import time

import torch
import torch.distributed as dist

import deepcomm.torch
import harness

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int32, torch.int64]


def values(rank, shape, dtype, seed=0, low=0, high=5):
    g = torch.Generator().manual_seed(1000 * seed + rank)
    return torch.randint(low, high, shape, generator=g).to(dtype)


def same(a, b, what):
    if a.dtype != b.dtype or a.shape != b.shape or not torch.equal(a, b):
        raise AssertionError(f"{what}: deepcomm {a} != reference {b}")


def raises(fn, text, what):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        if text not in str(e):
            raise AssertionError(f"{what}: raised {e!r}, expected a message with {text!r}")
        return
    raise AssertionError(f"{what}: did not raise")


def check_all_reduce(rank, n, gloo):
    for dtype in DTYPES:
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX):
            x = values(rank, (33,), dtype, seed=1, low=1, high=3)
            ref = x.clone()
            dist.all_reduce(x, op)
            dist.all_reduce(ref, op, group=gloo)
            same(x, ref, f"all_reduce {op} {dtype}")
    everyone = [values(r, (17,), torch.float32, seed=2) for r in range(n)]
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = everyone[rank].to(dtype, copy=True)
        dist.all_reduce(x, dist.ReduceOp.AVG)
        same(x, (sum(everyone) / n).to(dtype), f"all_reduce AVG {dtype}")
        for factor in (0.5, torch.tensor([2.0], dtype=dtype)):
            x = everyone[rank].to(dtype, copy=True)
            dist.all_reduce(x, dist._make_nccl_premul_sum(factor))
            f = float(factor) if not torch.is_tensor(factor) else float(factor.item())
            same(x, (sum(everyone) * f).to(dtype), f"all_reduce PREMUL_SUM({factor}) {dtype}")
    flags = torch.tensor([rank == 1, False, True])
    dist.all_reduce(flags)
    same(flags, torch.tensor([True, False, True]), "all_reduce SUM bool (logical or)")
    z = torch.complex(everyone[rank], -everyone[rank])
    dist.all_reduce(z)
    same(z, torch.complex(sum(everyone), -sum(everyone)), "all_reduce SUM complex64")
    u = everyone[rank].to(torch.uint32)
    dist.all_reduce(u, dist.ReduceOp.MAX)
    same(u, torch.stack(everyone).max(0).values.to(torch.uint32), "all_reduce MAX uint32")
    # Non-contiguous in place: a transposed view.
    t = values(rank, (6, 5), torch.float32, seed=3).t()
    ref = t.contiguous()
    dist.all_reduce(t)
    dist.all_reduce(ref, group=gloo)
    same(t.contiguous(), ref, "all_reduce of a transposed view")
    tensors = [values(rank, (k + 3,), torch.float32, seed=4 + k) for k in range(3)]
    refs = [t.clone() for t in tensors]
    dist.all_reduce_coalesced(tensors)
    dist.all_reduce_coalesced(refs, group=gloo)
    for k in range(3):
        same(tensors[k], refs[k], f"all_reduce_coalesced tensor {k}")


def check_rooted(rank, n, gloo):
    for root in range(n):
        for dtype in (torch.float32, torch.int64, torch.bool, torch.complex64):
            x = values(rank, (9,), torch.int64, seed=5).to(dtype)
            ref = x.clone()
            dist.broadcast(x, root)
            dist.broadcast(ref, root, group=gloo)
            same(x, ref, f"broadcast root {root} {dtype}")
        x = values(rank, (9,), torch.float32, seed=6)
        ref = x.clone()
        dist.reduce(x, root)
        dist.reduce(ref, root, group=gloo)
        if rank == root:
            same(x, ref, f"reduce to {root}")
        x = values(rank, (4, 3), torch.float32, seed=7)
        out = [torch.empty(4, 3) for _ in range(n)] if rank == root else None
        ref = [torch.empty(4, 3) for _ in range(n)] if rank == root else None
        dist.gather(x, out, dst=root)
        dist.gather(x, ref, dst=root, group=gloo)
        if rank == root:
            for r in range(n):
                same(out[r], ref[r], f"gather to {root}, part {r}")
        parts = [values(r, (5,), torch.int32, seed=8 + root) for r in range(n)] if rank == root else None
        out, ref = torch.empty(5, dtype=torch.int32), torch.empty(5, dtype=torch.int32)
        dist.scatter(out, parts, src=root)
        dist.scatter(ref, parts, src=root, group=gloo)
        same(out, ref, f"scatter from {root}")


def check_gathers(rank, n, gloo):
    for dtype in (torch.float32, torch.float16, torch.int8, torch.bool):
        x = values(rank, (3, 2), torch.int64, seed=9).to(dtype)
        out, ref = [torch.empty_like(x) for _ in range(n)], [torch.empty_like(x) for _ in range(n)]
        dist.all_gather(out, x)
        dist.all_gather(ref, x, group=gloo)
        for r in range(n):
            same(out[r], ref[r], f"all_gather {dtype} part {r}")
    x = values(rank, (3, 2), torch.float32, seed=10)
    out, ref = torch.empty(3 * n, 2), torch.empty(3 * n, 2)
    dist.all_gather_into_tensor(out, x)
    dist.all_gather_into_tensor(ref, x, group=gloo)
    same(out, ref, "all_gather_into_tensor")
    pg = dist.distributed_c10d._get_default_group()
    ins = [values(rank, (k + 1,), torch.float64, seed=11 + k) for k in range(3)]
    outs = [torch.empty((k + 1) * n, dtype=torch.float64) for k in range(3)]
    pg.allgather_into_tensor_coalesced(outs, ins).wait()
    for k in range(3):
        ref = torch.empty_like(outs[k])
        dist.all_gather_into_tensor(ref, ins[k], group=gloo)
        same(outs[k], ref, f"allgather_into_tensor_coalesced tensor {k}")
    ins = [values(rank, (k + 2,), torch.int32, seed=20 + k) for k in range(3)] + [torch.empty(0, dtype=torch.int32)]
    outs = [[torch.empty_like(t) for t in ins] for _ in range(n)]
    refs = [[torch.empty_like(t) for t in ins] for _ in range(n)]
    dist.all_gather_coalesced(outs, ins)
    dist.all_gather_coalesced(refs, ins, group=gloo)
    for r in range(n):
        for k in range(len(ins)):
            same(outs[r][k], refs[r][k], f"all_gather_coalesced from {r}, tensor {k}")
    objects = [None] * n
    dist.all_gather_object(objects, {"rank": rank, "name": "r" * rank})
    if objects != [{"rank": r, "name": "r" * r} for r in range(n)]:
        raise AssertionError(f"all_gather_object: {objects}")
    box = [f"from {rank}", rank] if rank == 2 else [None, None]
    dist.broadcast_object_list(box, src=2)
    if box != ["from 2", 2]:
        raise AssertionError(f"broadcast_object_list: {box}")


def check_reduce_scatter(rank, n, gloo):
    parts = [values(rank, (4,), torch.float32, seed=12 + r) for r in range(n)]
    out, ref = torch.empty(4), torch.empty(4)
    dist.reduce_scatter(out, parts)
    dist.reduce_scatter(ref, parts, group=gloo)
    same(out, ref, "reduce_scatter")
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX):
        x = values(rank, (n * 5,), torch.int32, seed=13)
        out, ref = torch.empty(5, dtype=torch.int32), torch.empty(5, dtype=torch.int32)
        dist.reduce_scatter_tensor(out, x, op)
        dist.reduce_scatter_tensor(ref, x, op, group=gloo)
        same(out, ref, f"reduce_scatter_tensor {op}")
    everyone = [values(r, (n * 2,), torch.float32, seed=14) for r in range(n)]
    out = torch.empty(2)
    dist.reduce_scatter_tensor(out, everyone[rank], dist.ReduceOp.AVG)
    same(out, (sum(everyone) / n)[2 * rank:2 * rank + 2], "reduce_scatter_tensor AVG")
    pg = dist.distributed_c10d._get_default_group()
    ins = [values(rank, ((k + 1) * n,), torch.float32, seed=15 + k) for k in range(2)]
    outs = [torch.empty(k + 1) for k in range(2)]
    pg.reduce_scatter_tensor_coalesced(outs, ins).wait()
    for k in range(2):
        ref = torch.empty_like(outs[k])
        dist.reduce_scatter_tensor(ref, ins[k], group=gloo)
        same(outs[k], ref, f"reduce_scatter_tensor_coalesced tensor {k}")


def check_all_to_all(rank, n, gloo):
    x = values(rank, (n * 3,), torch.float32, seed=16)
    out, ref = torch.empty_like(x), torch.empty_like(x)
    dist.all_to_all_single(out, x)
    dist.all_to_all_single(ref, x, group=gloo)
    same(out, ref, "all_to_all_single even")
    # Uneven: rank r sends r + p + 1 rows of 2 to rank p (and none where that is a multiple of 3).
    rows = lambda src, dst: 0 if (src + dst + 1) % 3 == 0 else src + dst + 1  # noqa: E731
    send = [rows(rank, p) for p in range(n)]
    recv = [rows(p, rank) for p in range(n)]
    x = values(rank, (sum(send), 2), torch.int64, seed=17)
    out, ref = torch.empty(sum(recv), 2, dtype=torch.int64), torch.empty(sum(recv), 2, dtype=torch.int64)
    dist.all_to_all_single(out, x, recv, send)
    dist.all_to_all_single(ref, x, recv, send, group=gloo)
    same(out, ref, "all_to_all_single uneven")
    ins = [values(rank, (3,), torch.float32, seed=18 + p) for p in range(n)]
    outs, refs = [torch.empty(3) for _ in range(n)], [torch.empty(3) for _ in range(n)]
    dist.all_to_all(outs, ins)
    dist.all_to_all(refs, ins, group=gloo)
    for p in range(n):
        same(outs[p], refs[p], f"all_to_all from {p}")
    # Tensors of different sizes (gloo refuses them): rank r sends p + 1 elements to rank p.
    ins = [values(rank, (p + 1,), torch.float32, seed=18 + p) for p in range(n)]
    outs = [torch.empty(rank + 1) for _ in range(n)]
    dist.all_to_all(outs, ins)
    for p in range(n):
        same(outs[p], values(p, (rank + 1,), torch.float32, seed=18 + rank), f"all_to_all of uneven sizes from {p}")


def check_point_to_point(rank, n):
    # A ring of sends larger than any eager message, every rank sending first: with blocking sends
    # this would deadlock.
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    big = values(rank, (1 << 20,), torch.float32, seed=19)
    got = torch.empty_like(big)
    reqs = [dist.isend(big, nxt), dist.irecv(got, prv)]
    for r in reqs:
        r.wait()
    same(got, values(prv, (1 << 20,), torch.float32, seed=19), "isend/irecv ring")
    ops = [dist.P2POp(dist.isend, big[:10], nxt), dist.P2POp(dist.irecv, got[:10], prv)]
    for r in dist.batch_isend_irecv(ops):
        r.wait()
    same(got[:10], values(prv, (1 << 20,), torch.float32, seed=19)[:10], "batch_isend_irecv")
    if rank == 0:
        for p in range(1, n):
            dist.send(torch.full((3,), float(p)), p)
    else:
        x = torch.empty(3)
        dist.recv(x, 0)
        same(x, torch.full((3,), float(rank)), "send/recv")
    dist.barrier()


def check_async(rank, n):
    # Futures complete off the completion thread: a callback may wait on a nested collective.
    x = torch.ones(8)
    work = dist.all_reduce(x, async_op=True)

    def nested(fut):
        y = fut.value()[0].clone()
        dist.all_reduce(y, async_op=True).get_future().wait()
        return y

    result = work.get_future().then(nested).wait()
    same(result, torch.full((8,), float(n * n)), "future callback with a nested all-reduce")
    if not work.is_completed() or not work.wait(datetime.timedelta(seconds=5)) or work.exception() is not None:
        raise AssertionError("a completed work reports completion")
    same(work.result()[0], torch.full((8,), float(n)), "work.result()")
    works = [dist.all_reduce(torch.full((4,), float(k)), async_op=True) for k in range(20)]
    for k, w in enumerate(works):
        w.wait()
        same(w.result()[0], torch.full((4,), float(k * n)), f"async all_reduce {k} in issue order")


def check_subgroups(rank, n):
    evens, odds = dist.new_group([0, 2]), dist.new_group([1, 3])
    mine = evens if rank % 2 == 0 else odds
    x = torch.full((5,), float(rank))
    dist.all_reduce(x, group=mine)
    same(x, torch.full((5,), float(2 + 2 * (rank % 2))), "all_reduce in a new_group")
    pair = [None, None]
    dist.all_gather_object(pair, f"rank {rank}", group=mine)  # needs the group's sequence number
    if pair != [f"rank {rank % 2}", f"rank {rank % 2 + 2}"]:
        raise AssertionError(f"all_gather_object in a new_group: {pair}")
    first3 = dist.new_group([0, 1, 2])
    if rank < 3:
        y = torch.full((2,), float(rank))
        dist.broadcast(y, 2, group=first3)  # global rank 2 is the root
        same(y, torch.full((2,), 2.0), "broadcast in a 3-rank group")
    z = torch.ones(3)
    dist.all_reduce(z)  # the world is unaffected
    same(z, torch.full((3,), float(n)), "world all_reduce after subgroups")


def check_refusals(rank, n, gloo):
    pg = dist.distributed_c10d._get_default_group()
    ours, theirs = pg._get_backend(torch.device("cpu")), gloo._get_backend(torch.device("cpu"))
    compress = deepcomm.torch._C.compressed_allreduce
    raises(lambda: compress(ours, torch.ones(3, dtype=torch.int32), "q8", None, True), "float32, float16 or bfloat16",
           "compressed all-reduce of int32")
    raises(lambda: compress(theirs, torch.ones(3), "q8", None, True), "not deepcomm", "compressed all-reduce on gloo")
    raises(lambda: compress(ours, torch.ones(3), "q9", None, True)[0].wait(), "dcCompressedAllReduce", "a bad spec")
    raises(lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32), dist.ReduceOp.BAND), "not supported", "BAND")
    raises(lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16)), "cannot reduce", "int16 all_reduce")
    raises(lambda: dist.all_gather_into_tensor(torch.empty(3 * n), torch.ones(3, dtype=torch.float64)),
           "dtypes differ", "all_gather_into_tensor with mismatched dtypes")
    raises(lambda: dist.all_gather_into_tensor(torch.empty(2 * n), torch.ones(3)), "times the elements",
           "all_gather_into_tensor with the wrong size")
    raises(lambda: pg._get_backend(torch.device("cpu")).allreduce([torch.ones(3, device="meta")]).wait(),
           "only CPU tensors", "a meta tensor")
    x = torch.ones(2)
    dist.all_reduce(x)  # still usable
    same(x, torch.full((2,), float(n)), "all_reduce after refusals")


def future_while_an_earlier_work_is_freed(rank, n, url):
    # torch calls Work.get_future holding the GIL. Rank 0 waits there for a second all-reduce while
    # the completion thread completes the first, whose work and tensor Python already dropped: freeing
    # that tensor's Python object takes the GIL. The wait lets go of it, so the completion thread
    # goes on (it deadlocked before) and other Python threads run meanwhile.
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    elements = 1 << 20  # large enough for the completion thread, not the calling one, to complete it
    if rank != 0:
        time.sleep(1)  # rank 0 is waiting in get_future by now
    dist.all_reduce(torch.ones(elements), async_op=True)
    second = torch.full((elements,), 2.0)
    work = dist.all_reduce(second, async_op=True)
    ticks = [0]
    waiting = threading.Event()

    def tick():
        while not waiting.is_set():
            ticks[0] += 1
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    before = ticks[0]
    fut = work.get_future()
    during = ticks[0] - before
    waiting.set()
    ticker.join()
    same(fut.value()[0], torch.full((elements,), 2.0 * n), "the all-reduce get_future waited for")
    if rank == 0 and during < 10:
        raise AssertionError(f"another Python thread ran {during} times while get_future waited about 1 s")


def main(rank, n, url):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=60))
    gloo = dist.new_group(backend="gloo")
    check_all_reduce(rank, n, gloo)
    check_rooted(rank, n, gloo)
    check_gathers(rank, n, gloo)
    check_reduce_scatter(rank, n, gloo)
    check_all_to_all(rank, n, gloo)
    check_point_to_point(rank, n)
    check_async(rank, n)
    check_subgroups(rank, n)
    check_refusals(rank, n, gloo)


if __name__ == "__main__":
    harness.run(main)
    harness.run(future_while_an_earlier_work_is_freed, deadline_s=60)
