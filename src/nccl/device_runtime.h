// Device memory on the NCCL ABI: which buffers are device memory, the stream queue and the
// communicators' stream bridges that serve them (src/core/stream_bridge.h), and ncclMemAlloc's
// device allocations. The device plugin (device/plugin_abi.h) is loaded when first needed: the one
// DEEPCOMM_DEVICE_PLUGIN names, else libdeepcomm-cuda.so once the program's CUDA runtime sees a
// device. Without either, every buffer is host memory and no plugin is loaded.
#pragma once

#include <initializer_list>

#include "base/error.h"
#include "deepcomm/nccl.h"
#include "device/stream_queue.h"
#include "src/core/stream_bridge.h"

namespace dc::nccl {

// Whether a call's buffers (NULLs ignored) are device memory, all of them. Throws
// dc::Error(dcInvalidUsage) when host and device buffers are mixed, or when device memory is seen
// but no plugin serves it (the message says why).
bool on_device(std::initializer_list<const void*> buffers);
// Throws dc::Error(dcInvalidUsage) when pointer is device memory (a scalar argument).
void require_host_memory(const void* pointer, const char* what);

// A cudaStream_t as the device queue's handle.
inline device::Stream stream_of(cudaStream_t stream) { return {reinterpret_cast<uint64_t>(stream)}; }

// The bridge of a device call's communicator, made on its first device call. Inside a group the
// bridge collects the call until the outermost ncclGroupEnd (end_device_group). Throws
// dc::Error(dcInvalidUsage) when the thread's open group already holds host-memory calls of comm.
StreamBridge& device_bridge(ncclComm_t comm);
// The outermost group end: the thread's group's device calls are enqueued, one operation per
// communicator (or dropped: ncclGroupSimulateEnd). The first failure's code, else dcSuccess.
dcResult_t end_device_group(bool drop);
// Before a host-memory call, or split, shrink, grow and suspend (calls that use the communicator
// itself): waits until the communicator's device calls made before it ran.
// Throws dc::Error(dcInvalidUsage) when the thread's open group holds device calls of comm.
void wait_for_device_calls(ncclComm_t comm);
// The first failure of the communicator's device calls (ok while none).
Status device_calls_error(ncclComm_t comm);
// Pinned host memory the communicator's bridge keeps for later device calls (0 without a bridge),
// and freeing it (ncclCommSuspend, after the device calls ran).
size_t device_cached_bytes(ncclComm_t comm);
void release_device_cache(ncclComm_t comm);
// ncclCommDestroy (abort false) runs what the communicator's bridge holds first; ncclCommAbort
// fails it. Then the bridge ends; the caller ends the communicator after end_bridge.
void fail_bridge(ncclComm_t comm, const char* why);
void end_bridge(ncclComm_t comm);

// ncclCommRegister of device memory: a handle of the communicator's (the bridge stages device
// memory, so no transport sees it); the communicator is checked. deregister: false when handle is
// not such a handle of comm. A destroyed communicator's handles go with end_bridge.
dcResult_t register_device_buffer(ncclComm_t comm, size_t bytes, void** handle);
bool deregister_device_buffer(ncclComm_t comm, void* handle);

// ncclMemAlloc / ncclMemFree: device memory where a plugin serves it; false when none does.
bool alloc_device_memory(void** pointer, size_t bytes);
bool free_device_memory(void* pointer);

}  // namespace dc::nccl
