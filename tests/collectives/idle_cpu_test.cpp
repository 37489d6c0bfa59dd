// A rank blocked in a collective for a long time waits in epoll, not in a loop: while its peers
// arrive two seconds late, it uses under 5% of a core (its whole process, UCX's threads included).
// Over each transport; UCX skipped, saying why, where it cannot start.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

class IdleCpu : public ::testing::TestWithParam<const char*> {};

TEST_P(IdleCpu, WaitingRankUsesUnderFivePercentOfACore) {
  const char* transport = GetParam();
  if (const std::string why = dctest::transport_unavailable(transport); !why.empty()) GTEST_SKIP() << why;
  constexpr int kLateMs = 2000;
  std::string errors = dctest::run_as_processes(
      3, {{"DEEPCOMM_TRANSPORT", transport}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        std::vector<float> in(1 << 16, 1.0f), out(1 << 16);
        // Warm: connections made, buffers touched.
        if (dcAllReduce(in.data(), out.data(), in.size(), dcFloat32, dcSum, comm, nullptr) != dcSuccess) return 3;
        if (rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(kLateMs));
        const auto wall_start = std::chrono::steady_clock::now();
        const double cpu_start = process_cpu_seconds();
        if (dcAllReduce(in.data(), out.data(), in.size(), dcFloat32, dcSum, comm, nullptr) != dcSuccess) return 4;
        const double cpu = process_cpu_seconds() - cpu_start;
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
        dcCommDestroy(comm);
        if (rank != 0) return 0;
        if (wall < kLateMs * 0.9e-3) {
          fprintf(stderr, "rank 0 waited only %.3f s\n", wall);
          return 5;
        }
        if (cpu > 0.05 * wall) {
          fprintf(stderr, "rank 0 used %.3f s of CPU while waiting %.3f s (%.1f%% of a core)\n", cpu, wall,
                  100 * cpu / wall);
          return 6;
        }
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, IdleCpu, ::testing::Values("shm", "tcp", "ucx-all"),
                         [](const auto& info) { return dctest::test_name(info.param); });

}  // namespace
