// A peer that stays alive but stops calling (DEEPCOMM_TIMEOUT), ncclCommAbort from another thread,
// revoke, and ranks that disagree on plan-shaping settings: 2, 4 and 8 ranks over shared memory
// and TCP, 2 and 4 over UCX.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/faults/fault_support.h"
#include "tests/support/collective_check.h"

namespace {

struct FaultSetup {
  int nranks;
  const char* transport;
  bool flat = true;  // false: DEEPCOMM_FLAT_BYTES=0, small shm collectives on the engine too

  // The environment of the ranks, plus `extra`.
  std::vector<std::pair<std::string, std::string>> env(
      std::vector<std::pair<std::string, std::string>> extra = {}) const {
    extra.emplace_back("DEEPCOMM_TRANSPORT", transport);
    extra.emplace_back("DEEPCOMM_FLAT_BYTES", flat ? "65536" : "0");
    return extra;
  }
};

std::string name_of(const ::testing::TestParamInfo<FaultSetup>& info) {
  return dctest::test_name(info.param.transport) + (info.param.flat ? "_" : "_engine_") +
         std::to_string(info.param.nranks);
}

const auto kSetups = ::testing::Values(FaultSetup{2, "shm"}, FaultSetup{4, "shm"}, FaultSetup{8, "shm"},
                                       FaultSetup{4, "shm", false}, FaultSetup{2, "tcp"}, FaultSetup{4, "tcp"},
                                       FaultSetup{8, "tcp"}, FaultSetup{2, "ucx-all"}, FaultSetup{4, "ucx-all"});

// Failures name the setting, not its bytes.
void PrintTo(const FaultSetup& s, std::ostream* os) {
  *os << s.nranks << " ranks over " << s.transport << (s.flat ? "" : ", no flat board");
}

class Faults : public ::testing::TestWithParam<FaultSetup> {};

TEST_P(Faults, SilentPeerFailsEveryoneAfterTheDeadline) {
  const FaultSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, s.env({{"DEEPCOMM_TIMEOUT", "1"}}),
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        // A straggler shorter than the deadline is no error.
        if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
        if (dctest::run_one(comm, dcCollAllReduce, rank, n) != dcSuccess) return 3;
        const int silent = n - 1;
        if (rank == silent) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // alive, not calling
          // By now the others timed out and told this rank: its call fails at once.
          auto start = std::chrono::steady_clock::now();
          dcResult_t r = dctest::run_one(comm, dcCollAllReduce, rank, n);
          if (r == dcSuccess || dctest::seconds_since(start) > 0.5) return 4;
        } else {
          auto start = std::chrono::steady_clock::now();
          dcResult_t r = dctest::run_one(comm, dcCollAllReduce, rank, n);
          const double waited = dctest::seconds_since(start);
          if (r == dcSuccess || waited < 0.9 || waited > 3.0) {  // the deadline, plus slack on a loaded machine
            fprintf(stderr, "rank %d: result %d after %.2f s\n", rank, r, waited);
            return 5;
          }
        }
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

TEST_P(Faults, AbortFromAnotherThreadUnblocksWithinASecond) {
  const FaultSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, s.env(),
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        if (rank == 0) {
          // Rank 0 blocks in an all-reduce nobody else joins yet; a watchdog thread aborts it.
          std::chrono::steady_clock::time_point aborted_at;
          std::thread watchdog([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            aborted_at = std::chrono::steady_clock::now();
            if (dcCommAbort(comm) != dcSuccess) std::abort();
          });
          dcResult_t r = dctest::run_one(comm, dcCollAllReduce, rank, n);
          const double after_abort = dctest::seconds_since(aborted_at);
          watchdog.join();
          if (r == dcSuccess || after_abort > 1.0) return 3;
          // The handle is gone: calls on it are refused, not a crash.
          if (dctest::run_one(comm, dcCollAllReduce, rank, n) != dcInvalidArgument) return 4;
          return 0;
        }
        // The others were told: their call fails promptly instead of waiting for rank 0.
        std::this_thread::sleep_for(std::chrono::milliseconds(600));
        auto start = std::chrono::steady_clock::now();
        dcResult_t r = dctest::run_one(comm, dcCollAllReduce, rank, n);
        if (r == dcSuccess || dctest::seconds_since(start) > 1.0) return 5;
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

TEST_P(Faults, RevokeFailsPendingAndLaterCallsButShrinkWorks) {
  const FaultSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, s.env(),
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        if (rank == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          if (dcCommRevoke(comm) != dcSuccess) return 3;
          if (dctest::run_one(comm, dcCollAllReduce, rank, n) != dcInvalidUsage) return 4;
        } else {
          auto start = std::chrono::steady_clock::now();
          dcResult_t r = dctest::run_one(comm, dcCollAllReduce, rank, n);
          if (r != dcInvalidUsage || dctest::seconds_since(start) > 1.5) {
            fprintf(stderr, "rank %d: %d %s\n", rank, r, dcGetLastError());
            return 5;
          }
        }
        dcComm_t fresh = nullptr;
        if (dcCommShrink(comm, nullptr, 0, &fresh, nullptr, DC_SHRINK_DEFAULT) != dcSuccess) return 6;
        int64_t v = 1, sum = 0;
        if (dcAllReduce(&v, &sum, 1, dcInt64, dcSum, fresh, nullptr) != dcSuccess || sum != n) return 7;
        dcCommDestroy(fresh);
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

TEST_P(Faults, DisagreeingPlanSettingsFailInitNamingTheVariable) {
  const FaultSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, s.env(),
      [&](int rank, int n, const dcUniqueId& id) {
        if (rank == n - 1) setenv("DEEPCOMM_CHUNK_BYTES", "65536", 1);
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcInvalidUsage || comm) return 1;
        return std::string(dcGetLastError()).find("DEEPCOMM_CHUNK_BYTES") == std::string::npos ? 2 : 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, Faults, kSetups, name_of);

}  // namespace
