#!/usr/bin/python3
"""bench/compare/ucx_p2p.py against stand-ins: a deepcomm-run that writes sendrecv_perf's JSON with
fixed results per transport, UCX_TLS and registration, and a ucx_perftest on PATH that prints a
fixed "Final:" line per test, UCX_TLS and peer configuration, and refuses to run unless pinned as
that configuration places it. Checks the tables cell by cell (MiB/s converted to GB/s, the
registered and the ordinary-memory run against each configuration of the peer, the latency
against the peer's) and that a run with wrong values fails.
usage: ucx_p2p_test.py REPO"""
import os
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from markdown_tables import expect_cells, tables  # noqa: E402

REPO = sys.argv[1]
SCRIPT = os.path.join(REPO, "bench", "compare", "ucx_p2p.py")

# sendrecv_perf's results: (transport, UCX_TLS, -R) -> (1 MiB busbw GB/s, 8 B time us).
DEEPCOMM = {("ucx-all", "tcp", "0"): (1.0, 100.0), ("ucx-all", "tcp", "1"): (1.5, 80.0),
            ("tcp", "tcp", "0"): (0.8, 90.0),
            ("ucx-all", "sm", "0"): (4.0, 60.0), ("ucx-all", "sm", "1"): (5.0, 50.0), ("tcp", "sm", "0"): (0.8, 90.0)}
# ucx_perftest's "Final:" fields: iterations, latency 50%, avg, overall (us), bandwidth avg, overall
# (MiB/s), message rate avg, overall; by (test, UCX_TLS, configuration). ucx_p2p.py gives each
# configuration its own ports in a round of ten: the stand-in tells them apart by port.
PERFTEST = {("ucp_am_bw", "tcp", "unpinned"): "500 300.0 320.0 320.0 2000.0 2000.0 3000 3000",
            ("ucp_am_bw", "tcp", "alike"): "500 600.0 640.0 640.0 1000.0 1000.0 1500 1500",
            ("ucp_am_bw", "tcp", "flow_per_core"): "500 150.0 160.0 160.0 4000.0 4000.0 6000 6000",
            ("ucp_am_bw", "tcp", "one_flow"): "500 400.0 420.0 420.0 1500.0 1500.0 2200 2200",
            ("ucp_am_bw", "sm", "unpinned"): "500 90.0 95.0 95.0 8000.0 8000.0 10000 10000",
            ("ucp_am_bw", "sm", "alike"): "500 200.0 210.0 210.0 3000.0 3000.0 4000 4000",
            ("ucp_am_bw", "sm", "flow_per_core"): "500 60.0 63.0 63.0 12000.0 12000.0 15000 15000",
            ("ucp_am_bw", "sm", "one_flow"): "500 120.0 127.0 127.0 6000.0 6000.0 7500 7500",
            ("ucp_am_lat", "tcp", "latency"): "500 19.0 20.0 20.0 0.4 0.4 50000 50000",
            ("ucp_am_lat", "sm", "latency"): "500 2.0 2.0 2.0 4.0 4.0 500000 500000"}
FIRST_PORT = 23400

LAUNCHER = r'''#!/usr/bin/python3
import json, os, sys
table = %r
argv = sys.argv
key = (os.environ["DEEPCOMM_TRANSPORT"], os.environ["UCX_TLS"], argv[argv.index("-R") + 1])
bw, lat = table[repr(key)]
wrong = int(os.environ.get("STAND_IN_WRONG", "0"))
rows = [{"size": 8, "out_of_place": {"time_us": lat, "busbw_gbs": 0.0, "wrong": 0}},
        {"size": 1048576, "out_of_place": {"time_us": 1048576 / bw / 1e3, "busbw_gbs": bw, "wrong": wrong}}]
json.dump({"results": rows}, open(argv[argv.index("-J") + 1], "w"))
'''

# The placements ucx_p2p.py must give: by port offset in a round, (configuration, flow, the core
# index of the server, of the client); None: unpinned (the test's own cores).
PERFTEST_STAND_IN = r'''#!/usr/bin/python3
import os, socket, sys
table, first_port, cores = %r, %d, %r
placement = {0: ("unpinned", None, None), 1: ("unpinned", None, None), 2: ("alike", 1, 0), 3: ("alike", 0, 1),
             4: ("flow_per_core", 0, 0), 5: ("flow_per_core", 1, 1), 6: ("one_flow", None, None),
             8: ("latency", None, None)}
port = int(sys.argv[sys.argv.index("-p") + 1])
config, server_core, client_core = placement[(port - first_port) %% 10]
is_server = "-t" not in sys.argv
core = server_core if is_server else client_core
if sorted(os.sched_getaffinity(0)) != (cores if core is None else [cores[core]]):
    sys.exit(f"stand-in on port {port}: pinned to {sorted(os.sched_getaffinity(0))}, expected core {core}")
if is_server:  # listens until its client came
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    server.settimeout(60)
    server.accept()
else:  # connects to its server (which ucx_p2p.py saw listening), prints the result
    socket.create_connection(("127.0.0.1", port), timeout=10).close()
    test = sys.argv[sys.argv.index("-t") + 1]
    print("Final:  " + table[repr((test, os.environ["UCX_TLS"], config))])
'''

