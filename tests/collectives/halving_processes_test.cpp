// Medium all-reduces between processes of one host over TCP and UCX: there the planner chooses
// recursive halving and doubling (src/plan/halving_allreduce.cpp), and it must reduce exactly,
// in place and out of place, several datatypes and ops, with halves that differ by an element.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

struct HalvingSetup {
  int nranks;
  const char* transport;
};

// The plan's algorithm for a float32 all-reduce of `count` elements, "" where there is none.
std::string algorithm_of(dcComm_t comm, size_t count) {
  std::string json(1 << 20, '\0');
  size_t len = json.size();
  if (dcCommPlanJson(comm, dcCollAllReduce, count, dcFloat32, -1, json.data(), &len) != dcSuccess) return "";
  const std::string key = "\"algorithm\":\"";
  const size_t at = json.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return json.substr(from, json.find('"', from) - from);
}

class HalvingOnProcesses : public ::testing::TestWithParam<HalvingSetup> {};

// Each rank's final segment is about 96 KiB, inside the range where halving applies; the odd
// count makes every round split its range unevenly.
size_t medium_count(int nranks, dcDataType_t type) {
  return nranks * (96u << 10) / (type == dcFloat64 ? 8 : type == dcBfloat16 ? 2 : 4) + 3;
}

TEST_P(HalvingOnProcesses, ChosenAndExact) {
  const HalvingSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::vector<dctest::Case> cases;
  for (auto [type, op, in_place] :
       {std::tuple{dcFloat32, dcSum, false}, std::tuple{dcFloat32, dcSum, true}, std::tuple{dcInt32, dcMax, false},
        std::tuple{dcFloat64, dcAvg, true}, std::tuple{dcBfloat16, dcMin, false}}) {
    dctest::Case c;
    c.datatype = type;
    c.op = op;
    c.in_place = in_place;
    c.count = medium_count(s.nranks, type);
    cases.push_back(c);
  }
  std::string errors = dctest::run_as_processes(
      s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
          fprintf(stderr, "init: %s\n", dcGetLastError());
          return 2;
        }
        int failures = 0;
        if (const std::string got = algorithm_of(comm, medium_count(n, dcFloat32)); got != "halving") {
          fprintf(stderr, "rank %d: the plan is \"%s\", not halving\n", rank, got.c_str());
          ++failures;
        }
        for (const auto& c : cases) {
          const std::string e = dctest::run_case(comm, c);
          if (!e.empty() && failures++ < 5) fprintf(stderr, "rank %d: %s\n", rank, e.c_str());
        }
        dcCommDestroy(comm);
        return failures ? 1 : 0;
      },
      200);
  EXPECT_EQ(errors, "");
}

// Over UCX on one host, where UCX receives ordinary memory in place (cross-memory attach, the
// default), halving also takes vectors far beyond its range over sockets. Where one rank stages
// (DEEPCOMM_UCX_IN_PLACE=never), every rank keeps the ring there: the ranks agree on the plan.
TEST(HalvingOverUcx, LargeVectorsWhereEveryRankReceivesInPlace) {
  if (const std::string why = dctest::transport_unavailable("ucx-all"); !why.empty()) GTEST_SKIP() << why;
  constexpr size_t kCount = (4u << 20) / 4 + 3;  // 4 MiB and an odd tail: 1 MiB a rank, past 256 KiB
  for (const bool one_stages : {false, true}) {
    std::string errors = dctest::run_as_processes(
        4, {{"DEEPCOMM_TRANSPORT", "ucx-all"}},
        [&](int rank, int n, const dcUniqueId& id) {
          if (one_stages && rank == 2) setenv("DEEPCOMM_UCX_IN_PLACE", "never", 1);
          dcComm_t comm = nullptr;
          if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
            fprintf(stderr, "init: %s\n", dcGetLastError());
            return 2;
          }
          int failures = 0;
          const std::string expected = one_stages ? "ring" : "halving";
          if (const std::string got = algorithm_of(comm, kCount); got != expected) {
            fprintf(stderr, "rank %d: the plan is \"%s\", not %s\n", rank, got.c_str(), expected.c_str());
            ++failures;
          }
          for (const bool in_place : {false, true}) {
            dctest::Case c;
            c.count = kCount;
            c.in_place = in_place;
            const std::string e = dctest::run_case(comm, c);
            if (!e.empty() && failures++ < 5) fprintf(stderr, "rank %d: %s\n", rank, e.c_str());
          }
          dcCommDestroy(comm);
          return failures ? 1 : 0;
        },
        200);
    EXPECT_EQ(errors, "") << (one_stages ? "rank 2 staging" : "every rank in place");
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, HalvingOnProcesses,
                         ::testing::Values(HalvingSetup{4, "tcp"}, HalvingSetup{8, "tcp"}, HalvingSetup{4, "ucx-all"},
                                           HalvingSetup{8, "ucx-all"}),
                         [](const auto& info) {
                           return dctest::test_name(info.param.transport) + "_" + std::to_string(info.param.nranks);
                         });

}  // namespace
