#!/usr/bin/python3
"""The all-reduce the planner picks by itself against every fixed algorithm, and Open MPI, on a
cluster of network-namespace hosts (tools/cluster/dc-cluster), interleaved round by round
(BENCHMARKING.md). Per layout (ranks per host, block placement) and round: the link rate (iperf3),
then all_reduce_perf once per DEEPCOMM_ALGO and Open MPI (dc-mpirun, ob1 with self,vader,tcp), in
an order rotated by one each round, so no contender always runs first after iperf3. DeepComm's
ranks load a topology file whose network tier is the link measured before the first round, so the
cost model knows the link, and gives each host its share of this machine's cores (--topo-file
gives one instead, e.g. deepcomm-calibrate's). Prints a markdown section: medians per size, the
slow-link bound 2(h-1)/h*S/rate, each time over the bound, auto over the best fixed algorithm of
the same size, and, where deepcomm-sim is built, the plan auto takes (the selector's choice in
deepcomm-sim with the run's file), that plan's own fixed run over the best fixed one (the same
decision judged without auto's run: on 2 cores one plan's medians differ by more than 10% from run
to run), and the model's predicted time per algorithm beside the measured. --report re-prints the
sections of a run saved with --save. --tune R first runs deepcomm-tune (R rounds, the same sizes and
iterations, the fixed algorithms) on each layout's cluster and gives every DeepComm run the file
with its rules, so auto takes the plan measured fastest there (judged in the rounds that follow,
not in the tuning's own).

    /usr/bin/python3 bench/cluster/plan_choice.py --build build-bench --layouts 4,4 2,2,2,2 \
        --rate 1gbit --pairs 5 -b 8 -e 64M -f 8 --save /tmp/plan_choice.json
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (its imports below)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compare"))
from cluster import Cluster  # noqa: E402
from run_comparison import rows_of, run  # noqa: E402

OMPI = ["--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--layouts", nargs="+", default=["4,4", "2,2,2,2"], help="ranks per host, e.g. 4,4")
    p.add_argument("--rate", default="1gbit", help="each host's link (tc syntax)")
    p.add_argument("--shaper", default=None, help="the links' qdisc, tbf or htb (default dc-cluster's tbf)")
    p.add_argument("--burst", default=None, help="the links' burst (tc syntax; default dc-cluster's: 512kb with "
                   "tbf, 16k with htb)")
    p.add_argument("--algos", default="auto,ring,hierarchical,dbtree,tree",
                   help="DEEPCOMM_ALGO values, auto = unset (the planner's own choice)")
    p.add_argument("--no-ompi", action="store_true")
    p.add_argument("--topo-file", default=None, help="topology file for DeepComm's ranks (default: made "
                   "from the link rate measured before the first round, latency --latency-us)")
    p.add_argument("--latency-us", type=float, default=60.0, help="network tier latency of the made file")
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("-b", default="8")
    p.add_argument("-e", default="64M")
    p.add_argument("-f", default="8")
    p.add_argument("-n", default="5")
    p.add_argument("-w", default="2")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--tune", type=int, default=0, help="rounds of deepcomm-tune before the measured rounds "
                   "(0: none; the planner's cost model alone decides)")
    p.add_argument("--save", default=None, help="raw results as JSON")
    p.add_argument("--report", default=None, help="print the sections of a run saved with --save (its "
                   "options replace these), measuring nothing")
    return p.parse_args()


def topology_file(path, rate_gbps, latency_us, hosts, tuning=None):
    # Every namespace host runs on this machine's cores: each gets its share (at least one), so the
    # model prices the CPU time of messages on oversubscribed hosts (docs/topology.md).
    cores = max(1, len(os.sched_getaffinity(0)) // hosts)
    made = {"version": 1, "tiers": [{"name": "veth", "bandwidth_gbps": rate_gbps, "latency_us": latency_us}],
            "hosts": [{"name": "*", "cores": cores}]}
    if tuning:
        made["tuning"] = tuning
    with open(path, "w") as f:
        json.dump(made, f)


def tune(a, topo, placement, work):
    """deepcomm-tune's rules for this cluster (written into a copy of topo), and that copy's path."""
    tool = os.path.join(HERE, "..", "..", "tools", "tune", "deepcomm-tune")
    launcher = os.path.join(a.build, "tools", "launcher", "deepcomm-run")
    tuned = os.path.join(work, "tuned.json")
    fixed = [x for x in a.algos.split(",") if x != "auto"]
    argv = [tool, "--bench", os.path.join(a.build, "bench"), "--topo-file", topo, "-o", tuned, "--algos",
            ",".join(fixed), "-b", a.b, "-e", a.e, "-f", a.f, "-n", a.n, "-w", a.w, "--rounds", str(a.tune),
            "--"] + [launcher] + placement
    rc, out = run(argv, {}, a.timeout * a.tune * len(fixed))
    if rc != 0:
        raise RuntimeError(f"deepcomm-tune failed (exit {rc}):\n{out[-2000:]}")
    print(out, file=sys.stderr)
    with open(tuned) as f:
        return json.load(f)["tuning"], tuned


def measure_layout(a, per_host, work):
    hosts = len(per_host)
    n = sum(per_host)
    bench = os.path.join(a.build, "bench")
    launcher = os.path.join(a.build, "tools", "launcher", "deepcomm-run")
    sizes = ["-b", a.b, "-e", a.e, "-f", a.f, "-n", a.n, "-w", a.w, "-c", "1"]
    algos = a.algos.split(",")
    result = {"layout": per_host, "rates": [], "runs": {x: [] for x in algos + ([] if a.no_ompi else ["ompi"])},
              "failures": []}
    with Cluster(hosts, a.rate, a.burst, a.shaper) as c:
        topo = a.topo_file
        if not topo:
            topo = os.path.join(work, "topology.json")
            first = c.link_rate_gbps()
            topology_file(topo, first, a.latency_us, hosts)
            result["topology_file"] = {"bandwidth_gbps": first, "latency_us": a.latency_us}
        placement = ["--netns", c.netns, "--ranks-per-host", ",".join(map(str, per_host))]
        if a.tune:
            result["tuning"], topo = tune(a, topo, placement, work)
        contenders = list(result["runs"])
        for rnd in range(a.pairs):
            result["rates"].append(c.link_rate_gbps())
            shift = rnd % len(contenders)
            for algo in contenders[shift:] + contenders[:shift]:
                path = os.path.join(work, f"{algo}.json")
                if os.path.exists(path):
                    os.remove(path)
                if algo == "ompi":
                    argv = [os.path.join(HERE, "..", "..", "tools", "cluster", "dc-mpirun"), "--prefix", c.prefix,
                            "--ranks-per-host", ",".join(map(str, per_host))] + OMPI + \
                        [os.path.join(bench, "ompi_collectives_perf"), "-C", "all_reduce"] + sizes + ["-J", path]
                    env = {}
                else:
                    argv = [launcher] + placement + [os.path.join(bench, "all_reduce_perf")] + sizes + ["-J", path]
                    env = {"DEEPCOMM_TOPO_FILE": topo}
                    if algo != "auto":
                        env["DEEPCOMM_ALGO"] = algo
                rc, out = run(argv, env, a.timeout)
                label = f"{per_host} {algo} round {rnd + 1}"
                if rc != 0 or not os.path.exists(path):
                    result["failures"].append(f"{label}: exit {rc}: {out.strip().splitlines()[-1:]}")
                    print(f"FAILED {label}\n{out[-1500:]}", file=sys.stderr)
                    continue
                rows = rows_of(path)
                wrong = sum(r["wrong"] for r in rows.values() if r["wrong"] > 0)
                if wrong:
                    result["failures"].append(f"{label}: {wrong} wrong values")
                result["runs"][algo].append({str(s): r["time_us"] for s, r in rows.items()})
                print(f"done {label}", file=sys.stderr, flush=True)
    return result


def predictions(a, result, topo_rate_gbps):
    """{algo: {size: predicted us}} from deepcomm-sim, plus {"*": {size: the selector's choice}};
    {} where it is not built."""
    sim = os.path.join(a.build, "tools", "sim", "deepcomm-sim")
    if not os.path.exists(sim):
        return {}
    work = tempfile.mkdtemp(prefix="dc_pred_")
    try:
        topo = os.path.join(work, "t.json")
        if a.topo_file:
            with open(a.topo_file) as f:
                given = json.load(f)
            if result.get("tuning"):
                given["tuning"] = result["tuning"]
            with open(topo, "w") as f:
                json.dump(given, f)
        else:
            topology_file(topo, topo_rate_gbps, a.latency_us, len(result["layout"]), result.get("tuning"))
        layout = result["layout"]
        if len(set(layout)) != 1:
            return {}  # deepcomm-sim lays out the same number of ranks on every host
        argv = [sim, "--topo-file", topo, "--hosts", str(len(layout)), "--ranks-per-host", str(layout[0]),
                "-b", a.b, "-e", a.e, "-f", a.f, "--json"]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"deepcomm-sim failed: {p.stderr.strip()}", file=sys.stderr)
            return {}
        out = {}
        for row in json.loads(p.stdout)["rows"]:
            if row["collective"] == "AllReduce":
                out.setdefault(row["algorithm"], {})[str(row["bytes"])] = row["predicted_seconds"] * 1e6
                if row["chosen"]:
                    out.setdefault("*", {})[str(row["bytes"])] = row["algorithm"]
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def human(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def section(a, result):
    per_host = result["layout"]
    h = len(per_host)
    rate = statistics.median(result["rates"]) if result["rates"] else float("nan")
    runs = {k: v for k, v in result["runs"].items() if v}
    med = {k: {s: statistics.median(r[s] for r in v if s in r) for s in v[0]} for k, v in runs.items()}
    fixed = [k for k in med if k not in ("auto", "ompi")]
    pred = predictions(a, result, result.get("topology_file", {}).get("bandwidth_gbps", rate))
    lines = [f"### all_reduce, {h} hosts, ranks per host {','.join(map(str, per_host))} "
             f"(medians of {len(result['rates'])} interleaved rounds; link {rate:.3f} Gbit/s median, "
             f"{getattr(a, 'shaper', None) or 'tbf'})", ""]
    if result.get("tuning"):
        mine = [r for r in result["tuning"] if r["collective"] == "allreduce"]
        rules = ", ".join(f"{r['algorithm']} from {human(r['min_bytes'])}" for r in mine)
        rules += f" (up to {human(mine[-1]['max_bytes'])})" if mine else "none"
        lines += [f"DeepComm's runs loaded the rules deepcomm-tune wrote on this cluster ({getattr(a, 'tune', 0)} "
                  f"rounds before the measured ones): {rules}.", ""]
    takes = pred.get("*", {})
    head = ["size", "bound (ms)"] + [f"{k} (ms)" for k in med] + ["auto × bound", "best fixed", "auto / best fixed"]
    if takes:
        head += ["auto takes", "its fixed run / best fixed"]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for s in sorted(med.get("auto", next(iter(med.values()))), key=int):
        size = int(s)
        bound_ms = 2 * (h - 1) / h * size * 8 / (rate * 1e9) * 1e3
        cells = [human(size), f"{bound_ms:.3g}"] + [f"{med[k][s] / 1e3:.3g}" for k in med]
        best = min(fixed, key=lambda k: med[k][s]) if fixed else None
        auto = med.get("auto", {}).get(s)
        cells += [f"{auto / 1e3 / bound_ms:.2f}" if auto else "", best or "",
                  f"{auto / med[best][s]:.2f}" if auto and best else ""]
        if takes:
            taken = takes.get(s, "")
            cells += [taken, f"{med[taken][s] / med[best][s]:.2f}" if taken in med and best else ""]
        lines.append("| " + " | ".join(cells) + " |")
    if pred:
        lines += ["", "Model against measurement (predicted by deepcomm-sim with the run's topology file; "
                  "error = predicted / measured − 1):", ""]
        algos = [k for k in fixed if k in pred and k != "*"]
        head = ["size"] + [f"{k}: predicted / measured (ms), error" for k in algos]
        lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        for s in sorted(med[algos[0]], key=int) if algos else []:
            cells = [human(int(s))]
            for k in algos:
                p = pred[k].get(s)
                m = med[k][s]
                cells.append(f"{p / 1e3:.3g} / {m / 1e3:.3g}, {100 * (p / m - 1):+.0f}%" if p else "")
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Failures: " + ("; ".join(result["failures"]) if result["failures"] else
                                  "none (every run exited 0 with 0 wrong values)."), ""]
    return "\n".join(lines)


def main():
    a = parse_args()
    if a.report:
        with open(a.report) as f:
            saved = json.load(f)
        a = argparse.Namespace(**{**saved["args"], "build": a.build})
        for r in saved["results"]:
            print(section(a, r))
        return
    work = tempfile.mkdtemp(prefix="dc_plan_choice_")
    try:
        results = [measure_layout(a, [int(x) for x in layout.split(",")], work) for layout in a.layouts]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.save:
        with open(a.save, "w") as f:
            json.dump({"args": vars(a), "results": results}, f)
    for r in results:
        print(section(a, r))


if __name__ == "__main__":
    main()
