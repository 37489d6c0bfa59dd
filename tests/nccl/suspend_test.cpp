// ncclCommSuspend / ncclCommResume / ncclCommMemStats as an NCCL program sees them, with ranks as
// processes over shared memory (with and without cross-memory attach) and TCP: the statistics are
// real bytes (the scratch a large all-reduce takes and the copy-through segments are releasable,
// the flat board and the error-feedback residuals persist); suspending frees the releasable part
// (the statistics, resident memory and resident shared memory show it; nothing is in /dev/shm,
// where DeepComm names no segment); calls on a suspended communicator fail with a message
// saying so; suspending with an operation in flight is refused; and all-reduces on a communicator
// suspended and resumed between them are bit-identical to those on one never suspended.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/process_state.h"

namespace {

constexpr int kRanks = 2;
constexpr size_t kLargeCount = 8u << 20;  // 32 MiB of float32
constexpr int kSteps = 3;

using Env = std::vector<std::pair<std::string, std::string>>;

// Forks kRanks processes running body(rank); "" when all exited 0 within timeout_s.
std::string run_ranks(const Env& env, const std::function<int(int rank)>& body, int timeout_s) {
  std::vector<pid_t> pids;
  for (int r = 0; r < kRanks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
      for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
      const int code = body(r);
      std::fflush(stdout);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::string errors;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pids[r], SIGKILL);
        waitpid(pids[r], &status, 0);
        errors += "rank " + std::to_string(r) + " timed out; ";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      errors += "rank " + std::to_string(r) + " exited " + std::to_string(WEXITSTATUS(status)) + "; ";
    if (WIFSIGNALED(status))
      errors += "rank " + std::to_string(r) + " died of signal " + std::to_string(WTERMSIG(status)) + "; ";
  }
  return errors;
}

struct Stats {
  uint64_t releasable = 0, suspended = 0, persistent = 0, total = 0;
};

bool read_stats(ncclComm_t comm, Stats* s) {
  return ncclCommMemStats(comm, ncclStatGpuMemSuspend, &s->releasable) == ncclSuccess &&
         ncclCommMemStats(comm, ncclStatGpuMemSuspended, &s->suspended) == ncclSuccess &&
         ncclCommMemStats(comm, ncclStatGpuMemPersist, &s->persistent) == ncclSuccess &&
         ncclCommMemStats(comm, ncclStatGpuMemTotal, &s->total) == ncclSuccess;
}

std::string describe(const Stats& s) {
  return "releasable " + std::to_string(s.releasable) + " suspended " + std::to_string(s.suspended) + " persistent " +
         std::to_string(s.persistent) + " total " + std::to_string(s.total);
}

// Prints why and returns false (the rank then exits nonzero).
bool check(bool ok, int rank, const std::string& what) {
  if (!ok) std::printf("rank %d: %s\n", rank, what.c_str());
  return ok;
}

// Inputs of step k: fractions whose float sum depends on the order of the additions.
void fill(std::vector<float>& data, int rank, int step) {
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = 0.1f * static_cast<float>(rank + 1) + 1e-3f * static_cast<float>((i * 7 + step) % 1013) + 0.37f * step;
}

// What a configuration should hold besides the scratch after the large all-reduce: a 4 MiB
// copy-through segment (releasable), or error-feedback residuals (persistent).
enum class Persist { Some, CopySegment, Residuals };

