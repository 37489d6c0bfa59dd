// A collective that a communicator failure spared and that then stalls ends at its caller's
// deadline with an error. A failure reported by a peer from collective k spares the collectives
// below k (the peer finished them, so they may still complete here); if one of them waits for a
// rank that never comes, DEEPCOMM_TIMEOUT must end it like any other operation, not leave the
// call returning success on a buffer never filled (the fail_comm of the timeout returns at once on
// a communicator that failed already).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine_call.h"
#include "tests/support/collective_check.h"

namespace {

using Clock = std::chrono::steady_clock;

TEST(SparedStall, ASparedCollectiveThatStallsEndsAtTheDeadline) {
  setenv("DEEPCOMM_TIMEOUT", "1", 1);
  setenv("DEEPCOMM_FLAT_BYTES", "0", 1);  // the collective runs on the engine's plans
  std::atomic<bool> rank0_done{false};
  const std::string errors = dctest::run_as_threads(2, [&](int rank, dcComm_t comm) -> std::string {
    if (rank == 1) {  // never calls: rank 0's all-reduce waits for it
      for (int i = 0; i < 3000 && !rank0_done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      return rank0_done.load() ? "" : "rank 0 did not return within 30 s";
    }
    const uint64_t seq = comm->exec.next_collective_seq.load();
    // While the all-reduce (collective seq) waits, a failure arrives from collective seq + 1, as a
    // peer's notice would say: the all-reduce is spared.
    std::thread peer_failure([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      dc::call_on_engine(
          [&] {
            dc::fail_comm(&comm->exec, dc::Status::failure(dcRemoteError, "a peer failed a later collective"), seq + 1);
            return 0;
          },
          10000, "failing the communicator from a later collective");
    });
    std::vector<float> in(1 << 18, 1.0f), out(1 << 18, -1.0f);
    const Clock::time_point start = Clock::now();
    const dcResult_t result = dcAllReduce(in.data(), out.data(), in.size(), dcFloat32, dcSum, comm, nullptr);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string message = dcGetLastError();
    peer_failure.join();
    rank0_done.store(true);
    if (result == dcSuccess) return "the stalled all-reduce returned success after " + std::to_string(seconds) + " s";
    if (message.find("DEEPCOMM_TIMEOUT") == std::string::npos) return "not the timeout's error: " + message;
    // The deadline (1 s) plus the ending, well below the 5 s grace the old code waited.
    if (seconds > 3.0) return "ended after " + std::to_string(seconds) + " s";
    return "";
  });
  unsetenv("DEEPCOMM_TIMEOUT");
  unsetenv("DEEPCOMM_FLAT_BYTES");
  EXPECT_EQ(errors, "");
}

}  // namespace
