// Nonblocking communicators (dcConfig_t.blocking = 0): init, split, calls and finalize return
// dcInProgress and complete in the background; dcCommGetAsyncError reports progress, then success
// or the error.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"

namespace {

// Polls dcCommGetAsyncError until it stops saying dcInProgress (10 s at most).
dcResult_t settle(dcComm_t comm) {
  dcResult_t state = dcInProgress;
  for (int i = 0; i < 10000 && state == dcInProgress; ++i) {
    if (dcCommGetAsyncError(comm, &state) != dcSuccess) return dcInternalError;
    if (state == dcInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return state;
}

int run_rank(int rank, int n, const dcUniqueId& id) {
  dcConfig_t config = DC_CONFIG_INIT;
  config.blocking = 0;
  dcComm_t comm = nullptr;
  if (dcCommInitRank(&comm, n, &id, rank, &config) != dcInProgress || !comm) return 2;
  if (settle(comm) != dcSuccess) return 3;

  // Larger than the flat board (DEEPCOMM_FLAT_BYTES, 1 MiB): it runs on the engine, in the background.
  std::vector<float> in(600000, 1.0f + rank), out(600000, 0.0f);
  if (dcAllReduce(in.data(), out.data(), in.size(), dcFloat32, dcSum, comm, nullptr) != dcInProgress) return 4;
  if (settle(comm) != dcSuccess) return 5;
  const float expected = n * (n + 1) / 2.0f;
  if (out.front() != expected || out.back() != expected) return 6;

  std::vector<int> ring_out(1000, rank), ring_in(1000, -1);
  dcGroupStart();
  dcSend(ring_out.data(), ring_out.size(), dcInt32, (rank + 1) % n, comm, nullptr);
  dcRecv(ring_in.data(), ring_in.size(), dcInt32, (rank + n - 1) % n, comm, nullptr);
  if (dcGroupEnd() != dcInProgress) return 7;
  if (settle(comm) != dcSuccess || ring_in[999] != (rank + n - 1) % n) return 8;

  dcComm_t half = nullptr;
  if (dcCommSplit(comm, rank % 2, rank, &half, &config) != dcInProgress || !half) return 9;
  if (settle(half) != dcSuccess) return 10;
  int64_t one = 1, count = 0;
  // A small collective among ranks of one host runs over the flat board and is complete on return.
  const dcResult_t small = dcAllReduce(&one, &count, 1, dcInt64, dcSum, half, nullptr);
  if (small != dcInProgress && small != dcSuccess) return 11;
  if (settle(half) != dcSuccess || count != (n + 1 - rank % 2) / 2) return 12;

  const dcResult_t fin = dcCommFinalize(comm);
  if (fin != dcSuccess && fin != dcInProgress) return 13;
  if (settle(comm) != dcSuccess) return 14;
  dcCommDestroy(half);
  dcCommDestroy(comm);
  return 0;
}

TEST(Nonblocking, InitSplitCallsAndFinalizeCompleteInTheBackground) {
  std::string errors = dctest::run_as_processes(4, {}, run_rank, 60);
  EXPECT_EQ(errors, "");
}

TEST(Nonblocking, FailedSetUpIsReportedAsTheAsyncError) {
  std::string errors = dctest::run_as_processes(
      3, {},
      [](int rank, int n, const dcUniqueId& id) {
        if (rank == 2) setenv("DEEPCOMM_ALGO", "tree", 1);
        dcConfig_t config = DC_CONFIG_INIT;
        config.blocking = 0;
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, &config) != dcInProgress) return 1;
        // Using it before the set-up finished is refused, not undefined.
        float x = 1, y = 0;
        const dcResult_t early = dcAllReduce(&x, &y, 1, dcFloat32, dcSum, comm, nullptr);
        if (early != dcInvalidUsage && early != dcInProgress) return 2;
        if (settle(comm) != dcInvalidUsage) return 3;
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

}  // namespace
