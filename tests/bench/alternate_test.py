#!/usr/bin/python3
"""bench/compare/alternate.py against stand-in builds: each build's deepcomm-run prints an
nccl-tests table whose times are its build's base times scaled by STAND_IN_SCALE and by the run's
number (so single runs differ, as on a noisy machine), and logs which variant ran. Checks the
order of the runs (reversed every other round), the medians and the pairwise ratios cell by cell
(an in-place time of N/A leaves the out-of-place one alone), BUILD=DIR taking another build, and
the errors: a build without the programs, a setting that is not NAME=VALUE, a failing run.
usage: alternate_test.py REPO"""
import os
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from markdown_tables import expect_cells, tables  # noqa: E402

REPO = sys.argv[1]
SCRIPT = os.path.join(REPO, "bench", "compare", "alternate.py")

# The stand-in's table: size, then out-of-place time, then in-place time ("N/A": none), in us.
# The run's number is the log's line count once it logged itself, and times grow with it.
LAUNCHER = r'''#!/usr/bin/python3
import os, sys
base, build = %r, %r
log = os.environ["STAND_IN_LOG"]
if os.environ.get("STAND_IN_FAIL"):
    sys.exit("stand-in: asked to fail")
with open(log, "a") as f:
    f.write(build + " " + os.environ.get("STAND_IN_SCALE", "1") + "\n")
run = sum(1 for _ in open(log))
scale = float(os.environ.get("STAND_IN_SCALE", "1")) * run
print("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
for size, (out_us, in_us) in sorted(base.items()):
    in_cell = "N/A" if in_us is None else "%%.2f" %% (in_us * scale)
    print("%%12d %%13d     float     sum      -1 %%8.2f    0.00    0.00      0 %%8s    0.00    0.00      0"
          %% (size, size // 4, out_us * scale, in_cell))
'''

BASE = {8: (10.0, 30.0), 4096: (100.0, None)}  # mean 20 at 8 B; out-of-place only at 4 KiB
OTHER = {8: (40.0, 40.0), 4096: (50.0, None)}  # the other build: 2x at 8 B, 0.5x at 4 KiB


def make_build(root, name, base):
    build = os.path.join(root, name)
    for path, text in ((os.path.join(build, "tools", "launcher", "deepcomm-run"), LAUNCHER % (base, name)),
                       (os.path.join(build, "bench", "all_reduce_perf"), "#!/bin/sh\nexit 0\n")):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return build


def alternate(build, log, variants, rounds, **env):
    argv = [sys.executable, SCRIPT, "--build", build, "--ranks", "2", "--rounds", str(rounds)]
    for v in variants:
        argv += ["--variant", v]
    return subprocess.run(argv + ["--", "-b", "8", "-e", "4K"], capture_output=True, text=True,
                          env=dict(os.environ, STAND_IN_LOG=log, **env), timeout=60)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        main_build = make_build(root, "main", BASE)
        other_build = make_build(root, "other", OTHER)

        # Runs 1..6 scale each table by its number, so medians and ratios are known exactly:
        # round 1 runs (half, other), round 2 (other, half), round 3 (half, other).
        log = os.path.join(root, "log")
        done = alternate(main_build, log, ["STAND_IN_SCALE=0.5", "BUILD=" + other_build], 3)
        if done.returncode != 0:
            sys.exit("alternate.py failed: " + done.stderr)
        order = open(log).read().split("\n")[:-1]
        expected_order = ["main 0.5", "other 1", "other 1", "main 0.5", "main 0.5", "other 1"]
        if order != expected_order:
            failures.append(f"run order {order}, expected {expected_order}")
        # Variant 1 (main, x0.5) ran as runs 1, 4, 5; variant 2 (other) as runs 2, 3, 6.
        # 8 B: main mean 20 us -> 10, 40, 50 (median 40); other 40 us -> 80, 120, 240 (median 120);
        # ratios 80/10, 120/40, 240/50 = 8, 3, 4.8 (median 4.8).
        # 4 KiB: main 100 -> 50, 200, 250 (200); other 50 -> 100, 150, 300 (150); ratios 2, 0.75, 1.2.
        columns = ["size", "STAND_IN_SCALE=0.5: µs (ratio)", f"BUILD={other_build}: µs (ratio)"]
        found = tables(done.stdout)
        if len(found) != 1 or len(found[0]) != 2:
            sys.exit("expected one table of two sizes in:\n" + done.stdout)
        expect_cells(found[0][0], columns, ["8", "40.0 (1.00)", "120.0 (4.80)"])
        expect_cells(found[0][1], columns, ["4096", "200.0 (1.00)", "150.0 (1.20)"])

        # A build without the programs, a setting without '=', and a run that fails: clear errors.
        for variants, env, words in (
                (["STAND_IN_SCALE=1", "BUILD=" + os.path.join(root, "missing")], {}, "is not an executable"),
                (["STAND_IN_SCALE=1", "STAND_IN_SCALE"], {}, "is not NAME=VALUE"),
                (["STAND_IN_SCALE=1", "STAND_IN_SCALE=2"], {"STAND_IN_FAIL": "1"}, "asked to fail")):
            bad = alternate(main_build, os.path.join(root, "bad-log"), variants, 1, **env)
            if bad.returncode == 0 or words not in bad.stderr:
                failures.append(f"{variants}: rc {bad.returncode}, expected an error saying {words!r}:\n{bad.stderr}")
    if failures:
        sys.exit("\n".join(failures))
    print("alternate.py: run order, medians, ratios and errors as expected")


if __name__ == "__main__":
    main()
