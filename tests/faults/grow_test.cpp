// Growing a communicator through the native API (dcCommGrowId, dcCommGrow), every rank a forked
// process, over shared memory, TCP and UCX: 2 ranks grow to 4 and both communicators compute; ids
// are used once and refused when reused, forged or of the wrong kind; a joiner that dies fails the
// grow on every rank within the deadlines; and the elastic cycle (8 ranks, one killed, shrink to
// 7, a freshly forked process joins by grow, an 8-rank all-reduce), timed phase by phase.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/faults/fault_support.h"
#include "tests/support/forked_processes.h"

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;
using dctest::read_within;
using dctest::seconds_since;
using dctest::write_whole;

// A pipe the test and the processes it forks pass grow ids through.
struct IdPipe {
  int fds[2] = {-1, -1};
  IdPipe() {
    if (pipe(fds) != 0) fds[0] = fds[1] = -1;
  }
  ~IdPipe() {
    close(fds[0]);
    close(fds[1]);
  }
  bool send(const dcUniqueId& id, int copies = 1) const {
    for (int i = 0; i < copies; ++i)
      if (!write_whole(fds[1], &id, sizeof id)) return false;
    return true;
  }
  bool receive(dcUniqueId* id, int timeout_ms = 30000) const { return read_within(fds[0], id, sizeof *id, timeout_ms); }
};

// The all-reduce of (rank + 1) over comm: true when it sums to n (n + 1) / 2.
bool sums_right(dcComm_t comm, const char* what) {
  int n = 0, me = 0;
  dcCommCount(comm, &n);
  dcCommRank(comm, &me);
  int64_t mine = me + 1, sum = -1;
  if (dcAllReduce(&mine, &sum, 1, dcInt64, dcSum, comm, nullptr) != dcSuccess) {
    fprintf(stderr, "%s: rank %d: all-reduce: %s\n", what, me, dcGetLastError());
    return false;
  }
  if (sum != static_cast<int64_t>(n) * (n + 1) / 2) {
    fprintf(stderr, "%s: rank %d: sum %lld over %d ranks\n", what, me, static_cast<long long>(sum), n);
    return false;
  }
  return true;
}

bool has_shape(dcComm_t comm, int nranks, int rank) {
  int n = 0, me = -1;
  return dcCommCount(comm, &n) == dcSuccess && dcCommRank(comm, &me) == dcSuccess && n == nranks && me == rank;
}

class Grow : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (const std::string why = dctest::transport_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
  Env env() const { return {{"DEEPCOMM_TRANSPORT", GetParam()}}; }
};

TEST_P(Grow, TwoRanksGrowToFourAndBothCommunicatorsWork) {
  IdPipe ids;
  dcUniqueId id;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  dctest::ForkedProcesses procs;
  for (int r = 0; r < 2; ++r) {
    procs.start("rank " + std::to_string(r), env(), [&, r] {
      dcComm_t parent = nullptr;
      if (dcCommInitRank(&parent, 2, &id, r, nullptr) != dcSuccess) return 2;
      dcUniqueId grow_id{};
      if (r == 0) {
        if (dcCommGrowId(parent, &grow_id) != dcSuccess) return 3;
        dcUniqueId second;
        if (dcCommGrowId(parent, &second) != dcInvalidUsage) return 4;  // one unused id at a time
        dcComm_t wrong = nullptr;
        if (dcCommInitRank(&wrong, 4, &grow_id, 2, nullptr) != dcInvalidUsage) return 5;  // not an init id
        if (!ids.send(grow_id, 2)) return 6;
      }
      dcComm_t grown = nullptr;
      if (dcCommGrow(parent, 4, r == 0 ? &grow_id : nullptr, -1, &grown, nullptr) != dcSuccess) {
        fprintf(stderr, "rank %d: grow: %s\n", r, dcGetLastError());
        return 7;
      }
      if (!has_shape(grown, 4, r)) return 8;
      if (!sums_right(grown, "grown") || !sums_right(parent, "parent")) return 9;
      // The id was consumed: growing with it again fails on every existing rank, at once.
      const auto start = std::chrono::steady_clock::now();
      dcComm_t again = nullptr;
      if (dcCommGrow(parent, 4, r == 0 ? &grow_id : nullptr, -1, &again, nullptr) != dcInvalidUsage || again) {
        fprintf(stderr, "rank %d: a second grow with a used id was not refused\n", r);
        return 10;
      }
      if (seconds_since(start) > 5) return 11;
      if (!sums_right(parent, "parent after a refused grow") || !sums_right(grown, "grown, later")) return 12;
      if (dcCommDestroy(grown) != dcSuccess || dcCommDestroy(parent) != dcSuccess) return 13;
      return 0;
    });
  }
  for (int r = 2; r < 4; ++r) {
    procs.start("joiner " + std::to_string(r), env(), [&, r] {
      dcUniqueId grow_id;
      if (!ids.receive(&grow_id)) return 2;
      dcComm_t grown = nullptr;
      if (dcCommGrow(nullptr, 4, &grow_id, r, &grown, nullptr) != dcSuccess) {
        fprintf(stderr, "joiner %d: grow: %s\n", r, dcGetLastError());
        return 3;
      }
      if (!has_shape(grown, 4, r) || !sums_right(grown, "grown")) return 4;
      if (r == 3) {  // the id was consumed: joining with it again is refused at once
        const auto start = std::chrono::steady_clock::now();
        dcComm_t again = nullptr;
        if (dcCommGrow(nullptr, 4, &grow_id, 3, &again, nullptr) != dcInvalidUsage) return 5;
        if (seconds_since(start) > 5) return 6;
      }
      if (!sums_right(grown, "grown, later")) return 7;
      return dcCommDestroy(grown) == dcSuccess ? 0 : 8;
    });
  }
  EXPECT_EQ(procs.finish(60), "");
}

