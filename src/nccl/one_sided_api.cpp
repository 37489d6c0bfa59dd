// One-sided operations on windows (NCCL 2.30): ncclPutSignal, ncclSignal, ncclWaitSignal and
// ncclWinGetUserPtr, on the native dcPutSignal, dcSignal and dcWaitSignal. Host memory only: a
// device buffer or a window over device memory is refused (the stream bridge does not carry
// one-sided operations yet). On host memory the stream is not used, as for the other calls.
#include <vector>

#include "src/nccl/api.h"
#include "src/nccl/checks.h"
#include "src/nccl/device_runtime.h"
#include "src/nccl/window_registry.h"

using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::require_input;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

namespace {

void check_flags(unsigned int flags, const char* function) {
  if (flags != 0) invalid_argument(function, "flags must be 0, not " + std::to_string(flags));
}

void refuse_device_memory(std::initializer_list<const void*> buffers, const char* function) {
  if (dc::nccl::on_device(buffers)) {
    dc::fail(dcInvalidUsage, std::string("DeepComm: ") + function +
                                 ": one-sided operations on device memory are not supported yet (host memory only)");
  }
}

}  // namespace

DEEPCOMM_NCCL_API(ncclResult_t, ncclPutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                  ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    constexpr const char* kFunction = "ncclPutSignal";
    check_flags(flags, kFunction);
    require_input(peerWin, kFunction, "peerWin");
    const dc::nccl::WindowRecord window = dc::nccl::window_record(peerWin, comm, kFunction);
    refuse_device_memory({localbuff, window.buffer}, kFunction);
    return to_nccl(dcPutSignal(localbuff, count, to_dc(datatype), peer, reinterpret_cast<dcWindow_t>(peerWin),
                               peerWinOffset, sigIdx, ctx, to_dc(comm)));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclSignal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    check_flags(flags, "ncclSignal");
    return to_nccl(dcSignal(peer, sigIdx, ctx, to_dc(comm)));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclWaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    if (nDesc > 0) require_input(signalDescs, "ncclWaitSignal", "signalDescs");
    std::vector<dcSignalWait_t> waits;
    for (int i = 0; i < nDesc; ++i) {
      const ncclWaitSignalDesc_t& desc = signalDescs[i];
      waits.push_back({desc.opCnt, desc.peer, desc.sigIdx, desc.ctx});
    }
    return to_nccl(dcWaitSignal(nDesc, waits.data(), to_dc(comm)));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return guarded([&]() -> ncclResult_t {
    dc::nccl::comm_shape(comm, "ncclWinGetUserPtr");
    require_input(win, "ncclWinGetUserPtr", "win");
    require_output(outUserPtr, "ncclWinGetUserPtr", "outUserPtr");
    *outUserPtr = dc::nccl::window_record(win, comm, "ncclWinGetUserPtr").buffer;
    return ncclSuccess;
  });
}
