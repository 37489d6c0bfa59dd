// libdeepcomm-cuda.so's one export, deepcommDevicePlugin (device/plugin_abi.h, version 1): the
// table of C functions over CudaQueue. No exception crosses it: a dc::Error becomes its code (and
// create's message), anything else dcInternalError.
#include <cstdio>
#include <exception>

#include "base/error.h"
#include "device/plugin_abi.h"
#include "plugins/cuda/cuda_queue.h"

namespace dc::cuda {
namespace {

int32_t create(void** queue, char* error, size_t error_size) {
  try {
    *queue = new CudaQueue;
    return dcSuccess;
  } catch (const Error& e) {
    std::snprintf(error, error_size, "%s", e.what());
    return e.code();
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "DeepComm CUDA plugin: %s", e.what());
    return dcInternalError;
  }
}

void destroy(void* queue) { delete static_cast<CudaQueue*>(queue); }

// Every step is accepted (and completes through poll) or refused inside post; none ends there.
int32_t post(void* queue, const dcDeviceStep_t* step, uint64_t stream, uint64_t tag, int32_t* result) {
  try {
    static_cast<CudaQueue*>(queue)->post(*step, stream, tag);
    return 0;
  } catch (const Error& e) {
    *result = e.code();
  } catch (const std::exception&) {
    *result = dcInternalError;
  }
  return 1;
}

int32_t poll(void* queue, dcDeviceCompletion_t* out, int32_t max) {
  return static_cast<CudaQueue*>(queue)->poll(out, max);
}

int32_t completion_fd(void*) { return -1; }  // the caller polls

const dcDevicePlugin_v1_t kPlugin = {DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION,
                                     sizeof(dcDevicePlugin_v1_t),
                                     "cuda",
                                     0,  // steps without a stream end later, on the device
                                     create,
                                     destroy,
                                     post,
                                     poll,
                                     completion_fd};

}  // namespace
}  // namespace dc::cuda

extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT const dcDevicePlugin_v1_t* deepcommDevicePlugin() {
  return &dc::cuda::kPlugin;
}
