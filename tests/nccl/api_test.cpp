// The NCCL ABI of libnccl.so.2 as a program sees it: bad input is refused with the right code, a
// message for ncclGetLastError and untouched buffers; configs follow NCCL's tolerant rules; the
// basic calls work with ranks as threads.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/nccl.h"

namespace {

constexpr int kRanks = 2;
constexpr float kUntouched = -12345.0f;

struct Refusal {
  ncclResult_t result;
  std::string message;
};

// Runs the call on a fresh thread, whose last-error message starts empty, so that a non-empty
// message afterwards was set by this very call.
Refusal call_on_fresh_thread(const std::function<ncclResult_t()>& call) {
  Refusal refusal{ncclSuccess, ""};
  std::thread([&] {
    refusal.result = call();
    refusal.message = ncclGetLastError(nullptr);
  }).join();
  return refusal;
}

#define EXPECT_REFUSED(call, code)                                         \
  do {                                                                     \
    const Refusal refusal_ = call_on_fresh_thread([&] { return (call); }); \
    EXPECT_EQ(refusal_.result, code) << #call;                             \
    EXPECT_NE(refusal_.message, "") << #call;                              \
  } while (0)

void on_all_ranks(int nranks, const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < nranks; ++rank) threads.emplace_back(body, rank);
  for (std::thread& thread : threads) thread.join();
}

TEST(NcclApiLibrary, VersionIsTheAbiVersion) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, 23007);
  EXPECT_REFUSED(ncclGetVersion(nullptr), ncclInvalidArgument);
}

TEST(NcclApiLibrary, ErrorStringsAreNotEmpty) {
  for (int code = ncclSuccess; code < ncclNumResults; ++code) {
    EXPECT_STRNE(ncclGetErrorString(static_cast<ncclResult_t>(code)), "") << code;
  }
}

TEST(NcclApiLibrary, GroupEndWithoutGroupStartIsInvalidUsage) { EXPECT_REFUSED(ncclGroupEnd(), ncclInvalidUsage); }

TEST(NcclApiLibrary, DestroyAndAbortOfNullSucceedAsInNccl) {
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
}

TEST(NcclApiLibrary, ConfigWithBadMagicIsRefused) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  ncclUniqueId id{};
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(&config);  // sentinel: must stay as is
  EXPECT_REFUSED(ncclCommInitRankConfig(&comm, kRanks, id, 0, &config), ncclInvalidArgument);
  EXPECT_EQ(comm, reinterpret_cast<ncclComm_t>(&config));
}

