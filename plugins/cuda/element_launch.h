// The element kernels of the plugin: reduce, pre-multiply and finalize of an average for every
// datatype (and op), their bodies written once in kernels/element_kernels.h, compiled here by nvcc
// for sm_80 and sm_90 with -fmad=false, so they give the CPU loops' bits.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "device/plugin_abi.h"

namespace dc::cuda {

constexpr unsigned kThreadsPerBlock = 256;

// Enqueues a reduce, pre-multiply or finalize-avg step on stream, its grid capped at max_blocks
// (each thread loops over the rest). Checks the step first and throws dc::Error before anything
// is enqueued: dcInvalidArgument for an unknown datatype or op, a null or misaligned pointer (every
// pointer must be aligned to its element), a divisor below 1; dcUnhandledCudaError when the launch
// fails. A step of no elements enqueues nothing.
void launch_element_kernel(const dcDeviceStep_t& step, cudaStream_t stream, unsigned max_blocks);

// Loads every element kernel into the current device's context (cudaFuncGetAttributes), so the
// first step pays no module load, and checks that each runs kThreadsPerBlock threads per block.
// Returns how many kernels there are. Throws dc::Error on a CUDA failure.
size_t load_element_kernels();

}  // namespace dc::cuda