BANDWIDTH_COLUMNS = ("ucx_perftest 1 MiB (GB/s per flow)", "DeepComm 1 MiB, registered (GB/s)", "ratio",
                     "DeepComm 1 MiB, ordinary memory (GB/s)", "its ratio")
# Per UCX_TLS and configuration (the table's second column): 1000 MiB/s = 1.05 GB/s per flow, which
# registered DeepComm at 1.5 GB/s runs at 1.43 times, ordinary memory at 1 GB/s 0.95 times.
EXPECTED_BANDWIDTH = {
    ("tcp", "2 flows, placed as DeepComm's ranks"): ("1.05", "1.5", "1.43", "1", "0.95"),
    ("tcp", "2 flows, unpinned"): ("2.1", "1.5", "0.72", "1", "0.48"),
    ("tcp", "2 flows, each on one core (the peer's best)"): ("4.19", "1.5", "0.36", "1", "0.24"),
    ("tcp", "1 flow, unpinned"): ("1.57", "1.5", "0.95", "1", "0.64"),
    ("sm", "2 flows, placed as DeepComm's ranks"): ("3.15", "5", "1.59", "4", "1.27"),
    ("sm", "2 flows, unpinned"): ("8.39", "5", "0.60", "4", "0.48"),
    ("sm", "2 flows, each on one core (the peer's best)"): ("12.6", "5", "0.40", "4", "0.32"),
    ("sm", "1 flow, unpinned"): ("6.29", "5", "0.79", "4", "0.64"),
}
PINNED = ("2 flows, placed as DeepComm's ranks", "2 flows, each on one core (the peer's best)")
LATENCY_COLUMNS = ("DeepComm 8 B, registered (us)", "ucx_perftest 8 B one-way (us)", "latency ratio",
                   "DeepComm TCP transport 1 MiB (GB/s)", "DeepComm TCP transport 8 B (us)")
EXPECTED_LATENCY = {"tcp": ("80", "20", "4.00", "0.8", "90"), "sm": ("50", "2", "25.00", "0.8", "90")}


def executable(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def check_tables(out, two_cores):
    bandwidth, latency = tables(out)
    rows = {(row["UCX_TLS"], row["ucx_perftest"]): row for row in bandwidth}
    expected = {k: v for k, v in EXPECTED_BANDWIDTH.items() if two_cores or k[1] not in PINNED}
    if set(rows) != set(expected):
        sys.exit(f"bandwidth rows {sorted(rows)}, expected {sorted(expected)}")
    for key, values in expected.items():
        expect_cells(rows[key], BANDWIDTH_COLUMNS, values)
    rows = {row["UCX_TLS"]: row for row in latency}
    for tls, values in EXPECTED_LATENCY.items():
        expect_cells(rows[tls], LATENCY_COLUMNS, values)


def main():
    cores = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as work:
        build = os.path.join(work, "build")
        executable(os.path.join(build, "tools", "launcher", "deepcomm-run"),
                   LAUNCHER % {repr(k): v for k, v in DEEPCOMM.items()})
        executable(os.path.join(work, "bin", "ucx_perftest"),
                   PERFTEST_STAND_IN % ({repr(k): v for k, v in PERFTEST.items()}, FIRST_PORT, cores))
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
        argv = [sys.executable, SCRIPT, "--build", build, "--tls", "tcp,sm", "--pairs", "2", "--port", str(FIRST_PORT)]
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            sys.exit(f"ucx_p2p.py failed ({p.returncode}): {p.stderr}")
        check_tables(p.stdout, len(cores) >= 2)
        # A run with wrong values is an error, not a number.
        p = subprocess.run(argv[:-4] + ["--tls", "tcp", "--pairs", "1", "--port", "23500"],
                           env=dict(env, STAND_IN_WRONG="3"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        if p.returncode == 0 or "wrong values" not in p.stderr:
            sys.exit(f"wrong values were not refused ({p.returncode}): {p.stderr[-500:]}")
    print("PASS")


if __name__ == "__main__":
    main()
