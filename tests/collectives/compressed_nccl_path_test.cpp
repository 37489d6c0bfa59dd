// DEEPCOMM_COMPRESS: qualifying all-reduces (float32/float16/bfloat16, sum or avg, at least
// DEEPCOMM_COMPRESS_MIN_BYTES) run compressed with error feedback kept per buffer in the
// communicator's store; everything else runs as before; ranks must agree on the setting. Also the
// store's cap, eviction and reset.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"
#include "src/exec/residual_store.h"
#include "tests/support/collective_check.h"

namespace {

class CompressEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("DEEPCOMM_COMPRESS", "q8,huffman,ef", 1);
    setenv("DEEPCOMM_COMPRESS_MIN_BYTES", "65536", 1);
    setenv("DEEPCOMM_FLAT_BYTES", "0", 1);  // dense calls through the transports, counted
  }
  void TearDown() override {
    unsetenv("DEEPCOMM_COMPRESS");
    unsetenv("DEEPCOMM_COMPRESS_MIN_BYTES");
    unsetenv("DEEPCOMM_COMPRESS_RESET");
    unsetenv("DEEPCOMM_FLAT_BYTES");
  }
};

uint64_t sent_bytes(dcComm_t comm) {
  dcCounters_t c{};
  dcCommGetCounters(comm, &c);
  return c.shmBytesSent + c.tcpBytesSent;
}

