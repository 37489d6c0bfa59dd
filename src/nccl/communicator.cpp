// Communicator life cycle and queries of the NCCL ABI.
#include <string>
#include <unordered_set>
#include <vector>

#include "src/nccl/api.h"
#include "src/nccl/comm_config.h"
#include "src/nccl/device_runtime.h"
#include "src/nccl/window_registry.h"

using dc::nccl::guarded;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

namespace {

ncclResult_t init_rank(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank, const dcConfig_t& config,
                       const char* function) {
  require_output(comm, function, "comm");
  const dcUniqueId native_id = to_dc(id);
  dcComm_t native = nullptr;
  const dcResult_t result = dcCommInitRank(&native, nranks, &native_id, rank, &config);
  // A nonblocking communicator is handed out while its init is still in progress.
  if (result == dcSuccess || result == dcInProgress) *comm = to_nccl(native);
  return to_nccl(result);
}

// DeepComm's ranks are host threads: device numbers only have to be sensible and distinct.
void check_device_list(const int* devlist, int ndev) {
  std::unordered_set<int> seen;
  for (int i = 0; i < ndev; ++i) {
    if (devlist[i] < 0) {
      dc::fail(dcInvalidArgument, "DeepComm: ncclCommInitAll: devlist[" + std::to_string(i) +
                                      "] = " + std::to_string(devlist[i]) + " is not a device");
    }
    if (!seen.insert(devlist[i]).second) {
      dc::fail(dcInvalidArgument,
               "DeepComm: ncclCommInitAll: device " + std::to_string(devlist[i]) + " is listed twice");
    }
  }
}

}  // namespace

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guarded(
      [&] { return init_rank(comm, nranks, commId, rank, dc::nccl::default_comm_config(), "ncclCommInitRank"); });
}

// config == NULL means all defaults, as in NCCL.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                  ncclConfig_t* config) {
  return guarded([&] {
    const dcConfig_t native =
        config != nullptr ? dc::nccl::comm_config_from_nccl(*config) : dc::nccl::default_comm_config();
    return init_rank(comm, nranks, commId, rank, native, "ncclCommInitRankConfig");
  });
}

// Ranks spread over nId rendezvous roots; commIds is the same array on every rank.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
                  ncclUniqueId* commIds, ncclConfig_t* config) {
  return guarded([&] {
    require_output(newcomm, "ncclCommInitRankScalable", "newcomm");
    if (commIds == nullptr) dc::fail(dcInvalidArgument, "DeepComm: ncclCommInitRankScalable: commIds is NULL");
    const dcConfig_t native =
        config != nullptr ? dc::nccl::comm_config_from_nccl(*config) : dc::nccl::default_comm_config();
    static_assert(sizeof(ncclUniqueId) == sizeof(dcUniqueId), "the ids are the same bytes");
    dcComm_t comm = nullptr;
    const dcResult_t result =
        dcCommInitRankScalable(&comm, nranks, myrank, nId, reinterpret_cast<const dcUniqueId*>(commIds), &native);
    if (result == dcSuccess || result == dcInProgress) *newcomm = to_nccl(comm);
    return to_nccl(result);
  });
}

// ndev ranks as threads of this process; devlist (optional) is checked but names no GPU.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist) {
  return guarded([&] {
    require_output(comm, "ncclCommInitAll", "comm");
    if (ndev < 1) {
      dc::fail(dcInvalidArgument, "DeepComm: ncclCommInitAll: ndev must be at least 1, not " + std::to_string(ndev));
    }
    if (devlist != nullptr) check_device_list(devlist, ndev);
    std::vector<dcComm_t> native(static_cast<size_t>(ndev), nullptr);
    const dcResult_t result = dcCommInitAll(native.data(), ndev);
    if (result == dcSuccess) {
      for (int i = 0; i < ndev; ++i) comm[i] = to_nccl(native[static_cast<size_t>(i)]);
    }
    return to_nccl(result);
  });
}

// color NCCL_SPLIT_NOCOLOR gives *newcomm = NULL; config == NULL inherits the parent's options.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                  ncclConfig_t* config) {
  return guarded([&] {
    require_output(newcomm, "ncclCommSplit", "newcomm");
    dc::nccl::wait_for_device_calls(comm);  // the bridge's thread is the communicator's user until then
    dcConfig_t native_config;
    if (config != nullptr) native_config = dc::nccl::comm_config_from_nccl(*config);
    dcComm_t native = nullptr;
    const dcResult_t result =
        dcCommSplit(to_dc(comm), color, key, &native, config != nullptr ? &native_config : nullptr);
    if (result == dcSuccess || result == dcInProgress) *newcomm = to_nccl(native);
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  return guarded([&] {
    dc::nccl::wait_for_device_calls(comm);
    return to_nccl(dcCommFinalize(to_dc(comm)));
  });
}

// Destroying NULL is a no-op that succeeds, as in NCCL.
namespace {

// A destroyed or aborted communicator takes its windows with it.
ncclResult_t forgetting_windows(ncclComm_t comm, dcResult_t result) {
  if (result == dcSuccess || result == dcInProgress) dc::nccl::forget_windows_of(comm);
  return to_nccl(result);
}

}  // namespace

// Device calls still held by the communicator's stream bridge run first (bounded).
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  return guarded([&] {
    if (comm == nullptr) return ncclSuccess;
    dc::nccl::end_bridge(comm);
    return forgetting_windows(comm, dcCommDestroy(to_dc(comm)));
  });
}

