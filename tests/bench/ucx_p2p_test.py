#!/usr/bin/python3
"""bench/compare/ucx_p2p.py against stand-ins: a deepcomm-run that writes sendrecv_perf's JSON with
fixed results per transport, UCX_TLS and registration, and a ucx_perftest on PATH that prints a
fixed "Final:" line per test, UCX_TLS and number of flows. Checks the table cell by cell (MiB/s
converted to GB/s, the registered run against the two-flow and the one-flow peer, its latency
against the peer's, the ordinary-memory column) and that a run with wrong values fails.
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
# (MiB/s), message rate avg, overall. (test, UCX_TLS, flows) -> line; the one-flow run is told apart
# by its port (ucx_p2p.py gives it the round's first port + 5).
PERFTEST = {("ucp_am_bw", "tcp", 2): "500 300.0 320.0 320.0 2000.0 2000.0 3000 3000",
            ("ucp_am_bw", "tcp", 1): "500 600.0 640.0 640.0 1000.0 1000.0 1500 1500",
            ("ucp_am_bw", "sm", 2): "500 90.0 95.0 95.0 8000.0 8000.0 10000 10000",
            ("ucp_am_bw", "sm", 1): "500 120.0 127.0 127.0 6000.0 6000.0 7500 7500",
            ("ucp_am_lat", "tcp", 1): "500 19.0 20.0 20.0 0.4 0.4 50000 50000",
            ("ucp_am_lat", "sm", 1): "500 2.0 2.0 2.0 4.0 4.0 500000 500000"}
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

PERFTEST_STAND_IN = r'''#!/usr/bin/python3
import os, socket, sys
table = %r
port = int(sys.argv[sys.argv.index("-p") + 1])
if "-t" not in sys.argv:  # a server: listens until its client came
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    server.settimeout(60)
    server.accept()
else:  # a client: connects to its server (which ucx_p2p.py saw listening), prints the result
    socket.create_connection(("127.0.0.1", port), timeout=10).close()
    test = sys.argv[sys.argv.index("-t") + 1]
    flows = 1 if test == "ucp_am_lat" or (port - %d) %% 10 == 5 else 2
    print("Final:  " + table[repr((test, os.environ["UCX_TLS"], flows))])
'''


def executable(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def main():
    with tempfile.TemporaryDirectory() as work:
        build = os.path.join(work, "build")
        executable(os.path.join(build, "tools", "launcher", "deepcomm-run"),
                   LAUNCHER % {repr(k): v for k, v in DEEPCOMM.items()})
        executable(os.path.join(work, "bin", "ucx_perftest"),
                   PERFTEST_STAND_IN % ({repr(k): v for k, v in PERFTEST.items()}, FIRST_PORT))
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
        argv = [sys.executable, SCRIPT, "--build", build, "--tls", "tcp,sm", "--pairs", "2", "--port", str(FIRST_PORT)]
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            sys.exit(f"ucx_p2p.py failed ({p.returncode}): {p.stderr}")
        rows = {row["UCX_TLS"]: row for row in tables(p.stdout)[0]}
        tcp, sm = rows["tcp"], rows["sm"]
        # 2000 MiB/s = 2.097 GB/s per flow; registered DeepComm 1.5 GB/s: 0.72 of it, and 1.43 of
        # the one flow's 1000 MiB/s = 1.05 GB/s. Latency from the registered run (80 us vs 20).
        columns = ("DeepComm 1 MiB, registered (GB/s)", "ucx_perftest, 2 flows (GB/s per flow)", "ratio (2 flows)",
                   "ucx_perftest, 1 flow (GB/s)", "ratio (1 flow)", "DeepComm 8 B (us)", "latency ratio",
                   "DeepComm 1 MiB, ordinary memory (GB/s)", "its ratio (2 flows)",
                   "DeepComm TCP transport 1 MiB (GB/s)")
        expect_cells(tcp, columns, ("1.5", "2.1", "0.72", "1.05", "1.43", "80", "4.00", "1", "0.48", "0.8"))
        expect_cells(sm, columns, ("5", "8.39", "0.60", "6.29", "0.79", "50", "25.00", "4", "0.48", "0.8"))
        # A run with wrong values is an error, not a number.
        p = subprocess.run(argv[:-4] + ["--tls", "tcp", "--pairs", "1", "--port", "23500"],
                           env=dict(env, STAND_IN_WRONG="3"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        if p.returncode == 0 or "wrong values" not in p.stderr:
            sys.exit(f"wrong values were not refused ({p.returncode}): {p.stderr[-500:]}")
    print("PASS")


if __name__ == "__main__":
    main()
