// Codec work runs on the codec pool's workers, not on the progress engine: while a compressed
// all-reduce of 64 MiB per rank encodes (exact top-k, q8, Huffman, error feedback), small transfers
// on a second communicator of the same ranks (the same engine: threads-as-ranks share a process)
// keep completing. A stalled engine would leave a gap in them at least as long as an encode; the
// machine is shared, so a scheduling hiccup can do that too, and the call is repeated: in at least
// one of them the longest gap stays under half the encode time.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"

namespace {

using Clock = std::chrono::steady_clock;

TEST(CompressedProgress, OtherCommunicatorsMoveWhileA64MiBEncodeRuns) {
  const int n = 2, calls = 3;
  std::vector<dcComm_t> second(n);
  ASSERT_EQ(dcCommInitAll(second.data(), n), dcSuccess);
  // [call][rank]
  std::vector<std::vector<double>> encode_seconds(calls, std::vector<double>(n)), longest_gap = encode_seconds;
  std::vector<std::vector<int>> round_trips(calls, std::vector<int>(n));
  std::string errors = dctest::run_as_threads(n, [&](int rank, dcComm_t comm) -> std::string {
    const size_t count = (64u << 20) / sizeof(float);
    std::vector<float> grad(count);
    for (size_t i = 0; i < count; ++i) grad[i] = float((i * 2654435761u + rank) % 1000) * 1e-3f - 0.5f;
    dcResidual_t residual;
    if (dcResidualCreate(&residual, count) != dcSuccess) return dcGetLastError();
    for (int call = 0; call < calls; ++call) {
      dcCompressStats_t stats{};
      dcRequest_t request;
      if (dcCompressedAllReduce(grad.data(), grad.data(), count, dcFloat32, dcSum, "topk:0.001,q8,huffman,ef", residual,
                                comm, &request, &stats) != dcSuccess)
        return dcGetLastError();
      // Ping-pong on the second communicator: each round both ranks exchange whether their call
      // is still pending, and they stop after a round in which neither was.
      const int peer = 1 - rank;
      int pending = 1, peer_pending = 1, trips = 0;
      double gap = 0;
      Clock::time_point last = Clock::now();
      do {
        if (pending) {
          int done = 0;
          if (dcTest(request, &done) != dcSuccess) return dcGetLastError();
          pending = !done;
        }
        dcGroupStart();
        dcSend(&pending, 1, dcInt32, peer, second[rank], nullptr);
        dcRecv(&peer_pending, 1, dcInt32, peer, second[rank], nullptr);
        if (dcGroupEnd() != dcSuccess) return dcGetLastError();
        const Clock::time_point now = Clock::now();
        gap = std::max(gap, std::chrono::duration<double>(now - last).count());
        last = now;
        ++trips;
      } while (pending || peer_pending);
      encode_seconds[call][rank] = stats.selectSeconds + stats.encodeSeconds;
      longest_gap[call][rank] = gap;
      round_trips[call][rank] = trips;
    }
    dcResidualDestroy(residual);
    return "";
  });
  for (dcComm_t c : second) dcCommDestroy(c);
  ASSERT_EQ(errors, "");
  double best_ratio = 1e9;
  std::string seen;
  for (int call = 0; call < calls; ++call) {
    const double encode = *std::max_element(encode_seconds[call].begin(), encode_seconds[call].end());
    const double gap = *std::max_element(longest_gap[call].begin(), longest_gap[call].end());
    const int trips = *std::min_element(round_trips[call].begin(), round_trips[call].end());
    seen += "call " + std::to_string(call) + ": encode " + std::to_string(encode) + " s, " + std::to_string(trips) +
            " round trips, longest gap " + std::to_string(gap) + " s\n";
    EXPECT_GT(encode, 0.01) << seen;
    EXPECT_GE(trips, 10) << seen;
    best_ratio = std::min(best_ratio, gap / encode);
  }
  EXPECT_LT(best_ratio, 0.5) << seen;
  std::printf("%s", seen.c_str());
}

}  // namespace
