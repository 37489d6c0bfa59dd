// The elastic cycle through the NCCL 2.30 API, as a PyTorch-style program runs it, every rank a
// forked process over shared memory and TCP: 8 ranks, one killed with SIGKILL, every survivor's
// pending all-reduce fails, the survivors shrink to 7 with NCCL_SHRINK_ABORT, a process forked only
// then joins by ncclCommGetUniqueId + ncclCommGrow, and an 8-rank all-reduce is correct on it.
// Each phase is timed (printed; DEEPCOMM_TEST_ELASTIC_RUNS cycles, medians at the end).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/forked_processes.h"

namespace {

constexpr int kRanks = 8;
constexpr int kVictim = 5;

// When each phase ended, per process (steady clock, the same in every process); the joiner last.
struct CycleTimes {
  int64_t killed = 0;
  int64_t detected[kRanks] = {};
  int64_t shrunk[kRanks] = {};
  int64_t grown[kRanks + 1] = {};
  int64_t reduced[kRanks + 1] = {};
};

// The all-reduce of (rank + 1): true when it sums to n (n + 1) / 2.
bool sums_right(ncclComm_t comm) {
  int n = 0, me = 0;
  ncclCommCount(comm, &n);
  ncclCommUserRank(comm, &me);
  int64_t mine = me + 1, sum = -1;
  if (ncclAllReduce(&mine, &sum, 1, ncclInt64, ncclSum, comm, nullptr) != ncclSuccess) {
    fprintf(stderr, "rank %d: all-reduce: %s\n", me, ncclGetLastError(comm));
    return false;
  }
  return sum == static_cast<int64_t>(n) * (n + 1) / 2;
}

int64_t latest(const int64_t* t, int n, bool skip_victim) {
  int64_t m = 0;
  for (int i = 0; i < n; ++i)
    if (!skip_victim || i != kVictim) m = std::max(m, t[i]);
  return m;
}

std::string run_cycle(const char* transport, CycleTimes* times) {
  int id_pipe[2];
  if (pipe(id_pipe) != 0) return "no pipe";
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return ncclGetLastError(nullptr);
  const std::vector<std::pair<std::string, std::string>> env{{"DEEPCOMM_TRANSPORT", transport}};
  dctest::ForkedProcesses procs;
  for (int r = 0; r < kRanks; ++r) {
    procs.start(
        "rank " + std::to_string(r), env,
        [&, r] {
          ncclComm_t comm = nullptr;
          if (ncclCommInitRank(&comm, kRanks, id, r) != ncclSuccess || !sums_right(comm)) return 2;
          if (r == kVictim) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the others wait in an all-reduce
            times->killed = dctest::monotonic_ns();
            raise(SIGKILL);
          }
          int64_t mine = r, sum = 0;
          const ncclResult_t failed = ncclAllReduce(&mine, &sum, 1, ncclInt64, ncclSum, comm, nullptr);
          ncclResult_t async = ncclSuccess;
          ncclCommGetAsyncError(comm, &async);
          if (failed == ncclSuccess || async == ncclSuccess) return 3;
          times->detected[r] = dctest::monotonic_ns();
          int excluded[] = {kVictim};
          ncclComm_t survivors = nullptr;
          if (ncclCommShrink(comm, excluded, 1, &survivors, nullptr, NCCL_SHRINK_ABORT) != ncclSuccess) return 4;
          times->shrunk[r] = dctest::monotonic_ns();
          const int me = r < kVictim ? r : r - 1;
          ncclUniqueId grow_id{};
          if (me == 0) {
            if (ncclCommGetUniqueId(survivors, &grow_id) != ncclSuccess) return 5;
            if (!dctest::write_whole(id_pipe[1], &grow_id, sizeof grow_id)) return 6;
          }
          ncclComm_t grown = nullptr;
          if (ncclCommGrow(survivors, kRanks, me == 0 ? &grow_id : nullptr, -1, &grown, nullptr) != ncclSuccess) {
            fprintf(stderr, "rank %d: grow: %s\n", r, ncclGetLastError(survivors));
            return 7;
          }
          times->grown[r] = dctest::monotonic_ns();
          int n = 0, grown_rank = -1;
          ncclCommCount(grown, &n);
          ncclCommUserRank(grown, &grown_rank);
          if (n != kRanks || grown_rank != me || !sums_right(grown)) return 8;
          times->reduced[r] = dctest::monotonic_ns();
          if (!sums_right(survivors)) return 9;  // the parent still works
          ncclCommDestroy(grown);
          ncclCommDestroy(survivors);
          ncclCommDestroy(comm);
          return 0;
        },
        r == kVictim);
  }
  ncclUniqueId grow_id;
  const bool got_id = dctest::read_within(id_pipe[0], &grow_id, sizeof grow_id, 30000);
  close(id_pipe[0]);
  close(id_pipe[1]);
  if (!got_id) return "no grow id within 30 s; " + procs.finish(10);
  procs.start("the new process", env, [&] {
    ncclComm_t grown = nullptr;
    if (ncclCommGrow(nullptr, kRanks, &grow_id, kRanks - 1, &grown, nullptr) != ncclSuccess) {
      fprintf(stderr, "new process: grow: %s\n", ncclGetLastError(nullptr));
      return 2;
    }
    times->grown[kRanks] = dctest::monotonic_ns();
    if (!sums_right(grown)) return 3;
    times->reduced[kRanks] = dctest::monotonic_ns();
    return ncclCommDestroy(grown) == ncclSuccess ? 0 : 4;
  });
  return procs.finish(60);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

class NcclElastic : public ::testing::TestWithParam<const char*> {};

TEST_P(NcclElastic, KillShrinkGrowAllReduce) {
  const char* runs_text = std::getenv("DEEPCOMM_TEST_ELASTIC_RUNS");
  const int runs = runs_text ? std::max(1, std::atoi(runs_text)) : 1;
  std::vector<double> phases[5];
  for (int i = 0; i < runs; ++i) {
    auto* t = dctest::shared_between_processes<CycleTimes>();
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(run_cycle(GetParam(), t), "") << "run " << i;
    const int64_t detected = latest(t->detected, kRanks, true), shrunk = latest(t->shrunk, kRanks, true);
    const int64_t grown = latest(t->grown, kRanks + 1, false), reduced = latest(t->reduced, kRanks + 1, false);
    const double p[5] = {(detected - t->killed) / 1e6, (shrunk - detected) / 1e6, (grown - shrunk) / 1e6,
                         (reduced - grown) / 1e6, (reduced - t->killed) / 1e6};
    printf(
        "NCCL elastic cycle over %s, run %d: detect %.1f ms, shrink %.1f ms, grow %.1f ms, first all-reduce %.1f "
        "ms, whole %.1f ms\n",
        GetParam(), i, p[0], p[1], p[2], p[3], p[4]);
    for (int k = 0; k < 5; ++k) phases[k].push_back(p[k]);
  }
  printf(
      "NCCL elastic cycle over %s, median of %d: detect %.1f ms, shrink %.1f ms, grow %.1f ms, first all-reduce "
      "%.1f ms, whole %.1f ms\n",
      GetParam(), runs, median(phases[0]), median(phases[1]), median(phases[2]), median(phases[3]), median(phases[4]));
}

INSTANTIATE_TEST_SUITE_P(Transports, NcclElastic, ::testing::Values("shm", "tcp"));

}  // namespace