TEST_F(CompressEnvironment, QualifyingAllReducesRunCompressedOthersUntouched) {
  const int n = 3;
  std::string errors = dctest::run_as_threads(n, [](int rank, dcComm_t comm) -> std::string {
    const size_t count = 1 << 18;  // 1 MiB of float32
    std::vector<float> grad(count), sum(count);
    for (size_t i = 0; i < count; ++i) grad[i] = float(int((i * 13 + rank) % 200) - 100) * 0.01f;
    uint64_t before = sent_bytes(comm);
    if (dcAllReduce(grad.data(), sum.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    const uint64_t compressed = sent_bytes(comm) - before;
    // The dense plans send at least 2(n-1)/n of the buffer; q8 with Huffman about a quarter of that.
    if (compressed * 3 > count * sizeof(float)) return "sent " + std::to_string(compressed) + " bytes: not compressed";
    bool inexact = false;
    for (size_t i = 0; i < count; ++i) {
      double want = 0;
      for (int r = 0; r < 3; ++r) want += float(int((i * 13 + r) % 200) - 100) * 0.01f;
      if (std::fabs(sum[i] - want) > 0.03) return "element " + std::to_string(i) + " is far from the sum";
      inexact |= sum[i] != float(want);
    }
    if (!inexact) return "a q8 result cannot be exact everywhere";
    if (comm->exec.residual_store->entries() != 1) return "the buffer's residual is not in the store";
    std::string json(1 << 20, '\0');
    size_t len = json.size();
    if (dcCommPlanJson(comm, dcCollAllReduce, count, dcFloat32, -1, json.data(), &len) != dcSuccess ||
        json.find("\"compression\":\"q8,huffman,ef\"") == std::string::npos)
      return "dcCommPlanJson does not show the compressed plan";

    // Not qualifying: an integer all-reduce, a max, a buffer below the minimum: exact, dense.
    std::vector<int32_t> ints(count, rank + 1), int_sum(count);
    before = sent_bytes(comm);
    if (dcAllReduce(ints.data(), int_sum.data(), count, dcInt32, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (sent_bytes(comm) - before < count * sizeof(int32_t)) return "the int32 all-reduce sent too little";
    for (int32_t v : int_sum)
      if (v != 6) return "int32 sum wrong";
    std::vector<float> small(1000, 1.0f + rank), small_max(1000);
    if (dcAllReduce(grad.data(), sum.data(), count, dcFloat32, dcMax, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (dcAllReduce(small.data(), small_max.data(), 1000, dcFloat32, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    for (float v : small_max)
      if (v != 6.0f) return "the small all-reduce is not exact";
    if (comm->exec.residual_store->entries() != 1) return "a non-qualifying call made a residual";

    // The store: a second buffer gets its own residual; a reset (call or environment) empties it.
    std::vector<float> other(count, 0.5f);
    if (dcAllReduce(other.data(), other.data(), count, dcFloat32, dcAvg, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (comm->exec.residual_store->entries() != 2) return "the second buffer has no residual of its own";
    if (dcCommResetCompression(comm) != dcSuccess || comm->exec.residual_store->entries() != 0)
      return "dcCommResetCompression left residuals";
    return "";
  });
  EXPECT_EQ(errors, "");
}

TEST_F(CompressEnvironment, ANewValueOfTheResetVariableEmptiesTheStore) {
  dcComm_t comms[1];
  ASSERT_EQ(dcCommInitAll(comms, 1), dcSuccess);
  std::vector<float> a(1 << 18, 1.0f), b(1 << 18, 2.0f);
  setenv("DEEPCOMM_COMPRESS_RESET", "1", 1);
  ASSERT_EQ(dcAllReduce(a.data(), a.data(), a.size(), dcFloat32, dcSum, comms[0], nullptr), dcSuccess);
  ASSERT_EQ(dcAllReduce(b.data(), b.data(), b.size(), dcFloat32, dcSum, comms[0], nullptr), dcSuccess);
  EXPECT_EQ(comms[0]->exec.residual_store->entries(), 2u);
  setenv("DEEPCOMM_COMPRESS_RESET", "2", 1);
  ASSERT_EQ(dcAllReduce(a.data(), a.data(), a.size(), dcFloat32, dcSum, comms[0], nullptr), dcSuccess);
  EXPECT_EQ(comms[0]->exec.residual_store->entries(), 1u);
  EXPECT_EQ(dcCommDestroy(comms[0]), dcSuccess);
}

TEST_F(CompressEnvironment, RanksThatDisagreeFailInit) {
  std::string errors = dctest::run_as_processes(
      2, {},
      [](int rank, int n, const dcUniqueId& id) {
        if (rank == 1) setenv("DEEPCOMM_COMPRESS", "topk:0.01,q8,ef", 1);
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcInvalidUsage) return 1;
        return std::string(dcGetLastError()).find("DEEPCOMM_COMPRESS") == std::string::npos ? 2 : 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

TEST_F(CompressEnvironment, ABadSpecFailsInitNamingTheVariable) {
  setenv("DEEPCOMM_COMPRESS", "q9", 1);
  dcComm_t comms[1];
  EXPECT_EQ(dcCommInitAll(comms, 1), dcInvalidArgument);
  EXPECT_NE(std::string(dcGetLastError()).find("DEEPCOMM_COMPRESS"), std::string::npos);
}

TEST(ResidualStore, CapEvictsTheLeastRecentlyUsedAndResetsOnAGenerationChange) {
  dc::ResidualStore store(3 * 1000 * sizeof(float));
  float a[1], b[1], c[1], d[1];
  auto ra = store.find_or_create(a, 1000, dcFloat32);
  store.find_or_create(b, 1000, dcFloat32);
  store.find_or_create(c, 1000, dcFloat32);
  EXPECT_EQ(store.find_or_create(a, 1000, dcFloat32), ra);  // a is now the most recently used
  store.find_or_create(d, 1000, dcFloat32);                 // evicts b
  EXPECT_EQ(store.entries(), 3u);
  EXPECT_EQ(store.bytes(), 3 * 1000 * sizeof(float));
  EXPECT_EQ(store.find_or_create(a, 1000, dcFloat32), ra);
  EXPECT_NE(store.find_or_create(a, 1000, dcFloat16), ra);  // another datatype is another key
  // Larger than the whole cap: a residual for the call, not kept.
  auto huge = store.find_or_create(a, 4000, dcFloat32);
  EXPECT_EQ(huge->values.count(), 4000u);
  EXPECT_NE(store.find_or_create(a, 4000, dcFloat32), huge);
  store.reset_on_change("1");
  EXPECT_EQ(store.entries(), 3u);  // the first value seen only records it
  store.reset_on_change("1");
  EXPECT_EQ(store.entries(), 3u);
  store.reset_on_change("2");
  EXPECT_EQ(store.entries(), 0u);
  EXPECT_EQ(ra->values.count(), 1000u);  // a residual in use outlives its eviction
}

}  // namespace
