#!/usr/bin/env bash
# UCX between namespace hosts (UCX_TLS=tcp over each host's eth0), shared memory inside them:
# DEEPCOMM_TRANSPORT=ucx on 2 hosts x 2 ranks. The counters prove that the bytes between hosts
# went through UCX and those inside a host through shared memory (one communicator mixes both),
# and every collective's *_perf tool checks its results. Then DEEPCOMM_TRANSPORT=auto: UCX between
# hosts whose nodes show an RDMA port up, TCP otherwise.
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
# `auto` reaches another host through UCX when both hosts have an RDMA port up, else through TCP.
# A sysfs fixture of a RoCE host (mlx5_0 port 1 up) stands in for the NIC these machines lack; UCX
# itself still runs over UCX_TLS=tcp on eth0.
roce=$(cd "$(dirname "$0")/../topology/fixtures/sysfs/roce-host" && pwd)
export DEEPCOMM_TRANSPORT=auto
out=$(DEEPCOMM_SYSFS_ROOT=$roce run "$probe" ucx shm 2>&1) || fail "auto with an RDMA port on both hosts: $out"
printf '%s\n' "$out"
out=$(run "$probe" tcp shm 2>&1) || fail "auto without RDMA ports: $out"
printf '%s\n' "$out"
# Only the first host (ranks 0 and 1) has the port: every pair between hosts stays on TCP.
out=$(run sh -c '[ "$DEEPCOMM_RANK" -lt 2 ] && export DEEPCOMM_SYSFS_ROOT='"$roce"'; exec "$0" tcp shm' "$probe" 2>&1) ||
  fail "auto with an RDMA port on one host only: $out"
printf '%s\n' "$out"
echo "PASS: UCX between hosts, shared memory inside, every collective; auto picks UCX only between RDMA hosts"
