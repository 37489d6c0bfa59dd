#!/usr/bin/env bash
# deepcomm-calibrate on 2 namespace hosts joined by 1 Gbit/s links (tc tbf), 2 ranks each: the
# network tier's fitted bandwidth is near the link's (0.6-1.2 Gbit/s), the shared-memory tier's is
# far above it, and the written file loads back (DEEPCOMM_TOPO_FILE) into a second run, whose cost
# model then holds the first run's α and bandwidth for the network tier. Then the bad inputs: an
# unknown flag, an unwritable output, a single rank, one host only.
#   usage: cluster_calibrate.sh DC_CLUSTER DEEPCOMM_RUN DEEPCOMM_CALIBRATE
set -u
DC_CLUSTER=$1 launcher=$2 calibrate=$3
. "$(dirname "$0")/cluster_lib.sh"

work=$(mktemp -d)
start_cluster --rate 1gbit up 2
trap '"$DC_CLUSTER" --prefix "$prefix" down; rm -rf "$work"' EXIT
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
run() { "$launcher" --netns "$netns" --ranks-per-host 2,2 --timeout 120 "$@"; }
# The table's column N (1-based) of the row whose first field is $2, from output $1.
column() { printf '%s\n' "$1" | awk -v tier="$2" -v n="$3" '$1 == tier { print $n }'; }

out=$(run "$calibrate" -o "$work/calibrated.json" 2>&1) || fail "calibration: $out"
printf '%s\n' "$out"
net_gbs=$(column "$out" network 6)
shm_gbs=$(column "$out" shm 6)
net_alpha=$(column "$out" network 4)
[ -n "$net_gbs" ] && [ -n "$shm_gbs" ] || fail "no fitted network or shm row"
awk -v g="$net_gbs" 'BEGIN { exit !(g * 8 >= 0.6 && g * 8 <= 1.2) }' ||
  fail "network tier: $net_gbs GB/s is not 0.6-1.2 Gbit/s"
awk -v s="$shm_gbs" -v g="$net_gbs" 'BEGIN { exit !(s >= 5 * g) }' ||
  fail "shared memory ($shm_gbs GB/s) is not much faster than the network ($net_gbs GB/s)"
grep -q '"calibration": {"alpha_us": ' "$work/calibrated.json" || fail "no calibration in the file: $(cat "$work/calibrated.json")"

# The file loads back: the second run's model columns are the first run's fit.
out2=$(DEEPCOMM_TOPO_FILE="$work/calibrated.json" run "$calibrate" -e 4M -o "$work/again.json" 2>&1) ||
  fail "a run with the calibrated file: $out2"
printf '%s\n' "$out2"
model_alpha=$(column "$out2" network 8)
model_gbs=$(column "$out2" network 9)
awk -v a="$net_alpha" -v m="$model_alpha" -v g="$net_gbs" -v mg="$model_gbs" \
  'BEGIN { exit !(m - a < 0.001 && a - m < 0.001 && mg / g > 0.999 && mg / g < 1.001) }' ||
  fail "the loaded model (alpha $model_alpha us, $model_gbs GB/s) is not the fit ($net_alpha us, $net_gbs GB/s)"

# Bad input: a clear message and a prompt exit, never a hang.
out=$(run "$calibrate" --frobnicate 2>&1) && fail "an unknown flag was accepted: $out"
printf '%s\n' "$out" | grep -q 'unknown argument "--frobnicate"' || fail "unknown flag: $out"
out=$(run "$calibrate" -o /nonexistent-dir/x.json 2>&1) && fail "an unwritable output was accepted: $out"
printf '%s\n' "$out" | grep -q 'cannot write /nonexistent-dir/x.json' || fail "unwritable output: $out"
out=$("$launcher" -n 1 --timeout 60 "$calibrate" 2>&1) && fail "a single rank was accepted: $out"
printf '%s\n' "$out" | grep -q 'needs at least 2 ranks' || fail "single rank: $out"
out=$("$launcher" -n 2 --timeout 60 "$calibrate" -e 64K -o "$work/one-host.json" 2>&1) || fail "one host: $out"
printf '%s\n' "$out" | grep -q 'one host only: no network tier measured' || fail "one host: $out"
grep -q '"tiers"' "$work/one-host.json" && fail "one host: a network tier was written: $(cat "$work/one-host.json")"
echo "PASS: calibrated network $net_gbs GB/s (alpha $net_alpha us), shared memory $shm_gbs GB/s; the file loads back"
