// What NCCL 2.30 added to the ABI, as a program sees it: the pure device-API computations give
// NCCL's results (formulas of NVIDIA's nccl_device headers), ncclCommQueryProperties describes a
// host-memory communicator, window pointers reach the rank's own buffer, the elastic, suspend and
// one-sided functions check their arguments, and the device-API functions DeepComm does not
// implement yet refuse with ncclInvalidUsage and a message that says so.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "deepcomm/nccl.h"
#include "deepcomm/nccl_device_host.h"
#include "tests/nccl/refusal.h"

namespace {

constexpr int kRanks = 2;

using dctest::call_on_fresh_thread;
using dctest::Refusal;

#define EXPECT_REFUSED(call, code)                                         \
  do {                                                                     \
    const Refusal refusal_ = call_on_fresh_thread([&] { return (call); }); \
    EXPECT_EQ(refusal_.result, code) << #call;                             \
    EXPECT_NE(refusal_.message, "") << #call;                              \
  } while (0)

#define EXPECT_NO_DEVICE_API(call)                                                                              \
  do {                                                                                                          \
    const Refusal refusal_ = call_on_fresh_thread([&] { return (call); });                                      \
    EXPECT_EQ(refusal_.result, ncclInvalidUsage) << #call;                                                      \
    EXPECT_NE(refusal_.message.find("has no device-initiated API yet"), std::string::npos) << refusal_.message; \
  } while (0)

// Two ranks as threads of this process.
class Nccl230 : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ncclCommInitAll(comms_, kRanks, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    for (ncclComm_t comm : comms_) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }
  // Registers buffers[r] as rank r's window, every rank on its own thread (registration is
  // collective); false when one failed.
  bool register_windows(std::vector<std::vector<char>>& buffers, ncclWindow_t* windows) {
    ncclResult_t results[kRanks];
    std::vector<std::thread> ranks;
    for (int r = 0; r < kRanks; ++r) {
      ranks.emplace_back([&, r] {
        results[r] =
            ncclCommWindowRegister(comms_[r], buffers[r].data(), buffers[r].size(), &windows[r], NCCL_WIN_DEFAULT);
      });
    }
    for (auto& t : ranks) t.join();
    return results[0] == ncclSuccess && results[1] == ncclSuccess;
  }
  ncclComm_t comms_[kRanks] = {};
};

// NVIDIA's nccl_device/impl/core__funcs.h: the rail team is the outer factor of the world by the
// LSA team's size.
ncclTeam_t outer_factor(ncclTeam_t parent, int inner_size) {
  return ncclTeam_t{parent.nRanks / inner_size, parent.rank / inner_size, parent.stride * inner_size};
}

void expect_team(ncclTeam_t team, int nranks, int rank, int stride) {
  EXPECT_EQ(team.nRanks, nranks);
  EXPECT_EQ(team.rank, rank);
  EXPECT_EQ(team.stride, stride);
}

TEST(Nccl230Library, VersionIs23007) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 23007);
  EXPECT_EQ(version, NCCL_VERSION(2, 30, 7));
  EXPECT_STREQ(ncclGetErrorString(ncclTimeout), "timeout");
}

// The fixture's ranks share a host over shared memory: the LSA team is the world and the rail team
// one rank (the rank alone as LSA team, over TCP: nccl_one_sided_test).
TEST_F(Nccl230, TeamsOfAHostMemoryCommunicator) {
  for (int rank = 0; rank < kRanks; ++rank) {
    const ncclTeam_t world = ncclTeamWorld(comms_[rank]);
    const ncclTeam_t lsa = ncclTeamLsa(comms_[rank]);
    const ncclTeam_t rail = ncclTeamRail(comms_[rank]);
    expect_team(world, kRanks, rank, 1);
    expect_team(lsa, kRanks, rank, 1);
    const ncclTeam_t expected_rail = outer_factor(world, lsa.nRanks);
    expect_team(rail, expected_rail.nRanks, expected_rail.rank, expected_rail.stride);
    expect_team(rail, 1, 0, kRanks);
    for (int r = 0; r < kRanks; ++r) {
      // comm.rank + (r - team.rank) * team.stride
      EXPECT_EQ(ncclTeamRankToWorld(comms_[rank], world, r), r);
      EXPECT_EQ(ncclTeamRankToWorld(comms_[rank], lsa, r), r);
      EXPECT_EQ(ncclTeamRankToLsa(comms_[rank], world, r), r);
      EXPECT_EQ(ncclTeamRankToLsa(comms_[rank], lsa, r), r);
    }
    EXPECT_EQ(ncclTeamRankToWorld(comms_[rank], rail, 0), rank);
    EXPECT_EQ(ncclTeamRankToWorld(comms_[rank], rail, 1), -1);  // the rail team has one rank
  }
}

