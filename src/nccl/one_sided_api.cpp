// One-sided operations on windows (NCCL 2.30): ncclPutSignal, ncclSignal, ncclWaitSignal and
// ncclWinGetUserPtr. ncclWinGetUserPtr works; the others check their arguments and are not
// implemented yet (issue 34).
// The contexts' upper bound (numRmaCtx) is checked once the communicator keeps it.
#include "src/nccl/checks.h"
#include "src/nccl/window_registry.h"

using dc::nccl::comm_shape;
using dc::nccl::CommShape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::not_implemented;
using dc::nccl::require_input;
using dc::nccl::require_output;
using dc::nccl::require_peer;

namespace {

void check_signal(int sigIdx, int ctx, unsigned int flags, const char* function) {
  if (sigIdx < 0) invalid_argument(function, "sigIdx " + std::to_string(sigIdx) + " is negative");
  if (ctx < 0) invalid_argument(function, "ctx " + std::to_string(ctx) + " is negative");
  if (flags != 0) invalid_argument(function, "flags must be 0, not " + std::to_string(flags));
}

}  // namespace

DEEPCOMM_NCCL_API(ncclResult_t, ncclPutSignal, const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                  ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)peerWinOffset;
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    constexpr const char* kFunction = "ncclPutSignal";
    const CommShape shape = comm_shape(comm, kFunction);
    require_peer(shape, peer, kFunction);
    if (datatype < ncclInt8 || datatype >= ncclNumTypes) {
      invalid_argument(kFunction, "unknown datatype " + std::to_string(datatype));
    }
    if (count > 0) require_input(localbuff, kFunction, "localbuff");
    require_input(peerWin, kFunction, "peerWin");
    check_signal(sigIdx, ctx, flags, kFunction);
    not_implemented(kFunction);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclSignal, int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    const CommShape shape = comm_shape(comm, "ncclSignal");
    require_peer(shape, peer, "ncclSignal");
    check_signal(sigIdx, ctx, flags, "ncclSignal");
    not_implemented("ncclSignal");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclWaitSignal, int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm,
                  cudaStream_t stream) {
  (void)stream;
  return guarded([&]() -> ncclResult_t {
    constexpr const char* kFunction = "ncclWaitSignal";
    const CommShape shape = comm_shape(comm, kFunction);
    if (nDesc < 0) invalid_argument(kFunction, "nDesc " + std::to_string(nDesc) + " is negative");
    if (nDesc > 0) require_input(signalDescs, kFunction, "signalDescs");
    for (int i = 0; i < nDesc; ++i) {
      const ncclWaitSignalDesc_t& desc = signalDescs[i];
      if (desc.opCnt < 0) {
        invalid_argument(kFunction, "signalDescs[" + std::to_string(i) + "].opCnt is negative");
      }
      require_peer(shape, desc.peer, kFunction);
      check_signal(desc.sigIdx, desc.ctx, 0, kFunction);
    }
    not_implemented(kFunction);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclWinGetUserPtr");
    require_input(win, "ncclWinGetUserPtr", "win");
    require_output(outUserPtr, "ncclWinGetUserPtr", "outUserPtr");
    *outUserPtr = dc::nccl::window_record(win, comm, "ncclWinGetUserPtr").buffer;
    return ncclSuccess;
  });
}
