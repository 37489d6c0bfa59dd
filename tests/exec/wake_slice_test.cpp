// Short scheduling slices (base/wake_slice.h): the progress engine's thread has one from its start,
// and a caller's thread gets one the first time it sleeps waiting for peers (in the engine or on the
// flat board), keeping its policy and nice value. Without them a rank woken by a peer's message
// waits behind a CPU-bound thread for the rest of its slice (docs/performance.md, "Under contention").
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include "base/wake_slice.h"
#include "src/exec/engine.h"
#include "src/exec/flat_board.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr uint64_t kDefaultWakeSliceNs = 100'000;  // DEEPCOMM_WAKE_SLICE_US's default

// Runs `body` on a thread of its own and returns that thread's slice afterwards.
template <class Body>
uint64_t slice_after(Body body) {
  uint64_t slice = 0;
  std::thread([&] {
    body();
    slice = dc::current_slice_ns();
  }).join();
  return slice;
}

// Kernels before 6.12 keep no slice for fair threads (sched_getattr reports none): nothing to test.
bool kernel_has_fair_slices() { return dc::current_slice_ns() != 0; }

#define SKIP_WITHOUT_FAIR_SLICES() \
  if (!kernel_has_fair_slices()) GTEST_SKIP() << "this kernel keeps no slice for fair threads (Linux < 6.12)"

TEST(WakeSlice, AThreadThatNeverSleptKeepsTheDefault) {
  SKIP_WITHOUT_FAIR_SLICES();
  EXPECT_GT(slice_after([] {}), kDefaultWakeSliceNs) << "the default slice is expected longer than 100 us";
}

TEST(WakeSlice, TheEngineThreadHasTheShortSlice) {
  SKIP_WITHOUT_FAIR_SLICES();
  auto slice = std::make_shared<std::promise<uint64_t>>();
  auto result = slice->get_future();
  dc::Engine::Waiting waiting(dc::Engine::instance());  // the engine thread runs the post
  dc::Engine::instance().post([slice] { slice->set_value(dc::current_slice_ns()); });
  ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(result.get(), kDefaultWakeSliceNs);
}

TEST(WakeSlice, ACallerSleepingInTheEngineGetsIt) {
  SKIP_WITHOUT_FAIR_SLICES();
  const uint64_t slice = slice_after([] {
    // Never done: the driver polls for 150 us, then sleeps in epoll until the deadline.
    EXPECT_FALSE(dc::Engine::instance().drive_until([] { return false; }, Clock::now() + 20ms));
  });
  EXPECT_EQ(slice, kDefaultWakeSliceNs);
}

TEST(WakeSlice, ACallerSleepingOnTheFlatBoardGetsIt) {
  SKIP_WITHOUT_FAIR_SLICES();
  auto board = dc::FlatBoard::create(2, 64);
  const uint64_t slice =
      slice_after([&] { EXPECT_FALSE(board->wait([&] { return board->posted(1, 0); }, Clock::now() + 20ms)); });
  EXPECT_EQ(slice, kDefaultWakeSliceNs);
}

TEST(WakeSlice, PolicyAndNiceValueStay) {
  SKIP_WITHOUT_FAIR_SLICES();
  int nice_after = 0;
  int policy_after = -1;
  const uint64_t slice = slice_after([&] {
    const sched_param none{};
    ASSERT_EQ(sched_setscheduler(0, SCHED_BATCH, &none), 0);
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 7), 0);
    dc::use_short_wake_slice();
    nice_after = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    policy_after = sched_getscheduler(0);
  });
  EXPECT_EQ(slice, kDefaultWakeSliceNs);
  EXPECT_EQ(nice_after, 7);
  EXPECT_EQ(policy_after, SCHED_BATCH);
}

// The setting is read once per process: each case runs in a process of its own (re-executed).
class WakeSliceSetting : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WakeSliceSetting, ZeroLeavesSlicesAlone) {
  SKIP_WITHOUT_FAIR_SLICES();
  const uint64_t before = slice_after([] {});
  EXPECT_EXIT(
      {
        setenv("DEEPCOMM_WAKE_SLICE_US", "0", 1);
        const uint64_t after = slice_after([] { dc::use_short_wake_slice(); });
        std::exit(after == before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(WakeSliceSetting, ALongerSliceIsTaken) {
  SKIP_WITHOUT_FAIR_SLICES();
  EXPECT_EXIT(
      {
        setenv("DEEPCOMM_WAKE_SLICE_US", "250", 1);
        const uint64_t after = slice_after([] { dc::use_short_wake_slice(); });
        std::exit(after == 250'000 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(WakeSliceSetting, ItOnlyShortens) {
  SKIP_WITHOUT_FAIR_SLICES();
  const uint64_t before = slice_after([] {});
  EXPECT_EXIT(
      {
        setenv("DEEPCOMM_WAKE_SLICE_US", "50000", 1);  // 50 ms: longer than any default slice
        const uint64_t after = slice_after([] { dc::use_short_wake_slice(); });
        std::exit(after == before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
