#!/usr/bin/python3
"""Markdown tables of codec_bench results: GB/s (10^9 bytes of float32 input per second of CPU
time; Huffman: of 8-bit symbols) per buffer size, the median and the best of the repetitions, each
also as a share of memcpy's rate of the same statistic in the same run. On a shared machine the
best repetition is the one least disturbed by other processes.

    build-bench/bench/compress/codec_bench --benchmark_repetitions=7 --benchmark_format=json > /tmp/codec.json
    /usr/bin/python3 bench/compress/codec_table.py /tmp/codec.json
"""
import json
import statistics
import sys
from collections import OrderedDict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    # Every repetition's rate, by size then by what (name = what/isa/size, memcpy/size).
    rates = OrderedDict()
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration" or "bytes_per_second" not in b:
            continue
        parts = b["run_name"].split("/")
        rates.setdefault(parts[-1], OrderedDict()).setdefault("/".join(parts[:-1]), []).append(
            b["bytes_per_second"] / 1e9)
    for size, row in rates.items():
        memcpy = row.get("memcpy")
        if not memcpy:
            continue
        m_med, m_best = statistics.median(memcpy), max(memcpy)
        print(f"#### {size} (memcpy: median {m_med:.2f} GB/s, best {m_best:.2f} GB/s)\n")
        print("| codec | median GB/s | × memcpy | best GB/s | × memcpy |")
        print("| --- | --- | --- | --- | --- |")
        for what, values in row.items():
            if what == "memcpy":
                continue
            med, best = statistics.median(values), max(values)
            print(f"| {what} | {med:.2f} | {med / m_med:.2f} | {best:.2f} | {best / m_best:.2f} |")
        print()


if __name__ == "__main__":
    main()
