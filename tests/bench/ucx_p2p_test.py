#!/usr/bin/python3
"""bench/compare/ucx_p2p.py against stand-ins: a deepcomm-run that writes sendrecv_perf's JSON with
fixed results per transport, UCX_TLS and registration, and a ucx_perftest on PATH that prints a
fixed "Final:" line per test and UCX_TLS. Checks the table cell by cell (MiB/s converted to GB/s,
the two-flow and one-flow ratios, the latency ratio, the registered column) and that a run with
wrong values fails.  usage: ucx_p2p_test.py REPO"""
import os
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from markdown_tables import expect, tables  # noqa: E402

REPO = sys.argv[1]
SCRIPT = os.path.join(REPO, "bench", "compare", "ucx_p2p.py")

# sendrecv_perf's results: (transport, UCX_TLS, -R) -> (1 MiB busbw GB/s, 8 B time us).
DEEPCOMM = {("ucx-all", "tcp", "0"): (1.0, 100.0), ("ucx-all", "tcp", "1"): (1.5, 100.0),
            ("tcp", "tcp", "0"): (0.8, 90.0),
            ("ucx-all", "sm", "0"): (4.0, 60.0), ("ucx-all", "sm", "1"): (5.0, 60.0), ("tcp", "sm", "0"): (0.8, 90.0)}
# ucx_perftest's "Final:" fields: iterations, latency 50%, avg, overall (us), bandwidth avg, overall
# (MiB/s), message rate avg, overall. (test, UCX_TLS) -> line.
PERFTEST = {("ucp_am_bw", "tcp"): "500 300.0 320.0 320.0 2000.0 2000.0 3000 3000",
            ("ucp_am_bw", "sm"): "500 90.0 95.0 95.0 8000.0 8000.0 10000 10000",
            ("ucp_am_lat", "tcp"): "500 19.0 20.0 20.0 0.4 0.4 50000 50000",
            ("ucp_am_lat", "sm"): "500 2.0 2.0 2.0 4.0 4.0 500000 500000"}

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
import os, sys
table = %r
if "-t" in sys.argv:  # a client; a server (-p only) ends at once
    print("Final:  " + table[repr((sys.argv[sys.argv.index("-t") + 1], os.environ["UCX_TLS"]))])
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
        executable(os.path.join(work, "bin", "ucx_perftest"), PERFTEST_STAND_IN % {repr(k): v for k, v in PERFTEST.items()})
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
        argv = [sys.executable, SCRIPT, "--build", build, "--tls", "tcp,sm", "--pairs", "2", "--port", "23400"]
        p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            sys.exit(f"ucx_p2p.py failed ({p.returncode}): {p.stderr}")
        rows = {row["UCX_TLS"]: row for row in tables(p.stdout)[0]}
        tcp, sm = rows["tcp"], rows["sm"]
        # 2000 MiB/s = 2.097 GB/s per flow (both flows alike); DeepComm 1.0 GB/s: 0.48 of it.
        for row, dc, peer, ratio, lat, lat_ratio, reg, reg_ratio in (
                (tcp, "1", "2.1", "0.48", "100", "5.00", "1.5", "0.72"),
                (sm, "4", "8.39", "0.48", "60", "30.00", "5", "0.60")):
            expect(row, "DeepComm 1 MiB (GB/s)", dc)
            expect(row, "ucx_perftest, 2 flows (GB/s per flow)", peer)
            expect(row, "ratio", ratio)
            expect(row, "DeepComm 8 B (us)", lat)
            expect(row, "latency ratio", lat_ratio)
            expect(row, "DeepComm 1 MiB, registered buffers (GB/s)", reg)
            expect(row, "its ratio (2 flows)", reg_ratio)
            expect(row, "DeepComm TCP transport 1 MiB (GB/s)", "0.8")
        # A run with wrong values is an error, not a number.
        p = subprocess.run(argv[:-4] + ["--tls", "tcp", "--pairs", "1", "--port", "23500"],
                           env=dict(env, STAND_IN_WRONG="3"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120)
        if p.returncode == 0 or "wrong values" not in p.stderr:
            sys.exit(f"wrong values were not refused ({p.returncode}): {p.stderr[-500:]}")
    print("PASS")


if __name__ == "__main__":
    main()
