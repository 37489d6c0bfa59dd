// A call that returns to its user with its operation still running (a request; a nonblocking
// communicator's call or group) tells the engine, so that its parked thread takes the work up at
// once (Engine::work_left_running). Right after a blocking call drove the engine, that thread sleeps
// its long look-in (Engine::kDriverCheck): work nobody told it about would wait that long in every
// try, whatever the load, so the fastest of several tries must be well under it. The same holds
// for a peer's put while a one-sided channel is open (Engine::kPassiveCheck).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/exec/engine.h"
#include "tests/support/collective_check.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kRanks = 2;
constexpr int kTries = 7;
constexpr auto kBound = dc::Engine::kDriverCheck / 2;

// Each rank's fastest time from a call leaving work running to seeing it complete.
// start(): issues the call right after a blocking all-reduce on `world` drove the engine;
// finished(): polls, without driving, whether it completed (-1: it failed).
int fastest_completion(int rank, dcComm_t world, const char* what, const std::function<bool()>& start,
                       const std::function<int()>& finished) {
  Clock::duration fastest = Clock::duration::max();
  for (int i = 0; i < kTries; ++i) {
    // Idle long enough that the engine thread took the baton back and blocks for frames.
    std::this_thread::sleep_for(20ms);
    int one = 1, sum = 0;
    if (dcAllReduce(&one, &sum, 1, dcInt32, dcSum, world, nullptr) != dcSuccess || sum != kRanks) return 10;
    const auto issued = Clock::now();
    if (!start()) return 11;
    int state = 0;
    while ((state = finished()) == 0) {
      if (Clock::now() - issued > 20s) return 12;
      std::this_thread::sleep_for(100us);
    }
    if (state < 0) return 13;
    fastest = std::min(fastest, Clock::now() - issued);
  }
  if (fastest < kBound) return 0;
  std::fprintf(stderr, "rank %d: %s completed %.0f us after the call at best: the engine thread slept through it\n",
               rank, what, std::chrono::duration<double, std::micro>(fastest).count());
  return 14;
}

// 0 while the communicator's calls run, 1 once they all completed, -1 on an error.
int settled(dcComm_t comm) {
  dcResult_t state = dcInProgress;
  if (dcCommGetAsyncError(comm, &state) != dcSuccess) return -1;
  return state == dcInProgress ? 0 : state == dcSuccess ? 1 : -1;
}

// Off the flat board: the operations below run on the engine.
const std::vector<std::pair<std::string, std::string>> kOnTheEngine = {{"DEEPCOMM_FLAT_BYTES", "0"}};

TEST(WorkLeftRunning, RequestIsTakenUpAtOnce) {
  std::string errors = dctest::run_as_processes(
      kRanks, kOnTheEngine,
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t world = nullptr;
        if (dcCommInitRank(&world, n, &id, rank, nullptr) != dcSuccess) return 1;
        float in = 1.0f + rank, out = 0.0f;
        dcRequest_t request = nullptr;
        const int result = fastest_completion(
            rank, world, "a request",
            [&] { return dcAllReduce(&in, &out, 1, dcFloat32, dcSum, world, &request) == dcSuccess && request; },
            [&] {
              int done = 0;
              if (dcTest(request, &done) != dcSuccess) return -1;
              return done && out == 3.0f ? 1 : done ? -1 : 0;
            });
        dcCommDestroy(world);
        return result;
      },
      60);
  EXPECT_EQ(errors, "");
}

// A nonblocking communicator beside a blocking one (the one that drives): its call, then the same
// call in a group of its own.
TEST(WorkLeftRunning, NonblockingCallAndGroupAreTakenUpAtOnce) {
  std::string errors = dctest::run_as_processes(
      kRanks, kOnTheEngine,
      [](int rank, int n, const dcUniqueId& id) {
        dcComm_t world = nullptr, background = nullptr;
        if (dcCommInitRank(&world, n, &id, rank, nullptr) != dcSuccess) return 1;
        dcConfig_t config = DC_CONFIG_INIT;
        config.blocking = 0;
        const dcResult_t split = dcCommSplit(world, 0, rank, &background, &config);
        if ((split != dcInProgress && split != dcSuccess) || !background) return 2;
        while (settled(background) == 0) std::this_thread::sleep_for(1ms);
        if (settled(background) != 1) return 3;
        float in = 1.0f + rank, out = 0.0f;
        const auto completed = [&] {
          const int state = settled(background);
          return state == 1 && out != 3.0f ? -1 : state;
        };
        const auto call = [&] {
          out = 0.0f;
          return dcAllReduce(&in, &out, 1, dcFloat32, dcSum, background, nullptr) == dcInProgress;
        };
        const auto group = [&] {
          out = 0.0f;
          dcGroupStart();
          const bool queued = dcAllReduce(&in, &out, 1, dcFloat32, dcSum, background, nullptr) == dcSuccess;
          return dcGroupEnd() == dcInProgress && queued;
        };
        int result = fastest_completion(rank, world, "a nonblocking communicator's call", call, completed);
        if (result == 0) result = fastest_completion(rank, world, "a nonblocking group", group, completed);
        dcCommDestroy(background);
        dcCommDestroy(world);
        return result;
      },
      60);
  EXPECT_EQ(errors, "");
}

// While a communicator's one-sided channel is open, a peer's put needs this rank's engine with no
// call here (a payload beyond the eager limit waits for this side's answer; the default transport
// between local ranks): the parked engine thread looks in every kPassiveCheck then, so the put is
// not held for kDriverCheck after this rank's last blocking call.
TEST(WorkLeftRunning, PutToARankThatMakesNoCallIsTakenUpSoon) {
  std::string errors = dctest::run_as_processes(
      kRanks, kOnTheEngine,
      [](int rank, int n, const dcUniqueId& id) {
        dcConfig_t config = DC_CONFIG_INIT;
        config.rmaContexts = 1;
        dcComm_t world = nullptr;
        if (dcCommInitRank(&world, n, &id, rank, &config) != dcSuccess) return 1;
        std::vector<char> window(1 << 20), payload(window.size(), static_cast<char>(7));
        dcWindow_t win = nullptr;
        if (dcCommWindowRegister(world, window.data(), window.size(), &win, 0) != dcSuccess) return 2;
        const int origin = 0, target = 1;
        int result = 0;
        if (rank == origin) {
          // The target drove the all-reduce and then makes no call while the put runs.
          result = fastest_completion(
              rank, world, "a put to a rank making no call",
              [&] {
                std::this_thread::sleep_for(2ms);  // the target let go of its engine meanwhile
                return dcPutSignal(payload.data(), payload.size(), dcInt8, target, win, 0, 0, 0, world) == dcSuccess;
              },
              [] { return 1; });
        } else {
          for (int i = 0; i < kTries && result == 0; ++i) {
            std::this_thread::sleep_for(20ms);
            int one = 1, sum = 0;
            if (dcAllReduce(&one, &sum, 1, dcInt32, dcSum, world, nullptr) != dcSuccess) result = 10;
            std::this_thread::sleep_for(30ms);
            const dcSignalWait_t put = {1, origin, 0, 0};
            if (result == 0 && dcWaitSignal(1, &put, world) != dcSuccess) result = 11;
          }
          if (result == 0 && window.back() != 7) result = 12;
        }
        dcCommWindowDeregister(world, win);
        dcCommDestroy(world);
        return result;
      },
      60);
  EXPECT_EQ(errors, "");
}

}  // namespace
