#!/usr/bin/python3
"""Markdown tables of codec_bench results: GB/s (10^9 bytes of float32 input per second; Huffman:
of 8-bit symbols) per buffer size, medians of the repetitions, and each as a share of memcpy's
rate in the same run.

    build-bench/bench/compress/codec_bench --benchmark_repetitions=5 \\
        --benchmark_report_aggregates_only=true --benchmark_format=json > /tmp/codec.json
    /usr/bin/python3 bench/compress/codec_table.py /tmp/codec.json
"""
import json
import sys
from collections import OrderedDict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    # name = what/isa/size (memcpy/size); keep the medians.
    rates = OrderedDict()
    for b in data["benchmarks"]:
        if b.get("aggregate_name", "median") != "median" or "bytes_per_second" not in b:
            continue
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        size = parts[-1]
        what = "/".join(parts[:-1])
        rates.setdefault(size, OrderedDict())[what] = b["bytes_per_second"] / 1e9
    for size, row in rates.items():
        memcpy = row.get("memcpy")
        print(f"#### {size} (memcpy: {memcpy:.2f} GB/s)\n" if memcpy else f"#### {size}\n")
        print("| codec | GB/s | × memcpy |")
        print("| --- | --- | --- |")
        for what, gbps in row.items():
            if what == "memcpy":
                continue
            share = f"{gbps / memcpy:.2f}" if memcpy else ""
            print(f"| {what} | {gbps:.2f} | {share} |")
        print()


if __name__ == "__main__":
    main()
