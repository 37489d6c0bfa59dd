#!/usr/bin/env bash
# UCX between namespace hosts (UCX_TLS=tcp over each host's eth0), shared memory inside them:
# DEEPCOMM_TRANSPORT=ucx on 2 hosts x 2 ranks. The counters prove that the bytes between hosts
# went through UCX and those inside a host through shared memory (one communicator mixes both),
# and every collective's *_perf tool checks its results.
#   usage: cluster_ucx.sh DC_CLUSTER DEEPCOMM_RUN BENCH_DIR PROBE
set -u
DC_CLUSTER=$1 launcher=$2 bench=$3 probe=$4
. "$(dirname "$0")/cluster_lib.sh"

export DEEPCOMM_TRANSPORT=ucx UCX_TLS=tcp
why=$("$probe" --available)
case $? in
  0) ;;
  77) echo "SKIP: $why"; exit 77 ;;
  *) fail "the probe failed: $why" ;;
esac
start_cluster --rate 1gbit up 2
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
run() { "$launcher" --netns "$netns" --ranks-per-host 2,2 --timeout 60 "$@"; }

out=$(run "$probe" ucx shm 2>&1) || fail "counters: $out"
printf '%s\n' "$out"

for collective in all_reduce all_gather broadcast reduce reduce_scatter alltoall gather scatter sendrecv; do
  out=$(run "$bench/${collective}_perf" -b 12 -e 2M -f 20 -n 2 -w 1 -c 1 2>&1)
  status=$?
  printf '%s\n' "$out" | tail -4
  [ $status -eq 0 ] || fail "$collective over ucx: exit status $status: $out"
  printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK' || fail "$collective over ucx: wrong values or no footer"
done
echo "PASS: UCX between hosts, shared memory inside, every collective"
