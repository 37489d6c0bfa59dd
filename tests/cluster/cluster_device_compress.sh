#!/usr/bin/env bash
# DEEPCOMM_COMPRESS on device buffers across namespace hosts: 2 hosts x 2 ranks joined by 1 Gbit/s
# links, TCP between hosts and shared memory inside them, the emulated device of the test plugin.
# Each rank all-reduces two buffers three times on host and on device memory (sum, then avg; dense
# q8 and a sampled top-k, with error feedback) and checks that the device calls, coded by the
# device's codec, give the host calls' bits (device_compress_probe).
#   usage: cluster_device_compress.sh DC_CLUSTER DEEPCOMM_RUN PROBE PLUGIN
set -u
DC_CLUSTER=$1 launcher=$2 probe=$3 plugin=$4
. "$(dirname "$0")/cluster_lib.sh"

start_cluster --rate 1gbit up 2
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
export DEEPCOMM_DEVICE_PLUGIN=$plugin DEEPCOMM_COMPRESS_MIN_BYTES=0 DEEPCOMM_ALGO=sparsegather
tx_bytes() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes; }
hosts=$(echo "$netns" | tr , ' ')
declare -A before=()
for h in $hosts; do before[$h]=$(tx_bytes "$h"); done

for spec in q8,ef topk:0.01:sampled,q8,huffman,ef:0.9; do
  for op in sum avg; do
    out=$(DEEPCOMM_COMPRESS=$spec "$launcher" --netns "$netns" --ranks-per-host 2,2 --timeout 120 "$probe" $op 2>&1)
    status=$?
    printf '%s\n' "$out"
    [ $status -eq 0 ] || fail "$spec $op: exit status $status"
    oks=$(printf '%s\n' "$out" | grep -c '^PROBE rank=[0-3] result=ok$')
    [ "$oks" -eq 4 ] || fail "$spec $op: $oks of 4 ranks said ok"
  done
done
# The messages crossed the links: 48 all-reduces (24 of them on device memory), each sending the
# ranks of the other host this rank's message (a q8 one about 30 KB, a top-k one smaller): about
# 2.7 MB a host here.
for h in $hosts; do
  sent=$(($(tx_bytes "$h") - before[$h]))
  echo "host $h sent $sent bytes on eth0"
  [ $sent -ge 1000000 ] || fail "host $h sent only $sent bytes on eth0"
done
echo "device compression across namespace hosts: every rank gave the host's bits"
