#!/usr/bin/env bash
# Network faults between two namespace hosts, one rank on each (so every byte crosses the link by
# TCP), while the ranks all-reduce in a loop (fault_probe):
#   flap:     the link goes down for 3 s, then up, within DEEPCOMM_TIMEOUT: the job finishes with
#             the right results (no socket-level timeout or keepalive is shorter than the deadline)
#   flap_late: the same for 3.5 s, past TCP's resend at 3.0 s: the next byte crosses at 6.2 s
#   down:     the link goes down for good: every rank gets a clean error, from a call that failed
#             within DEEPCOMM_TIMEOUT + 1 s of its start, and within 2 x DEEPCOMM_TIMEOUT + 1 s of
#             the fault (the call in progress then may still finish on what was in flight)
#   collapse: the link drops to 1 Mbit/s (tbf) for good, too slow for the messages: the same
#   reset:    the connection is killed (ss -K): every rank gets a clean error within a second
# Never a hang: the launcher's own timeout is far above these bounds. Nothing is left in /dev/shm.
#   usage: net_faults.sh DC_CLUSTER DEEPCOMM_RUN FAULT_PROBE [flap|flap_late|down|collapse|reset]
set -u
DC_CLUSTER=$1 launcher=$2 probe=$3 fault=$4
. "$(dirname "$0")/cluster_lib.sh"

timeout_s=6
# TCP resends a lost segment 0.2, 0.6, 1.4, 3.0, 6.2 s after the loss (the retransmission timeout
# starts at 200 ms and doubles): a 3 s outage whose end comes just after the resend at 3.0 s (a
# loaded machine runs `ip link set up` late) carries the next byte only at 6.2 s. The flap's
# deadline covers that; it failed at 6 s whenever the link came back later than 3.0 s (flap_late
# makes that case certain).
flapping=false
case $fault in flap | flap_late) flapping=true ;; esac
$flapping && timeout_s=10
export DEEPCOMM_TIMEOUT=$timeout_s
shm_before=$(ls /dev/shm | sort)
start_cluster up 2
netns=$("$DC_CLUSTER" --prefix "$prefix" hosts)
out=$(mktemp)
trap '"$DC_CLUSTER" --prefix "$prefix" down; rm -f "$out"' EXIT

# CLOCK_BOOTTIME in ms (the probe's at_ms): the wall clock may be stepped during a run.
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# The probe: 1 MiB all-reduces (8 MiB for the rate collapse), for `seconds`.
seconds=12
bytes=1048576
[ "$fault" = collapse ] && bytes=8388608
$flapping && seconds=10
"$launcher" --netns "$netns" --ranks-per-host 1,1 --timeout 60 --grace 30 "$probe" $bytes $seconds >"$out" 2>&1 &
job=$!
sleep 2
grep -q 'result=' "$out" && fail "the probe ended before the fault: $(cat "$out")"
fault_at=$(now_ms)
case $fault in
  flap | flap_late)
    ip -n "$prefix-sw" link set h1 down
    if [ "$fault" = flap ]; then sleep 3; else sleep 3.5; fi
    ip -n "$prefix-sw" link set h1 up ;;
  down)
    ip -n "$prefix-sw" link set h1 down ;;
  collapse)
    ip netns exec "$prefix-sw" tc qdisc replace dev h1 root tbf rate 1mbit burst 16kb latency 50ms
    ip netns exec "$prefix-h1" tc qdisc replace dev eth0 root tbf rate 1mbit burst 16kb latency 50ms ;;
  reset)
    ip netns exec "$prefix-h1" ss -K dst "$(ip -n "$prefix-h0" -4 -o addr show dev eth0 | awk '{print $4}' | cut -d/ -f1)" \
      >/dev/null || fail "ss -K failed" ;;
  *) fail "unknown fault $fault" ;;
esac
wait $job
status=$?
cat "$out"
[ "$(grep -c '^PROBE ' "$out")" -eq 2 ] || fail "$fault: expected a PROBE line from each rank"
if $flapping; then
  [ $status -eq 0 ] || fail "$fault: the job failed (exit $status)"
  [ "$(grep -c 'result=ok' "$out")" -eq 2 ] || fail "$fault: not every rank finished with the right results"
else
  [ "$(grep -c 'result=error' "$out")" -eq 2 ] || fail "$fault: not every rank got a clean error"
  # A call fails DEEPCOMM_TIMEOUT after its start (+1 s: the bounded end of its transfers, and
  # scheduling). The first call that fails started at the fault at the latest, or when the call in
  # progress then finished on bytes already in flight, which it does within DEEPCOMM_TIMEOUT or
  # fails itself. The tighter bound, DEEPCOMM_TIMEOUT + 1 s from the fault, assumed that call ends
  # at once: it failed once under a CPU hog (2026-12-07, output not kept), with ~0.75 s of margin
  # in the runs measured after. The failing call's own span is what the library bounds.
  call_bound=$((timeout_s * 1000 + 1000))
  bound=$((2 * timeout_s * 1000 + 1000))
  [ "$fault" = reset ] && bound=1000
  for call_ms in $(sed -n 's/.*call_ms=\([0-9]*\).*/\1/p' "$out"); do
    [ $call_ms -le $call_bound ] || fail "$fault: a rank's failing call took $call_ms ms (bound $call_bound ms)"
  done
  for at in $(sed -n 's/.*at_ms=\([0-9]*\).*/\1/p' "$out"); do
    late=$((at - fault_at))
    [ $late -le $bound ] || fail "$fault: a rank's error came $late ms after the fault (bound $bound ms)"
  done
fi
[ "$(ls /dev/shm | sort)" = "$shm_before" ] || fail "$fault: /dev/shm changed"
echo "PASS: $fault"