TEST_P(Grow, StrangersAndWrongIdsAreRefusedWhileTheGrowGoesOn) {
  IdPipe ids, stranger_done;
  dcUniqueId id;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  dctest::ForkedProcesses procs;
  for (int r = 0; r < 2; ++r) {
    procs.start("rank " + std::to_string(r), env(), [&, r] {
      dcComm_t parent = nullptr;
      if (dcCommInitRank(&parent, 2, &id, r, nullptr) != dcSuccess) return 2;
      dcUniqueId grow_id{};
      if (r == 0 && (dcCommGrowId(parent, &grow_id) != dcSuccess || !ids.send(grow_id, 2))) return 3;
      dcComm_t grown = nullptr;
      if (dcCommGrow(parent, 3, r == 0 ? &grow_id : nullptr, -1, &grown, nullptr) != dcSuccess) {
        fprintf(stderr, "rank %d: grow: %s\n", r, dcGetLastError());
        return 4;
      }
      if (!sums_right(grown, "grown")) return 5;
      return dcCommDestroy(grown) == dcSuccess && dcCommDestroy(parent) == dcSuccess ? 0 : 6;
    });
  }
  procs.start("stranger", env(), [&] {
    dcUniqueId grow_id;
    if (!ids.receive(&grow_id)) return 2;
    dcComm_t comm = nullptr;
    // The same root, another secret: the handshake fails (each side finds the other unproven).
    dcUniqueId forged = grow_id;
    forged.internal[40] ^= 1;
    if (dcCommGrow(nullptr, 3, &forged, 2, &comm, nullptr) == dcSuccess || !std::strstr(dcGetLastError(), "secret")) {
      fprintf(stderr, "stranger: a forged id was not refused for its secret: %s\n", dcGetLastError());
      return 3;
    }
    // A rank number of an existing rank, an init id, a grow id for init: refused before any rendezvous.
    if (dcCommGrow(nullptr, 3, &grow_id, 1, &comm, nullptr) != dcInvalidArgument) return 4;
    if (dcCommGrow(nullptr, 3, &id, 2, &comm, nullptr) != dcInvalidUsage) return 5;
    if (dcCommInitRank(&comm, 3, &grow_id, 2, nullptr) != dcInvalidUsage) return 6;
    const char done = 1;
    return write_whole(stranger_done.fds[1], &done, 1) ? 0 : 7;
  });
  procs.start("joiner", env(), [&] {
    dcUniqueId grow_id;
    char done = 0;
    if (!ids.receive(&grow_id) || !read_within(stranger_done.fds[0], &done, 1, 30000)) return 2;
    dcComm_t grown = nullptr;
    if (dcCommGrow(nullptr, 3, &grow_id, 2, &grown, nullptr) != dcSuccess) {
      fprintf(stderr, "joiner: grow: %s\n", dcGetLastError());
      return 3;
    }
    if (!has_shape(grown, 3, 2) || !sums_right(grown, "grown")) return 4;
    return dcCommDestroy(grown) == dcSuccess ? 0 : 5;
  });
  EXPECT_EQ(procs.finish(60), "");
}

