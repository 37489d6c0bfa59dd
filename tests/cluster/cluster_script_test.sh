#!/usr/bin/env bash
# tools/cluster/dc-cluster: up, list, hosts, exec, down (idempotent, and cleaning up half-made
# clusters and processes left in them), and its refusals.
#   usage: cluster_script_test.sh DC_CLUSTER
set -u
DC_CLUSTER=$1
. "$(dirname "$0")/cluster_lib.sh"

start_cluster --subnet 10.211.7.0/24 --rate 1gbit up 2
dc() { "$DC_CLUSTER" --prefix "$prefix" "$@"; }

[ "$(dc hosts)" = "$prefix-h0,$prefix-h1" ] || fail "hosts: $(dc hosts)"
expected="$prefix-h0 10.211.7.1/24 rate 1Gbit
$prefix-h1 10.211.7.2/24 rate 1Gbit"
[ "$(dc list)" = "$expected" ] || fail "list: $(dc list)"
[ "$(dc exec 1 cat /sys/class/net/eth0/address)" = "$(dc exec "$prefix-h1" cat /sys/class/net/eth0/address)" ] ||
  fail "exec by index and by name differ"
dc exec h0 ip -o link | grep -Eq '^[0-9]+: eth0@' || fail "no eth0 in host 0"
[ "$(dc exec h0 ip -o link | wc -l)" -eq 2 ] || fail "host 0 has more than lo and eth0"
dc exec h0 ip -o link show lo | grep -q 'UP' || fail "loopback of host 0 is down"
# Both ends of every link are limited: the host's eth0 and the switch's port.
for i in 0 1; do
  ip netns exec "$prefix-h$i" tc qdisc show dev eth0 | grep -q 'tbf .* rate 1Gbit' || fail "no tbf on h$i"
  ip netns exec "$prefix-sw" tc qdisc show dev "h$i" | grep -q 'tbf .* rate 1Gbit' ||
    fail "no tbf on the switch's port h$i"
done

# htb instead of tbf: a class with the rate and a byte-bounded fifo (rate x latency) at both ends.
dc down || fail "down failed"
dc --subnet 10.211.7.0/24 --shaper htb --rate 500mbit --latency 10ms up 2 || fail "up with htb failed"
[ "$(dc list | awk '{print $3, $4}' | sort -u)" = "rate 500Mbit" ] || fail "htb list: $(dc list)"
for at in "$prefix-h1 eth0" "$prefix-sw h1"; do
  set -- $at
  ip netns exec "$1" tc class show dev "$2" | grep -q 'htb 1:1 .*rate 500Mbit' || fail "no htb class on $at"
  ip netns exec "$1" tc qdisc show dev "$2" | grep -q 'bfifo .*limit 625000b' || fail "no 625000-byte fifo on $at"
done
dc down || fail "down failed"
dc --subnet 10.211.7.0/24 --shaper htb --rate 1.5gbit up 2 2>/dev/null
[ $? -eq 1 ] || fail "htb accepted a rate it cannot size a queue for"
[ -z "$(ip netns list | grep "^$prefix-")" ] || fail "the refused htb up left $(ip netns list | grep "^$prefix-")"
dc --subnet 10.211.7.0/24 --rate 1gbit up 2 || fail "second up failed"

dc up 2 2>/dev/null && fail "a second up of the same cluster succeeded"
[ "$(dc hosts)" = "$prefix-h0,$prefix-h1" ] || fail "the refused up changed the cluster"
dc exec 5 true 2>/dev/null && fail "exec on a host that does not exist succeeded"

dc down || fail "down failed"
[ -z "$(ip netns list | grep "^$prefix-")" ] || fail "down left $(ip netns list | grep "^$prefix-")"
dc down || fail "a second down failed"

# A half-made cluster with a process still inside: down removes all of it.
ip netns add "$prefix-h1"
ip netns add "$prefix-sw"
ip netns exec "$prefix-h1" sleep 60 &
sleeper=$!
sleep 0.2
dc down || fail "down of a half-made cluster failed"
[ -z "$(ip netns list | grep "^$prefix-")" ] || fail "down left $(ip netns list | grep "^$prefix-")"
wait "$sleeper" 2>/dev/null
kill -0 "$sleeper" 2>/dev/null && fail "the process in the half-made cluster survived down"

# An up that fails half-way removes what it made.
dc --rate banana up 2 2>/dev/null
[ $? -eq 1 ] || fail "up with a bad rate did not exit 1"
[ -z "$(ip netns list | grep "^$prefix-")" ] || fail "a failed up left $(ip netns list | grep "^$prefix-")"

for bad in "up 0" "up x" "--shaper fq up 2" "--subnet 10.1.2.3/24 up 2" "--subnet 300.1.1.0/24 up 2" "--prefix a.b up 2" "frobnicate"; do
  # shellcheck disable=SC2086
  dc $bad 2>/dev/null
  [ $? -eq 2 ] || fail "'dc-cluster $bad' did not exit 2"
done
[ -z "$(ip netns list | grep "^$prefix-")" ] || fail "bad usage left $(ip netns list | grep "^$prefix-")"
echo "PASS"
