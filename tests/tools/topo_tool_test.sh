#!/bin/sh
# deepcomm-topo: the machine of an hwloc export, the layout priced, and per collective and size a
# chosen plan with its predicted time and runner-up, as text and as JSON; bad options fail cleanly.
# usage: topo_tool_test.sh DEEPCOMM_TOPO FIXTURE_DIR
set -u
tool=$1 fixtures=$2
fail() { echo "topo_tool_test: $1" >&2; exit 1; }

out=$("$tool" --xml "$fixtures/nvidiaDGX2.xml" --hosts 2 --ranks-per-host 4 -b 1K -e 64M -f 256) || fail "exit status $?"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q 'GPUs: 16' || fail "the DGX-2 export's 16 GPUs are not shown"
printf '%s\n' "$out" | grep -q '^2 host(s), 8 rank(s): \[0,1,2,3\] \[4,5,6,7\]' || fail "no cluster view"
printf '%s\n' "$out" | grep -Eq '^AllReduce +67108864 +hierarchical +[0-9.]+ +ring +[0-9.]+$' \
  || fail "64 MiB all-reduce on 2 hosts is not hierarchical with the ring as runner-up"
[ "$(printf '%s\n' "$out" | grep -c '^Broadcast ')" -eq 3 ] || fail "expected 3 broadcast sizes"

json=$("$tool" --xml "$fixtures/nvidiaDGX2.xml" --ranks-per-host 4 -b 8 -e 8 --json) || fail "--json exit status $?"
printf '%s\n' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
plans = {p["collective"]: p for p in d["plans"]}
assert len(d["plans"]) == 8, d["plans"]
assert plans["AllReduce"]["algorithm"] == "tree", plans["AllReduce"]
assert plans["AllReduce"]["runner_up_seconds"] >= plans["AllReduce"]["predicted_seconds"] > 0
assert plans["AllGather"]["algorithm"] == "direct"
' || fail "JSON output wrong"

"$tool" --hosts 0 >/dev/null 2>&1 && fail "--hosts 0 accepted"
"$tool" --xml /nonexistent.xml >/dev/null 2>&1 && fail "a missing export accepted"
"$tool" --bogus >/dev/null 2>&1 && fail "an unknown option accepted"
exit 0
