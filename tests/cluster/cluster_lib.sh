# Sourced by the cluster tests (DC_CLUSTER: the path of tools/cluster/dc-cluster). start_cluster
# makes a cluster named after this shell's pid and tears it down when the script exits, also on
# failure or a signal; where namespaces cannot be made it prints why and exits 77 (CTest's SKIP).

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Clusters of earlier test runs whose shell is gone: CTest kills a test past its timeout with
# SIGKILL, which runs no trap.
remove_stale_clusters() {
  local prefix
  for prefix in $(ip netns list | awk '{print $1}' | sed -nE 's/^(dctest[0-9]+)-(sw|h[0-9]+)$/\1/p' |
                  sort -u); do
    kill -0 "${prefix#dctest}" 2>/dev/null || "$DC_CLUSTER" --prefix "$prefix" down
  done
}

# start_cluster [dc-cluster options] up N: sets $prefix.
start_cluster() {
  local why status
  why=$("$DC_CLUSTER" "${@:1:$#-2}" check 2>&1)
  status=$?
  if [ $status -eq 3 ]; then
    echo "SKIP: $why"
    exit 77
  fi
  [ $status -eq 0 ] || fail "dc-cluster check: $why"
  remove_stale_clusters
  prefix=dctest$$
  trap '"$DC_CLUSTER" --prefix "$prefix" down' EXIT
  trap 'exit 1' INT TERM HUP
  "$DC_CLUSTER" --prefix "$prefix" "$@" || fail "dc-cluster --prefix $prefix $* failed"
}