// Waits (bounded) until a nonblocking communicator's set-up ended; its result.
dcResult_t settled(dcComm_t comm) {
  dcResult_t state = dcInProgress;
  for (int i = 0; i < 3000 && state == dcInProgress; ++i) {
    if (dcCommGetAsyncError(comm, &state) != dcSuccess) return dcInternalError;
    if (state == dcInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return state;
}

// A nonblocking grow returns dcInProgress at once on every rank; the parent takes calls meanwhile
// (issued after the grow's exchange, they run after it), and the grown communicator then works.
TEST_P(Grow, NonblockingGrowCompletesInTheBackground) {
  IdPipe ids;
  dcUniqueId id;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  dcConfig_t nonblocking = DC_CONFIG_INIT;
  nonblocking.blocking = 0;
  dctest::ForkedProcesses procs;
  for (int r = 0; r < 2; ++r) {
    procs.start("rank " + std::to_string(r), env(), [&, r] {
      dcComm_t parent = nullptr;
      if (dcCommInitRank(&parent, 2, &id, r, nullptr) != dcSuccess) return 2;
      dcUniqueId grow_id{};
      if (r == 0 && (dcCommGrowId(parent, &grow_id) != dcSuccess || !ids.send(grow_id))) return 3;
      dcComm_t grown = nullptr;
      if (dcCommGrow(parent, 3, r == 0 ? &grow_id : nullptr, -1, &grown, &nonblocking) != dcInProgress || !grown)
        return 4;
      if (!sums_right(parent, "parent during the grow")) return 5;
      if (settled(grown) != dcSuccess) {
        fprintf(stderr, "rank %d: nonblocking grow: %s\n", r, dcGetLastError());
        return 6;
      }
      if (!has_shape(grown, 3, r)) return 7;
      int64_t mine = r + 1, sum = -1;
      const dcResult_t issued = dcAllReduce(&mine, &sum, 1, dcInt64, dcSum, grown, nullptr);
      if (issued != dcInProgress && issued != dcSuccess) return 8;  // small ones may finish at once
      if (settled(grown) != dcSuccess || sum != 6) return 9;
      return dcCommDestroy(grown) == dcSuccess && dcCommDestroy(parent) == dcSuccess ? 0 : 10;
    });
  }
  procs.start("joiner", env(), [&] {
    dcUniqueId grow_id;
    if (!ids.receive(&grow_id)) return 2;
    dcComm_t grown = nullptr;
    if (dcCommGrow(nullptr, 3, &grow_id, 2, &grown, &nonblocking) != dcInProgress || settled(grown) != dcSuccess)
      return 3;
    int64_t mine = 3, sum = -1;
    const dcResult_t issued = dcAllReduce(&mine, &sum, 1, dcInt64, dcSum, grown, nullptr);
    if ((issued != dcInProgress && issued != dcSuccess) || settled(grown) != dcSuccess || sum != 6) return 4;
    return dcCommDestroy(grown) == dcSuccess ? 0 : 5;
  });
  EXPECT_EQ(procs.finish(60), "");
}

// The joiner is killed: before joining the rendezvous (every existing rank's grow fails at the
// 2 s bootstrap deadline), or having joined it (the root sees its connection end and fails the
// rendezvous at once). Either way the parent still works.
TEST_P(Grow, AJoinerThatDiesFailsTheGrowOnEveryRank) {
  for (const bool joined_first : {false, true}) {
    IdPipe ids;
    dcUniqueId id;
    ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
    Env e = env();
    // Joined first: the root's deadline (counted from the grow id) must outlast the joiner's 1.5 s
    // head start, so that only the joiner's death can end the rendezvous early.
    e.push_back({"DEEPCOMM_BOOTSTRAP_TIMEOUT", joined_first ? "6000" : "2000"});
    e.push_back({"DEEPCOMM_CONNECT_TIMEOUT", "3"});
    dctest::ForkedProcesses procs;
    for (int r = 0; r < 2; ++r) {
      procs.start("rank " + std::to_string(r), e, [&, r] {
        dcComm_t parent = nullptr;
        if (dcCommInitRank(&parent, 2, &id, r, nullptr) != dcSuccess) return 2;
        dcUniqueId grow_id{};
        if (r == 0 && (dcCommGrowId(parent, &grow_id) != dcSuccess || !ids.send(grow_id))) return 3;
        if (joined_first) std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // the joiner joined, died
        const auto start = std::chrono::steady_clock::now();
        dcComm_t grown = nullptr;
        const dcResult_t result = dcCommGrow(parent, 3, r == 0 ? &grow_id : nullptr, -1, &grown, nullptr);
        const double waited = seconds_since(start);
        if (result == dcSuccess || grown != nullptr) return 4;
        fprintf(stderr, "rank %d: the grow failed after %.2f s: %s\n", r, waited, dcGetLastError());
        if (waited > 8) return 5;
        if (joined_first && !std::strstr(dcGetLastError(), "rank 2 left the rendezvous")) return 8;
        if (!sums_right(parent, "parent after a failed grow")) return 6;
        return dcCommDestroy(parent) == dcSuccess ? 0 : 7;
      });
    }
    procs.start(
        "joiner", e,
        [&] {
          dcUniqueId grow_id;
          if (!ids.receive(&grow_id)) return 2;
          if (joined_first) {
            std::thread([grow_id] {
              dcComm_t grown = nullptr;
              dcCommGrow(nullptr, 3, &grow_id, 2, &grown, nullptr);
            }).detach();
            // Time to reach the root: generous, as a loaded machine (or UCX's set-up) may take 1 s.
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          }
          raise(SIGKILL);
          return 3;
        },
        true);
    EXPECT_EQ(procs.finish(60), "") << (joined_first ? "the joiner died in the rendezvous" : "the joiner died before");
  }
}

// When each phase of the elastic cycle ended, per process (steady clock, shared by all processes).
constexpr int kCycleRanks = 8;
constexpr int kVictim = 3;
struct CycleTimes {
  int64_t killed = 0;
  int64_t detected[kCycleRanks] = {};
  int64_t shrunk[kCycleRanks] = {};
  int64_t grown[kCycleRanks + 1] = {};  // the joiner last
  int64_t reduced[kCycleRanks + 1] = {};
};

struct CyclePhases {
  double detect, shrink, grow, first_all_reduce, whole;  // ms
};

int64_t latest(const int64_t* t, int n) {
  int64_t m = 0;
  for (int i = 0; i < n; ++i)
    if (i != kVictim || n == kCycleRanks + 1) m = std::max(m, t[i]);
  return m;
}

CyclePhases phases_of(const CycleTimes& t) {
  const int64_t detected = latest(t.detected, kCycleRanks), shrunk = latest(t.shrunk, kCycleRanks);
  const int64_t grown = latest(t.grown, kCycleRanks + 1), reduced = latest(t.reduced, kCycleRanks + 1);
  return {(detected - t.killed) / 1e6, (shrunk - detected) / 1e6, (grown - shrunk) / 1e6, (reduced - grown) / 1e6,
          (reduced - t.killed) / 1e6};
}

// One cycle; "" or what went wrong. The victim's own entries stay 0.
std::string run_cycle(const Env& env, CycleTimes* times) {
  IdPipe ids;
  dcUniqueId id;
  if (dcGetUniqueId(&id) != dcSuccess) return dcGetLastError();
  dctest::ForkedProcesses procs;
  for (int r = 0; r < kCycleRanks; ++r) {
    procs.start(
        "rank " + std::to_string(r), env,
        [&, r] {
          dcComm_t comm = nullptr;
          if (dcCommInitRank(&comm, kCycleRanks, &id, r, nullptr) != dcSuccess || !sums_right(comm, "all alive"))
            return 2;
          if (r == kVictim) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the others wait in an all-reduce
            times->killed = dctest::monotonic_ns();
            raise(SIGKILL);
          }
          // 1-2. Every survivor's pending all-reduce fails.
          int64_t mine = r, sum = 0;
          if (dcAllReduce(&mine, &sum, 1, dcInt64, dcSum, comm, nullptr) == dcSuccess) return 3;
          times->detected[r] = dctest::monotonic_ns();
          // 3. Shrink without the dead rank, failing whatever else is pending.
          int failed[kCycleRanks], count = 0;
          for (int i = 0; i < 200 && count == 0; ++i) {
            dcCommFailedRanks(comm, failed, kCycleRanks, &count);
            if (count == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
          if (count != 1 || failed[0] != kVictim) return 4;
          dcComm_t survivors = nullptr;
          if (dcCommShrink(comm, failed, count, &survivors, nullptr, DC_SHRINK_ABORT) != dcSuccess) return 5;
          times->shrunk[r] = dctest::monotonic_ns();
          // 4. Grow back to 8: the survivors' rank 0 gets the id and hands it to the new process.
          const int me = r < kVictim ? r : r - 1;
          dcUniqueId grow_id{};
          if (me == 0 && (dcCommGrowId(survivors, &grow_id) != dcSuccess || !ids.send(grow_id))) return 6;
          dcComm_t grown = nullptr;
          if (dcCommGrow(survivors, kCycleRanks, me == 0 ? &grow_id : nullptr, -1, &grown, nullptr) != dcSuccess) {
            fprintf(stderr, "rank %d: grow: %s\n", r, dcGetLastError());
            return 7;
          }
          times->grown[r] = dctest::monotonic_ns();
          // 5. An 8-rank all-reduce.
          if (!has_shape(grown, kCycleRanks, me) || !sums_right(grown, "grown")) return 8;
          times->reduced[r] = dctest::monotonic_ns();
          dcCommDestroy(grown);
          dcCommDestroy(survivors);
          dcCommDestroy(comm);
          return 0;
        },
        r == kVictim);
  }
  // The new process starts only once the id exists, as a replacement would.
  dcUniqueId grow_id;
  if (!ids.receive(&grow_id)) return "no grow id within 30 s; " + procs.finish(10);
  procs.start("the new process", env, [&] {
    dcComm_t grown = nullptr;
    if (dcCommGrow(nullptr, kCycleRanks, &grow_id, kCycleRanks - 1, &grown, nullptr) != dcSuccess) {
      fprintf(stderr, "new process: grow: %s\n", dcGetLastError());
      return 2;
    }
    times->grown[kCycleRanks] = dctest::monotonic_ns();
    if (!has_shape(grown, kCycleRanks, kCycleRanks - 1) || !sums_right(grown, "grown")) return 3;
    times->reduced[kCycleRanks] = dctest::monotonic_ns();
    return dcCommDestroy(grown) == dcSuccess ? 0 : 4;
  });
  return procs.finish(60);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// DEEPCOMM_TEST_ELASTIC_RUNS cycles (1 unless set); each phase's median is printed.
TEST_P(Grow, ElasticCycleKillShrinkGrowAllReduce) {
  const char* runs_text = std::getenv("DEEPCOMM_TEST_ELASTIC_RUNS");
  const int runs = runs_text ? std::max(1, std::atoi(runs_text)) : 1;
  std::vector<double> detect, shrink, grow, first, whole;
  for (int i = 0; i < runs; ++i) {
    auto* times = dctest::shared_between_processes<CycleTimes>();
    ASSERT_NE(times, nullptr);
    ASSERT_EQ(run_cycle(env(), times), "") << "run " << i;
    const CyclePhases p = phases_of(*times);
    printf(
        "elastic cycle over %s, run %d: detect %.1f ms, shrink %.1f ms, grow %.1f ms, first all-reduce %.1f ms, "
        "whole %.1f ms\n",
        GetParam(), i, p.detect, p.shrink, p.grow, p.first_all_reduce, p.whole);
    detect.push_back(p.detect);
    shrink.push_back(p.shrink);
    grow.push_back(p.grow);
    first.push_back(p.first_all_reduce);
    whole.push_back(p.whole);
  }
  printf(
      "elastic cycle over %s, median of %d: detect %.1f ms, shrink %.1f ms, grow %.1f ms, first all-reduce %.1f "
      "ms, whole %.1f ms\n",
      GetParam(), runs, median(detect), median(shrink), median(grow), median(first), median(whole));
}

INSTANTIATE_TEST_SUITE_P(Transports, Grow, ::testing::Values("shm", "tcp", "ucx-all"),
                         [](const auto& info) { return dctest::test_name(info.param); });

}  // namespace
