// Suspending a communicator and its memory statistics (NCCL 2.30): ncclCommSuspend,
// ncclCommResume, ncclCommMemStats, onto dcCommSuspend, dcCommResume and dcCommMemory. DeepComm
// holds host memory; the "GPU memory" statistics report it (docs/nccl-abi.md, "Suspend and resume"):
// ncclStatGpuMemSuspend what suspending frees (scratch, copy-through segments and the stream
// bridge's cached pinned blocks; 0 while suspended unless a communicator sharing a connection uses
// its segment), ncclStatGpuMemPersist what stays, ncclStatGpuMemTotal their sum,
// ncclStatGpuMemSuspended 1 while suspended, else 0.
#include "src/nccl/checks.h"
#include "src/nccl/device_runtime.h"

using dc::nccl::comm_shape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommSuspend");
    dc::nccl::wait_for_device_calls(comm);  // the bridge's thread is the communicator's user until then
    if ((flags & ~NCCL_SUSPEND_MEM) != 0) {
      invalid_argument("ncclCommSuspend", "unknown flags " + std::to_string(flags));
    }
    // Memory is the only resource NCCL 2.30 suspends: without NCCL_SUSPEND_MEM there is nothing to do.
    if ((flags & NCCL_SUSPEND_MEM) == 0) return ncclSuccess;
    const dcResult_t result = dcCommSuspend(to_dc(comm));
    if (result == dcSuccess) dc::nccl::release_device_cache(comm);  // the stream bridge's pinned blocks
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommResume");
    return to_nccl(dcCommResume(to_dc(comm)));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommMemStats");
    if (stat < ncclStatGpuMemSuspend || stat > ncclStatGpuMemTotal) {
      invalid_argument("ncclCommMemStats", "unknown statistic " + std::to_string(stat));
    }
    require_output(value, "ncclCommMemStats", "value");
    dcCommMemory_t memory{};
    const dcResult_t result = dcCommMemory(to_dc(comm), &memory);
    if (result != dcSuccess) return to_nccl(result);
    memory.releasableBytes += dc::nccl::device_cached_bytes(comm);  // pinned blocks for device calls
    switch (stat) {
      case ncclStatGpuMemSuspend: *value = memory.releasableBytes; break;
      case ncclStatGpuMemSuspended: *value = memory.suspended ? 1 : 0; break;
      case ncclStatGpuMemPersist: *value = memory.persistentBytes; break;
      case ncclStatGpuMemTotal: *value = memory.releasableBytes + memory.persistentBytes; break;
    }
    return ncclSuccess;
  });
}
