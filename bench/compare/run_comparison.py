#!/usr/bin/python3
"""Side-by-side comparison of DeepComm with Open MPI and Gloo (BENCHMARKING.md's protocol).

Runs every configuration of a group once per round, round after round (A B C A B C ...), for each
collective and rank count; prints per size the median busbw of each and the median of the pairwise
ratios; writes busbw-vs-size PNGs and the tables into a Markdown file (docs/performance.md).
Also measures single-thread memory bandwidth (each round) and the CPU use of ranks blocked in a
collective (8 ranks, DeepComm and Open MPI).

  /usr/bin/python3 bench/compare/run_comparison.py --build build-bench            # full run
  /usr/bin/python3 bench/compare/run_comparison.py --build build-bench --quick    # CI smoke

The "cluster" group runs DeepComm and Open MPI on --cluster-hosts network-namespace hosts joined by
links of --cluster-rate (made with tools/cluster/dc-cluster for the run, as root), ranks split evenly
by blocks, and writes its own section of the Markdown file (the rest of the file is kept):

  /usr/bin/python3 bench/compare/run_comparison.py --build build-bench --groups cluster \
      --collectives all_reduce --ranks 8 --cluster-hosts 2 --cluster-rate 1gbit \
      --deepcomm-env DEEPCOMM_ALGO=ring --pairs 7 -b 16 -e 64M -f 4 -n 5 -w 2 --no-membw --no-wait-cpu \
      --markdown docs/performance.md
"""

import argparse
import contextlib
import datetime
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402
from cluster import Cluster  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build", help="CMake build directory (holds bench/ and tools/launcher/)")
    p.add_argument("--collectives", default="all_reduce", help="comma list of " + ",".join(configs.COLLECTIVES))
    p.add_argument("--ranks", default="4", help="comma list of rank counts, e.g. 2,4,8")
    p.add_argument("--groups", default="shm,tcp", help="comma list of: shm, tcp, ucx, ucx-sm, cluster")
    p.add_argument("--cluster-hosts", type=int, default=2, help="hosts (network namespaces) of the cluster group")
    p.add_argument("--cluster-rate", default="1gbit", help="each host's link in the cluster group (tc syntax; none)")
    p.add_argument("--deepcomm-env", action="append", default=[], metavar="NAME=VALUE",
                   help="environment of DeepComm's runs, e.g. DEEPCOMM_ALGO=ring (repeatable)")
    p.add_argument("--pairs", type=int, default=5, help="rounds of every configuration (>= 5 for claims)")
    p.add_argument("-b", "--min-bytes", default="8")
    p.add_argument("-e", "--max-bytes", default="64M")
    p.add_argument("-f", "--factor", default="2")
    p.add_argument("-n", "--iters", default="20")
    p.add_argument("-w", "--warmup", default="5")
    p.add_argument("--timeout", type=int, default=300, help="seconds allowed to one run")
    p.add_argument("--no-membw", action="store_true")
    p.add_argument("--no-socket-bw", action="store_true")
    p.add_argument("--no-wait-cpu", action="store_true")
    p.add_argument("--markdown", default=None, help="write the tables here (e.g. docs/performance.md)")
    p.add_argument("--png-dir", default=None, help="write busbw-vs-size PNGs here")
    p.add_argument("--save", default=None, help="write the raw results (JSON) here")
    p.add_argument("--load", default=None, help="render saved runs (comma list) instead of measuring")
    p.add_argument("--quick", action="store_true",
                   help="CI smoke: 2 ranks, all-reduce, 1 round, tiny sizes, no PNG unless asked")
    a = p.parse_args()
    for item in a.deepcomm_env:
        if "=" not in item:
            p.error(f"--deepcomm-env {item}: expected NAME=VALUE")
    if a.quick:
        a.ranks, a.pairs, a.min_bytes, a.max_bytes, a.factor = "2", 1, "8", "64K", "32"
        a.iters, a.warmup, a.no_membw, a.no_socket_bw, a.no_wait_cpu = "2", "1", True, True, True
    return a


def run(argv, env_extra, timeout):
    env = dict(os.environ)
    env.pop("DEEPCOMM_TRANSPORT", None)
    env.update(env_extra)
    # A session of its own, so that a run past its time is ended with every rank it started.
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return 124, out + "\n(timed out)"


def rows_of(json_path):
    """{size: out-of-place row} from a -J file (DeepComm's and the peers' share the shape)."""
    with open(json_path) as f:
        data = json.load(f)
    return {r["size"]: r["out_of_place"] for r in data["results"] if r.get("count", 0) > 0 and "out_of_place" in r}


def tool_versions():
    def first_line(argv):
        try:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "not found"
    gloo = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libgloo-dev"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout or "not found"
    ucx = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libucx0"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout or "not found"
    return {"Open MPI": first_line(["mpirun", "--version"]), "Gloo (libgloo-dev)": gloo, "UCX (libucx0)": ucx}


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu": model, "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}


def main():
    a = parse_args()
    if a.load:
        runs = []
        for path in a.load.split(","):
            with open(path) as f:
                runs.append(json.load(f))
        return render(a, runs)
    work = tempfile.mkdtemp(prefix="dc_compare_")
    m = Measurements(a, work)
    try:
        with contextlib.ExitStack() as stack:
            if "cluster" in a.groups.split(","):
                rate = None if a.cluster_rate == "none" else a.cluster_rate
                m.cluster = stack.enter_context(Cluster(a.cluster_hosts, rate))
            for collective in a.collectives.split(","):
                for nranks in [int(n) for n in a.ranks.split(",")]:
                    m.measure(collective, nranks)
        wait_cpu = [] if a.no_wait_cpu else measure_wait_cpu(m.bench, m.launcher, work, a.timeout, rounds=3)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    raw = {"results": [[k[0], k[1], k[2], v] for k, v in m.results.items()], "membw": m.membw,
           "socket_bw": m.socket_bw, "wait_cpu": wait_cpu, "failures": m.failures, "machine": machine(), "versions": tool_versions(),
           "command": "/usr/bin/python3 " + " ".join(shlex.quote(x) for x in sys.argv)}
    if m.cluster:
        raw["cluster"] = dict(m.cluster.describe(), deepcomm_env=" ".join(a.deepcomm_env))
        raw["link_rate"] = m.link_rates
        raw["cluster_failures"] = m.cluster_failures
    if a.save:
        with open(a.save, "w") as f:
            json.dump(raw, f)
    return render(a, [raw])


