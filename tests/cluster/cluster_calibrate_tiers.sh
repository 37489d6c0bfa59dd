#!/usr/bin/env bash
# deepcomm-calibrate with a two-tier topology file (DEEPCOMM_TOPO_FILE) on 3 namespace hosts, one
# rank each: hosts 0 and 1 form an island, host 2 is alone in its group. The island tier is measured
# by ranks 0 and 1, the spine by a pair across groups (0 and 2); the written file keeps the groups
# and carries both calibrations, and the tier inside a host (no host has two ranks) is said to be
# unmeasured.
#   usage: cluster_calibrate_tiers.sh DC_CLUSTER DEEPCOMM_RUN DEEPCOMM_CALIBRATE
set -u
DC_CLUSTER=$1 launcher=$2 calibrate=$3
. "$(dirname "$0")/cluster_lib.sh"

work=$(mktemp -d)
start_cluster --rate 1gbit up 3
trap '"$DC_CLUSTER" --prefix "$prefix" down; rm -rf "$work"' EXIT
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
cat > "$work/two-tier.json" <<'JSON'
{"version": 1, "tiers": [
  {"name": "island", "bandwidth_gbps": 100, "latency_us": 2, "groups": [{"hosts": [0, 1]}, {"hosts": [2]}]},
  {"name": "spine", "bandwidth_gbps": 10, "latency_us": 20}]}
JSON
out=$(DEEPCOMM_TOPO_FILE="$work/two-tier.json" "$launcher" --netns "$netns" --ranks-per-host 1,1,1 --timeout 120 \
      "$calibrate" -e 4M -o "$work/calibrated.json" 2>&1) || fail "calibration: $out"
printf '%s\n' "$out"
printf '%s\n' "$out" | grep -Eq '^island +0<->1 +[0-9]+ +[0-9.]+ +[0-9.]+ ' || fail "island tier not fitted by ranks 0 and 1"
printf '%s\n' "$out" | grep -Eq '^spine +0<->2 +[0-9]+ +[0-9.]+ +[0-9.]+ ' || fail "spine tier not fitted by ranks 0 and 2"
printf '%s\n' "$out" | grep -Eq '^shm +- .*not measured' || fail "the tier inside a host is not said to be unmeasured"
python3 - "$work/calibrated.json" <<'PY' || fail "written file: $(cat "$work/calibrated.json")"
import json, sys
tiers = json.load(open(sys.argv[1]))["tiers"]
assert [t["name"] for t in tiers] == ["island", "spine"], tiers
assert all(t["calibration"]["beta_ns_per_byte"] > 0 for t in tiers), tiers
assert tiers[0]["groups"] == [{"hosts": [0, 1]}, {"hosts": [2]}], tiers[0]
PY
echo "PASS: both tiers of a two-tier file calibrated by the right pairs"
