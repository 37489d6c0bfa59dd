// A rank killed (SIGKILL) at any point of set-up or run leaves nothing in /dev/shm, and the others
// end with a clean error, never a hang. The kill time sweeps an unkilled run's whole length (the
// rendezvous, connecting, the flat board's set-up, copy-through segments made on first use, small
// and large collectives, destroy), the victim rotating over the ranks. Shared memory is unnamed
// memfds passed over the connections, so there is never a name to leave behind; the sweep checks
// /dev/shm at every kill and after every run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/process_state.h"

namespace {

constexpr int kRanks = 4;
constexpr int kKills = 12;
// A rank killed while its peers connect to it is found out by the connect deadline (nothing else
// can tell a peer that never dials from a slow one); later deaths by its connections closing.
constexpr int kConnectTimeoutS = 5;
constexpr auto kSurvivorDeadline = std::chrono::seconds(3 * kConnectTimeoutS + 20);

// 0: every call succeeded or failed cleanly; 3: something else.
int rank_body(int rank, const dcUniqueId& id) {
  dcComm_t comm = nullptr;
  if (dcCommInitRank(&comm, kRanks, &id, rank, nullptr) != dcSuccess) return 0;
  std::vector<float> small(8, 1.f), large((2u << 20) / sizeof(float), 1.f), gathered(kRanks * 1024);
  for (int round = 0; round < 3; ++round) {
    dcResult_t r = dcAllReduce(small.data(), small.data(), small.size(), dcFloat32, dcSum, comm, nullptr);
    if (r == dcSuccess) r = dcAllReduce(large.data(), large.data(), large.size(), dcFloat32, dcSum, comm, nullptr);
    if (r == dcSuccess)
      r = dcBroadcast(large.data(), large.data(), large.size() / 2, dcFloat32, round % kRanks, comm, nullptr);
    if (r == dcSuccess) r = dcAllGather(large.data(), gathered.data(), 1024, dcFloat32, comm, nullptr);
    if (r != dcSuccess) {
      dcCommAbort(comm);
      return r == dcRemoteError || r == dcSystemError || r == dcInvalidUsage ? 0 : 3;
    }
  }
  dcCommDestroy(comm);  // a peer that left first makes this report its departure: still clean
  return 0;
}

struct RankProcesses {
  std::vector<pid_t> pids;
  std::chrono::steady_clock::time_point started;
};

RankProcesses start_ranks() {
  dcUniqueId id;
  EXPECT_EQ(dcGetUniqueId(&id), dcSuccess);
  RankProcesses run;
  run.started = std::chrono::steady_clock::now();
  for (int r = 0; r < kRanks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) _exit(rank_body(r, id));
    run.pids.push_back(pid);
  }
  return run;
}

// Waits for every rank; "" or what went wrong. The victim (if any) must have died of SIGKILL.
std::string finish(const RankProcesses& run, int victim) {
  std::string problems;
  const auto deadline = std::chrono::steady_clock::now() + kSurvivorDeadline;
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    while (waitpid(run.pids[r], &status, WNOHANG) != run.pids[r]) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : run.pids) kill(p, SIGKILL);
        waitpid(run.pids[r], &status, 0);
        problems += "rank " + std::to_string(r) + " hung; ";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (r == victim) continue;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      problems += "rank " + std::to_string(r) + " ended with wait status " + std::to_string(status) + "; ";
  }
  return problems;
}

TEST(KillSweep, NothingSurvivesInDevShmAndSurvivorsFailCleanly) {
  setenv("DEEPCOMM_SHM_CMA", "0", 1);  // large messages through copy-through segments
  setenv("DEEPCOMM_TIMEOUT", "20", 1);
  setenv("DEEPCOMM_CONNECT_TIMEOUT", std::to_string(kConnectTimeoutS).c_str(), 1);
  setenv("DEEPCOMM_BOOTSTRAP_TIMEOUT", std::to_string(kConnectTimeoutS * 1000).c_str(), 1);
  const std::set<std::string> before = dctest::dev_shm_names();

  RankProcesses unkilled = start_ranks();
  ASSERT_EQ(finish(unkilled, -1), "");
  const auto length = std::chrono::steady_clock::now() - unkilled.started;

  for (int k = 0; k < kKills; ++k) {
    const int victim = k % kRanks;
    const auto at = length * k / kKills;
    RankProcesses run = start_ranks();
    std::this_thread::sleep_until(run.started + at);
    kill(run.pids[victim], SIGKILL);
    EXPECT_EQ(dctest::dev_shm_names(), before) << "a name in /dev/shm while the ranks run (kill " << k << ")";
    EXPECT_EQ(finish(run, victim), "") << "rank " << victim << " killed "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(at).count()
                                       << " ms into a run of "
                                       << std::chrono::duration_cast<std::chrono::milliseconds>(length).count()
                                       << " ms";
    EXPECT_EQ(dctest::dev_shm_names(), before) << "left in /dev/shm after kill " << k;
  }
  unsetenv("DEEPCOMM_SHM_CMA");
  unsetenv("DEEPCOMM_TIMEOUT");
  unsetenv("DEEPCOMM_CONNECT_TIMEOUT");
  unsetenv("DEEPCOMM_BOOTSTRAP_TIMEOUT");
}

}  // namespace
