#!/usr/bin/python3
"""Markdown table of reduce_bench's GB/s: one row per datatype, one column per op, per buffer size,
with memcpy of the same size beside it. Medians over repetitions when the run has them.

  build/bench/kernels/reduce_bench --benchmark_repetitions=5 --benchmark_format=json > /tmp/k.json
  /usr/bin/python3 bench/kernels/kernel_table.py /tmp/k.json
"""

import json
import statistics
import sys

OPS = ["sum", "prod", "max", "min", "avg"]


def gbs_by_name(path):
    with open(path) as f:
        data = json.load(f)
    runs = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue  # recomputed below from the repetitions
        runs.setdefault(b["run_name"], []).append(b["bytes_per_second"] / 1e9)
    return {name: statistics.median(v) for name, v in runs.items()}, data.get("context", {})


def main(path):
    gbs, context = gbs_by_name(path)
    sizes = sorted({n.rsplit("/", 1)[1] for n in gbs}, key=lambda s: (s.endswith("MiB"), s))
    types = []
    for name in gbs:
        parts = name.split("/")
        if parts[0] == "reduce" and parts[1] not in types:
            types.append(parts[1])
    print(f"CPU: {context.get('num_cpus', '?')} cores at {context.get('mhz_per_cpu', '?')} MHz; "
          f"GB/s = bytes read + written (dst + a + b) per second, median of the repetitions.\n")
    for size in sizes:
        print(f"#### {size} buffers (memcpy: {gbs.get('memcpy/' + size, float('nan')):.2f} GB/s)\n")
        print("| datatype | " + " | ".join(OPS) + " |")
        print("| --- |" + " --- |" * len(OPS))
        for t in types:
            cells = [f"{gbs[f'reduce/{t}/{op}/{size}']:.2f}" if f"reduce/{t}/{op}/{size}" in gbs else "—" for op in OPS]
            print(f"| {t} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
