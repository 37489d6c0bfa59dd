#!/usr/bin/python3
"""Point to point over UCX: DeepComm's sendrecv_perf (2 ranks, DEEPCOMM_TRANSPORT=ucx-all) against
ucx_perftest in its blocking mode (-E sleep), on the same UCX transports (UCX_TLS), interleaved
(A B A B ...), medians and medians of pairwise ratios (BENCHMARKING.md).

Messages in flight are alike: sendrecv on 2 ranks keeps one message in flight in each direction
(each rank sends one and receives one per call), so the bandwidth peer is two ucx_perftest pairs
at once, one per direction, each with one outstanding send (ucp_am_bw -O 1): two flows of one
message each (--flow-iters messages per flow, so that the two, started as separate processes,
overlap for nearly all of their run). One pair alone (one flow) is measured too, for reference.
Latency: the time of an 8 B sendrecv call against ucx_perftest's one-way latency (ucp_am_lat, half
a round trip).

Memory alike: ucx_perftest allocates its buffers with ucp_mem_map (UCP_MEM_MAP_ALLOCATE), memory
registered with UCX that it reads and writes in place; so the DeepComm run compared with it uses
registered buffers too (sendrecv_perf -R 1: dcCommRegister, UCX's zero-copy path). DeepComm over
UCX in ordinary memory, which UCX sends from and receives into staging copies (an operation that
fails must get its buffers back while UCX may still move bytes: docs/architecture.md), runs in each
round beside it, and so does DeepComm's own TCP transport: what a DeepComm call costs apart from UCX.

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


def wait_listening(ports, timeout_s=30):
    """Returns once a TCP socket listens on each port (from /proc/net/tcp, tcp6)."""
    deadline = time.monotonic() + timeout_s
    while True:
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


def perftest(a, tls, test, size, flows, port, iters):
    """ucx_perftest -E sleep: per flow, [avg latency us, overall bandwidth GB/s] of `flows` pairs at once."""
    env = env_with(UCX_TLS=tls, UCX_NET_DEVICES=net_device())
    servers = [subprocess.Popen(["ucx_perftest", "-p", str(port + i)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for i in range(flows)]
    # Clients start only once every server listens: a client refused by a server still starting
    # retries a second later, and its flow then runs partly alone.
    wait_listening([port + i for i in range(flows)])
    clients = [subprocess.Popen(["ucx_perftest", "127.0.0.1", "-p", str(port + i), "-t", test, "-s", str(size),
                                 "-n", str(iters), "-w", str(a.warmup), "-O", "1", "-E", "sleep"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for i in range(flows)]
    results = []
    for c in clients:
        out, _ = c.communicate(timeout=300)
        f = final_line(out)  # iterations, lat 50%, lat avg, lat overall, bw avg, bw overall, ...
        results.append((f[2], f[5] * MIB_PER_S))
    for s in servers:
        s.wait(timeout=60)
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


def main():
    a = parse_args()
    runs = {}
    for tls in a.tls.split(","):
        rounds = []
        for rnd in range(a.pairs):
            port = a.port + 10 * (rnd % 5)
            dc = deepcomm(a, "ucx-all", tls)
            dc_reg = deepcomm(a, "ucx-all", tls, register=True)
            dc_tcp = deepcomm(a, "tcp", tls)
            two = perftest(a, tls, "ucp_am_bw", BW_BYTES, 2, port, a.flow_iters)[1]
            one = perftest(a, tls, "ucp_am_bw", BW_BYTES, 1, port + 5, a.flow_iters)[1]
            lat = perftest(a, tls, "ucp_am_lat", LAT_BYTES, 1, port + 7, a.iters)[0]
            rounds.append({"dc_bw": dc["bw_gbs"], "dc_reg_bw": dc_reg["bw_gbs"], "dc_reg_lat": dc_reg["lat_us"],
                           "pt_bw_two": two, "pt_bw_one": one,
                           "pt_lat": lat, "tcp_bw": dc_tcp["bw_gbs"], "tcp_lat": dc_tcp["lat_us"]})
            print(f"UCX_TLS={tls} round {rnd + 1}: {rounds[-1]}", file=sys.stderr, flush=True)
        runs[tls] = rounds
    if a.save:
        with open(a.save, "w") as f:
            json.dump(runs, f)
    print("| UCX_TLS | DeepComm 1 MiB, registered (GB/s) | ucx_perftest, 2 flows (GB/s per flow) | ratio (2 flows) | "
          "ucx_perftest, 1 flow (GB/s) | ratio (1 flow) | DeepComm 8 B (us) | ucx_perftest 8 B one-way (us) | "
          "latency ratio | DeepComm 1 MiB, ordinary memory (GB/s) | its ratio (2 flows) | "
          "DeepComm TCP transport 1 MiB (GB/s) | 8 B (us) |")
    print("|" + " --- |" * 13)
    for tls, rounds in runs.items():
        med = lambda k: statistics.median(r[k] for r in rounds)  # noqa: E731
        ratio = lambda x, y: statistics.median(r[x] / r[y] for r in rounds)  # noqa: E731
        print(f"| {tls} | {med('dc_reg_bw'):.3g} | {med('pt_bw_two'):.3g} | {ratio('dc_reg_bw', 'pt_bw_two'):.2f} | "
              f"{med('pt_bw_one'):.3g} | {ratio('dc_reg_bw', 'pt_bw_one'):.2f} | {med('dc_reg_lat'):.3g} | "
              f"{med('pt_lat'):.3g} | {ratio('dc_reg_lat', 'pt_lat'):.2f} | {med('dc_bw'):.3g} | "
              f"{ratio('dc_bw', 'pt_bw_two'):.2f} | {med('tcp_bw'):.3g} | {med('tcp_lat'):.3g} |")


if __name__ == "__main__":
    main()
