// Collects the entries of layout.h from the nccl.h included before this header. Included by two
// translation units, one per header, which list the same entries in the same order.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <typeinfo>

#include "tests/nccl/layout.h"

namespace layout_detail {
template <typename T>
std::string text(const T& value) {
  return std::to_string(value);
}
inline std::string text(const char* string) { return string; }
inline std::string text(const void* pointer) { return pointer == nullptr ? "NULL" : "non-NULL"; }
}  // namespace layout_detail

#define LAYOUT_ENTRY(expr) entries.emplace_back(#expr, layout_detail::text(expr));
// Mangled type names spell out return and parameter types, so equal names mean equal signatures.
#define LAYOUT_FUNCTION(function)                                                    \
  entries.emplace_back("type of " #function, typeid(decltype(function)).name());    \
  entries.emplace_back("type of p" #function, typeid(decltype(p##function)).name());

// Internal linkage: each translation unit keeps its own definition.
static LayoutEntries collect_layout_entries() {
  LayoutEntries entries;
  LAYOUT_ENTRY(NCCL_MAJOR)
  LAYOUT_ENTRY(NCCL_MINOR)
  LAYOUT_ENTRY(NCCL_PATCH)
  LAYOUT_ENTRY(std::strlen(NCCL_SUFFIX))
  LAYOUT_ENTRY(NCCL_VERSION_CODE)
  LAYOUT_ENTRY(NCCL_VERSION(2, 28, 9))
  LAYOUT_ENTRY(NCCL_VERSION(2, 8, 4))
  LAYOUT_ENTRY(NCCL_VERSION(3, 0, 1))
  LAYOUT_ENTRY(NCCL_UNIQUE_ID_BYTES)
  LAYOUT_ENTRY(NCCL_CONFIG_UNDEF_INT)
  LAYOUT_ENTRY(static_cast<const void*>(NCCL_CONFIG_UNDEF_PTR))
  LAYOUT_ENTRY(static_cast<const void*>(NCCL_COMM_NULL))
  LAYOUT_ENTRY(NCCL_SPLIT_NOCOLOR)
  LAYOUT_ENTRY(NCCL_UNDEF_FLOAT)
  LAYOUT_ENTRY(NCCL_WIN_DEFAULT)
  LAYOUT_ENTRY(NCCL_WIN_COLL_SYMMETRIC)
  LAYOUT_ENTRY(NCCL_WIN_REQUIRED_ALIGNMENT)
  LAYOUT_ENTRY(NCCL_CTA_POLICY_DEFAULT)
  LAYOUT_ENTRY(NCCL_CTA_POLICY_EFFICIENCY)
  LAYOUT_ENTRY(NCCL_CTA_POLICY_ZERO)
  LAYOUT_ENTRY(NCCL_SHRINK_DEFAULT)
  LAYOUT_ENTRY(NCCL_SHRINK_ABORT)
  LAYOUT_ENTRY(NCCL_REVOKE_DEFAULT)

  LAYOUT_ENTRY(sizeof(ncclUniqueId))
  LAYOUT_ENTRY(sizeof(ncclComm_t))
  LAYOUT_ENTRY(sizeof(ncclWindow_t))
  LAYOUT_ENTRY(sizeof(ncclResult_t))
  LAYOUT_ENTRY(sizeof(ncclRedOp_t))
  LAYOUT_ENTRY(sizeof(ncclDataType_t))
  LAYOUT_ENTRY(sizeof(ncclScalarResidence_t))

  LAYOUT_ENTRY(sizeof(ncclConfig_t))
  LAYOUT_ENTRY(alignof(ncclConfig_t))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, size))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, magic))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, version))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, blocking))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, cgaClusterSize))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, minCTAs))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, maxCTAs))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, netName))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, splitShare))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, trafficClass))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, commName))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, collnetEnable))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, CTAPolicy))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, shrinkShare))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, nvlsCTAs))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, nChannelsPerNetPeer))
  LAYOUT_ENTRY(offsetof(ncclConfig_t, nvlinkCentricSched))
  LAYOUT_ENTRY(typeid(ncclConfig_t).name())

  LAYOUT_ENTRY(sizeof(ncclSimInfo_t))
  LAYOUT_ENTRY(offsetof(ncclSimInfo_t, size))
  LAYOUT_ENTRY(offsetof(ncclSimInfo_t, magic))
  LAYOUT_ENTRY(offsetof(ncclSimInfo_t, version))
  LAYOUT_ENTRY(offsetof(ncclSimInfo_t, estimatedTime))
  LAYOUT_ENTRY(typeid(ncclSimInfo_t).name())

  const ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  LAYOUT_ENTRY(config.size)
  LAYOUT_ENTRY(config.magic)
  LAYOUT_ENTRY(config.version)
  LAYOUT_ENTRY(config.blocking)
  LAYOUT_ENTRY(config.cgaClusterSize)
  LAYOUT_ENTRY(config.minCTAs)
  LAYOUT_ENTRY(config.maxCTAs)
  LAYOUT_ENTRY(static_cast<const void*>(config.netName))
  LAYOUT_ENTRY(config.splitShare)
  LAYOUT_ENTRY(config.trafficClass)
  LAYOUT_ENTRY(static_cast<const void*>(config.commName))
  LAYOUT_ENTRY(config.collnetEnable)
  LAYOUT_ENTRY(config.CTAPolicy)
  LAYOUT_ENTRY(config.shrinkShare)
  LAYOUT_ENTRY(config.nvlsCTAs)
  LAYOUT_ENTRY(config.nChannelsPerNetPeer)
  LAYOUT_ENTRY(config.nvlinkCentricSched)
  const ncclSimInfo_t sim_info = NCCL_SIM_INFO_INITIALIZER;
  LAYOUT_ENTRY(sim_info.size)
  LAYOUT_ENTRY(sim_info.magic)
  LAYOUT_ENTRY(sim_info.version)
  LAYOUT_ENTRY(sim_info.estimatedTime)

  LAYOUT_ENTRY(ncclSuccess)
  LAYOUT_ENTRY(ncclUnhandledCudaError)
  LAYOUT_ENTRY(ncclSystemError)
  LAYOUT_ENTRY(ncclInternalError)
  LAYOUT_ENTRY(ncclInvalidArgument)
  LAYOUT_ENTRY(ncclInvalidUsage)
  LAYOUT_ENTRY(ncclRemoteError)
  LAYOUT_ENTRY(ncclInProgress)
  LAYOUT_ENTRY(ncclNumResults)
  LAYOUT_ENTRY(ncclSum)
  LAYOUT_ENTRY(ncclProd)
  LAYOUT_ENTRY(ncclMax)
  LAYOUT_ENTRY(ncclMin)
  LAYOUT_ENTRY(ncclAvg)
  LAYOUT_ENTRY(ncclNumOps)
  LAYOUT_ENTRY(ncclMaxRedOp)
  LAYOUT_ENTRY(ncclNumOps_dummy)
  LAYOUT_ENTRY(ncclInt8)
  LAYOUT_ENTRY(ncclChar)
  LAYOUT_ENTRY(ncclUint8)
  LAYOUT_ENTRY(ncclInt32)
  LAYOUT_ENTRY(ncclInt)
  LAYOUT_ENTRY(ncclUint32)
  LAYOUT_ENTRY(ncclInt64)
  LAYOUT_ENTRY(ncclUint64)
  LAYOUT_ENTRY(ncclFloat16)
  LAYOUT_ENTRY(ncclHalf)
  LAYOUT_ENTRY(ncclFloat32)
  LAYOUT_ENTRY(ncclFloat)
  LAYOUT_ENTRY(ncclFloat64)
  LAYOUT_ENTRY(ncclDouble)
  LAYOUT_ENTRY(ncclBfloat16)
  LAYOUT_ENTRY(ncclFloat8e4m3)
  LAYOUT_ENTRY(ncclFloat8e5m2)
  LAYOUT_ENTRY(ncclNumTypes)
  LAYOUT_ENTRY(ncclScalarDevice)
  LAYOUT_ENTRY(ncclScalarHostImmediate)

  LAYOUT_FUNCTION(ncclMemAlloc)
  LAYOUT_FUNCTION(ncclMemFree)
  LAYOUT_FUNCTION(ncclGetVersion)
  LAYOUT_FUNCTION(ncclGetUniqueId)
  LAYOUT_FUNCTION(ncclCommInitRankConfig)
  LAYOUT_FUNCTION(ncclCommInitRank)
  LAYOUT_FUNCTION(ncclCommInitAll)
  LAYOUT_FUNCTION(ncclCommFinalize)
  LAYOUT_FUNCTION(ncclCommDestroy)
  LAYOUT_FUNCTION(ncclCommAbort)
  LAYOUT_FUNCTION(ncclCommRevoke)
  LAYOUT_FUNCTION(ncclCommSplit)
  LAYOUT_FUNCTION(ncclCommShrink)
  LAYOUT_FUNCTION(ncclCommInitRankScalable)
  LAYOUT_FUNCTION(ncclGetErrorString)
  LAYOUT_FUNCTION(ncclGetLastError)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  LAYOUT_FUNCTION(ncclResetDebugInit)
