// libnccl.so.2 and deepcomm/nccl.h against the NCCL 2.28 ABI: header layouts compared with
// NVIDIA's header, the exported symbol set and the SONAME.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <sys/wait.h>

#include "deepcomm/nccl.h"
#include "tests/nccl/layout.h"

extern "C" size_t our_c_config_size(void);
#ifdef DEEPCOMM_VENDOR_NCCL_H
extern "C" size_t our_c_with_cuda_config_size(void);
#endif

namespace {

static_assert(NCCL_VERSION_CODE == 22809);
static_assert(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) == 22809);
static_assert(sizeof(ncclUniqueId) == 128);
static_assert(sizeof(ncclConfig_t) == 80);
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
static_assert(sizeof(ncclSimInfo_t) == 24);
static_assert(offsetof(ncclSimInfo_t, size) == 0);
static_assert(offsetof(ncclSimInfo_t, magic) == 8);
static_assert(offsetof(ncclSimInfo_t, version) == 12);
static_assert(offsetof(ncclSimInfo_t, estimatedTime) == 16);
static_assert(ncclMaxRedOp == 0x7fffffff);

// NCCL 2.28's 41 host API functions; every name is exported together with its pncclX twin.
const std::set<std::string> kExportedApi = {
    "ncclAllGather",       "ncclAllReduce",          "ncclAlltoAll",
    "ncclBcast",           "ncclBroadcast",          "ncclCommAbort",
    "ncclCommCount",       "ncclCommCuDevice",       "ncclCommDestroy",
    "ncclCommFinalize",    "ncclCommGetAsyncError",  "ncclCommInitAll",
    "ncclCommRevoke",      "ncclCommShrink",         "ncclResetDebugInit",
    "ncclCommInitRankScalable", "ncclCommRegister",     "ncclCommDeregister",
    "ncclCommWindowRegister",   "ncclCommWindowDeregister",
    "ncclCommInitRank",    "ncclCommInitRankConfig", "ncclCommSplit",
    "ncclCommUserRank",    "ncclGather",             "ncclGetErrorString",
    "ncclGetLastError",    "ncclGetUniqueId",        "ncclGetVersion",
    "ncclGroupEnd",        "ncclGroupSimulateEnd",   "ncclGroupStart",         "ncclMemAlloc",
    "ncclMemFree",         "ncclRecv",               "ncclRedOpCreatePreMulSum",
    "ncclRedOpDestroy",    "ncclReduce",             "ncclReduceScatter",
    "ncclScatter",         "ncclSend"};

struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(NcclAbi, CHeaderHasTheSameConfigSize) {
  EXPECT_EQ(our_c_config_size(), sizeof(ncclConfig_t));
#ifdef DEEPCOMM_VENDOR_NCCL_H
  EXPECT_EQ(our_c_with_cuda_config_size(), sizeof(ncclConfig_t));
#endif
}

TEST(NcclAbi, HeaderMatchesVendorHeader) {
#ifdef DEEPCOMM_VENDOR_NCCL_H
  const LayoutEntries ours = our_layout();
  const LayoutEntries vendor = vendor_layout();
  ASSERT_EQ(ours.size(), vendor.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].first, vendor[i].first);
    EXPECT_EQ(ours[i].second, vendor[i].second) << ours[i].first;
  }
#else
  GTEST_SKIP() << "NVIDIA's nccl.h was not found at configure time";
#endif
}

TEST(NcclAbi, ExportsExactlyTheNcclApiWithProfilingTwins) {
  const CommandResult nm = run("nm -D --defined-only '" DEEPCOMM_NCCL_LIBRARY "'");
  ASSERT_EQ(nm.status, 0) << nm.output;
  std::map<std::string, std::string> address_of;  // symbol -> address
  size_t pos = 0;
  while (pos < nm.output.size()) {
    const size_t end = nm.output.find('\n', pos);
    const std::string line = nm.output.substr(pos, end - pos);
    pos = end == std::string::npos ? nm.output.size() : end + 1;
    char address[64], type[8], name[256];
    if (std::sscanf(line.c_str(), "%63s %7s %255s", address, type, name) == 3) {
      address_of[name] = address;
    }
  }
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
  EXPECT_NE(readelf.output.find("Library soname: [libnccl.so.2]"), std::string::npos)
      << readelf.output;
}

}  // namespace
