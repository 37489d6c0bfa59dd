// Suspending a communicator and its memory statistics (NCCL 2.30): ncclCommSuspend,
// ncclCommResume, ncclCommMemStats. Arguments are checked; the functions are not implemented yet
// (issue 34).
#include "src/nccl/checks.h"

using dc::nccl::comm_shape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::not_implemented;
using dc::nccl::require_output;

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommSuspend, ncclComm_t comm, int flags) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommSuspend");
    if ((flags & ~NCCL_SUSPEND_MEM) != 0) {
      invalid_argument("ncclCommSuspend", "unknown flags " + std::to_string(flags));
    }
    not_implemented("ncclCommSuspend");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommResume, ncclComm_t comm) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommResume");
    not_implemented("ncclCommResume");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommMemStats, ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommMemStats");
    if (stat < ncclStatGpuMemSuspend || stat > ncclStatGpuMemTotal) {
      invalid_argument("ncclCommMemStats", "unknown statistic " + std::to_string(stat));
    }
    require_output(value, "ncclCommMemStats", "value");
    not_implemented("ncclCommMemStats");
  });
}
