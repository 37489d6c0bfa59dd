// A rank killed with SIGKILL during a collective or group: every survivor's pending call returns
// an error within 2 seconds, for 2, 4 and 8 ranks over shared memory and TCP and 2 and 4 over UCX, and /dev/shm is left clean.
// The survivors then shrink to a communicator without the dead rank and compute correctly on it.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <thread>

#include "tests/faults/fault_support.h"
#include "tests/support/collective_check.h"

namespace {

struct DeathSetup {
  int nranks;
  const char* transport;
  bool flat = true;  // false: DEEPCOMM_FLAT_BYTES=0, small shm collectives on the engine too
};

// Failures name the setting, not its bytes.
void PrintTo(const DeathSetup& s, std::ostream* os) {
  *os << s.nranks << " ranks over " << s.transport << (s.flat ? "" : ", no flat board");
}

class RankDeath : public ::testing::TestWithParam<DeathSetup> {};

TEST_P(RankDeath, SurvivorsFailFastThenShrink) {
  const DeathSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  const auto shm_before = dctest::dev_shm_names("deepcomm");
  const int victim = s.nranks / 2;
  for (dcCollective_t kind : {dcCollAllReduce, dcCollBroadcast, dcCollAllGather, dcCollAlltoAll, dcCollSend}) {
    std::string errors = dctest::run_as_processes(
        s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}, {"DEEPCOMM_FLAT_BYTES", s.flat ? "65536" : "0"}},
        [&](int rank, int n, const dcUniqueId& id) {
          dcComm_t comm;
          if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
          if (dctest::run_one(comm, kind, rank, n) != dcSuccess) return 3;  // all alive: works
          if (rank == victim) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the others are waiting
            raise(SIGKILL);
          }
          auto start = std::chrono::steady_clock::now();
          // A rank whose part never needs the dead one may finish calls (e.g. the root of a chain
          // broadcast) until it hears of the death; the call pending then must fail.
          dcResult_t r = dcSuccess;
          while (r == dcSuccess && dctest::seconds_since(start) < 5) r = dctest::run_one(comm, kind, rank, n);
          const double waited = dctest::seconds_since(start);
          if (r != dcRemoteError && r != dcSystemError) {
            fprintf(stderr, "rank %d: collective returned %d\n", rank, r);
            return 4;
          }
          if (waited > 2.1) {  // the victim dies 0.1 s in
            fprintf(stderr, "rank %d: error after %.2f s\n", rank, waited);
            return 5;
          }
          // Later calls fail at once; the failure is visible as the async error.
          dcResult_t async = dcSuccess;
          dcCommGetAsyncError(comm, &async);
          if (async == dcSuccess || dctest::run_one(comm, kind, rank, n) == dcSuccess) return 6;
          // Which rank died, as seen here (its connection closes at once; allow the event to land).
          int failed[8], count = 0;
          for (int i = 0; i < 200 && count == 0; ++i) {
            dcCommFailedRanks(comm, failed, 8, &count);
            if (!count) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          if (count != 1 || failed[0] != victim) {
            std::string seen;
            for (int i = 0; i < std::min(count, 8); ++i) seen += " " + std::to_string(failed[i]);
            fprintf(stderr, "rank %d: %d failed ranks:%s (the log at DEEPCOMM_DEBUG=INFO says why each is gone)\n",
                    rank, count, seen.c_str());
            return 7;
          }
          dcComm_t survivors = nullptr;
          if (dcCommShrink(comm, failed, count, &survivors, nullptr, DC_SHRINK_DEFAULT) != dcSuccess) {
            fprintf(stderr, "rank %d: shrink: %s\n", rank, dcGetLastError());
            return 8;
          }
          int m = 0, me = 0;
          dcCommCount(survivors, &m);
          dcCommRank(survivors, &me);
          int64_t v = rank, sum = -1;
          if (dcAllReduce(&v, &sum, 1, dcInt64, dcSum, survivors, nullptr) != dcSuccess) {
            fprintf(stderr, "rank %d: all-reduce of the survivors: %s\n", rank, dcGetLastError());
            return 9;
          }
          const int64_t expected = static_cast<int64_t>(n) * (n - 1) / 2 - victim;
          if (m != n - 1 || sum != expected || me != (rank < victim ? rank : rank - 1)) return 10;
          dcCommDestroy(survivors);
          dcCommDestroy(comm);
          return 0;
        },
        60, {victim});
    EXPECT_EQ(errors, "") << "collective " << kind;
  }
  EXPECT_EQ(dctest::dev_shm_names("deepcomm"), shm_before) << "shared memory left in /dev/shm";
}

INSTANTIATE_TEST_SUITE_P(Transports, RankDeath,
                         ::testing::Values(DeathSetup{2, "shm"}, DeathSetup{4, "shm"}, DeathSetup{8, "shm"},
                                           DeathSetup{4, "shm", false}, DeathSetup{2, "tcp"}, DeathSetup{4, "tcp"},
                                           DeathSetup{8, "tcp"}, DeathSetup{2, "ucx-all"}, DeathSetup{4, "ucx-all"}),
                         [](const auto& info) {
                           return dctest::test_name(info.param.transport) + (info.param.flat ? "_" : "_engine_") +
                                  std::to_string(info.param.nranks);
                         });

}  // namespace
