#!/usr/bin/python3
"""bench/cluster/plan_choice.py --report: the section it prints from a saved run, checked cell by
cell against values worked out by hand (medians, the slow-link bound, auto over the best fixed
algorithm, the plan auto takes and that plan's own run over the best, the model's error), with a
stand-in deepcomm-sim that prints fixed predictions; and, without deepcomm-sim, the table without
the columns that need it; and a run tuned by deepcomm-tune: its rules named under the heading and
handed to deepcomm-sim in the run's topology file.  usage: plan_choice_report_test.py REPO"""
import json
import os
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from markdown_tables import expect, expect_cells, tables  # noqa: E402

REPO = sys.argv[1]
PLAN_CHOICE = os.path.join(REPO, "bench", "cluster", "plan_choice.py")
MIB = 1 << 20

# 2 hosts x 2 ranks; three rounds of each contender at 1 MiB and 64 MiB (us).
SAVED = {
    "args": {"layouts": ["2,2"], "rate": "1gbit", "burst": None, "shaper": None, "algos": "auto,ring,tree",
             "no_ompi": False, "topo_file": None, "latency_us": 60.0, "pairs": 3, "b": "1M", "e": "64M",
             "f": "64", "n": "5", "w": "1", "timeout": 600, "save": None, "report": None},
    "results": [{
        "layout": [2, 2], "rates": [1.0, 0.9, 1.1], "failures": [],
        "topology_file": {"bandwidth_gbps": 1.0, "latency_us": 60.0},
        "runs": {
            "auto": [{str(MIB): 9000, str(64 * MIB): 600000}, {str(MIB): 11000, str(64 * MIB): 700000},
                     {str(MIB): 10000, str(64 * MIB): 650000}],
            "ring": [{str(MIB): 12000, str(64 * MIB): 900000}, {str(MIB): 12000, str(64 * MIB): 1000000},
                     {str(MIB): 14000, str(64 * MIB): 950000}],
            "tree": [{str(MIB): 8000, str(64 * MIB): 640000}, {str(MIB): 7000, str(64 * MIB): 600000},
                     {str(MIB): 9000, str(64 * MIB): 620000}],
            "ompi": [{str(MIB): 20000, str(64 * MIB): 2000000}] * 3,
        }}],
}

# What the stand-in deepcomm-sim predicts: the selector takes the ring at 1 MiB and the tree at 64 MiB.
SIM_ROWS = [
    {"collective": "AllReduce", "algorithm": "ring", "bytes": MIB, "predicted_seconds": 0.015, "chosen": True},
    {"collective": "AllReduce", "algorithm": "tree", "bytes": MIB, "predicted_seconds": 0.016, "chosen": False},
    {"collective": "AllReduce", "algorithm": "ring", "bytes": 64 * MIB, "predicted_seconds": 0.95, "chosen": False},
    {"collective": "AllReduce", "algorithm": "tree", "bytes": 64 * MIB, "predicted_seconds": 0.31, "chosen": True},
    {"collective": "AllGather", "algorithm": "ring", "bytes": MIB, "predicted_seconds": 9.0, "chosen": True},
]


def report(build, saved=SAVED):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(saved, f)
    try:
        p = subprocess.run([sys.executable, PLAN_CHOICE, "--report", f.name, "--build", build],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.remove(f.name)
    if p.returncode != 0:
        sys.exit(f"plan_choice.py --report failed ({p.returncode}): {p.stderr}")
    return p.stdout


def main():
    with tempfile.TemporaryDirectory() as build:
        # Without deepcomm-sim: the measured table alone.
        text = report(build)
        if "link 1.000 Gbit/s median" not in text:
            sys.exit("the heading does not give the median link rate")
        [measured] = tables(text)
        if "auto takes" in measured[0]:
            sys.exit("'auto takes' printed without deepcomm-sim")
        one, big = measured
        # Bound: 2(h-1)/h * S / rate = 1 MiB * 8 / 1 Gbit/s = 8.39 ms; 64 MiB: 537 ms.
        columns = ("bound (ms)", "auto (ms)", "ring (ms)", "tree (ms)", "best fixed", "auto / best fixed",
                   "auto × bound")
        expect_cells(one, columns, ("8.39", "10", "12", "8", "tree", "1.25", "1.19"))
        expect_cells(big, columns, ("537", "650", "950", "620", "tree", "1.05", "1.21"))

        # With a deepcomm-sim that prints fixed predictions.
        sim = os.path.join(build, "tools", "sim", "deepcomm-sim")
        os.makedirs(os.path.dirname(sim))
        with open(sim, "w") as f:
            # It keeps the topology file it was given ($2, after --topo-file).
            f.write("#!/bin/sh\ncp \"$2\" \"$(dirname \"$0\")/given.json\"\ncat <<'EOF'\n" +
                    json.dumps({"rows": SIM_ROWS}) + "\nEOF\n")
        os.chmod(sim, os.stat(sim).st_mode | stat.S_IXUSR)
        measured, model = tables(report(build))
        one, big = measured
        expect(one, "auto takes", "ring")
        expect(one, "its fixed run / best fixed", "1.50")  # ring 12 ms over tree 8 ms
        expect(big, "auto takes", "tree")
        expect(big, "its fixed run / best fixed", "1.00")
        one, big = model
        expect(one, "ring: predicted / measured (ms), error", "15 / 12, +25%")
        expect(big, "tree: predicted / measured (ms), error", "310 / 620, -50%")

        # A tuned run: the rules under the heading, and in the file deepcomm-sim prices with.
        rules = [{"collective": "allreduce", "algorithm": "tree", "min_bytes": MIB, "max_bytes": 4 * MIB - 1,
                  "hosts": 2, "ranks": 4},
                 {"collective": "allreduce", "algorithm": "ring", "min_bytes": 4 * MIB, "max_bytes": 64 * MIB,
                  "hosts": 2, "ranks": 4}]
        tuned = json.loads(json.dumps(SAVED))
        tuned["args"]["tune"] = 2
        tuned["results"][0]["tuning"] = rules
        text = report(build, tuned)
        line = ("DeepComm's runs loaded the rules deepcomm-tune wrote on this cluster (2 rounds before the "
                "measured ones): tree from 1 MiB, ring from 4 MiB (up to 64 MiB).")
        if line not in text:
            sys.exit("the tuned run's rules are not named:\n" + text)
        with open(os.path.join(build, "tools", "sim", "given.json")) as f:
            if json.load(f).get("tuning") != rules:
                sys.exit("deepcomm-sim did not get the run's rules")
    print("PASS")


if __name__ == "__main__":
    main()
