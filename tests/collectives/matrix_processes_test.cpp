// A sampled subset of the matrix with ranks as processes, over each transport (shared memory,
// TCP, UCX), forked right after the parent (not a rank) made the unique id. Over shared memory the
// small cases run on the flat board, and once more with it off. The counters show that the forced
// transport carried every byte (UCX: skipped, saying why, where it cannot start).
#include <gtest/gtest.h>

#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

struct ProcessSetup {
  int nranks;
  const char* transport;
  bool flat = true;  // false: DEEPCOMM_FLAT_BYTES=0 (small shm collectives on the engine too)
};

class MatrixOnProcesses : public ::testing::TestWithParam<ProcessSetup> {};

TEST_P(MatrixOnProcesses, SampledCases) {
  const ProcessSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  const auto cases = dctest::sampled_matrix(s.nranks, {0, 1, 7, 13, 1031}, 3);
  std::string errors = dctest::run_as_processes(
      s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}, {"DEEPCOMM_FLAT_BYTES", s.flat ? "65536" : "0"}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
          fprintf(stderr, "init: %s\n", dcGetLastError());
          return 2;
        }
        int failures = 0;
        for (const auto& c : cases) {
          std::string e = dctest::run_case(comm, c);
          if (!e.empty() && failures++ < 5) fprintf(stderr, "%s\n", e.c_str());
        }
        dcCounters_t counters{};
        if (dcCommGetCounters(comm, &counters) != dcSuccess) ++failures;
        const std::string transport = s.transport;
        const uint64_t shm = counters.shmBytesSent, tcp = counters.tcpBytesSent, ucx = counters.ucxBytesSent;
        // The forced transport carried every byte.
        const bool only_forced = transport == "tcp"   ? tcp && !shm && !ucx
                                 : transport == "shm" ? shm && !tcp && !ucx
                                                      : ucx && !shm && !tcp;
        if (n > 1 && !only_forced) {
          fprintf(stderr, "rank %d: bytes went over the wrong transport\n", rank);
          ++failures;
        }
        dcCommDestroy(comm);
        return failures ? 1 : 0;
      },
      120);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, MatrixOnProcesses,
                         ::testing::Values(ProcessSetup{2, "shm"}, ProcessSetup{3, "shm"}, ProcessSetup{4, "shm"},
                                           ProcessSetup{5, "shm"}, ProcessSetup{8, "shm"},
                                           ProcessSetup{3, "shm", false}, ProcessSetup{8, "shm", false},
                                           ProcessSetup{2, "tcp"}, ProcessSetup{3, "tcp"}, ProcessSetup{4, "tcp"},
                                           ProcessSetup{5, "tcp"}, ProcessSetup{8, "tcp"}, ProcessSetup{3, "ucx-all"},
                                           ProcessSetup{8, "ucx-all"}),
                         [](const auto& info) {
                           return dctest::test_name(info.param.transport) + (info.param.flat ? "_" : "_engine_") +
                                  std::to_string(info.param.nranks);
                         });

}  // namespace
