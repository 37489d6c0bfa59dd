#!/bin/sh
# tools/device-check on this machine: bundle.sh gathers a bundle under 64 MiB that holds the GPU
# tests, libnccl.so.2 and the plugin; run.sh runs from it and writes a summary in which each test
# ran (skipping its GPU cases where there is no GPU).
set -eu
tools=$1 build=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
sh -c "bash '$tools/bundle.sh' '$build' '$work/bundle'" >"$work/bundle.log" 2>&1 || { cat "$work/bundle.log"; exit 1; }
for f in bin/gpu_bridge_test bin/cuda_plugin_test bin/compress_perf lib/libnccl.so.2 lib/libdeepcomm-cuda.so; do
  [ -f "$work/bundle/$f" ] || { echo "the bundle lacks $f"; exit 1; }
done
kib=$(du -sk "$work/bundle" | cut -f1)
[ "$kib" -le 65536 ] || { echo "the bundle takes $kib KiB, over the 64 MiB a GPU machine carries"; exit 1; }
(cd "$work" && OUT="$work/results" COMPRESS_COUNT=300001 bash "$tools/run.sh" bundle) >"$work/run.log" 2>&1 || { cat "$work/run.log"; exit 1; }
for name in cuda_plugin_test gpu_bridge_test compress_cpu_1 compress_cpu_2 compress_cpu_3 compress_cpu_4 compress_cpu_5; do
  grep -q "^$name: exit 0 " "$work/results/summary.txt" || { cat "$work/results/summary.txt"; exit 1; }
done
# Without a GPU the cuda engine says why instead of comparing.
[ "$(grep -c "^compress .*: no GPU message: .*CUDA" "$work/results/summary.txt")" -eq 5 ] ||
  { cat "$work/results/summary.txt"; exit 1; }
echo "bundle: $kib KiB; summary:"
cat "$work/results/summary.txt"
