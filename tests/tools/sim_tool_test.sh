#!/bin/sh
# deepcomm-sim on the published scenario (256 hosts x 8 ranks, two tiers): every all-reduce
# algorithm priced per size from the analytical traffic, in seconds; JSON; bad input fails cleanly.
# Pricing must take at most SECONDS (default 10; more under sanitizers): it is analytical, not a
# walk over every rank's plan.
# usage: sim_tool_test.sh DEEPCOMM_SIM SCENARIO_FILE [SECONDS]
set -u
tool=$1 scenario=$2 budget=${3:-10}
fail() { echo "sim_tool_test: $1" >&2; exit 1; }

start=$(date +%s)
out=$("$tool" --topo-file "$scenario" -b 4K -e 1G -f 16) || fail "exit status $?"
elapsed=$(( $(date +%s) - start ))
printf '%s\n' "$out"
[ "$elapsed" -le "$budget" ] || fail "pricing 2048 ranks took ${elapsed}s (budget ${budget}s)"
printf '%s\n' "$out" | grep -q '^256 host(s), 2048 rank(s)' || fail "not 256 hosts x 8 ranks"
printf '%s\n' "$out" | grep -q '8 fast group(s) of 32 host(s)' || fail "not 8 groups of 32 hosts"
for algorithm in ring hierarchical tree dbtree; do
  [ "$(printf '%s\n' "$out" | grep -Ec "^AllReduce +[0-9]+ +$algorithm\*? ")" -eq 5 ] \
    || fail "expected 5 sizes priced for $algorithm"
done
# One choice per size; at 256 MiB the hierarchical plan beats the flat ring.
[ "$(printf '%s\n' "$out" | grep -Ec '^AllReduce .*[a-z]\* ')" -eq 5 ] || fail "expected one choice per size"
printf '%s\n' "$out" | grep -Eq '^AllReduce +268435456 +hierarchical\* ' || fail "256 MiB is not hierarchical"

json=$("$tool" --topo-file "$scenario" --hosts 64 --ranks-per-host 4 --collective all -b 1M -e 1M --json) \
  || fail "--json exit status $?"
printf '%s\n' "$json" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["hosts"] == 64 and d["ranks"] == 256, (d["hosts"], d["ranks"])
assert d["topo_file"].endswith("two_tier_256x8.json")
by = {}
for r in d["rows"]:
    by.setdefault(r["collective"], []).append(r)
assert len(by) == 8, sorted(by)
for c, rows in by.items():
    chosen = [r for r in rows if r["chosen"]]
    assert len(chosen) == 1, (c, rows)
    assert chosen[0]["predicted_seconds"] == min(r["predicted_seconds"] for r in rows), (c, rows)
    assert all(r["predicted_seconds"] >= r["latency_seconds"] > 0 for r in rows), (c, rows)
' || fail "JSON output wrong"

bad() { "$tool" "$@" >/dev/null 2>"${TMPDIR:-/tmp}/sim_err.$$"; rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "accepted (or crashed, status $rc): $*"
  grep -q 'deepcomm-sim: ' "${TMPDIR:-/tmp}/sim_err.$$" || fail "no message for: $*"
  rm -f "${TMPDIR:-/tmp}/sim_err.$$"; }
bad --hosts 0
bad --hosts 4097
bad --hosts 4294967298
bad --hosts 4 --ranks-per-host 9
bad --hosts 1 --ranks-per-host 1
bad --topo-file /nonexistent.json
printf '{"version": 1, "tiers": [' > "${TMPDIR:-/tmp}/sim_bad.$$.json"
bad --topo-file "${TMPDIR:-/tmp}/sim_bad.$$.json"
rm -f "${TMPDIR:-/tmp}/sim_bad.$$.json"
bad --hosts 2 -b 1X
bad --hosts 2 -b -4
bad --hosts 2 -b 1G -e 1K
bad --hosts 2 -e 99999999999999999999
bad --hosts 2 --collective bogus
bad --hosts 64 --check
bad --bogus
exit 0
