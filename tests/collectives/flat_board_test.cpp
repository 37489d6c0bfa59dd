// Collectives on the flat board above the one-round sizes: all-reduces of 16 KiB and more take two
// board rounds (each rank reduces one block, then everyone copies all blocks out). Every datatype
// and op, in place and not, with a count that does not divide by the ranks, on threads and on
// processes; the counters show no collective byte went through a transport.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "tests/support/collective_check.h"

namespace {

constexpr size_t kCount = 10007;  // 20 KB of half up to 80 KB of double: two rounds for most types

std::vector<dctest::Case> all_reduce_cases(int n) {
  std::vector<dctest::Case> cases;
  for (const auto& c : dctest::full_matrix(n, {kCount}))
    if (c.collective == dcCollAllReduce || c.collective == dcCollReduceScatter) cases.push_back(c);
  return cases;
}

std::string run_cases(int rank, dcComm_t comm, const std::vector<dctest::Case>& cases, std::vector<uint64_t>* digests) {
  std::string errors;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string e = dctest::run_case(comm, cases[i], digests ? &(*digests)[i] : nullptr);
    if (!e.empty()) errors += e + "\n";
  }
  dcCounters_t c{};
  if (dcCommGetCounters(comm, &c) != dcSuccess) return dcGetLastError();
  if (c.shmBytesSent > 64 || c.tcpBytesSent > 0)  // set-up's two agreement all-reduces aside
    errors += "rank " + std::to_string(rank) + " sent " + std::to_string(c.shmBytesSent) + " bytes through shm\n";
  return errors;
}

class FlatBoardThreads : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { setenv("DEEPCOMM_FLAT_BYTES", "1048576", 1); }
  void TearDown() override { unsetenv("DEEPCOMM_FLAT_BYTES"); }
};

TEST_P(FlatBoardThreads, TwoRoundAllReducesAreExactAndIdenticalOnEveryRank) {
  const int n = GetParam();
  const auto cases = all_reduce_cases(n);
  std::vector<std::vector<uint64_t>> digests(n, std::vector<uint64_t>(cases.size(), 0));
  EXPECT_EQ("", dctest::run_as_threads(
                    n, [&](int rank, dcComm_t comm) { return run_cases(rank, comm, cases, &digests[rank]); }));
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].collective != dcCollAllReduce) continue;
    for (int r = 1; r < n; ++r)
      ASSERT_EQ(digests[r][i], digests[0][i]) << "rank " << r << " differs bitwise: " << cases[i].describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, FlatBoardThreads, ::testing::Values(2, 3, 4, 8));

TEST(FlatBoardProcesses, TwoRoundAllReducesOnFourProcesses) {
  const auto cases = all_reduce_cases(4);
  EXPECT_EQ("", dctest::run_as_processes(
                    4, {{"DEEPCOMM_TRANSPORT", "shm"}, {"DEEPCOMM_FLAT_BYTES", "1048576"}},
                    [&](int rank, int n, const dcUniqueId& id) {
                      dcComm_t comm = nullptr;
                      if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
                      const std::string errors = run_cases(rank, comm, cases, nullptr);
                      if (!errors.empty()) fprintf(stderr, "%s", errors.substr(0, 2000).c_str());
                      dcCommDestroy(comm);
                      return errors.empty() ? 0 : 1;
                    },
                    120));
}

}  // namespace
