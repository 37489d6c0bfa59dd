#!/bin/sh
# Runs one nccl-tests-compatible benchmark at tiny sizes under the launcher and checks that it
# exits 0 and prints nccl-tests' table: the column header, at least one row, and the footer with
# zero wrong values.  usage: perf_smoke.sh LAUNCHER NRANKS PROGRAM [FLAG...]: the flags go to the
# program after the defaults (a later -e replaces the default one).
set -u
launcher=$1 nranks=$2 program=$3
shift 3
out=$("$launcher" -n "$nranks" "$program" -b 8 -e 4K -f 8 -n 2 -w 1 -c 1 "$@" 2>&1)
status=$?
printf '%s\n' "$out"
fail() { echo "perf_smoke: $1" >&2; exit 1; }
[ "$status" -eq 0 ] || fail "exit status $status"
printf '%s\n' "$out" | grep -q '^#       size         count      type   redop    root     time   algbw   busbw #wrong' \
  || fail "no nccl-tests column header"
printf '%s\n' "$out" | grep -Eq '^ +[0-9]+ +[0-9]+ ' || fail "no result row"
printf '%s\n' "$out" | grep -q '^# Out of bounds values : 0 OK' || fail "footer missing or wrong values"
printf '%s\n' "$out" | grep -q '^# Avg bus bandwidth' || fail "no average bus bandwidth line"
exit 0
