"""Faults raise in Python on every surviving rank, never hang, 4 ranks on CPU:
- timeout: rank 3 stops calling; the others' all-reduce raises once the group's timeout passed
  (not before), and rank 3's own later call raises too (the communicator was revoked on every rank);
- killed rank: rank 3 is killed (SIGKILL) while the others run collectives; they raise within
  the group's timeout, both a blocking call and an async work already started."""
import datetime
import os
import signal
import time

import torch
import torch.distributed as dist

import harness

TIMEOUT_S = 4


def expect_failure(fn, within_s, words, what):
    start = time.monotonic()
    try:
        fn()
    except dist.DistBackendError as e:
        elapsed = time.monotonic() - start
        if elapsed > within_s:
            raise AssertionError(f"{what}: raised after {elapsed:.1f} s, later than {within_s} s")
        if not any(w in str(e) for w in words):
            raise AssertionError(f"{what}: message {e} has none of {words}")
        return elapsed
    raise AssertionError(f"{what}: did not raise")


def timeout_case(rank, n, url):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=TIMEOUT_S))
    x = torch.ones(1000)
    dist.all_reduce(x)
    if rank == 3:
        time.sleep(TIMEOUT_S + 4)  # misses the next all-reduce
        expect_failure(lambda: dist.all_reduce(torch.ones(3)), 5, ["revoked"], "rank 3 after the timeout")
        return
    # The first rank whose watchdog fires revokes the communicator; a rank that hears of it first
    # reports the revoke.
    elapsed = expect_failure(lambda: dist.all_reduce(x), TIMEOUT_S + 5, ["timeout", "revoked"],
                             f"rank {rank} all_reduce")
    if elapsed < TIMEOUT_S - 0.5:
        raise AssertionError(f"rank {rank}: raised after {elapsed:.1f} s, before the {TIMEOUT_S} s timeout")


def killed_case(rank, n, url):
    dist.init_process_group("deepcomm", init_method=url, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=30))
    x = torch.ones(1 << 16)
    dist.all_reduce(x)
    dist.barrier()
    if rank == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.5)
    pending = dist.all_reduce(torch.ones(1 << 16), async_op=True)
    expect_failure(pending.wait, 20, ["rank 3 is gone", "revoked"], f"rank {rank} async all_reduce")
    expect_failure(lambda: dist.all_reduce(x), 20, ["rank 3 is gone", "revoked"], f"rank {rank} all_reduce")


if __name__ == "__main__":
    harness.run(timeout_case, deadline_s=120)
    harness.run(killed_case, deadline_s=120, expected_exit={3: None})
