#!/usr/bin/python3
"""The Python package under deepcomm-run: every rank checks all-reduce results, compressed
all-reduce results (close to the sum; bitwise identical on every rank, compared through max and
min all-reduces of a digest), statistics, groups, and that bad input raises deepcomm.Error."""
import sys
import zlib

import numpy as np

import deepcomm


def check(condition, what):
    if not condition:
        sys.exit(f"rank {comm.rank}: {what}")


def same_on_every_rank(array):
    digest = np.array([zlib.crc32(array.tobytes())], dtype=np.int64)
    return comm.all_reduce(digest.copy(), "max")[0] == comm.all_reduce(digest.copy(), "min")[0]


comm = deepcomm.Comm.from_env()
n, rank = comm.size, comm.rank

x = np.arange(1000, dtype=np.float32) + rank
comm.all_reduce(x)
check(np.array_equal(x, n * np.arange(1000, dtype=np.float32) + n * (n - 1) / 2), "all-reduce sum")
ints = np.full(10, rank + 1, dtype=np.int64)
out = comm.all_reduce(ints, "max", out=np.empty_like(ints))
check((out == n).all() and (ints == rank + 1).all(), "all-reduce max out of place")

rng = np.random.default_rng(rank)
grad = (rng.standard_normal(300000) * 0.01).astype(np.float32)
truth = comm.all_reduce(grad.copy(), "avg")
residual = deepcomm.Residual(grad.size)
for spec in ["q8,huffman,ef", "topk:0.01,q8,huffman,ef"]:
    residual.reset()
    result = grad.copy()
    stats = comm.compressed_all_reduce(result, spec, residual, op="avg").as_dict()
    check(same_on_every_rank(result), f"{spec}: ranks differ")
    check(stats["ratio"] > 3 and stats["wireBytes"] > 0 and stats["algorithm"], f"{spec}: statistics {stats}")
    if spec.startswith("q8"):
        check(np.abs(result - truth).max() < 0.01, f"{spec}: far from the average")
    else:  # top-1%: the largest averaged entries arrive, the rest waits in the residual
        check(np.count_nonzero(result) <= 0.01 * grad.size * n * 1.1, f"{spec}: too many elements sent")

halves = [grad[:1000].copy(), grad[1000:2000].copy()]
with deepcomm.group():
    pending = [comm.compressed_all_reduce(h, "q8", None, op="sum") for h in halves]
check(all(s.wireBytes > 0 for s in pending) and same_on_every_rank(halves[0]), "compressed calls in a group")

for bad in [lambda: comm.compressed_all_reduce(grad, "q9", None),
            lambda: comm.compressed_all_reduce(grad, "q8,ef", None),
            lambda: comm.compressed_all_reduce(grad.astype(np.float64), "q8", None),
            lambda: deepcomm.Residual(0)]:
    try:
        bad()
        check(False, "bad input was accepted")
    except deepcomm.Error as e:
        check(e.code == 4 and str(e), f"wrong error {e}")
try:
    comm.all_reduce([1, 2, 3])
    check(False, "a list was accepted")
except TypeError:
    pass

residual.close()
comm.close()
print(f"rank {rank}: ok")
