#!/usr/bin/env bash
# The device check (docs/gpu.md): on a machine with a GPU, from the folder bundle.sh made, runs the
# GPU tests of the CUDA plugin and of the stream bridge and writes every output, and a summary,
# into one folder. Without a GPU it still runs: the GPU tests skip and say why.
#
#   tools/device-check/run.sh [BUNDLE_DIR]     (default device-bundle; results in $OUT, else
#                                               device-check-results)
set -uo pipefail
bundle=$(cd "${1:-device-bundle}" && pwd)
out=${OUT:-$PWD/device-check-results}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DEEPCOMM_DEVICE_PLUGIN="$bundle/lib/libdeepcomm-cuda.so"
summary="$out/summary.txt"
: >"$summary"

{
  date -u
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv ||
    echo "nvidia-smi: not found or no GPU"
} >"$out/preflight.txt" 2>&1
cat "$out/preflight.txt" >>"$summary"

# name, seconds, program and arguments
check() {
  local name=$1 seconds=$2
  shift 2
  local start=$SECONDS
  timeout "$seconds" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s; $(grep -E '^\[  (PASSED|FAILED) +\]|^\[  SKIPPED \] [0-9]+ test' "$out/$name.txt" | tr '\n' ' ')" >>"$summary"
}

check cuda_plugin_test 180 "$bundle/bin/cuda_plugin_test"
check gpu_bridge_test 240 "$bundle/bin/gpu_bridge_test"
if command -v compute-sanitizer >/dev/null; then
  check memcheck 120 compute-sanitizer --tool memcheck --error-exitcode 1 "$bundle/bin/gpu_bridge_test" \
    --gtest_filter='GpuBridge.OneRank*'
else
  echo "memcheck: compute-sanitizer not found on this machine" >>"$summary"
fi
grep -hE '^all-reduce |released after' "$out"/gpu_bridge_test.txt >>"$summary" 2>/dev/null
cat "$summary"