// Fails every pending operation (a call blocked in another thread returns within a second), tells
// the other ranks, and frees the communicator. Aborting NULL succeeds, as in NCCL.
// Device calls not run yet fail, and their streams are released.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  return guarded([&] {
    if (comm == nullptr) return ncclSuccess;
    dc::nccl::fail_bridge(comm, "the communicator was aborted (ncclCommAbort)");
    const ncclResult_t result = forgetting_windows(comm, dcCommAbort(to_dc(comm)));
    dc::nccl::end_bridge(comm);
    return result;
  });
}

// Pending and later operations fail on every rank; shrink, split and destroy still work.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  return guarded([&] {
    if (revokeFlags != NCCL_REVOKE_DEFAULT)
      dc::fail(dcInvalidArgument, "DeepComm: ncclCommRevoke: revokeFlags must be NCCL_REVOKE_DEFAULT");
    return to_nccl(dcCommRevoke(to_dc(comm)));
  });
}

// The ranks of comm not excluded, on comm's connections: works after a rank died, with no root.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                  ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guarded([&] {
    require_output(newcomm, "ncclCommShrink", "newcomm");
    dc::nccl::wait_for_device_calls(comm);
    if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
      dc::fail(dcInvalidArgument, "DeepComm: ncclCommShrink: unknown shrinkFlags " + std::to_string(shrinkFlags));
    dcConfig_t native_config;
    if (config != nullptr) native_config = dc::nccl::comm_config_from_nccl(*config);
    dcComm_t native = nullptr;
    const dcResult_t result = dcCommShrink(to_dc(comm), excludeRanksList, excludeRanksCount, &native,
                                           config != nullptr ? &native_config : nullptr,
                                           shrinkFlags == NCCL_SHRINK_ABORT ? DC_SHRINK_ABORT : DC_SHRINK_DEFAULT);
    if (result == dcSuccess) *newcomm = to_nccl(native);
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  return guarded([&] { return to_nccl(dcCommCount(to_dc(comm), count)); });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  return guarded([&] { return to_nccl(dcCommRank(to_dc(comm), rank)); });
}

// DeepComm's communicators work on host memory and own no CUDA device: the device is -1.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  return guarded([&] {
    require_output(device, "ncclCommCuDevice", "device");
    int rank = 0;
    const dcResult_t result = dcCommRank(to_dc(comm), &rank);  // validates comm
    if (result == dcSuccess) *device = -1;
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  return guarded([&] {
    require_output(asyncError, "ncclCommGetAsyncError", "asyncError");
    dcResult_t native = dcSuccess;
    const dcResult_t result = dcCommGetAsyncError(to_dc(comm), &native);
    // A failed device call fails the communicator too (its message is this thread's last error).
    if (const dc::Status device = dc::nccl::device_calls_error(comm);
        result == dcSuccess && native == dcSuccess && !device.ok()) {
      native = device.code;
      dc::set_last_error(device.message);
    }
    if (result == dcSuccess) *asyncError = to_nccl(native);
    return to_nccl(result);
  });
}

// Registration with the communicator's transports (host memory: see dcCommRegister). Device
// memory never reaches a transport (the stream bridge stages it): its handle is one of the communicator's, checked at deregistration.
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommRegister, const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guarded([&] {
    if (dc::nccl::on_device({buff})) return to_nccl(dc::nccl::register_device_buffer(comm, size, handle));
    return to_nccl(dcCommRegister(to_dc(comm), buff, size, handle));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommDeregister, const ncclComm_t comm, void* handle) {
  return guarded([&] {
    if (dc::nccl::deregister_device_buffer(comm, handle)) return ncclSuccess;
    return to_nccl(dcCommDeregister(to_dc(comm), handle));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                  int winFlags) {
  return guarded([&] {
    require_output(win, "ncclCommWindowRegister", "win");
    if (winFlags != NCCL_WIN_DEFAULT && winFlags != NCCL_WIN_COLL_SYMMETRIC)
      dc::fail(dcInvalidArgument, "DeepComm: ncclCommWindowRegister: unknown winFlags " + std::to_string(winFlags));
    dcWindow_t native = nullptr;
    const dcResult_t result =
        dcCommWindowRegister(to_dc(comm), buff, size, &native, winFlags == NCCL_WIN_COLL_SYMMETRIC ? 1 : 0);
    if (result == dcSuccess) {
      *win = reinterpret_cast<ncclWindow_t>(native);
      dc::nccl::remember_window(*win, {comm, buff, size});
    }
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  return guarded([&] {
    const dcResult_t result = dcCommWindowDeregister(to_dc(comm), reinterpret_cast<dcWindow_t>(win));
    if (result == dcSuccess) dc::nccl::forget_window(win);
    return to_nccl(result);
  });
}
