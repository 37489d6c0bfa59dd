// 64 MiB per rank's send buffer, 4 ranks as processes, every collective, over both transports.
#include <gtest/gtest.h>

#include "tests/support/collective_check.h"

namespace {

class LargeBuffers : public ::testing::TestWithParam<const char*> {};

TEST_P(LargeBuffers, EveryCollectiveAt64MiB) {
  const int n = 4;
  const size_t send_elems = (64u << 20) / sizeof(float);
  std::vector<dctest::Case> cases;
  for (dcCollective_t coll : {dcCollAllReduce, dcCollBroadcast, dcCollReduce, dcCollAllGather, dcCollReduceScatter,
                              dcCollAlltoAll, dcCollGather, dcCollScatter, dcCollSend}) {
    dctest::Case c;
    c.collective = coll;
    c.datatype = dcFloat32;
    c.op = dcSum;
    c.root = 1;
    // The send buffer is 64 MiB: per-peer counts are a quarter of it where the input is count*n.
    c.count =
        (coll == dcCollReduceScatter || coll == dcCollAlltoAll || coll == dcCollScatter) ? send_elems / n : send_elems;
    cases.push_back(c);
  }
  std::string errors = dctest::run_as_processes(
      n, {{"DEEPCOMM_TRANSPORT", GetParam()}},
      [&](int rank, int nranks, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, nranks, &id, rank, nullptr) != dcSuccess) return 2;
        int failures = 0;
        for (const auto& c : cases) {
          std::string e = dctest::run_case(comm, c);
          if (!e.empty()) fprintf(stderr, "%s\n", e.c_str()), ++failures;
        }
        dcCommDestroy(comm);
        return failures ? 1 : 0;
      },
      280);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, LargeBuffers, ::testing::Values("shm", "tcp"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
