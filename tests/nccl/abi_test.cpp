// libnccl.so.2 and deepcomm/nccl.h against the NCCL 2.30.7 ABI: the exported symbol set, the
// SONAME, and the header against NVIDIA's 2.28.9 (CUDA toolkit), which 2.30 extends.
// nccl_reference230_test compares header and exports with NVIDIA's 2.30.7 itself.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>

#include "deepcomm/nccl.h"
#include "deepcomm/nccl_device_host.h"
#include "tests/nccl/exported_symbols.h"
#include "tests/nccl/layout.h"

extern "C" size_t our_c_config_size(void);
#ifdef DEEPCOMM_VENDOR_NCCL_H
extern "C" size_t our_c_with_cuda_config_size(void);
#endif

namespace {

static_assert(NCCL_VERSION_CODE == 23007);
static_assert(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) == 23007);
static_assert(sizeof(ncclUniqueId) == 128);
static_assert(sizeof(ncclConfig_t) == 96);
static_assert(offsetof(ncclConfig_t, size) == 0);
static_assert(offsetof(ncclConfig_t, magic) == 8);
static_assert(offsetof(ncclConfig_t, version) == 12);
static_assert(offsetof(ncclConfig_t, blocking) == 16);
static_assert(offsetof(ncclConfig_t, cgaClusterSize) == 20);
static_assert(offsetof(ncclConfig_t, minCTAs) == 24);
static_assert(offsetof(ncclConfig_t, maxCTAs) == 28);
static_assert(offsetof(ncclConfig_t, netName) == 32);
static_assert(offsetof(ncclConfig_t, splitShare) == 40);
static_assert(offsetof(ncclConfig_t, trafficClass) == 44);
static_assert(offsetof(ncclConfig_t, commName) == 48);
static_assert(offsetof(ncclConfig_t, collnetEnable) == 56);
static_assert(offsetof(ncclConfig_t, CTAPolicy) == 60);
static_assert(offsetof(ncclConfig_t, shrinkShare) == 64);
static_assert(offsetof(ncclConfig_t, nvlsCTAs) == 68);
static_assert(offsetof(ncclConfig_t, nChannelsPerNetPeer) == 72);
static_assert(offsetof(ncclConfig_t, nvlinkCentricSched) == 76);
static_assert(offsetof(ncclConfig_t, graphUsageMode) == 80);
static_assert(offsetof(ncclConfig_t, numRmaCtx) == 84);
static_assert(offsetof(ncclConfig_t, maxP2pPeers) == 88);
static_assert(offsetof(ncclConfig_t, graphStreamOrdering) == 92);
static_assert(sizeof(ncclWaitSignalDesc_t) == 16);
static_assert(sizeof(ncclTeam_t) == 12);
static_assert(sizeof(ncclSimInfo_t) == 24);
static_assert(offsetof(ncclSimInfo_t, size) == 0);
static_assert(offsetof(ncclSimInfo_t, magic) == 8);
static_assert(offsetof(ncclSimInfo_t, version) == 12);
static_assert(offsetof(ncclSimInfo_t, estimatedTime) == 16);
static_assert(ncclMaxRedOp == 0x7fffffff);

// NCCL 2.30.7's 82 exported functions (NVIDIA's internal ncclResetDebugInitInternal aside); every
// name is exported together with its pncclX twin.
const std::set<std::string> kExportedApi = {
    // Since 2.28 and before.
    "ncclAllGather", "ncclAllReduce", "ncclAlltoAll", "ncclBcast", "ncclBroadcast", "ncclCommAbort", "ncclCommCount",
    "ncclCommCuDevice", "ncclCommDeregister", "ncclCommDestroy", "ncclCommFinalize", "ncclCommGetAsyncError",
    "ncclCommInitAll", "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitRankScalable", "ncclCommRegister",
    "ncclCommRevoke", "ncclCommShrink", "ncclCommSplit", "ncclCommUserRank", "ncclCommWindowDeregister",
    "ncclCommWindowRegister", "ncclGather", "ncclGetErrorString", "ncclGetLastError", "ncclGetUniqueId",
    "ncclGetVersion", "ncclGroupEnd", "ncclGroupSimulateEnd", "ncclGroupStart", "ncclMemAlloc", "ncclMemFree",
    "ncclRecv", "ncclRedOpCreatePreMulSum", "ncclRedOpDestroy", "ncclReduce", "ncclReduceScatter", "ncclResetDebugInit",
    "ncclScatter", "ncclSend",
    // The device API's host side, exported by NVIDIA's 2.28 already.
    "ncclDevCommCreate", "ncclDevCommDestroy", "ncclGetLsaDevicePointer", "ncclGetLsaMultimemDevicePointer",
    "ncclGetMultimemDevicePointer", "ncclGetPeerDevicePointer", "ncclGinBarrierCreateRequirement", "ncclLLA2ACalcSlots",
    "ncclLLA2ACreateRequirement", "ncclLsaBarrierCreateRequirement", "ncclTeamLsa", "ncclTeamRail", "ncclTeamRankToLsa",
    "ncclTeamRankToWorld", "ncclTeamWorld",
    // Added in 2.30.
    "ncclCommGetUniqueId", "ncclCommGrow", "ncclCommMemStats", "ncclCommQueryProperties", "ncclCommResume",
    "ncclCommSuspend", "ncclGinInboxA2ACreateRequirement", "ncclGinOutboxCreateRequirement", "ncclParamBind",
    "ncclParamDumpAll", "ncclParamGet", "ncclParamGetAllParameterKeys", "ncclParamGetI16", "ncclParamGetI32",
    "ncclParamGetI64", "ncclParamGetI8", "ncclParamGetParameter", "ncclParamGetStr", "ncclParamGetU16",
    "ncclParamGetU32", "ncclParamGetU64", "ncclParamGetU8", "ncclPutSignal", "ncclSignal", "ncclWaitSignal",
    "ncclWinGetUserPtr"};

