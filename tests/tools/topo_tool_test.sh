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
printf '%s\n' "$out" | grep -Eq '^AllReduce +67108864 +hierarchical +[0-9.]+ +tree +[0-9.]+$' \
  || fail "64 MiB all-reduce on 2 hosts is not hierarchical with the binomial tree as runner-up (one edge crosses the host link)"
[ "$(printf '%s\n' "$out" | grep -c '^Broadcast ')" -eq 3 ] || fail "expected 3 broadcast sizes"

json=$("$tool" --xml "$fixtures/nvidiaDGX2.xml" --ranks-per-host 4 -b 8 -e 8 --json) || fail "--json exit status $?"
printf '%s\n' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
plans = {p["collective"]: p for p in d["plans"]}
assert len(d["plans"]) == 8, d["plans"]
# 4 ranks on a host with a core each: 2 exchanges of recursive doubling against the tree'"'"'s 4 hops.
assert plans["AllReduce"]["algorithm"] == "doubling", plans["AllReduce"]
assert plans["AllReduce"]["runner_up"] == "tree", plans["AllReduce"]
assert plans["AllReduce"]["runner_up_seconds"] >= plans["AllReduce"]["predicted_seconds"] > 0
assert plans["AllGather"]["algorithm"] == "direct"
' || fail "JSON output wrong"

# With a topology file: its hosts (4 named, 4 by index), groups, calibrated tiers and rails.
two_tier=$fixtures/../files/two-tier.json
out=$("$tool" --xml "$fixtures/nvidiaDGX2.xml" --topo-file "$two_tier" --ranks-per-host 2 -b 1M -e 1M) \
  || fail "--topo-file exit status $?"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -q '^8 host(s), 16 rank(s):.*rails per host 2; 2 fast group(s) of 4 host(s);.*infiniband (2.8 us' \
  || fail "the file's hosts, groups, rails and calibrated tier are not priced"
json=$("$tool" --xml "$fixtures/nvidiaDGX2.xml" --topo-file "$two_tier" --hosts 4 --ranks-per-host 2 -b 1M -e 1M --json) \
  || fail "--topo-file --json exit status $?"
printf '%s\n' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["topo_file"].endswith("two-tier.json") and d["hosts"] == 4 and d["ranks"] == 8, d
assert "1 fast group(s);" in d["cluster"], d["cluster"]
' || fail "--topo-file JSON output wrong"
"$tool" --topo-file /nonexistent.json >/dev/null 2>&1 && fail "a missing topology file accepted"
printf '{"version": 1, "tiers": [{"name": "x"}]}' > "${TMPDIR:-/tmp}/topo_bad.$$.json"
"$tool" --topo-file "${TMPDIR:-/tmp}/topo_bad.$$.json" >/dev/null 2>&1; rc=$?
rm -f "${TMPDIR:-/tmp}/topo_bad.$$.json"
[ "$rc" -eq 2 ] || fail "a malformed topology file gave status $rc, not 2"
"$tool" --ranks-per-host 9 >/dev/null 2>&1 && fail "9 ranks per host accepted"
"$tool" --hosts 4294967298 >/dev/null 2>&1 && fail "2^32+2 hosts accepted (wrapped to 2)"

"$tool" --hosts 0 >/dev/null 2>&1 && fail "--hosts 0 accepted"
"$tool" --xml /nonexistent.xml >/dev/null 2>&1 && fail "a missing export accepted"
"$tool" --bogus >/dev/null 2>&1 && fail "an unknown option accepted"
exit 0
