// Every CUDA runtime call of the plugin goes through DC_CUDA_CHECK, which turns a failure into a
// dc::Error that names the call, where it is, and CUDA's name and text for the error. The C ABI
// entry points (plugin_entry.cpp) catch it and hand back its code and message.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/error.h"

namespace dc::cuda {

[[noreturn]] inline void fail_cuda(cudaError_t error, const char* call, const char* file, int line) {
  fail(dcUnhandledCudaError, std::string("DeepComm CUDA plugin: ") + call + " failed at " + file + ":" +
                                 std::to_string(line) + ": " + cudaGetErrorName(error) + " (" +
                                 cudaGetErrorString(error) + ")");
}

}  // namespace dc::cuda

#define DC_CUDA_CHECK(call)                                                                              \
  do {                                                                                                   \
    const cudaError_t dc_cuda_error_ = (call);                                                           \
    if (dc_cuda_error_ != cudaSuccess) ::dc::cuda::fail_cuda(dc_cuda_error_, #call, __FILE__, __LINE__); \
  } while (0)