TEST_F(Nccl230, TeamsRefuseBadInput) {
  const ncclTeam_t world = ncclTeamWorld(comms_[0]);
  EXPECT_EQ(ncclTeamRankToWorld(comms_[0], world, kRanks), -1);
  EXPECT_EQ(ncclTeamRankToWorld(comms_[0], world, -1), -1);
  const Refusal refusal = call_on_fresh_thread([] {
    const ncclTeam_t team = ncclTeamWorld(nullptr);
    return team.nRanks == 0 && team.stride == 0 ? ncclInvalidArgument : ncclSuccess;
  });
  EXPECT_EQ(refusal.result, ncclInvalidArgument);
  EXPECT_NE(refusal.message, "");
}

TEST(Nccl230Library, LLA2ASlotsAndRequirement) {
  // One 8-byte slot per started 8 bytes of an element.
  EXPECT_EQ(ncclLLA2ACalcSlots(32, 16), 64);
  EXPECT_EQ(ncclLLA2ACalcSlots(10, 1), 10);
  EXPECT_EQ(ncclLLA2ACalcSlots(3, 9), 6);
  EXPECT_EQ(ncclLLA2ACalcSlots(0, 8), 0);

  ncclLLA2AHandle_t handle{};
  ncclDevResourceRequirements_t req;
  std::memset(&req, 0xA5, sizeof req);
  ASSERT_EQ(ncclLLA2ACreateRequirement(2, 64, &handle, &req), ncclSuccess);
  EXPECT_EQ(handle.nSlots, 64u);
  EXPECT_EQ(req.bufferSize, 2u * (1 + 2 * 64) * 16);  // per block: epoch + two slot generations
  EXPECT_EQ(req.bufferAlign, 16u);
  EXPECT_EQ(req.outBufferHandle, &handle.bufHandle);
  EXPECT_EQ(req.next, nullptr);
  EXPECT_EQ(req.ginSignalCount, 0);
  EXPECT_EQ(req.ginCounterCount, 0);
  EXPECT_EQ(req.outGinSignalStart, nullptr);
  EXPECT_EQ(req.outGinCounterStart, nullptr);
  EXPECT_REFUSED(ncclLLA2ACreateRequirement(2, 64, nullptr, &req), ncclInvalidArgument);
  EXPECT_REFUSED(ncclLLA2ACreateRequirement(-1, 64, &handle, &req), ncclInvalidArgument);
}

TEST(Nccl230Library, LsaBarrierRequirement) {
  const ncclTeam_t team{4, 1, 1};
  ncclLsaBarrierHandle_t handle{};
  ncclDevResourceRequirements_t req;
  std::memset(&req, 0xA5, sizeof req);
  ASSERT_EQ(ncclLsaBarrierCreateRequirement(team, 3, &handle, &req), ncclSuccess);
  EXPECT_EQ(handle.nBarriers, 3);
  EXPECT_EQ(req.bufferSize, (3u * 3 + 3u * 4) * sizeof(uint32_t));
  EXPECT_EQ(req.bufferAlign, alignof(uint32_t));
  EXPECT_EQ(req.outBufferHandle, &handle.bufHandle);
  EXPECT_EQ(req.next, nullptr);
  EXPECT_EQ(req.ginSignalCount, 0);
  EXPECT_REFUSED(ncclLsaBarrierCreateRequirement(team, -1, &handle, &req), ncclInvalidArgument);
  EXPECT_REFUSED(ncclLsaBarrierCreateRequirement(team, 3, &handle, nullptr), ncclInvalidArgument);
}

