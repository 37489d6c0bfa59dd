// Ways of starting ranks: NCCL_COMM_ID, and agreement on plan-shaping settings at init.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"
#include "tests/support/test_port.h"

namespace {

int allreduce_check(dcComm_t comm, int rank, int n) {
  int64_t v = rank + 1, sum = 0;
  if (dcAllReduce(&v, &sum, 1, dcInt64, dcSum, comm, nullptr) != dcSuccess) return 3;
  return sum == n * (n + 1) / 2 ? 0 : 4;
}

TEST(Launch, NcclCommIdNamesTheRendezvous) {
  const std::string addr = "127.0.0.1:" + std::to_string(dc::test::reserved_port());
  setenv("NCCL_COMM_ID", addr.c_str(), 1);
  std::string errors = dctest::run_as_processes(
      3, {},
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
          fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
          return 2;
        }
        int code = allreduce_check(comm, rank, n);
        dcCommDestroy(comm);
        return code;
      },
      60);
  unsetenv("NCCL_COMM_ID");
  EXPECT_EQ(errors, "");
}

TEST(Launch, RanksThatDisagreeOnTheAlgorithmFailInit) {
  std::string errors = dctest::run_as_processes(
      3, {},
      [](int rank, int n, const dcUniqueId& id) {
        if (rank == 1) setenv("DEEPCOMM_ALGO", "ring", 1);
        dcComm_t comm = nullptr;
        dcResult_t r = dcCommInitRank(&comm, n, &id, rank, nullptr);
        if (r != dcInvalidUsage) return 1;
        if (std::string(dcGetLastError()).find("DEEPCOMM_ALGO") == std::string::npos) return 2;
        return comm == nullptr ? 0 : 3;
      },
      60);
  EXPECT_EQ(errors, "");
}

// Programs written for NCCL set NCCL_ALGO in NCCL's own syntax: it must never fail init. What maps
// narrows the choice (dcCommPlanJson shows it); names DeepComm lacks are ignored.
TEST(Launch, NcclAlgoInNcclSyntaxNeverFailsInit) {
  for (const char* algo : {"Tree,Ring", "^NVLS", "NVLS", "allreduce:tree;broadcast:ring", "CollnetDirect,PAT"}) {
    SCOPED_TRACE(algo);
    setenv("NCCL_ALGO", algo, 1);
    const bool tree_only =
        std::string(algo).find("tree") != std::string::npos && std::string(algo).find("Ring") == std::string::npos;
    std::string errors = dctest::run_as_processes(
        3, {},
        [tree_only](int rank, int n, const dcUniqueId& id) {
          dcComm_t comm;
          if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
            fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
            return 2;
          }
          int code = allreduce_check(comm, rank, n);
          char json[1 << 16];
          size_t len = sizeof json;
          if (code == 0 && dcCommPlanJson(comm, dcCollAllReduce, 16 << 20, dcFloat32, -1, json, &len) != dcSuccess)
            code = 5;
          const std::string plan(json);
          if (code == 0 && plan.find("\"predicted_seconds\":") == std::string::npos) code = 6;
          if (code == 0 && tree_only && plan.find("\"algorithm\":\"tree\"") == std::string::npos) code = 7;
          dcCommDestroy(comm);
          return code;
        },
        60);
    EXPECT_EQ(errors, "");
  }
  unsetenv("NCCL_ALGO");
}

TEST(Launch, ForkedRanksAfterGetUniqueIdWithTheParentNotARank) {
  // run_as_processes makes the id in the parent and forks: this is the pattern itself, with 8 ranks.
  std::string errors = dctest::run_as_processes(
      8, {},
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        int code = allreduce_check(comm, rank, n);
        dcCommDestroy(comm);
        return code;
      },
      60);
  EXPECT_EQ(errors, "");
}

class ScalableInit : public ::testing::TestWithParam<int> {};

// Ranks spread over several rendezvous roots (made in the parent, which is not a rank).
TEST_P(ScalableInit, SeveralRootsMakeOneCommunicator) {
  const int nids = GetParam(), n = 7;
  std::vector<dcUniqueId> ids(nids);
  for (auto& id : ids) ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  std::string errors = dctest::run_as_processes(
      n, {},
      [&ids](int rank, int nranks, const dcUniqueId&) {
        dcComm_t comm;
        if (dcCommInitRankScalable(&comm, nranks, rank, static_cast<int>(ids.size()), ids.data(), nullptr) !=
            dcSuccess) {
          fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
          return 2;
        }
        int count = 0, me = -1;
        dcCommCount(comm, &count);
        dcCommRank(comm, &me);
        if (count != nranks || me != rank) return 3;
        int code = allreduce_check(comm, rank, nranks);
        dcCommDestroy(comm);
        return code;
      },
      60);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Roots, ScalableInit, ::testing::Values(1, 2, 3, 7));

TEST(ScalableInitArguments, TooManyIdsIsInvalid) {
  std::vector<dcUniqueId> ids(3);
  for (auto& id : ids) ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  dcComm_t comm = nullptr;
  EXPECT_EQ(dcCommInitRankScalable(&comm, 2, 0, 3, ids.data(), nullptr), dcInvalidArgument);
  EXPECT_EQ(dcCommInitRankScalable(&comm, 2, 0, 0, ids.data(), nullptr), dcInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

}  // namespace
