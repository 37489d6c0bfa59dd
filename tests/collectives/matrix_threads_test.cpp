// The full matrix (every collective x datatype x op x count x in-place) on threads-as-ranks, one
// communicator set per rank count, checked against the float64 reference; all-reduce results must
// be bitwise identical on every rank. Each rank count runs twice: with small collectives on the
// flat board (the default for ranks of one host) and with every collective on the engine's plans.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>

#include "tests/support/collective_check.h"

namespace {

struct ThreadSetup {
  int nranks;
  bool flat;
};

class MatrixOnThreads : public ::testing::TestWithParam<ThreadSetup> {
 protected:
  void SetUp() override {
    if (!GetParam().flat) setenv("DEEPCOMM_FLAT_BYTES", "0", 1);
  }
  void TearDown() override { unsetenv("DEEPCOMM_FLAT_BYTES"); }
};

TEST_P(MatrixOnThreads, EveryCollectiveTypeOpCount) {
  const int n = GetParam().nranks;
  const bool flat = GetParam().flat;
  const auto cases = dctest::full_matrix(n, {0, 1, 7, 13, 257});
  std::vector<std::vector<uint64_t>> digests(n, std::vector<uint64_t>(cases.size(), 0));
  std::string errors = dctest::run_as_threads(n, [&](int rank, dcComm_t comm) {
    std::string first;
    int failures = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::string e = dctest::run_case(comm, cases[i], &digests[rank][i]);
      if (!e.empty() && failures++ < 5) first += e + "\n";
    }
    // Which path carried the matrix: on the board collectives move no byte through a transport,
    // and only its send/receive cases (about 16 KB) do; on the engine every case does (> 400 KB).
    dcCounters_t c{};
    if (dcCommGetCounters(comm, &c) != dcSuccess) return std::string(dcGetLastError());
    const uint64_t moved = c.shmBytesSent + c.tcpBytesSent + c.ucxBytesSent;
    if (n > 1 && (flat ? moved > 64 * 1024 : moved < 256 * 1024))
      first += "rank " + std::to_string(rank) + " sent " + std::to_string(moved) + " bytes through transports\n",
          ++failures;
    return failures ? std::to_string(failures) + " failures, first:\n" + first : std::string();
  });
  EXPECT_EQ(errors, "");
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].collective != dcCollAllReduce) continue;
    for (int r = 1; r < n; ++r)
      ASSERT_EQ(digests[r][i], digests[0][i]) << "rank " << r << " differs bitwise: " << cases[i].describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatrixOnThreads,
                         ::testing::Values(ThreadSetup{1, true}, ThreadSetup{2, true}, ThreadSetup{3, true},
                                           ThreadSetup{4, true}, ThreadSetup{5, true}, ThreadSetup{8, true},
                                           ThreadSetup{2, false}, ThreadSetup{3, false}, ThreadSetup{4, false},
                                           ThreadSetup{5, false}, ThreadSetup{8, false}),
                         [](const auto& info) {
                           return std::string(info.param.flat ? "flat_" : "engine_") +
                                  std::to_string(info.param.nranks);
                         });

}  // namespace