TEST_F(Nccl230, QueryPropertiesDescribesAHostMemoryCommunicator) {
  for (int rank = 0; rank < kRanks; ++rank) {
    ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
    ASSERT_EQ(ncclCommQueryProperties(comms_[rank], &props), ncclSuccess);
    EXPECT_EQ(props.rank, rank);
    EXPECT_EQ(props.nRanks, kRanks);
    EXPECT_EQ(props.cudaDev, -1);
    EXPECT_EQ(props.nvmlDev, -1);
    EXPECT_FALSE(props.deviceApiSupport);
    EXPECT_FALSE(props.multimemSupport);
    EXPECT_EQ(props.ginType, NCCL_GIN_TYPE_NONE);
    EXPECT_EQ(props.nLsaTeams, 1);      // one host, over shared memory
    EXPECT_TRUE(props.hostRmaSupport);  // ncclPutSignal on host memory
    EXPECT_EQ(props.railedGinType, NCCL_GIN_TYPE_NONE);
  }
  // A struct from an older header is shorter: nothing past its size is written.
  ncclCommProperties_t shorter = NCCL_COMM_PROPERTIES_INITIALIZER;
  shorter.size = offsetof(ncclCommProperties_t, cudaDev);
  shorter.cudaDev = 77;
  ASSERT_EQ(ncclCommQueryProperties(comms_[1], &shorter), ncclSuccess);
  EXPECT_EQ(shorter.nRanks, kRanks);
  EXPECT_EQ(shorter.cudaDev, 77);

  ncclCommProperties_t uninitialized{};
  EXPECT_REFUSED(ncclCommQueryProperties(comms_[0], &uninitialized), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommQueryProperties(comms_[0], nullptr), ncclInvalidArgument);
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  EXPECT_REFUSED(ncclCommQueryProperties(nullptr, &props), ncclInvalidArgument);
}

TEST_F(Nccl230, DeviceCommunicatorsAreNotAvailable) {
  const ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  std::vector<char> dev_comm(4096);  // stands for NVIDIA's ncclDevComm
  auto* out = reinterpret_cast<ncclDevComm_t*>(dev_comm.data());
  EXPECT_NO_DEVICE_API(ncclDevCommCreate(comms_[0], &reqs, out));
  EXPECT_NO_DEVICE_API(ncclDevCommDestroy(comms_[0], out));
  ncclGinBarrierHandle_t gin_handle{};
  ncclDevResourceRequirements_t req{};
  EXPECT_NO_DEVICE_API(ncclGinBarrierCreateRequirement(comms_[0], ncclTeamWorld(comms_[0]), 1, &gin_handle, &req));
  EXPECT_REFUSED(ncclDevCommCreate(comms_[0], nullptr, out), ncclInvalidArgument);
  EXPECT_REFUSED(ncclDevCommCreate(nullptr, &reqs, out), ncclInvalidArgument);
}

