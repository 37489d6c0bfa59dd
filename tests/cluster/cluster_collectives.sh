#!/usr/bin/env bash
# Every collective's *_perf tool, checking its results (-c 1), on namespace hosts joined by 1 Gbit/s
# links, with the ranks placed as LAYOUT says (ranks per host: 3,1 is ranks 0-2 on the first host
# and rank 3 on the second). Also checks that each rank ran in its host's namespace and that the
# all-reduce's bytes crossed every host's link (TCP between hosts, not shared memory).
# With FORCED, the hierarchical plans of all-reduce, all-gather, reduce-scatter, broadcast and
# reduce, and the double binary tree and recursive-doubling all-reduces, run once more by
# DEEPCOMM_ALGO (doubling up to its 32 KiB, the choice of the model beyond).
#   usage: cluster_collectives.sh DC_CLUSTER DEEPCOMM_RUN BENCH_DIR LAYOUT [FORCED]
set -u
DC_CLUSTER=$1 launcher=$2 bench=$3 layout=$4 forced=${5:-}
. "$(dirname "$0")/cluster_lib.sh"

IFS=, read -ra per_host <<<"$layout"
start_cluster --rate 1gbit up "${#per_host[@]}"
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
run() { "$launcher" --netns "$netns" --ranks-per-host "$layout" --timeout 60 "$@"; }

# Placement: "rank local_rank local_nranks netns-inode", one line per rank, in rank order.
expected=$(
  rank=0
  for h in "${!per_host[@]}"; do
    inode=$(stat -L -c %i "/run/netns/$prefix-h$h")
    for ((local = 0; local < per_host[h]; ++local)); do
      echo "$rank $local ${per_host[h]} $inode"
      rank=$((rank + 1))
    done
  done
)
got=$(run sh -c 'echo "$DEEPCOMM_RANK $DEEPCOMM_LOCAL_RANK $DEEPCOMM_LOCAL_NRANKS $(stat -L -c %i /proc/self/ns/net)"' |
      sort -n)
[ "$got" = "$expected" ] || fail "placement of $layout: expected
$expected
got
$got"

tx_bytes() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes; }
hosts=$(echo "$netns" | tr , ' ')

for collective in all_reduce all_gather broadcast reduce reduce_scatter alltoall gather scatter sendrecv; do
  declare -A before=()
  for h in $hosts; do before[$h]=$(tx_bytes "$h"); done
  # 12 B (fewer elements than ranks) to 1.9 MB (chunked pipelines, rendezvous messages).
  out=$(run "$bench/${collective}_perf" -b 12 -e 2M -f 20 -n 2 -w 1 -c 1 2>&1)
  status=$?
  printf '%s\n' "$out"
  [ $status -eq 0 ] || fail "$collective on $layout: exit status $status"
  printf '%s\n' "$out" | grep -Eq '^ +[0-9]+ +[0-9]+ ' || fail "$collective on $layout: no result row"
  printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK' ||
    fail "$collective on $layout: wrong values or no footer"
  if [ "$collective" = all_reduce ]; then
    # Six all-reduces of 1.9 MB: every host sends at least half of each (2(h-1)/h of it for a
    # bandwidth-optimal plan), so well over 1 MB must have left each host's eth0.
    for h in $hosts; do
      sent=$(($(tx_bytes "$h") - before[$h]))
      [ $sent -ge 1000000 ] || fail "all_reduce on $layout: host $h sent only $sent bytes on eth0"
    done
  fi
done
if [ -n "$forced" ]; then
  for run_spec in all_reduce:hierarchical all_reduce:dbtree all_reduce:doubling all_gather:hierarchical reduce_scatter:hierarchical \
      broadcast:hierarchical reduce:hierarchical; do
    collective=${run_spec%%:*} algorithm=${run_spec#*:}
    out=$(DEEPCOMM_ALGO=$algorithm run "$bench/${collective}_perf" -b 12 -e 2M -f 20 -n 2 -w 1 -c 1 2>&1)
    status=$?
    printf '%s\n' "$out"
    [ $status -eq 0 ] || fail "$collective with $algorithm on $layout: exit status $status"
    printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK' ||
      fail "$collective with $algorithm on $layout: wrong values or no footer"
  done
fi
echo "PASS: every collective on hosts of $layout ranks"
