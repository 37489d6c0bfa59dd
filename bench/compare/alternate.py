#!/usr/bin/env python3
"""DeepComm against itself: variants of one nccl-tests style benchmark (different builds, or the
same build under different environment variables) run alternately, round after round, the order
reversed every other round; prints each size's median time per variant and the median of its
pairwise time ratios to the first variant (below 1: faster). This machine's noise moves single runs
by 10-20%, so compare medians of many rounds (the protocol at the top of docs/performance.md).

A variant is a space-separated list of NAME=VALUE environment settings; BUILD=DIR takes the
benchmark and deepcomm-run from another build. docs/performance.md, "Recursive halving and
doubling", for example:

  DEEPCOMM_TRANSPORT=tcp /usr/bin/python3 bench/compare/alternate.py --build build-bench --ranks 8 \\
      --rounds 12 --variant DEEPCOMM_ALGO=ring --variant DEEPCOMM_ALGO=halving -- -b 256K -e 2M -f 2 -n 40 -w 4 -c 0
"""

import argparse
import os
import statistics
import subprocess
import sys


def parse_args():
    argv = sys.argv[1:]
    bench_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, bench_args = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-bench")
    p.add_argument("--bench", default="all_reduce_perf")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--variant", action="append", required=True, help="NAME=VALUE ... (BUILD=DIR: another build)")
    p.add_argument("--timeout", type=int, default=600)
    a = p.parse_args(argv)
    if len(a.variant) < 2:
        p.error("give at least two --variant")
    a.bench_args = bench_args
    return a


def command(a, variant):
    """argv and environment of one variant."""
    build, env = a.build, dict(os.environ)
    for setting in variant.split():
        name, sep, value = setting.partition("=")
        if not sep:
            sys.exit(f"alternate.py: variant setting {setting!r} is not NAME=VALUE")
        if name == "BUILD":
            build = value
        else:
            env[name] = value
    argv = [os.path.join(build, "tools", "launcher", "deepcomm-run"), "-n", str(a.ranks),
            os.path.join(build, "bench", a.bench)] + a.bench_args
    for program in argv[0], argv[3]:
        if not os.access(program, os.X_OK):
            sys.exit(f"alternate.py: {program} (variant {variant!r}) is not an executable: build it first")
    return argv, env


def times_us(out):
    """size -> mean of the out-of-place and in-place times of an nccl-tests style table."""
    times = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 10 or not fields[0].isdigit():
            continue
        try:
            measured = [float(fields[5])] + ([float(fields[9])] if fields[9] != "N/A" else [])
        except ValueError:
            continue
        times[int(fields[0])] = statistics.mean(measured)
    return times


def main():
    a = parse_args()
    runs = {v: [] for v in a.variant}
    for r in range(a.rounds):
        for v in (a.variant if r % 2 == 0 else list(reversed(a.variant))):
            argv, env = command(a, v)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=a.timeout, env=env)
            if done.returncode != 0:
                sys.exit(f"alternate.py: {' '.join(argv)} ({v}) failed ({done.returncode}):\n{done.stderr}")
            runs[v].append(times_us(done.stdout))
        print(f"round {r + 1} of {a.rounds} done", file=sys.stderr)
    first = a.variant[0]
    print("| size | " + " | ".join(f"{v}: µs (ratio)" for v in a.variant) + " |")
    print("| --- |" + " --- |" * len(a.variant))
    for size in sorted(runs[first][0]):
        cells = []
        for v in a.variant:
            mine = [run[size] for run in runs[v]]
            ratios = [m / ref[size] for m, ref in zip(mine, runs[first])]
            cells.append(f"{statistics.median(mine):.1f} ({statistics.median(ratios):.2f})")
        print(f"| {size} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