class Measurements:
    """Every configuration of the chosen groups, round after round, with each round's bounds."""

    def __init__(self, a, work):
        self.a, self.work = a, work
        self.bench = os.path.join(a.build, "bench")
        self.launcher = os.path.join(a.build, "tools", "launcher", "deepcomm-run")
        self.size_args = ["-b", a.min_bytes, "-e", a.max_bytes, "-f", a.factor, "-n", a.iters, "-w", a.warmup]
        self.deepcomm_env = dict(item.split("=", 1) for item in a.deepcomm_env)
        self.cluster = None
        self.failures, self.cluster_failures = [], []
        self.membw = []
        self.socket_bw = []  # per round and rank count of a TCP group: the loopback ring's per-rank rate
        self.link_rates = []  # per round of the cluster group: iperf3 between two hosts, Gbit/s
        self.results = {}  # (collective, nranks, group) -> {config: [rounds of {size: row}]}

    def measure(self, collective, nranks):
        a = self.a
        groups = {g: configs.GROUPS[g] for g in a.groups.split(",")}
        for g in groups:
            self.results[(collective, nranks, g)] = {c: [] for c in groups[g]}
        for rnd in range(a.pairs):
            if not a.no_membw:
                self.membw += self.probe("membw", [os.path.join(self.bench, "membw"), "-r", "3"])
            if "tcp" in groups and not a.no_socket_bw:
                self.socket_bw += self.probe("socket_bw", [os.path.join(self.bench, "socket_ring_bw"), "-n",
                                                           str(nranks), "-r", "3"])
            if "cluster" in groups:
                try:
                    self.link_rates.append(self.cluster.link_rate_gbps())
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    self.cluster_failures.append(f"link rate, round {rnd + 1}: {e}")
            for g, names in groups.items():
                for config in names:
                    self.run_config(g, config, collective, nranks, rnd)

    def probe(self, name, argv):
        """A bound's measurement: [its JSON object], or [] when it failed."""
        path = os.path.join(self.work, name + ".json")
        rc, _ = run(argv + ["-J", path], {}, self.a.timeout)
        if rc != 0:
            return []
        with open(path) as f:
            return [json.load(f)]

    def run_config(self, group, config, collective, nranks, rnd):
        path = os.path.join(self.work, f"{config}.json")
        cmd = configs.command(config, collective, nranks, self.bench, self.launcher, self.size_args, path,
                              self.cluster, self.deepcomm_env)
        if cmd is None:
            return
        if os.path.exists(path):
            os.remove(path)
        rc, out = run(cmd[0], cmd[1], self.a.timeout)
        label = f"{collective} n={nranks} {config} round {rnd + 1}"
        failures = self.cluster_failures if group == "cluster" else self.failures
        if rc != 0 or not os.path.exists(path):
            failures.append(f"{label}: exit {rc}: {out.strip().splitlines()[-1:] }")
            print(f"FAILED {label} (exit {rc})\n{out[-2000:]}", file=sys.stderr)
            return
        rows = rows_of(path)
        wrong = sum(r["wrong"] for r in rows.values() if r["wrong"] > 0)
        if wrong:
            failures.append(f"{label}: {wrong} wrong values")
        self.results[(collective, nranks, group)][config].append(rows)
        print(f"done {label}", file=sys.stderr, flush=True)


def render(a, runs):
    import cluster_report
    import document  # matplotlib and the report modules are needed only here
    import report
    results, membw, failures, _, _, _ = document.merged(runs)
    print(report.tables(results, report.membw_medians(membw)))
    local = document.without_cluster(results)
    pngs = report.plots(local, a.png_dir) if a.png_dir else []
    cluster_text = cluster_report.section(*document.merged_cluster(runs))
    if cluster_text:
        print(cluster_text)
    if a.markdown:
        main_text = None
        if report.blocks_of(local):
            main_text = document.markdown(runs, pngs, os.path.dirname(os.path.abspath(a.markdown)))
        document.write(a.markdown, main_text, cluster_text)
    failures += [f for raw in runs for f in raw.get("cluster_failures", [])]
    for f in failures:
        print("FAILURE: " + f, file=sys.stderr)
    return 1 if failures else 0


def measure_wait_cpu(bench, launcher, work, timeout, rounds):
    """8 ranks, rank 0 late by 2 s: median % of a core used by the waiting ranks, per library."""
    out = {"deepcomm": [], "ompi": []}
    for _ in range(rounds):
        for lib in out:
            path = os.path.join(work, f"wait_{lib}.json")
            if lib == "deepcomm":
                argv = [launcher, "-n", "8", os.path.join(bench, "wait_cpu_deepcomm"), path]
            else:
                argv = configs.MPIRUN + ["-np", "8", os.path.join(bench, "wait_cpu_ompi"), path]
            if os.path.exists(path):
                os.remove(path)
            rc, _ = run(argv, {}, timeout)
            if rc == 0 and os.path.exists(path):
                with open(path) as f:
                    out[lib].append(json.load(f))
    return out


if __name__ == "__main__":
    sys.exit(main())
