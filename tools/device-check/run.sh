#!/usr/bin/env bash
# The device check (docs/gpu.md): on a machine with a GPU, from the folder bundle.sh made, measures
# the device's ceilings, runs the GPU tests of the CUDA plugin and of the stream bridge, and the GPU
# encoder against the CPU codec (compress_perf), and writes every output, and a summary, into one
# folder. Without a GPU it still runs: the GPU tests skip and say why.
#
#   tools/device-check/run.sh [BUNDLE_DIR]     (default device-bundle; results in $OUT, else
#                                               device-check-results)
set -uo pipefail
bundle=$(cd "${1:-device-bundle}" && pwd)
out=${OUT:-$PWD/device-check-results}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The bundle's CUDA plugin, unless DEEPCOMM_DEVICE_PLUGIN names another (tests/tools runs the
# script's GPU half here on the CPU test plugin, which runs the GPU codec's kernels in emulation).
export DEEPCOMM_DEVICE_PLUGIN="${DEEPCOMM_DEVICE_PLUGIN:-$bundle/lib/libdeepcomm-cuda.so}"
summary="$out/summary.txt"
: >"$summary"

{
  date -u
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv ||
    echo "nvidia-smi: not found or no GPU"
  # Apart, so that a driver without one of these fields still gives the line above.
  nvidia-smi --query-gpu=compute_cap,clocks.max.sm,clocks.max.memory,persistence_mode --format=csv 2>/dev/null
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

# The device's ceilings first (copies, the float32 sum, the doorbell-to-gate round trip) on
# CEILING_BYTES-byte buffers: the figures below are read against them.
check device_ceilings 120 "$bundle/bin/device_ceilings" --bytes "${CEILING_BYTES:-268435456}"
grep -hE '^(device_ceilings|copy |sum |round trip)' "$out/device_ceilings.txt" >>"$summary"
# The CUDA plugin starts only on a device with 64-bit stream memory operations (the doorbells' and
# gates' memops; there is no gate kernel to fall back on).
if grep -q '^device_ceilings: plugin cuda' "$out/device_ceilings.txt"; then
  echo "memops: the device has 64-bit stream memory operations (the CUDA plugin started)" >>"$summary"
fi
# The memory ceiling: the device-to-device copy's traffic (read + write), in GB/s.
memory_gbps=$(sed -n 's/^copy d2d: .*, \([0-9.]*\) GB\/s of traffic.*/\1/p' "$out/device_ceilings.txt")

check cuda_plugin_test 180 "$bundle/bin/cuda_plugin_test"
check gpu_bridge_test 240 "$bundle/bin/gpu_bridge_test"
grep -hE '^all-reduce |^compressed all-reduce |released after' "$out"/gpu_bridge_test.txt >>"$summary" 2>/dev/null

# compute-sanitizer: memcheck on one run of the stream bridge, racecheck on the GPU codec's kernels
# (their shared memory and block barriers). The machine's, else the one the bundle carries.
sanitizer=$(command -v compute-sanitizer || true)
unpacked=""
if [[ -z "$sanitizer" && -f "$bundle/tools/compute-sanitizer.tar.gz" ]]; then
  unpacked=$(mktemp -d)
  tar -xzf "$bundle/tools/compute-sanitizer.tar.gz" -C "$unpacked" &&
    sanitizer="$unpacked/compute-sanitizer/compute-sanitizer"
fi
if [[ -z "$sanitizer" ]]; then
  echo "compute-sanitizer: none on this machine or in the bundle" >>"$summary"
elif ! nvidia-smi -L >/dev/null 2>&1; then
  echo "compute-sanitizer: no GPU here, not run ($sanitizer)" >>"$summary"
else
  check memcheck 120 "$sanitizer" --tool memcheck --error-exitcode 1 "$bundle/bin/gpu_bridge_test" \
    --gtest_filter='GpuBridge.OneRank*'
  check racecheck 240 "$sanitizer" --tool racecheck --error-exitcode 1 "$bundle/bin/compress_perf" --generate lognormal \
    --count 1048576 --spec q8,huffman,ef,chunk:4096 --spec topk:0.001,q8,huffman,ef,chunk:4096 --iters 1 --engine cuda
  grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/memcheck.txt" "$out/racecheck.txt" >>"$summary"
fi
if [[ -n "$unpacked" ]]; then rm -rf "$unpacked"; fi

# nccl-tests, unmodified, on DeepComm's libnccl.so.2 (when bundle.sh was given them): one rank on
# the GPU, nccl-tests' own check of every result (-c 1), then the same captured in a CUDA graph and
# replayed (-G 10).
for program in all_reduce_perf all_gather_perf sendrecv_perf; do
  [[ -x "$bundle/bin/$program" ]] || continue
  check "nccl_tests_$program" 120 "$bundle/bin/$program" -b 8 -e 64M -f 4 -c 1
  check "nccl_tests_${program}_graph" 120 "$bundle/bin/$program" -b 8 -e 64M -f 4 -c 1 -G 10
  for run in "nccl_tests_$program" "nccl_tests_${program}_graph"; do
    grep -hE 'nccl-library=|Out of bounds values|Avg bus bandwidth' "$out/$run.txt" | sed "s/^/$run: /" >>"$summary"
  done
done

# The GPU encoder (compression/gpu): on a 256 MiB float32 gradient (COMPRESS_COUNT elements), the
# message the CUDA kernels write must be the CPU codec's, byte for byte; the cuda rows' enc_GB/s is
# the kernels' speed.
count=${COMPRESS_COUNT:-67108864}
messages=$(mktemp -d)
index=0
for spec in q8 q8,huffman,ef,chunk:4096 q8:stochastic,huffman,ef,chunk:4096 topk:0.001,q8,huffman,ef,chunk:4096 \
  topk:0.001:sampled,q8,huffman,ef,chunk:4096; do
  index=$((index + 1))
  for engine in cpu cuda; do
    check "compress_${engine}_$index" 240 "$bundle/bin/compress_perf" --generate lognormal --count "$count" \
      --spec "$spec" --iters 3 --engine "$engine" --output "$messages/$engine.msg"
    grep -A1 '^spec' "$out/compress_${engine}_$index.txt" | tail -1 | sed "s/^/$engine: /" >>"$summary"
  done
  # The kernels' rates (GB/s of float32 input encoded, of output decoded) against the memory
  # ceiling: a fraction of what the device moves at best.
  if [[ -n "$memory_gbps" ]]; then
    grep -A1 '^spec' "$out/compress_cuda_$index.txt" | tail -1 | awk -v ceiling="$memory_gbps" -v spec="$spec" \
      'NF >= 8 { printf "compress %s on the GPU: encode %.3f, decode %.3f of the d2d copy (%s GB/s)\n", spec, $(NF-1) / ceiling, $NF / ceiling, ceiling }' >>"$summary"
  fi
  if [[ ! -f "$messages/cuda.msg" ]]; then
    echo "compress $spec: no GPU message: $(tail -1 "$out/compress_cuda_$index.txt")" >>"$summary"
  elif cmp -s "$messages/cpu.msg" "$messages/cuda.msg"; then
    echo "compress $spec: the GPU message is the CPU's, byte for byte" >>"$summary"
  else
    echo "compress $spec: the GPU message DIFFERS from the CPU's" >>"$summary"
  fi
  rm -f "$messages"/*.msg
done
rmdir "$messages"
cat "$summary"