TEST(NcclAbi, CHeaderHasTheSameConfigSize) {
  EXPECT_EQ(our_c_config_size(), sizeof(ncclConfig_t));
#ifdef DEEPCOMM_VENDOR_NCCL_H
  EXPECT_EQ(our_c_with_cuda_config_size(), sizeof(ncclConfig_t));
#endif
}

// What 2.30 changed in 2.28's entries: the version, the config's size and struct tag (and so the
// mangled types of the functions that take a config), and ncclNumResults (ncclTimeout was added).
bool changed_by_230(const std::string& name, const std::string& ours, const std::string& vendor) {
  static const std::set<std::string> kChanged = {
      "NCCL_MINOR",     "NCCL_PATCH",       "NCCL_VERSION_CODE", "sizeof(ncclConfig_t)",       "config.size",
      "config.version", "sim_info.version", "ncclNumResults",    "typeid(ncclConfig_t).name()"};
  if (kChanged.count(name) != 0) return true;
  std::string renamed = ours;
  const std::string tag230 = "ncclConfig_v23000", tag228 = "ncclConfig_v22800";
  for (size_t at = renamed.find(tag230); at != std::string::npos; at = renamed.find(tag230, at)) {
    renamed.replace(at, tag230.size(), tag228);
  }
  return renamed != ours && renamed == vendor;
}

// 2.30 extends 2.28: every entry of NVIDIA's 2.28 header is ours too, with the same value except
// where 2.30 changed it.
TEST(NcclAbi, HeaderExtendsTheCudaToolkits228Header) {
#ifdef DEEPCOMM_VENDOR_NCCL_H
  const LayoutEntries ours = our_layout();
  const LayoutEntries vendor = vendor_layout();
  ASSERT_GT(ours.size(), vendor.size());
  for (size_t i = 0; i < vendor.size(); ++i) {
    ASSERT_EQ(ours[i].first, vendor[i].first);
    if (ours[i].second != vendor[i].second) {
      EXPECT_TRUE(changed_by_230(ours[i].first, ours[i].second, vendor[i].second))
          << ours[i].first << ": ours " << ours[i].second << ", 2.28 " << vendor[i].second;
    }
  }
#else
  GTEST_SKIP() << "NVIDIA's nccl.h was not found at configure time";
#endif
}

TEST(NcclAbi, ExportsExactlyTheNcclApiWithProfilingTwins) {
  bool ok = false;
  std::string error;
  std::map<std::string, std::string> address_of = exported_symbols(DEEPCOMM_NCCL_LIBRARY, &ok, &error);
  ASSERT_TRUE(ok) << error;
  std::set<std::string> expected;
  for (const std::string& name : kExportedApi) {
    expected.insert(name);
    expected.insert("p" + name);
  }
  std::set<std::string> exported;
  for (const auto& [name, address] : address_of) exported.insert(name);
  EXPECT_EQ(exported, expected);
  for (const std::string& name : kExportedApi) {
    if (address_of.count(name) && address_of.count("p" + name)) {
      EXPECT_EQ(address_of[name], address_of["p" + name]) << name << " and its twin differ";
    }
  }
}

TEST(NcclAbi, SonameIsLibnccl2) {
  const std::string path = DEEPCOMM_NCCL_LIBRARY;
  EXPECT_EQ(path.substr(path.rfind('/') + 1), "libnccl.so.2");
  const CommandResult readelf = run("readelf -d '" + path + "'");
  ASSERT_EQ(readelf.status, 0) << readelf.output;
  EXPECT_NE(readelf.output.find("Library soname: [libnccl.so.2]"), std::string::npos) << readelf.output;
}

}  // namespace