// One rank: two communicators on the same ranks; `resumed` is suspended and resumed after every
// step, `plain` never. Exit status 0 when every check held.
int suspend_resume_rank(int rank, const ncclUniqueId ids[2], Persist expect) {
  ncclComm_t resumed = nullptr, plain = nullptr;
  if (!check(ncclCommInitRank(&resumed, kRanks, ids[0], rank) == ncclSuccess &&
                 ncclCommInitRank(&plain, kRanks, ids[1], rank) == ncclSuccess,
             rank, "init failed"))
    return 2;
  Stats fresh;
  if (!check(read_stats(resumed, &fresh), rank, "ncclCommMemStats failed")) return 2;
  bool ok = check(fresh.suspended == 0 && fresh.total == fresh.releasable + fresh.persistent, rank,
                  "fresh: " + describe(fresh));
  // Without compression the all-reduce is a pre-multiplied sum: its scaled copy of the input
  // (count elements of scratch) is written in full, so releasing it shows in resident memory.
  ncclRedOp_t op_resumed = ncclSum, op_plain = ncclSum;
  const float scalar = 0.5f;
  if (expect != Persist::Residuals &&
      !check(ncclRedOpCreatePreMulSum(&op_resumed, const_cast<float*>(&scalar), ncclFloat, ncclScalarHostImmediate,
                                      resumed) == ncclSuccess &&
                 ncclRedOpCreatePreMulSum(&op_plain, const_cast<float*>(&scalar), ncclFloat, ncclScalarHostImmediate,
                                          plain) == ncclSuccess,
             rank, "ncclRedOpCreatePreMulSum failed"))
    return 2;
  std::vector<float> input(kLargeCount), out_resumed(kLargeCount), out_plain(kLargeCount);
  for (int step = 0; step < kSteps && ok; ++step) {
    fill(input, rank, step);
    if (!check(ncclAllReduce(input.data(), out_resumed.data(), kLargeCount, ncclFloat, op_resumed, resumed, nullptr) ==
                       ncclSuccess &&
                   ncclAllReduce(input.data(), out_plain.data(), kLargeCount, ncclFloat, op_plain, plain, nullptr) ==
                       ncclSuccess,
               rank, "all-reduce failed: " + std::string(ncclGetLastError(nullptr))))
      return 2;
    ok &= check(std::memcmp(out_resumed.data(), out_plain.data(), kLargeCount * sizeof(float)) == 0, rank,
                "step " + std::to_string(step) + ": results differ from the never-suspended communicator");

    Stats active, during, after;
    ok &= check(read_stats(resumed, &active), rank, "MemStats failed");
    // The all-reduce took scratch: at least the pre-multiplied input, or the compressed messages.
    ok &= check(active.releasable >= kLargeCount * sizeof(float) / 4 && active.suspended == 0 &&
                    active.total == active.releasable + active.persistent && active.total > fresh.total,
                rank, "after the all-reduce: " + describe(active) + " (fresh: " + describe(fresh) + ")");
    if (expect == Persist::CopySegment) {  // our 4 MiB copy-through segment to the peer, next to the scratch
      ok &= check(active.releasable >= kLargeCount * sizeof(float) + (4u << 20), rank,
                  "no segment counted: " + describe(active));
    } else if (expect == Persist::Residuals) {  // one float32 residual per element
      ok &= check(active.persistent >= fresh.persistent + kLargeCount * sizeof(float), rank,
                  "no residual counted: " + describe(active));
    }

    const size_t rss_active = dctest::resident_bytes(), shared_active = dctest::shared_resident_bytes();
    if (!check(ncclCommSuspend(resumed, NCCL_SUSPEND_MEM) == ncclSuccess, rank,
               "suspend failed: " + std::string(ncclGetLastError(nullptr))))
      return 2;
    const size_t rss_during = dctest::resident_bytes(), shared_during = dctest::shared_resident_bytes();
    ok &= check(dctest::dev_shm_names("deepcomm").empty(), rank, "a DeepComm segment in /dev/shm");
    ok &= check(read_stats(resumed, &during), rank, "MemStats while suspended failed");
    ok &= check(during.releasable == 0 && during.suspended == 1 && during.persistent == active.persistent &&
                    during.total == during.persistent,
                rank, "while suspended: " + describe(during));
    // Resident memory drops by (most of) what was released: the scratch pages the all-reduce touched.
    ok &= check(rss_during + active.releasable / 2 <= rss_active, rank,
                "resident memory " + std::to_string(rss_active) + " -> " + std::to_string(rss_during) +
                    " bytes while suspended; released " + std::to_string(active.releasable));
    // The segment is shared memory: its pages leave this process's (and the peer's) mapping.
    if (expect == Persist::CopySegment) {
      ok &= check(shared_during + (4u << 20) <= shared_active, rank,
                  "resident shared memory " + std::to_string(shared_active) + " -> " + std::to_string(shared_during) +
                      " bytes while suspended");
    }
    if (step == 0) {
      std::printf("rank %d: %s; resident %zu -> %zu bytes, shared %zu -> %zu while suspended\n", rank,
                  describe(active).c_str(), rss_active, rss_during, shared_active, shared_during);
    }

    // Calls on the suspended communicator fail, saying so; queries still work.
    const ncclResult_t refused =
        ncclAllReduce(input.data(), out_resumed.data(), kLargeCount, ncclFloat, op_resumed, resumed, nullptr);
    const std::string message = ncclGetLastError(resumed);
    ok &= check(refused == ncclInvalidUsage && message.find("suspended") != std::string::npos, rank,
                "all-reduce while suspended: " + std::to_string(refused) + " '" + message + "'");
    ok &= check(ncclCommSuspend(resumed, NCCL_SUSPEND_MEM) == ncclInvalidUsage, rank, "suspended twice");
    int count = 0;
    ok &= check(ncclCommCount(resumed, &count) == ncclSuccess && count == kRanks, rank, "count while suspended");

    if (!check(ncclCommResume(resumed) == ncclSuccess, rank, "resume failed")) return 2;
    ok &= check(read_stats(resumed, &after) && after.suspended == 0, rank, "after resume: " + describe(after));
    ok &= check(ncclCommResume(resumed) == ncclInvalidUsage, rank, "resume of a communicator not suspended");
  }
  ok &= check(ncclCommDestroy(resumed) == ncclSuccess && ncclCommDestroy(plain) == ncclSuccess, rank, "destroy");
  return ok ? 0 : 1;
}

