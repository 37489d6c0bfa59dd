// The full matrix (every collective x datatype x op x count x in-place) on threads-as-ranks, one
// communicator set per rank count, checked against the float64 reference; all-reduce results must
// be bitwise identical on every rank.
#include <gtest/gtest.h>

#include <map>

#include "tests/support/collective_check.h"

namespace {

class MatrixOnThreads : public ::testing::TestWithParam<int> {};

TEST_P(MatrixOnThreads, EveryCollectiveTypeOpCount) {
  const int n = GetParam();
  const auto cases = dctest::full_matrix(n, {0, 1, 7, 13, 257});
  std::vector<std::vector<uint64_t>> digests(n, std::vector<uint64_t>(cases.size(), 0));
  std::string errors = dctest::run_as_threads(n, [&](int rank, dcComm_t comm) {
    std::string first;
    int failures = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      std::string e = dctest::run_case(comm, cases[i], &digests[rank][i]);
      if (!e.empty() && failures++ < 5) first += e + "\n";
    }
    return failures ? std::to_string(failures) + " failures, first:\n" + first : std::string();
  });
  EXPECT_EQ(errors, "");
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].collective != dcCollAllReduce) continue;
    for (int r = 1; r < n; ++r)
      ASSERT_EQ(digests[r][i], digests[0][i]) << "rank " << r << " differs bitwise: " << cases[i].describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, MatrixOnThreads, ::testing::Values(1, 2, 3, 4, 5, 8));

}  // namespace