TEST(NcclApiLibrary, ConfigWithBadBlockingValueIsRefused) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 7;
  ncclUniqueId id{};
  ncclComm_t comm = nullptr;
  EXPECT_REFUSED(ncclCommInitRankConfig(&comm, kRanks, id, 0, &config), ncclInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

TEST(NcclApiLibrary, InitAllRefusesBadDeviceCountsAndLists) {
  ncclComm_t comms[kRanks] = {reinterpret_cast<ncclComm_t>(1), reinterpret_cast<ncclComm_t>(2)};
  const int duplicate[kRanks] = {0, 0};
  const int negative[kRanks] = {-1, 0};
  EXPECT_REFUSED(ncclCommInitAll(comms, 0, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommInitAll(comms, -3, nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommInitAll(comms, kRanks, duplicate), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommInitAll(comms, kRanks, negative), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommInitAll(nullptr, kRanks, nullptr), ncclInvalidArgument);
  EXPECT_EQ(comms[0], reinterpret_cast<ncclComm_t>(1));
  EXPECT_EQ(comms[1], reinterpret_cast<ncclComm_t>(2));
}

TEST(NcclApiLibrary, NullCommIsRefused) {
  std::vector<float> send(4, 1.0f), recv(4, kUntouched);
  EXPECT_REFUSED(ncclAllReduce(send.data(), recv.data(), 4, ncclFloat, ncclSum, nullptr, nullptr), ncclInvalidArgument);
  int value = -7;
  EXPECT_REFUSED(ncclCommCount(nullptr, &value), ncclInvalidArgument);
  EXPECT_REFUSED(ncclCommCuDevice(nullptr, &value), ncclInvalidArgument);
  EXPECT_EQ(value, -7);
  EXPECT_EQ(recv, std::vector<float>(4, kUntouched));
}

// Two ranks as threads of this process, made by ncclCommInitAll.
class NcclApiComm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ncclCommInitAll(comms_, kRanks, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    for (ncclComm_t comm : comms_) EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  }

  ncclComm_t comms_[kRanks] = {};
  std::vector<float> send_ = std::vector<float>(8, 1.0f);
  std::vector<float> recv_ = std::vector<float>(8, kUntouched);

  void expect_buffers_untouched() {
    EXPECT_EQ(send_, std::vector<float>(8, 1.0f));
    EXPECT_EQ(recv_, std::vector<float>(8, kUntouched));
  }
};

TEST_F(NcclApiComm, QueriesDescribeTheClique) {
  for (int rank = 0; rank < kRanks; ++rank) {
    int count = 0, user_rank = -1, device = 0;
    ASSERT_EQ(ncclCommCount(comms_[rank], &count), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(comms_[rank], &user_rank), ncclSuccess);
    ASSERT_EQ(ncclCommCuDevice(comms_[rank], &device), ncclSuccess);
    ncclResult_t async_error = ncclInternalError;
    ASSERT_EQ(ncclCommGetAsyncError(comms_[rank], &async_error), ncclSuccess);
    EXPECT_EQ(count, kRanks);
    EXPECT_EQ(user_rank, rank);
    EXPECT_EQ(device, -1);
    EXPECT_EQ(async_error, ncclSuccess);
  }
}

TEST_F(NcclApiComm, NullBufferWithNonzeroCountIsRefused) {
  EXPECT_REFUSED(ncclAllReduce(nullptr, recv_.data(), 8, ncclFloat, ncclSum, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclAllReduce(send_.data(), nullptr, 8, ncclFloat, ncclSum, comms_[0], nullptr), ncclInvalidArgument);
  EXPECT_REFUSED(ncclSend(nullptr, 8, ncclFloat, 1, comms_[0], nullptr), ncclInvalidArgument);
  expect_buffers_untouched();
}

TEST_F(NcclApiComm, UnknownDatatypeIsRefused) {
  for (int type : {static_cast<int>(ncclNumTypes), 99, -1}) {
    EXPECT_REFUSED(
        ncclAllReduce(send_.data(), recv_.data(), 8, static_cast<ncclDataType_t>(type), ncclSum, comms_[0], nullptr),
        ncclInvalidArgument);
  }
  expect_buffers_untouched();
}

TEST_F(NcclApiComm, UnknownReductionOpIsRefused) {
  for (ncclRedOp_t op : {ncclNumOps, static_cast<ncclRedOp_t>(1000), ncclMaxRedOp}) {
    EXPECT_REFUSED(ncclAllReduce(send_.data(), recv_.data(), 8, ncclFloat, op, comms_[0], nullptr),
                   ncclInvalidArgument);
  }
  expect_buffers_untouched();
}

TEST_F(NcclApiComm, RootAndPeerOutOfRangeAreRefused) {
  for (int root : {-1, kRanks}) {
    EXPECT_REFUSED(ncclBroadcast(send_.data(), recv_.data(), 8, ncclFloat, root, comms_[0], nullptr),
                   ncclInvalidArgument);
    EXPECT_REFUSED(ncclReduce(send_.data(), recv_.data(), 8, ncclFloat, ncclSum, root, comms_[0], nullptr),
                   ncclInvalidArgument);
    EXPECT_REFUSED(ncclSend(send_.data(), 8, ncclFloat, root, comms_[0], nullptr), ncclInvalidArgument);
    EXPECT_REFUSED(ncclRecv(recv_.data(), 8, ncclFloat, root, comms_[0], nullptr), ncclInvalidArgument);
  }
  expect_buffers_untouched();
}

TEST_F(NcclApiComm, CountTimesSizeOverflowIsRefused) {
  EXPECT_REFUSED(ncclAllReduce(send_.data(), recv_.data(), SIZE_MAX / 2, ncclFloat, ncclSum, comms_[0], nullptr),
                 ncclInvalidArgument);
  // Fits for one rank, overflows for the nranks blocks of the receive buffer.
  EXPECT_REFUSED(ncclAllGather(send_.data(), recv_.data(), SIZE_MAX / 2 + 1, ncclInt8, comms_[0], nullptr),
                 ncclInvalidArgument);
  expect_buffers_untouched();
}

TEST_F(NcclApiComm, DeviceResidentScalarIsInvalidUsage) {
  float scalar = 2.0f;
  ncclRedOp_t op = ncclSum;
  EXPECT_REFUSED(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat, ncclScalarDevice, comms_[0]), ncclInvalidUsage);
  EXPECT_EQ(op, ncclSum);
}

TEST_F(NcclApiComm, CollectivesComputeWithRanksAsThreads) {
  on_all_ranks(kRanks, [&](int rank) {
    ncclComm_t comm = comms_[rank];
    std::vector<float> data = {1.0f + rank, 2.0f, 3.0f * rank};
    std::vector<float> sum(3, kUntouched);
    ASSERT_EQ(ncclAllReduce(data.data(), sum.data(), 3, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(sum, (std::vector<float>{3.0f, 4.0f, 3.0f}));

    // Pre-multiplied sum with a host scalar read at creation: 0.5 * sum.
    float half = 0.5f;
    ncclRedOp_t premul = ncclSum;
    ASSERT_EQ(ncclRedOpCreatePreMulSum(&premul, &half, ncclFloat, ncclScalarHostImmediate, comm), ncclSuccess);
    half = 100.0f;  // read already: must not matter
    std::vector<float> scaled(3, kUntouched);
    ASSERT_EQ(ncclAllReduce(data.data(), scaled.data(), 3, ncclFloat, premul, comm, nullptr), ncclSuccess);
    EXPECT_EQ(scaled, (std::vector<float>{1.5f, 2.0f, 1.5f}));
    EXPECT_EQ(ncclRedOpDestroy(premul, comm), ncclSuccess);

    // In-place broadcast through the older entry point.
    std::vector<int> value = {rank == 1 ? 42 : 0, rank == 1 ? 43 : 0};
    ASSERT_EQ(ncclBcast(value.data(), 2, ncclInt, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(value, (std::vector<int>{42, 43}));
  });
}

TEST_F(NcclApiComm, SplitWithNoColorGivesNullComm) {
  ncclComm_t split[kRanks] = {reinterpret_cast<ncclComm_t>(1), nullptr};
  on_all_ranks(kRanks, [&](int rank) {
    const int color = rank == 0 ? NCCL_SPLIT_NOCOLOR : 5;
    EXPECT_EQ(ncclCommSplit(comms_[rank], color, 0, &split[rank], nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  });
  EXPECT_EQ(split[0], nullptr);
  ASSERT_NE(split[1], nullptr);
  int count = 0;
  EXPECT_EQ(ncclCommCount(split[1], &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(ncclCommDestroy(split[1]), ncclSuccess);
}

// Configs are read as far as their size (and, before 2.14, their version) says: what lies beyond
// must never be read, here a commName that would crash if dereferenced.
void init_ranks_with(const std::function<void(ncclConfig_t&)>& shape) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  on_all_ranks(kRanks, [&](int rank) {
    ncclConfig_t config;
    std::memset(&config, 0xA5, sizeof config);
    config.magic = 0xcafebeef;
    config.blocking = 1;
    shape(config);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRankConfig(&comm, kRanks, id, rank, &config), ncclSuccess) << ncclGetLastError(nullptr);
    float one = 1.0f, sum = 0.0f;
    EXPECT_EQ(ncclAllReduce(&one, &sum, 1, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(sum, static_cast<float>(kRanks));
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST(NcclApiConfig, OnlyFieldsWithinSizeAreRead) {
  init_ranks_with([](ncclConfig_t& config) {
    config.version = NCCL_VERSION(2, 28, 0);
    config.size = offsetof(ncclConfig_t, commName);
  });
}

// A config from NCCL 2.30's header: every field is read, the new ones included.
TEST(NcclApiConfig, ConfigsOf230AreReadWhole) {
  init_ranks_with([](ncclConfig_t& config) {
    config.size = sizeof(ncclConfig_t);
    config.version = NCCL_VERSION(2, 30, 7);
    config.commName = "nccl230";
    config.netName = nullptr;
    config.graphUsageMode = 1;
    config.numRmaCtx = 2;
    config.maxP2pPeers = 8;
    config.graphStreamOrdering = 1;
  });
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.numRmaCtx = -1;
  ncclUniqueId id{};
  ncclComm_t comm = nullptr;
  EXPECT_REFUSED(ncclCommInitRankConfig(&comm, kRanks, id, 0, &config), ncclInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

// A config from NCCL 2.28's header (80 bytes) ends before the fields 2.30 added: a numRmaCtx
// that would be refused lies beyond its size and is not read.
TEST(NcclApiConfig, ConfigsOf228EndBeforeThe230Fields) {
  init_ranks_with([](ncclConfig_t& config) {
    config.size = offsetof(ncclConfig_t, graphUsageMode);
    config.version = NCCL_VERSION(2, 28, 9);
    config.commName = "nccl228";
    config.netName = nullptr;
    config.numRmaCtx = -1;
  });
}

TEST(NcclApiConfig, ConfigsOlderThan214EndAfterBlocking) {
  init_ranks_with([](ncclConfig_t& config) {
    config.version = NCCL_VERSION(2, 13, 4);
    config.size = SIZE_MAX;  // not trusted before 2.14
  });
}

}  // namespace
