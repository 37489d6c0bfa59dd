#!/usr/bin/env bash
# Kill, shrink and grow across network-namespace hosts: 4 ranks on two hosts (2 + 2), one killed,
# the survivors shrink to 3, and the replacement joins by grow from a third host that had no rank
# (examples/elastic_grow.c --replacement-netns). Checks the program's verdict, the launcher's
# status (the killed rank's 137) and that the new host's link carried the replacement's traffic.
# Over auto (shared memory inside a host, TCP between), tcp, and ucx where UCX works (PROBE says).
#   usage: cluster_elastic_grow.sh DC_CLUSTER DEEPCOMM_RUN ELASTIC_GROW PROBE
set -u
DC_CLUSTER=$1 launcher=$2 program=$3 probe=$4
. "$(dirname "$0")/cluster_lib.sh"

transports="auto tcp"
if why=$(DEEPCOMM_TRANSPORT=ucx UCX_TLS=tcp "$probe" --available 2>&1); then
  transports="$transports ucx"
else
  echo "ucx not run: $why"
fi

start_cluster --rate 1gbit up 3
IFS=, read -ra hosts <<<"$("$DC_CLUSTER" --prefix "$prefix" hosts)"
tx_bytes() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes; }

for transport in $transports; do
  before=$(tx_bytes "${hosts[2]}")
  out=$(DEEPCOMM_TRANSPORT=$transport UCX_TLS=tcp "$launcher" --netns "${hosts[0]},${hosts[1]}" --ranks-per-host 2,2 \
        --grace 60 --timeout 90 "$program" --replacement-netns "${hosts[2]}" 2>&1)
  status=$?
  printf '%s\n' "$out"
  [ $status -eq 137 ] || fail "$transport: deepcomm-run exited $status, not the killed rank's 137"
  printf '%s\n' "$out" | grep -q '^elastic_grow: 4 ranks again, every rank right$' ||
    fail "$transport: the grown communicator was not right on every rank"
  sent=$(($(tx_bytes "${hosts[2]}") - before))
  [ $sent -ge 1000 ] || fail "$transport: the new host sent only $sent bytes on eth0"
done
echo "PASS: a new host joined by grow after a rank was killed"
