#!/usr/bin/env python3
"""A small all-reduce beside CPU hogs: DeepComm with its short wake-up slice, DeepComm without it
(DEEPCOMM_WAKE_SLICE_US=0) and Open MPI (vader, as BENCHMARKING.md), interleaved.

One busy loop is pinned to each core (`sh -c 'while :; do :; done'`) for the whole run; each round
runs every configuration once at every rank count, and each run reports all_reduce_perf's mean time
of the size. Prints every run and the medians over the rounds (docs/performance.md, "Under
contention"):

  /usr/bin/python3 bench/compare/under_contention.py --build build-bench --ranks 2,4 --rounds 6
"""

import argparse
import os
import statistics
import subprocess
import sys

from configs import MPIRUN, OMPI_SELECTIONS


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-bench")
    p.add_argument("--ranks", default="2,4", help="comma list of rank counts")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--bytes", type=int, default=8)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--hogs", type=int, default=os.cpu_count(), help="busy loops, one pinned per core")
    p.add_argument("--timeout", type=int, default=300)
    return p.parse_args()


def commands(a, nranks):
    """(label, argv, extra environment) of each configuration."""
    bench = os.path.join(a.build, "bench")
    sizes = ["-b", str(a.bytes), "-e", str(a.bytes), "-n", str(a.iters), "-w", str(a.warmup), "-c", "1"]
    deepcomm = [os.path.join(a.build, "tools", "launcher", "deepcomm-run"), "-n", str(nranks),
                os.path.join(bench, "all_reduce_perf")] + sizes
    ompi = MPIRUN + OMPI_SELECTIONS["ompi-vader"] + ["-np", str(nranks), os.path.join(bench, "ompi_collectives_perf"),
                                                    "-C", "all_reduce"] + sizes
    return [("deepcomm", deepcomm, {}), ("deepcomm, slice off", deepcomm, {"DEEPCOMM_WAKE_SLICE_US": "0"}),
            ("ompi-vader", ompi, {})]


def mean_time_us(out, size):
    """The out-of-place time of `size` in an nccl-tests style table."""
    for line in out.splitlines():
        fields = line.split()
        if len(fields) > 8 and fields[0] == str(size):
            return float(fields[5])
    return None


def start_hogs(count):
    hogs = []
    for cpu in range(count):
        hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        os.sched_setaffinity(hog.pid, {cpu % os.cpu_count()})
        hogs.append(hog)
    return hogs


def main():
    a = parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    times = {}
    hogs = start_hogs(a.hogs)
    try:
        for rnd in range(a.rounds):
            for nranks in ranks:
                for label, argv, extra in commands(a, nranks):
                    run = subprocess.run(argv, env=dict(os.environ, **extra), capture_output=True, text=True,
                                         timeout=a.timeout)
                    t = mean_time_us(run.stdout, a.bytes) if run.returncode == 0 else None
                    if t is None:
                        sys.exit(f"{label} at {nranks} ranks failed (rc {run.returncode}):\n{run.stdout}\n{run.stderr}")
                    times.setdefault((nranks, label), []).append(t)
                    print(f"round {rnd + 1} ranks {nranks} {label}: {t:.1f} us", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
    print(f"\n{a.bytes} B all-reduce beside {a.hogs} pinned busy loops, medians of {a.rounds} rounds (us)")
    print("| ranks | " + " | ".join(label for label, _, _ in commands(a, 1)) + " |")
    print("| --- |" + " --- |" * 3)
    for nranks in ranks:
        cells = []
        for label, _, _ in commands(a, nranks):
            runs = times[(nranks, label)]
            cells.append(f"{statistics.median(runs):.1f} ({min(runs):.1f}–{max(runs):.1f})")
        print(f"| {nranks} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