// Windows in ordinary memory are not mapped into the peers: the only address a rank gets, by world
// or LSA rank, is one in its own buffer (mapped windows: nccl_one_sided_test).
TEST_F(Nccl230, WindowPointersOfOrdinaryMemoryReachTheRanksOwnBufferOnly) {
  std::vector<std::vector<char>> buffers(kRanks, std::vector<char>(4096));
  ncclWindow_t windows[kRanks] = {};
  ASSERT_TRUE(register_windows(buffers, windows)) << ncclGetLastError(nullptr);
  std::vector<char>& buffer = buffers[1];
  ncclWindow_t win = windows[1];
  void* pointer = nullptr;
  ASSERT_EQ(ncclGetPeerDevicePointer(win, 16, 1, &pointer), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(pointer, buffer.data() + 16);
  pointer = nullptr;
  ASSERT_EQ(ncclGetLsaDevicePointer(win, 4095, 1, &pointer), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(pointer, buffer.data() + 4095);

  void* untouched = &buffer;  // sentinel
  const Refusal peer = call_on_fresh_thread([&] { return ncclGetPeerDevicePointer(win, 0, 0, &untouched); });
  EXPECT_EQ(peer.result, ncclInvalidUsage);
  EXPECT_NE(peer.message.find("rank 0's window is not mapped into this process"), std::string::npos) << peer.message;
  EXPECT_REFUSED(ncclGetLsaDevicePointer(win, 0, 0, &untouched), ncclInvalidUsage);  // not mapped
  EXPECT_REFUSED(ncclGetLsaDevicePointer(win, 0, kRanks, &untouched), ncclInvalidArgument);
  EXPECT_REFUSED(ncclGetLsaDevicePointer(win, 4096, 1, &untouched), ncclInvalidArgument);
  EXPECT_REFUSED(ncclGetPeerDevicePointer(win, 0, kRanks, &untouched), ncclInvalidArgument);
  EXPECT_REFUSED(ncclGetPeerDevicePointer(nullptr, 0, 1, &untouched), ncclInvalidArgument);
  EXPECT_REFUSED(ncclGetPeerDevicePointer(win, 0, 1, nullptr), ncclInvalidArgument);
  EXPECT_NO_DEVICE_API(ncclGetLsaMultimemDevicePointer(win, 0, &untouched));
  EXPECT_NO_DEVICE_API(ncclGetMultimemDevicePointer(win, 0, ncclMultimemHandle_t{nullptr}, &untouched));
  EXPECT_EQ(untouched, &buffer);

  ASSERT_EQ(ncclCommWindowDeregister(comms_[1], win), ncclSuccess);
  EXPECT_REFUSED(ncclGetLsaDevicePointer(win, 0, 0, &untouched), ncclInvalidArgument);
  EXPECT_EQ(ncclCommWindowDeregister(comms_[0], windows[0]), ncclSuccess);
}

TEST(Nccl230Library, WindowsGoWithTheirCommunicator) {
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitAll(&comm, 1, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<char> buffer(256);
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm, buffer.data(), buffer.size(), &win, NCCL_WIN_DEFAULT), ncclSuccess);
  void* user = nullptr;
  ASSERT_EQ(ncclWinGetUserPtr(comm, win, &user), ncclSuccess);
  EXPECT_EQ(user, buffer.data());
  ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  void* pointer = nullptr;
  EXPECT_REFUSED(ncclGetLsaDevicePointer(win, 0, 0, &pointer), ncclInvalidArgument);
  EXPECT_EQ(pointer, nullptr);
}

// Growing itself is tested with forked processes (elastic_test.cpp, tests/faults/grow_test.cpp).
TEST_F(Nccl230, ElasticFunctionsCheckArguments) {
  ncclUniqueId id{};
  ncclComm_t grown = nullptr;
  ASSERT_EQ(ncclCommGetUniqueId(comms_[0], &id), ncclSuccess) << ncclGetLastError(nullptr);
  ncclUniqueId second{};
  EXPECT_REFUSED(ncclCommGetUniqueId(comms_[0], &second), ncclInvalidUsage);  // one unused id at a time
  ncclComm_t initialized = nullptr;
  EXPECT_REFUSED(ncclCommInitRank(&initialized, kRanks + 1, id, kRanks), ncclInvalidUsage);         // not an init id
  EXPECT_REFUSED(ncclCommGrow(nullptr, kRanks + 1, &id, 0, &grown, nullptr), ncclInvalidArgument);  // an old rank's
  EXPECT_REFUSED(ncclCommGetUniqueId(nullptr, &id), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGetUniqueId(comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGrow(comms_[0], kRanks + 1, &id, 0, &grown, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGrow(comms_[0], kRanks, &id, -1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGrow(nullptr, kRanks + 1, nullptr, kRanks, &grown, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGrow(nullptr, kRanks + 1, &id, kRanks + 1, &grown, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommGrow(comms_[0], kRanks + 1, &id, -1, nullptr, nullptr), ncclInvalidArgument);
  ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
  bad.magic = 0;
  EXPECT_REFUSED(ncclCommGrow(comms_[0], kRanks + 1, &id, -1, &grown, &bad), ncclInvalidArgument);
  EXPECT_EQ(grown, nullptr);
}

// Bad arguments are refused and change nothing; the functions themselves: nccl_suspend_test.
TEST_F(Nccl230, SuspendFunctionsCheckArguments) {
  uint64_t value = 99;
  EXPECT_REFUSED(ncclCommSuspend(comms_[0], 0x10), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommSuspend(nullptr, NCCL_SUSPEND_MEM), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommResume(nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommMemStats(comms_[0], static_cast<ncclCommMemStat_t>(4), &value), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommMemStats(comms_[0], ncclStatGpuMemTotal, nullptr), ncclInvalidArgument);
  EXPECT_EQ(value, 99u);
  // Without NCCL_SUSPEND_MEM there is nothing to suspend: the communicator stays usable.
  EXPECT_EQ(ncclCommSuspend(comms_[0], 0), ncclSuccess);
  EXPECT_EQ(ncclCommMemStats(comms_[0], ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 0u);
  EXPECT_REFUSED(ncclCommResume(comms_[0]), ncclInvalidUsage);
}

// Bad arguments are refused on the calling rank and write nothing anywhere; the operations
// themselves: nccl_one_sided_test.
TEST_F(Nccl230, OneSidedFunctionsCheckArguments) {
  std::vector<std::vector<char>> buffers(kRanks, std::vector<char>(64, 'w'));
  ncclWindow_t windows[kRanks] = {};
  ASSERT_TRUE(register_windows(buffers, windows)) << ncclGetLastError(nullptr);
  ncclWindow_t win = windows[0];  // rank 0's handle names the window on both ranks
  void* user = nullptr;
  ASSERT_EQ(ncclWinGetUserPtr(comms_[1], windows[1], &user), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(user, buffers[1].data());
  user = nullptr;
  EXPECT_REFUSED(ncclWinGetUserPtr(comms_[0], windows[1], &user), ncclInvalidArgument);  // not its window
  std::vector<float> data(32, 2.0f);

  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, kRanks, win, 0, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(nullptr, 4, ncclFloat, 1, win, 0, 0, 0, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclNumTypes, 1, win, 0, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, nullptr, 0, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, windows[1], 0, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);  // a window of the other communicator
  int not_a_window = 0;
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, reinterpret_cast<ncclWindow_t>(&not_a_window), 0, 0, 0, 0,
                               comms_[0], nullptr),
                 ncclInvalidArgument);
  // Past the end of the peer's 64-byte window: by its length, by its offset, by both overflowing.
  EXPECT_REFUSED(ncclPutSignal(data.data(), 17, ncclFloat, 1, win, 0, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 1, ncclFloat, 1, win, 61, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 1, ncclFloat, 1, win, SIZE_MAX - 1, 0, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  // Signal indices are in [0, 16), contexts in [0, numRmaCtx = 1).
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, win, 0, -1, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, win, 0, 16, 0, 0, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, win, 0, 0, 1, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclPutSignal(data.data(), 4, ncclFloat, 1, win, 0, 0, 0, 2u, comms_[0], nullptr),
                 ncclInvalidArgument);
  EXPECT_REFUSED(ncclSignal(1, 0, -1, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclSignal(1, 0, 1, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclSignal(1, 16, 0, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclSignal(1, 0, 0, 1u, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclSignal(-1, 0, 0, 0, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclWaitSignal(1, nullptr, comms_[1], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclWaitSignal(-1, nullptr, comms_[1], nullptr), ncclInvalidArgument);
  ncclWaitSignalDesc_t bad_peer{1, kRanks, 0, 0};
  EXPECT_REFUSED(ncclWaitSignal(1, &bad_peer, comms_[1], nullptr), ncclInvalidArgument);
  ncclWaitSignalDesc_t bad_count{-1, 0, 0, 0};
  EXPECT_REFUSED(ncclWaitSignal(1, &bad_count, comms_[1], nullptr), ncclInvalidArgument);
  ncclWaitSignalDesc_t bad_context{1, 0, 0, 1};
  EXPECT_REFUSED(ncclWaitSignal(1, &bad_context, comms_[1], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclWinGetUserPtr(comms_[1], nullptr, &user), ncclInvalidArgument);
  EXPECT_REFUSED(ncclWinGetUserPtr(comms_[1], windows[1], nullptr), ncclInvalidArgument);
  EXPECT_EQ(user, nullptr);
  // Nothing was sent: no rank's window changed, and no signal arrived (a wait for none returns).
  EXPECT_EQ(buffers[0], std::vector<char>(64, 'w'));
  EXPECT_EQ(buffers[1], std::vector<char>(64, 'w'));
  EXPECT_EQ(ncclWaitSignal(0, nullptr, comms_[1], nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommWindowDeregister(comms_[1], windows[1]), ncclSuccess);
  EXPECT_REFUSED(ncclWinGetUserPtr(comms_[1], windows[1], &user), ncclInvalidArgument);  // deregistered
  EXPECT_EQ(ncclCommWindowDeregister(comms_[0], windows[0]), ncclSuccess);
}

}  // namespace
