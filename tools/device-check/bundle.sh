#!/usr/bin/env bash
# Gathers what the device check (run.sh) needs from a build into one folder a GPU machine can take
# (its carried files are limited to 64 MiB): the GPU test programs, compress_perf, device_ceilings,
# libnccl.so.2, the CUDA plugin and the libraries they load, glibc's aside (the GPU machine's own
# are used), without debug info.
#
#   tools/device-check/bundle.sh [BUILD_DIR] [BUNDLE_DIR]     (defaults: build, device-bundle)
#
# compute-sanitizer comes too where the build found it (tests/cuda_plugin/CMakeLists.txt). With
# NCCL_TESTS_BUILD set to a folder of nccl-tests programs built against DeepComm
# (tests/nccl/nccl_tests_build_test.sh makes one), their all_reduce_perf, all_gather_perf and
# sendrecv_perf come too, and run.sh runs them.
set -euo pipefail
build=${1:-build}
bundle=${2:-device-bundle}

programs=("$build/tests/cuda_plugin/gpu_bridge_test" "$build/tests/cuda_plugin/cuda_plugin_test" "$build/bench/compress_perf"
  "$build/bench/device_ceilings")
if [[ -n "${NCCL_TESTS_BUILD:-}" ]]; then
  programs+=("$NCCL_TESTS_BUILD/all_reduce_perf" "$NCCL_TESTS_BUILD/all_gather_perf" "$NCCL_TESTS_BUILD/sendrecv_perf")
fi
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
# compute-sanitizer, where the build found one (DEEPCOMM_COMPUTE_SANITIZER_DIR: the toolkit's or
# NVIDIA's pip package), compressed (43 MiB as it is, 15 compressed): run.sh unpacks it where the
# GPU machine has none of its own.
sanitizer=$(sed -n 's/^DEEPCOMM_COMPUTE_SANITIZER_DIR:PATH=//p' "$build/CMakeCache.txt")
if [[ -n "$sanitizer" && -x "$sanitizer/compute-sanitizer" ]]; then
  mkdir -p "$bundle/tools"
  tar -czf "$bundle/tools/compute-sanitizer.tar.gz" -C "$(dirname "$sanitizer")" --exclude=docs --exclude=include \
    "$(basename "$sanitizer")"
fi
du -sh "$bundle"
kib=$(du -sk "$bundle" | cut -f1)
if ((kib > 65536)); then
  echo "bundle.sh: $bundle takes $kib KiB, over the 64 MiB a GPU machine carries" >&2
  exit 1
fi
