#!/usr/bin/python3
"""Point to point over UCX: DeepComm's sendrecv_perf (2 ranks, DEEPCOMM_TRANSPORT=ucx-all) against
ucx_perftest in its blocking mode (-E sleep), on the same UCX transports (UCX_TLS), interleaved
(A B A B ...), medians and medians of pairwise ratios (BENCHMARKING.md).

Messages in flight are alike: sendrecv on 2 ranks keeps one message in flight in each direction
(each rank sends one and receives one per call), so the bandwidth peer is two ucx_perftest pairs
at once, one per direction, each with one outstanding send (ucp_am_bw -O 1): two flows of one
message each (--flow-iters messages per flow, so that the two, started as separate processes,
overlap for nearly all of their run).

Placement decides the peer's speed on a small machine: a flow whose two processes share a core
wakes its partner without an inter-processor wake-up and hands it data still in that core's
cache, 2-3x faster than a flow across two cores; unpinned, the scheduler picks either, run by run.
DeepComm's two ranks are two busy processes on two cores, each the sender of one direction and the
receiver of the other. So the two flows run in three placements: "alike" (pinned as DeepComm's
ranks: each of two cores runs one flow's sender and the other flow's receiver), "unpinned", and
"flow per core" (each flow's two processes on one core: the peer's best, which a 2-rank
sendrecv cannot take); and one flow alone, unpinned. Latency: the time of an 8 B sendrecv call
against ucx_perftest's one-way latency (ucp_am_lat, half a round trip).

Memory alike: ucx_perftest allocates its buffers with ucp_mem_map (UCP_MEM_MAP_ALLOCATE), memory
registered with UCX that it reads and writes in place; so the DeepComm run compared with it uses
registered buffers too (sendrecv_perf -R 1: dcCommRegister, UCX's zero-copy path). DeepComm over
UCX in ordinary memory runs in each round beside it: moved in place through DeepComm's registration
cache over sm, staged over tcp, where an operation that fails must get its buffers back while UCX
may still move bytes (DEEPCOMM_UCX_IN_PLACE, docs/architecture.md); and so does DeepComm's own TCP
transport: what a DeepComm call costs apart from UCX.

  /usr/bin/python3 bench/compare/ucx_p2p.py --build build-bench --tls tcp,sm --pairs 7
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
BW_BYTES = 1 << 20
LAT_BYTES = 8
MIB_PER_S = float(1 << 20) / 1e9  # ucx_perftest's MB/s are MiB/s; GB/s here are 10^9 B/s

# The peer's bandwidth configurations, in the order of the table: (key, description, flows, port
# offset in a round, placement). A placement gives each flow's (server core, client core) as
# indices into the two cores used; None: unpinned.
PEER_RUNS = (
    ("alike", "2 flows, placed as DeepComm's ranks", 2, 2, ((1, 0), (0, 1))),
    ("unpinned", "2 flows, unpinned", 2, 0, None),
    ("flow_per_core", "2 flows, each on one core (the peer's best)", 2, 4, ((0, 0), (1, 1))),
    ("one_flow", "1 flow, unpinned", 1, 6, None),
)
LAT_PORT_OFFSET = 8
ROUND_PORTS = 10


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-bench")
    p.add_argument("--tls", default="tcp,sm", help="comma list of UCX_TLS values")
    p.add_argument("--pairs", type=int, default=7)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--flow-iters", type=int, default=5000,
                   help="messages per ucx_perftest bandwidth flow: two flows start apart (two processes "
                        "each), and a short flow runs partly alone, inflating its bandwidth")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--port", type=int, default=13400, help="first TCP port of ucx_perftest's exchange")
    p.add_argument("--save", default=None, help="write the raw results (JSON) here")
    return p.parse_args()


def env_with(**extra):
    env = dict(os.environ)
    env.pop("DEEPCOMM_TRANSPORT", None)
    env.update(extra)
    return env


def deepcomm(a, transport, tls, register=False):
    """{'bw_gbs': busbw at 1 MiB, 'lat_us': time of an 8 B call} from one sendrecv_perf run; register:
    its buffers registered (-R 1), UCX's zero-copy path instead of the staging copies."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        argv = [os.path.join(a.build, "tools", "launcher", "deepcomm-run"), "-n", "2",
                os.path.join(a.build, "bench", "sendrecv_perf"), "-b", str(LAT_BYTES), "-e", str(BW_BYTES),
                "-f", str(BW_BYTES // LAT_BYTES), "-n", str(a.iters), "-w", str(a.warmup), "-c", "1", "-R", "1" if register else "0", "-J", out.name]
        subprocess.run(argv, env=env_with(DEEPCOMM_TRANSPORT=transport, UCX_TLS=tls), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        rows = {r["size"]: r["out_of_place"] for r in json.load(open(out.name))["results"]}
    if rows[BW_BYTES]["wrong"] or rows[LAT_BYTES]["wrong"]:
        raise RuntimeError("sendrecv_perf: wrong values")
    return {"bw_gbs": rows[BW_BYTES]["busbw_gbs"], "lat_us": rows[LAT_BYTES]["time_us"]}


def final_line(out):
    for line in out.splitlines():
        if line.startswith("Final:"):
            return [float(x) for x in line.split()[1:]]
    raise RuntimeError("ucx_perftest printed no result:\n" + out)


def wait_listening(ports, servers, timeout_s=30):
    """Returns once a TCP socket listens on each port (from /proc/net/tcp, tcp6); raises when a
    server exited first."""
    deadline = time.monotonic() + timeout_s
    while True:
        for port, server in zip(ports, servers):
            if server.poll() is not None:
                raise RuntimeError(f"ucx_perftest server on port {port} exited with status {server.returncode}")
        listening = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            try:
                with open(table) as f:
                    for line in f.readlines()[1:]:
                        fields = line.split()
                        if fields[3] == "0A":  # LISTEN
                            listening.add(int(fields[1].rsplit(":", 1)[1], 16))
            except FileNotFoundError:
                continue
        if all(p in listening for p in ports):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"ucx_perftest servers did not listen on ports {ports} within {timeout_s} s")
        time.sleep(0.01)


def pinned_to(cpu):
    """A preexec_fn that runs the child on one core only (None: no pinning)."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def perftest(a, tls, test, size, flows, port, iters, cores=None):
    """ucx_perftest -E sleep: per flow, [avg latency us, overall bandwidth GB/s] of `flows` pairs at once.
    cores: per flow, the (server, client) core it is pinned to; None: unpinned."""
    env = env_with(UCX_TLS=tls, UCX_NET_DEVICES=net_device())
    server_core, client_core = zip(*(cores or [(None, None)] * flows))
    servers = [subprocess.Popen(["ucx_perftest", "-p", str(port + i)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=pinned_to(server_core[i])) for i in range(flows)]
    # Clients start only once every server listens: a client refused by a server still starting
    # retries a second later, and its flow then runs partly alone.
    wait_listening([port + i for i in range(flows)], servers)
    clients = [subprocess.Popen(["ucx_perftest", "127.0.0.1", "-p", str(port + i), "-t", test, "-s", str(size),
                                 "-n", str(iters), "-w", str(a.warmup), "-O", "1", "-E", "sleep"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                preexec_fn=pinned_to(client_core[i]))
               for i in range(flows)]
    results = []
    for c in clients:
        out, _ = c.communicate(timeout=300)
        f = final_line(out)  # iterations, lat 50%, lat avg, lat overall, bw avg, bw overall, ...
        results.append((f[2], f[5] * MIB_PER_S))
    for i, s in enumerate(servers):
        if s.wait(timeout=60) != 0:
            raise RuntimeError(f"ucx_perftest server on port {port + i} exited with status {s.returncode}")
    return [statistics.mean(x) for x in zip(*results)]


def net_device():
    """The interface DeepComm's UCX transport is restricted to: the first non-loopback one that is up."""
    for name in sorted(os.listdir("/sys/class/net")):
        if name == "lo" or name.startswith("docker"):
            continue
        with open(f"/sys/class/net/{name}/operstate") as f:
            if f.read().strip() == "up":
                return name
    return "lo"


def peer_runs(two_cores):
    """The configurations this machine can run: pinned ones need two cores."""
    return [r for r in PEER_RUNS if r[4] is None or two_cores]


def measure_round(a, tls, port, two_cores):
    dc = deepcomm(a, "ucx-all", tls)
    dc_reg = deepcomm(a, "ucx-all", tls, register=True)
    dc_tcp = deepcomm(a, "tcp", tls)
    result = {"dc_bw": dc["bw_gbs"], "dc_reg_bw": dc_reg["bw_gbs"], "dc_reg_lat": dc_reg["lat_us"],
              "tcp_bw": dc_tcp["bw_gbs"], "tcp_lat": dc_tcp["lat_us"]}
    for key, _, flows, offset, placement in peer_runs(two_cores):
        cores = [(two_cores[s], two_cores[c]) for s, c in placement] if placement else None
        result["pt_bw_" + key] = perftest(a, tls, "ucp_am_bw", BW_BYTES, flows, port + offset, a.flow_iters, cores)[1]
    result["pt_lat"] = perftest(a, tls, "ucp_am_lat", LAT_BYTES, 1, port + LAT_PORT_OFFSET, a.iters)[0]
    return result


def median_of(rounds, key):
    return statistics.median(r[key] for r in rounds)


def ratio_of(rounds, x, y):
    """The median of the rounds' pairwise ratios x / y."""
    return statistics.median(r[x] / r[y] for r in rounds)


def print_tables(runs, two_cores):
    print("| UCX_TLS | ucx_perftest | ucx_perftest 1 MiB (GB/s per flow) | DeepComm 1 MiB, registered (GB/s) | ratio | "
          "DeepComm 1 MiB, ordinary memory (GB/s) | its ratio |")
    print("|" + " --- |" * 7)
    for tls, rounds in runs.items():
        for key, description, *_ in peer_runs(two_cores):
            peer = "pt_bw_" + key
            print(f"| {tls} | {description} | {median_of(rounds, peer):.3g} | {median_of(rounds, 'dc_reg_bw'):.3g} | "
                  f"{ratio_of(rounds, 'dc_reg_bw', peer):.2f} | {median_of(rounds, 'dc_bw'):.3g} | "
                  f"{ratio_of(rounds, 'dc_bw', peer):.2f} |")
    print()
    print("| UCX_TLS | DeepComm 8 B, registered (us) | ucx_perftest 8 B one-way (us) | latency ratio | "
          "DeepComm TCP transport 1 MiB (GB/s) | DeepComm TCP transport 8 B (us) |")
    print("|" + " --- |" * 6)
    for tls, rounds in runs.items():
        print(f"| {tls} | {median_of(rounds, 'dc_reg_lat'):.3g} | {median_of(rounds, 'pt_lat'):.3g} | "
              f"{ratio_of(rounds, 'dc_reg_lat', 'pt_lat'):.2f} | {median_of(rounds, 'tcp_bw'):.3g} | "
              f"{median_of(rounds, 'tcp_lat'):.3g} |")


def main():
    a = parse_args()
    cores = sorted(os.sched_getaffinity(0))
    two_cores = cores[:2] if len(cores) >= 2 else None
    if not two_cores:
        print("one core only: the pinned ucx_perftest placements are left out", file=sys.stderr)
    runs = {}
    for tls in a.tls.split(","):
        rounds = []
        for rnd in range(a.pairs):
            rounds.append(measure_round(a, tls, a.port + ROUND_PORTS * (rnd % 5), two_cores))
            print(f"UCX_TLS={tls} round {rnd + 1}: {rounds[-1]}", file=sys.stderr, flush=True)
        runs[tls] = rounds
    if a.save:
        with open(a.save, "w") as f:
            json.dump(runs, f)
    print_tables(runs, two_cores)


if __name__ == "__main__":
    main()
