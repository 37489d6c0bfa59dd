#!/usr/bin/env bash
# Runs one benchmark on a cluster of network-namespace hosts made for the run and removed after it
# (also on failure or Ctrl-C): H hosts x R ranks, block placement, each host's link limited to RATE.
# Measures the link rate with iperf3 first (dc-cluster linkrate), so the run carries its bound.
set -uo pipefail

usage() {
  cat <<'EOF_USAGE'
usage: bench/cluster/run_on_cluster.sh [--hosts H] [--ranks-per-host R[,R...]] [--rate RATE]
                                       [--build DIR] [--mpi] [--no-linkrate] PROGRAM [ARGS...]
  --hosts H            hosts (network namespaces), default 2
  --ranks-per-host R   ranks on every host (default 4), or one count per host (uneven: 3,1)
  --rate RATE          each host's link in both directions, tc syntax (default 1gbit; "none": no limit)
  --build DIR          CMake build directory holding bench/ and tools/launcher/ (default build)
  --mpi                start PROGRAM with Open MPI's mpirun (tools/cluster/dc-mpirun, ob1 with
                       self,vader,tcp) instead of deepcomm-run; e.g. ompi_collectives_perf -C all_reduce
  --no-linkrate        skip the iperf3 measurement
PROGRAM is a path, or the name of a benchmark in DIR/bench (all_reduce_perf, ...). Exit status: the
program's (77 when namespaces cannot be made here).
Example: 2 hosts x 4 ranks at 1 Gbit/s, flat ring all-reduce up to 64 MiB:
  DEEPCOMM_ALGO=ring bench/cluster/run_on_cluster.sh --hosts 2 --ranks-per-host 4 --rate 1gbit \
      all_reduce_perf -b 1M -e 64M -f 4 -c 1
EOF_USAGE
}

root=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root/tools/cluster/dc-cluster
hosts=2 per_host=4 rate=1gbit build=build mpi=0 linkrate=1
die() { echo "run_on_cluster: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --hosts|--ranks-per-host|--rate|--build)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in --hosts) hosts=$2 ;; --ranks-per-host) per_host=$2 ;; --rate) rate=$2 ;; --build) build=$2 ;; esac
      shift 2 ;;
    --mpi) mpi=1; shift ;;
    --no-linkrate) linkrate=0; shift ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
[[ $hosts =~ ^[0-9]+$ ]] && [ "$hosts" -ge 1 ] || die "--hosts needs a number"
program=$1
shift
[[ $program == */* ]] || program=$build/bench/$program
[ -x "$program" ] || die "no program $program (build it first, or give --build)"
launcher=$build/tools/launcher/deepcomm-run
[ $mpi -eq 1 ] || [ -x "$launcher" ] || die "no $launcher (build the target deepcomm-run)"

rate_option=()
[ "$rate" = none ] || rate_option=(--rate "$rate")
why=$("$cluster" "${rate_option[@]}" check 2>&1)
status=$?
[ $status -eq 3 ] && { echo "run_on_cluster: cannot make a cluster here: $why" >&2; exit 77; }
[ $status -eq 0 ] || { echo "$why" >&2; exit 1; }

prefix=dcbench$$
trap '"$cluster" --prefix "$prefix" down' EXIT
trap 'exit 130' INT TERM HUP
"$cluster" --prefix "$prefix" "${rate_option[@]}" up "$hosts" || exit 1
echo "# cluster $prefix: $hosts hosts, ranks per host $per_host, link ${rate}"
if [ $linkrate -eq 1 ] && [ "$hosts" -ge 2 ]; then
  echo "# link rate (iperf3 host 0 -> host 1, 3 s): $("$cluster" --prefix "$prefix" linkrate 3)"
fi

if [ $mpi -eq 1 ]; then
  "$root/tools/cluster/dc-mpirun" --prefix "$prefix" --ranks-per-host "$per_host" \
    --mca pml ob1 --mca btl self,vader,tcp "$program" "$@"
else
  "$launcher" --netns "$("$cluster" --prefix "$prefix" hosts)" --ranks-per-host "$per_host" \
    "$program" "$@"
fi
