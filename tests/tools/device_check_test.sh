#!/bin/sh
# tools/device-check on this machine: bundle.sh gathers a bundle under 64 MiB that holds the GPU
# tests, libnccl.so.2 and the plugin; run.sh runs from it and writes a summary in which each test
# ran (skipping its GPU cases where there is no GPU). Then run.sh again with the CPU test plugin
# (test_plugin), whose stream queue runs the GPU codec's kernels in emulation: the part of the
# summary only a GPU reaches (the ceilings, the GPU message against the CPU's, the fractions of the
# memory ceiling) is made and checked here too.
set -eu
tools=$1 build=$2 work=$3 test_plugin=$4
rm -rf "$work"
mkdir -p "$work"
sh -c "bash '$tools/bundle.sh' '$build' '$work/bundle'" >"$work/bundle.log" 2>&1 || { cat "$work/bundle.log"; exit 1; }
for f in bin/gpu_bridge_test bin/cuda_plugin_test bin/compress_perf bin/device_ceilings lib/libnccl.so.2 \
  lib/libdeepcomm-cuda.so; do
  [ -f "$work/bundle/$f" ] || { echo "the bundle lacks $f"; exit 1; }
done
kib=$(du -sk "$work/bundle" | cut -f1)
[ "$kib" -le 65536 ] || { echo "the bundle takes $kib KiB, over the 64 MiB a GPU machine carries"; exit 1; }
(cd "$work" && OUT="$work/results" COMPRESS_COUNT=300001 bash "$tools/run.sh" bundle) >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
for name in device_ceilings cuda_plugin_test gpu_bridge_test compress_cpu_1 compress_cpu_2 compress_cpu_3 compress_cpu_4 \
  compress_cpu_5; do
  grep -q "^$name: exit 0 " "$work/results/summary.txt" || { cat "$work/results/summary.txt"; exit 1; }
done
# Without a GPU the cuda engine says why instead of comparing.
[ "$(grep -c "^compress .*: no GPU message: .*CUDA" "$work/results/summary.txt")" -eq 5 ] ||
  { cat "$work/results/summary.txt"; exit 1; }
grep -q "^device_ceilings: skipped: .*CUDA" "$work/results/summary.txt" || { cat "$work/results/summary.txt"; exit 1; }
# Where the build found compute-sanitizer, the bundle carries it and run.sh unpacks it (and, with
# no GPU here, does not run it).
if grep -q '^DEEPCOMM_COMPUTE_SANITIZER_DIR:PATH=/' "$build/CMakeCache.txt"; then
  [ -f "$work/bundle/tools/compute-sanitizer.tar.gz" ] || { echo "the bundle lacks compute-sanitizer"; exit 1; }
  grep -q "^compute-sanitizer: no GPU here, not run (.*compute-sanitizer)$" "$work/results/summary.txt" ||
    { cat "$work/results/summary.txt"; exit 1; }
fi
echo "bundle: $kib KiB; summary:"
cat "$work/results/summary.txt"

(cd "$work" && OUT="$work/results-emulated" COMPRESS_COUNT=300001 CEILING_BYTES=4194304 DEEPCOMM_DEVICE_PLUGIN="$test_plugin" \
  bash "$tools/run.sh" bundle) >"$work/run-emulated.log" 2>&1 || { cat "$work/run-emulated.log"; exit 1; }
emulated="$work/results-emulated/summary.txt"
expect() {  # a count of summary lines matching a pattern
  [ "$(grep -c "$2" "$emulated")" -eq "$1" ] || { echo "want $1 lines like '$2' in:"; cat "$emulated"; exit 1; }
}
expect 1 "^device_ceilings: exit 0 "
expect 1 "^copy d2d: [0-9.]* GB/s copied, [0-9.]* GB/s of traffic"
expect 1 "^sum float32: [0-9.]* GB/s of traffic"
expect 2 "^round trip, host .*: median [0-9.]* us"
expect 5 "^compress .*: the GPU message is the CPU's, byte for byte"
expect 5 "^compress .* on the GPU: encode [0-9.]*, decode [0-9.]* of the d2d copy ([0-9.]* GB/s)"
# The GPU's rows say what the CPU's say (bytes in and out, ratio, elements kept, bits each), all
# but the two speeds.
rows() { grep "^$1: " "$emulated" | awk '{ for (i = 2; i <= NF - 2; ++i) printf "%s ", $i; print "" }'; }
[ "$(rows cpu)" = "$(rows cuda)" ] || { echo "the GPU's rows differ from the CPU's:"; cat "$emulated"; exit 1; }
echo "on the CPU test plugin:"
cat "$emulated"
