// The host side of NCCL's device API that needs device-initiated communication: device
// communicators, GIN and multicast. DeepComm has none yet, so these check their arguments and
// return ncclInvalidUsage; ncclCommQueryProperties reports that. Window pointers: a window is
// registered, not mapped into the peers, so the only address load/store reaches is the rank's own.
#include <cstddef>
#include <cstring>

#include "deepcomm/nccl_device_host.h"
#include "src/nccl/checks.h"
#include "src/nccl/window_registry.h"

using dc::nccl::comm_shape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::no_device_api;
using dc::nccl::require_input;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

// ncclGin{Outbox,InboxA2A}CreateRequirement (below): NVIDIA declares them only in its Windows
// headers (gin_win_stub.h) but exports them on Linux too; their handle types stay opaque here.
struct ncclGinOutboxHandle;
struct ncclGinInboxA2AHandle;

// Fills the fields that fit in props->size (a struct from an older header is shorter).
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommQueryProperties, ncclComm_t comm, ncclCommProperties_t* props) {
  return guarded([&] {
    constexpr const char* kFunction = "ncclCommQueryProperties";
    const dc::nccl::CommShape shape = comm_shape(comm, kFunction);
    require_output(props, kFunction, "props");
    constexpr std::size_t kHeader = offsetof(ncclCommProperties_t, rank);
    if (props->magic != NCCL_API_MAGIC || props->size < kHeader) {
      invalid_argument(kFunction, "props was not initialized with NCCL_COMM_PROPERTIES_INITIALIZER");
    }
    ncclCommProperties_t known = {};
    known.rank = shape.rank;
    known.nRanks = shape.nranks;
    known.cudaDev = -1;  // host memory, as ncclCommCuDevice
    known.nvmlDev = -1;
    known.deviceApiSupport = false;
    known.multimemSupport = false;
    known.ginType = NCCL_GIN_TYPE_NONE;
    known.nLsaTeams = shape.nranks / dc::nccl::lsa_team(comm, kFunction).size;  // see ncclTeamLsa
    known.hostRmaSupport = true;                                                // ncclPutSignal on host memory
    known.railedGinType = NCCL_GIN_TYPE_NONE;
    const std::size_t end = props->size < sizeof known ? props->size : sizeof known;
    std::memcpy(reinterpret_cast<char*>(props) + kHeader, reinterpret_cast<const char*>(&known) + kHeader,
                end - kHeader);
    return ncclSuccess;
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclDevCommCreate, ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                  ncclDevComm_t* outDevComm) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclDevCommCreate");
    require_input(reqs, "ncclDevCommCreate", "reqs");
    require_output(outDevComm, "ncclDevCommCreate", "outDevComm");
    no_device_api("ncclDevCommCreate");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclDevCommDestroy, ncclComm_t comm, ncclDevComm_t const* devComm) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclDevCommDestroy");
    require_input(devComm, "ncclDevCommDestroy", "devComm");
    no_device_api("ncclDevCommDestroy");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGetLsaMultimemDevicePointer, ncclWindow_t window, size_t offset, void** outPtr) {
  (void)offset;
  return guarded([&]() -> ncclResult_t {
    require_input(window, "ncclGetLsaMultimemDevicePointer", "window");
    require_output(outPtr, "ncclGetLsaMultimemDevicePointer", "outPtr");
    no_device_api("ncclGetLsaMultimemDevicePointer");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGetMultimemDevicePointer, ncclWindow_t window, size_t offset,
                  ncclMultimemHandle_t multimem, void** outPtr) {
  (void)offset;
  (void)multimem;
  return guarded([&]() -> ncclResult_t {
    require_input(window, "ncclGetMultimemDevicePointer", "window");
    require_output(outPtr, "ncclGetMultimemDevicePointer", "outPtr");
    no_device_api("ncclGetMultimemDevicePointer");
  });
}

// LSA rank r is world rank first + r of the rank's LSA team (see ncclTeamLsa).
DEEPCOMM_NCCL_API(ncclResult_t, ncclGetLsaDevicePointer, ncclWindow_t window, size_t offset, int lsaRank,
                  void** outPtr) {
  return guarded([&] {
    constexpr const char* kFunction = "ncclGetLsaDevicePointer";
    require_input(window, kFunction, "window");
    require_output(outPtr, kFunction, "outPtr");
    const dc::nccl::WindowRecord record = dc::nccl::window_record(window, nullptr, kFunction);
    const dc::nccl::LsaTeam lsa = dc::nccl::lsa_team(record.comm, kFunction);
    if (lsaRank < 0 || lsaRank >= lsa.size) {
      invalid_argument(kFunction, "lsaRank " + std::to_string(lsaRank) + " is not in this rank's LSA team of " +
                                      std::to_string(lsa.size));
    }
    return to_nccl(dcWindowPeerPointer(to_dc(record.comm), reinterpret_cast<dcWindow_t>(window), offset,
                                       lsa.first + lsaRank, outPtr));
  });
}

// This rank's own buffer, or a peer's window mapped into this process (dcWindowPeerPointer: a window
// in ncclMemAlloc memory of a rank on this host, over shared memory).
DEEPCOMM_NCCL_API(ncclResult_t, ncclGetPeerDevicePointer, ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  return guarded([&] {
    constexpr const char* kFunction = "ncclGetPeerDevicePointer";
    require_input(window, kFunction, "window");
    require_output(outPtr, kFunction, "outPtr");
    const dc::nccl::WindowRecord record = dc::nccl::window_record(window, nullptr, kFunction);
    return to_nccl(dcWindowPeerPointer(to_dc(record.comm), reinterpret_cast<dcWindow_t>(window), offset, peer, outPtr));
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGinBarrierCreateRequirement, ncclComm_t comm, ncclTeam_t team, int nBarriers,
                  ncclGinBarrierHandle_t* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)team;
  (void)nBarriers;
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclGinBarrierCreateRequirement");
    require_output(outHandle, "ncclGinBarrierCreateRequirement", "outHandle");
    require_output(outReq, "ncclGinBarrierCreateRequirement", "outReq");
    no_device_api("ncclGinBarrierCreateRequirement");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGinOutboxCreateRequirement, int nBlocks, int size_log2,
                  ncclGinOutboxHandle* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)nBlocks;
  (void)size_log2;
  return guarded([&]() -> ncclResult_t {
    require_output(outHandle, "ncclGinOutboxCreateRequirement", "outHandle");
    require_output(outReq, "ncclGinOutboxCreateRequirement", "outReq");
    no_device_api("ncclGinOutboxCreateRequirement");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclGinInboxA2ACreateRequirement, ncclTeam_t peers, int nBlocks, int size_log2,
                  ncclGinInboxA2AHandle* outHandle, ncclDevResourceRequirements_t* outReq) {
  (void)peers;
  (void)nBlocks;
  (void)size_log2;
  return guarded([&]() -> ncclResult_t {
    require_output(outHandle, "ncclGinInboxA2ACreateRequirement", "outHandle");
    require_output(outReq, "ncclGinInboxA2ACreateRequirement", "outReq");
    no_device_api("ncclGinInboxA2ACreateRequirement");
  });
}
