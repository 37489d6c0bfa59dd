#!/bin/sh
# An unmodified CUDA program written for NCCL, NVIDIA's nccl-tests, built with nvcc against
# DeepComm's nccl.h (with NVIDIA's 2.30 nccl_device headers, which DeepComm does not ship) and
# linked to DeepComm's libnccl.so.2: it compiles, every NCCL symbol it uses resolves at load
# (LD_BIND_NOW), it reports DeepComm's library version, and on a machine without a GPU it stops
# with CUDA's error, not a crash. Its programs stay in WORK/build for the device check
# (NCCL_TESTS_BUILD, tools/device-check/bundle.sh).
#
#   nccl_tests_build_test.sh NCCL_TESTS_SOURCE DEEPCOMM_SOURCE LIBNCCL_DIR NCCL_DEVICE_INCLUDE CUDA_LIB_DIR WORK
set -eu
source=$1 deepcomm=$2 libdir=$3 device_include=$4 cuda_lib=$5 work=$6
rm -rf "$work"
mkdir -p "$work/home/include" "$work/home/lib" "$work/cudart"
# nccl-tests' Makefile takes NCCL_HOME/include and NCCL_HOME/lib: DeepComm's header and library
# there, and the CUDA runtime alone in CUDA_LIB (the toolkit's lib64 also holds NVIDIA's libnccl,
# which would be linked instead).
ln -s "$deepcomm/include/deepcomm/nccl.h" "$work/home/include/nccl.h"
ln -s "$device_include/nccl_device.h" "$work/home/include/nccl_device.h"
ln -s "$device_include/nccl_device" "$work/home/include/nccl_device"
ln -s "$libdir/libnccl.so.2" "$work/home/lib/libnccl.so.2"
ln -s libnccl.so.2 "$work/home/lib/libnccl.so"
for f in "$cuda_lib"/libcudart*; do ln -s "$f" "$work/cudart/"; done
cp -R "$source/." "$work/src"
make -C "$work/src/src" -j2 NCCL_HOME="$work/home" CUDA_LIB="$work/cudart" BUILDDIR="$work/build" \
  NVCC_GENCODE="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90" \
  "$work/build/all_reduce_perf" "$work/build/all_gather_perf" "$work/build/sendrecv_perf" >"$work/make.log" 2>&1 ||
  { tail -30 "$work/make.log"; exit 1; }
for program in all_reduce_perf all_gather_perf sendrecv_perf; do
  readelf -d "$work/build/$program" | grep -q 'NEEDED.*\[libnccl.so.2\]' || { echo "$program: no libnccl.so.2 NEEDED"; exit 1; }
  status=0
  LD_LIBRARY_PATH="$libdir" LD_BIND_NOW=1 "$work/build/$program" -b 8 -e 1M -f 2 -c 1 >"$work/$program.txt" 2>&1 || status=$?
  cat "$work/$program.txt"
  # DeepComm's library (NVIDIA's would print its own version), then CUDA's error, without a signal.
  grep -q "nccl-library=23007" "$work/$program.txt" || { echo "$program: not DeepComm's libnccl.so.2"; exit 1; }
  if [ "$status" -eq 0 ]; then
    grep -q "Out of bounds values : 0 OK" "$work/$program.txt" || { echo "$program: exit 0 without a clean check"; exit 1; }
  else
    [ "$status" -lt 128 ] || { echo "$program: killed by signal $((status - 128))"; exit 1; }
    grep -q "CUDA failure" "$work/$program.txt" || { echo "$program: failed ($status) without CUDA's error"; exit 1; }
  fi
done
echo "nccl-tests built against DeepComm and ran as far as this machine allows"