#pragma GCC diagnostic pop
  LAYOUT_FUNCTION(ncclCommGetAsyncError)
  LAYOUT_FUNCTION(ncclCommCount)
  LAYOUT_FUNCTION(ncclCommCuDevice)
  LAYOUT_FUNCTION(ncclCommUserRank)
  LAYOUT_FUNCTION(ncclCommRegister)
  LAYOUT_FUNCTION(ncclCommDeregister)
  LAYOUT_FUNCTION(ncclCommWindowRegister)
  LAYOUT_FUNCTION(ncclCommWindowDeregister)
  LAYOUT_FUNCTION(ncclRedOpCreatePreMulSum)
  LAYOUT_FUNCTION(ncclRedOpDestroy)
  LAYOUT_FUNCTION(ncclReduce)
  LAYOUT_FUNCTION(ncclBcast)
  LAYOUT_FUNCTION(ncclBroadcast)
  LAYOUT_FUNCTION(ncclAllReduce)
  LAYOUT_FUNCTION(ncclReduceScatter)
  LAYOUT_FUNCTION(ncclAllGather)
  LAYOUT_FUNCTION(ncclAlltoAll)
  LAYOUT_FUNCTION(ncclGather)
  LAYOUT_FUNCTION(ncclScatter)
  LAYOUT_FUNCTION(ncclSend)
  LAYOUT_FUNCTION(ncclRecv)
  LAYOUT_FUNCTION(ncclGroupStart)
  LAYOUT_FUNCTION(ncclGroupEnd)
  LAYOUT_FUNCTION(ncclGroupSimulateEnd)
  return entries;
}

#undef LAYOUT_ENTRY
#undef LAYOUT_FUNCTION
