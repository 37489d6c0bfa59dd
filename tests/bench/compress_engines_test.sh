#!/bin/sh
# compress_perf --engine cpu|emulated|cuda writes one message for one input and spec (issue 31: one
# wire format). Here the cuda engine runs through the test plugin, whose GPU encoder is the
# emulated kernels behind the plugin's C ABI; on a GPU machine the device check does the same with
# the CUDA plugin (tools/device-check/run.sh).
set -eu
perf=$1 plugin=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
for spec in q8 q8:stochastic,huffman,ef,chunk:4096 q8:64,huffman,ef:0.9 topk:0.001,q8,huffman,ef,chunk:4096 \
  topk:0.01:sampled,ef; do
  for engine in cpu emulated cuda; do
    DEEPCOMM_DEVICE_PLUGIN=$plugin "$perf" --generate lognormal --count 300001 --spec "$spec" --iters 1 \
      --engine "$engine" --output "$work/$engine.msg" >"$work/$engine.txt"
  done
  for engine in emulated cuda; do
    cmp "$work/cpu.msg" "$work/$engine.msg" || { echo "$spec: the $engine engine wrote other bytes than cpu"; exit 1; }
  done
  echo "$spec: $(wc -c <"$work/cpu.msg") bytes, the same on every engine"
done
# A spec the GPU encoder does not take (auto chooses from statistics on the CPU) is refused, not
# run on the CPU behind the user's back.
if DEEPCOMM_DEVICE_PLUGIN=$plugin "$perf" --generate normal --count 1000 --spec auto --engine cuda \
  >"$work/refused.txt" 2>&1; then
  echo "an auto spec was accepted by the cuda engine"
  exit 1
fi
grep -q "dense q8 and top-k specs" "$work/refused.txt" || { cat "$work/refused.txt"; exit 1; }
