// Process-wide NCCL entry points: version, unique id, error strings, memory.
#include "src/nccl/api.h"

#include "base/log.h"
#include "src/nccl/device_runtime.h"

using dc::nccl::guarded;
using dc::nccl::require_output;
using dc::nccl::to_nccl;

// The version of the NCCL ABI implemented, not DeepComm's own version (dcGetVersion).
DEEPCOMM_NCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  return guarded([&] {
    require_output(version, "ncclGetVersion", "version");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  return guarded([&] {
    require_output(uniqueId, "ncclGetUniqueId", "uniqueId");
    dcUniqueId native;
    const dcResult_t result = dcGetUniqueId(&native);
    if (result == dcSuccess) std::memcpy(uniqueId, &native, sizeof native);
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(const char*, ncclGetErrorString, ncclResult_t result) {
  // ncclTimeout (2.30) has no native counterpart yet.
  if (result == ncclTimeout) return "timeout";
  return dcGetErrorString(static_cast<dcResult_t>(result));
}

// Messages are kept per thread, so the communicator argument does not select anything.
DEEPCOMM_NCCL_API(const char*, ncclGetLastError, ncclComm_t /*comm*/) {
  const char* message = dcGetLastError();
  return message != nullptr ? message : "";
}

// Device memory where a device plugin serves it (device_runtime.h), else shareable host memory.
DEEPCOMM_NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  return guarded([&] {
    dc::nccl::require_output(ptr, "ncclMemAlloc", "ptr");
    if (dc::nccl::alloc_device_memory(ptr, size)) return ncclSuccess;
    return to_nccl(dcMemAlloc(ptr, size));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  return guarded([&] {
    if (ptr != nullptr && dc::nccl::free_device_memory(ptr)) return ncclSuccess;
    return to_nccl(dcMemFree(ptr));
  });
}

// Re-reads NCCL_DEBUG / DEEPCOMM_DEBUG (the logging level) from the environment.
DEEPCOMM_NCCL_API(void, ncclResetDebugInit) { dc::reset_log_level(); }