void run_suspend_resume(const Env& env, Persist expect) {
  ncclUniqueId ids[2];
  ASSERT_EQ(ncclGetUniqueId(&ids[0]), ncclSuccess);
  ASSERT_EQ(ncclGetUniqueId(&ids[1]), ncclSuccess);
  EXPECT_EQ(run_ranks(
                env, [&](int rank) { return suspend_resume_rank(rank, ids, expect); }, 240),
            "");
}

TEST(NcclSuspend, SharedMemoryResultsMatchANeverSuspendedCommunicator) {
  run_suspend_resume({{"DEEPCOMM_TRANSPORT", "shm"}}, Persist::Some);
}

TEST(NcclSuspend, CopyThroughSegmentsAreReleased) {
  run_suspend_resume({{"DEEPCOMM_TRANSPORT", "shm"}, {"DEEPCOMM_SHM_CMA", "0"}}, Persist::CopySegment);
}

TEST(NcclSuspend, TcpResultsMatchANeverSuspendedCommunicator) {
  run_suspend_resume({{"DEEPCOMM_TRANSPORT", "tcp"}}, Persist::Some);
}

TEST(NcclSuspend, ErrorFeedbackResidualsSurviveSuspend) {
  run_suspend_resume({{"DEEPCOMM_TRANSPORT", "shm"}, {"DEEPCOMM_COMPRESS", "q8,ef"}}, Persist::Residuals);
}

// Rank 0 starts an all-reduce on a nonblocking communicator that cannot finish before rank 1
// joins; suspending then is refused. Rank 1 joins once rank 0 checked (a pipe), and suspending
// after the operation finished works.
TEST(NcclSuspend, RefusedWhileAnOperationIsInFlight) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  auto body = [&](int rank) -> int {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    ncclResult_t state = ncclCommInitRankConfig(&comm, kRanks, id, rank, &config);
    auto settle = [&]() {  // waits (bounded) for the communicator's calls to finish
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (state == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return false;
      }
      return state == ncclSuccess;
    };
    if (!check(settle(), rank, "init failed")) return 2;
    std::vector<float> data(1 << 20, 1.0f);
    bool ok = true;
    if (rank == 0) {
      state = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comm, nullptr);
      ok &= check(state == ncclInProgress, rank, "the all-reduce finished alone: " + std::to_string(state));
      const ncclResult_t refused = ncclCommSuspend(comm, NCCL_SUSPEND_MEM);
      const std::string message = ncclGetLastError(comm);
      ok &= check(refused == ncclInvalidUsage && message.find("in flight") != std::string::npos, rank,
                  "suspend with an operation in flight: " + std::to_string(refused) + " '" + message + "'");
      ok &= check(write(go[1], "g", 1) == 1, rank, "pipe");
    } else {
      char c = 0;
      ok &= check(read(go[0], &c, 1) == 1, rank, "pipe");
      state = ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat, ncclSum, comm, nullptr);
    }
    ok &= check(settle() && data[0] == 2.0f, rank, "all-reduce failed or wrong");
    ok &= check(ncclCommSuspend(comm, NCCL_SUSPEND_MEM) == ncclSuccess, rank,
                "suspend after the operation finished: " + std::string(ncclGetLastError(comm)));
    ok &= check(ncclCommResume(comm) == ncclSuccess, rank, "resume");
    ok &= check(ncclCommDestroy(comm) == ncclSuccess, rank, "destroy");
    return ok ? 0 : 1;
  };
  EXPECT_EQ(run_ranks({{"DEEPCOMM_TRANSPORT", "shm"}}, body, 120), "");
  close(go[0]);
  close(go[1]);
}

}  // namespace
