"""Runs a test function on N ranks, each a process started with torch.multiprocessing's spawn
context, bootstrapped through a FileStore (init_method=file://). A rank fails by raising; run()
exits non-zero naming the ranks that failed or did not finish within the deadline."""
import os
import sys
import tempfile
import time
import traceback

import torch.multiprocessing as mp


def _rank_main(rank, nranks, store_path, test, args):
    import torch
    import torch.distributed as dist
    import deepcomm.torch  # noqa: F401  registers the backend

    torch.set_num_threads(1)
    try:
        test(rank, nranks, f"file://{store_path}", *args)
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        os._exit(1)
    if dist.is_initialized():
        dist.destroy_process_group()
    os._exit(0)


def run(test, nranks=4, args=(), deadline_s=240, expected_exit=None):
    """Returns after every rank exited with its expected code (0, or expected_exit[rank]; None
    there means any code, e.g. a rank that kills itself)."""
    expected_exit = expected_exit or {}
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        store_path = os.path.join(tmp, "store")
        procs = [ctx.Process(target=_rank_main, args=(r, nranks, store_path, test, args)) for r in range(nranks)]
        for p in procs:
            p.start()
        end = time.monotonic() + deadline_s
        for p in procs:
            p.join(max(0.0, end - time.monotonic()))
        failed = []
        for rank, p in enumerate(procs):
            if p.is_alive():
                p.kill()
                p.join()
                failed.append(f"rank {rank} did not finish within {deadline_s} s")
            elif rank in expected_exit and expected_exit[rank] is None:
                continue
            elif p.exitcode != expected_exit.get(rank, 0):
                failed.append(f"rank {rank} exited with {p.exitcode}")
    if failed:
        sys.exit(f"{test.__name__}: " + "; ".join(failed))
    print(f"{test.__name__}: {nranks} ranks passed")
