// The CPU queue's completion descriptor after a late wake-up (issue 32). A worker queues a
// completion and then writes the descriptor, so a poll() may take the completion before the write
// lands. The readiness that write leaves must be cleared by the next poll(): the engine re-arms its
// wait on the descriptor after every poll() (src/exec/codec_pool.cpp), and a descriptor that stays
// readable with nothing queued ran that handler without end, so a caller driving the engine never
// returned from a call that had finished. This binary holds the worker's write back (it replaces
// write() for the whole process, passing every other write straight to the kernel) to make that
// order happen every time.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "device/cpu_queue.h"

namespace {

// The descriptor whose next write is held (-1: none), and where that write is.
std::atomic<int> g_hold_fd{-1};
enum class Held { None, Waiting, Released, Landed };
std::atomic<Held> g_held{Held::None};

}  // namespace

extern "C" ssize_t write(int fd, const void* buf, size_t count) {
  int expected = fd;
  const bool hold = fd >= 0 && g_hold_fd.compare_exchange_strong(expected, -1);
  if (hold) {
    g_held = Held::Waiting;
    while (g_held.load() != Held::Released) std::this_thread::yield();
  }
  const ssize_t n = syscall(SYS_write, fd, buf, count);
  if (hold) g_held = Held::Landed;
  return n;
}

namespace dc::device {
namespace {

using Clock = std::chrono::steady_clock;

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

// Waits (bounded) until the held write reaches `stage`.
bool reached(Held stage) {
  const auto deadline = Clock::now() + std::chrono::seconds(10 * DC_TEST_TIME_SCALE);
  while (g_held.load() != stage && Clock::now() < deadline) std::this_thread::yield();
  return g_held.load() == stage;
}

struct Seen {
  int completions = 0;
  Status status;
  static void record(void* seen, uint64_t, const Status& status) {
    ++static_cast<Seen*>(seen)->completions;
    static_cast<Seen*>(seen)->status = status;
  }
};

TEST(CpuQueueWakeUp, APollLeavesNoReadinessFromAWriteThatLandedAfterIt) {
  CpuQueue queue(1);
  const int fd = queue.completion_fd();
  std::vector<uint8_t> garbage(64, 0xab);  // no message: the decode ends at once, with an error
  std::vector<float> out(16);
  DecodeStep d;
  d.message = garbage;
  d.target = {dcFloat32, out.data(), out.size()};
  Seen seen;
  g_hold_fd = fd;
  ASSERT_FALSE(queue.post(LocalStep::decode_step(StepKind::Decode, d), {}, {&Seen::record, &seen, 1}).done);
  ASSERT_TRUE(reached(Held::Waiting)) << "the worker never wrote the completion descriptor";
  // The completion is queued, its write not made: poll() takes it.
  ASSERT_TRUE(queue.has_completions());
  EXPECT_EQ(queue.poll(), 1u);
  EXPECT_EQ(seen.completions, 1);
  EXPECT_EQ(seen.status.code, dcRemoteError) << seen.status.message;
  g_held = Held::Released;
  ASSERT_TRUE(reached(Held::Landed));
  ASSERT_TRUE(readable(fd, 0)) << "the late write left no readiness: the case was not made";
  // Nothing is queued: one poll() must clear the readiness, or a waiter on the descriptor wakes for ever.
  EXPECT_FALSE(queue.has_completions());
  EXPECT_EQ(queue.poll(), 0u);
  EXPECT_FALSE(readable(fd, 0)) << "poll() with nothing queued left the descriptor readable";

  // The queue goes on: the next completion makes the descriptor readable again and is delivered.
  ASSERT_FALSE(queue.post(LocalStep::decode_step(StepKind::Decode, d), {}, {&Seen::record, &seen, 2}).done);
  ASSERT_TRUE(readable(fd, 10000 * DC_TEST_TIME_SCALE)) << "no wake-up for the next completion";
  EXPECT_EQ(queue.poll(), 1u);
  EXPECT_EQ(seen.completions, 2);
  EXPECT_FALSE(readable(fd, 0));
}

}  // namespace
}  // namespace dc::device
