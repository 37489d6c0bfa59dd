#!/usr/bin/env bash
# Gathers what the device check (run.sh) needs from a build into one folder a GPU machine can take
# (its carried files are limited to 64 MiB): the GPU test programs, compress_perf, libnccl.so.2, the CUDA plugin
# and the libraries they load, glibc's aside (the GPU machine's own are used), without debug info.
#
#   tools/device-check/bundle.sh [BUILD_DIR] [BUNDLE_DIR]     (defaults: build, device-bundle)
set -euo pipefail
build=${1:-build}
bundle=${2:-device-bundle}

programs=("$build/tests/cuda_plugin/gpu_bridge_test" "$build/tests/cuda_plugin/cuda_plugin_test" "$build/bench/compress_perf")
libraries=("$build/src/nccl/libnccl.so.2" "$build/libdeepcomm-cuda.so")
for f in "${programs[@]}" "${libraries[@]}"; do
  [[ -f "$f" ]] || { echo "bundle.sh: $f is missing: build with the CUDA toolkit first" >&2; exit 1; }
done

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
cp "${programs[@]}" "$bundle/bin/"
cp "${libraries[@]}" "$bundle/lib/"
ldd "${programs[@]}" "${libraries[@]}" | awk '/=> \// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*)\.so' |
  while read -r library; do cp -nL "$library" "$bundle/lib/"; done
strip --strip-debug "$bundle"/bin/* "$bundle"/lib/*
du -sh "$bundle"
