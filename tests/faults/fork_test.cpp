// fork() while a library thread runs handlers or jobs (the progress engine; a codec worker; a
// rendezvous root's thread, whose process forks the ranks): the child must not inherit a lock that
// thread held at that moment (it would stay held for good, the thread does not exist in the
// child). The thread here runs handlers that each hold a lock for a while; every child of 40 forks
// must find it free, and a child can still use DeepComm (a fresh engine, a one-rank all-reduce).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "base/fork_park.h"
#include "deepcomm/deepcomm.h"
#include "device/cpu_queue.h"
#include "src/exec/codec_pool.h"
#include "src/exec/engine.h"

namespace {

std::mutex held_by_handlers;

using Post = dc::ForkParkedRunner::Post;

// An io_context run by a thread that ForkParkedRunner started, as a rendezvous root's is.
struct ParkedIoThread {
  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard = boost::asio::make_work_guard(io);
  std::thread thread = dc::ForkParkedRunner::start(io, [this] { io.run(); });
  ~ParkedIoThread() {
    guard.reset();
    io.stop();
    thread.join();
  }
};

// Re-posts itself until told to stop: the thread spends most of its time holding the lock.
void busy_handler(Post post, std::shared_ptr<std::atomic<bool>> stop, std::shared_ptr<std::atomic<int>> runs) {
  if (*stop) return;
  {
    std::lock_guard<std::mutex> lock(held_by_handlers);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ++*runs;
  post([post, stop, runs] { busy_handler(post, stop, runs); });
}

int wait_child(pid_t pid) {
  for (int i = 0; i < 500; ++i) {  // 5 s: a deadlocked child is killed and counted as one
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return 101;
}

// Keeps a thread running handlers through post, forks 40 times; the number of children that found
// the handlers' lock held.
void expect_children_find_lock_free(const Post& post) {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto runs = std::make_shared<std::atomic<int>>(0);
  post([post, stop, runs] { busy_handler(post, stop, runs); });
  while (*runs < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int locked_in_child = 0;
  for (int i = 0; i < 40; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!held_by_handlers.try_lock()) _exit(1);
      _exit(0);
    }
    const int code = wait_child(pid);
    ASSERT_TRUE(code == 0 || code == 1) << "child ended with " << code;
    locked_in_child += code;
  }
  *stop = true;
  EXPECT_EQ(locked_in_child, 0) << "children of a fork found the thread's lock held";
  EXPECT_GT(*runs, 40) << "the thread stopped running its handlers";
}

TEST(Fork, ChildInheritsNoLockOfTheEngineThread) {
  expect_children_find_lock_free([](std::function<void()> fn) { dc::Engine::instance().post(std::move(fn)); });
}

// A user thread that waits for its operations runs the engine's handlers itself (caller-driven
// progress): a fork parks it between handlers as it would the engine thread.
TEST(Fork, ChildInheritsNoLockOfADrivingCaller) {
  std::atomic<bool> stop_driving{false};
  std::atomic<bool> driven{false};
  std::thread driver([&] {
    dc::Engine::instance().post([&] { driven = true; });
    dc::Engine::instance().drive_until([&] { return stop_driving.load(); },
                                       std::chrono::steady_clock::now() + std::chrono::seconds(60));
  });
  while (!driven) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  expect_children_find_lock_free([](std::function<void()> fn) { dc::Engine::instance().post(std::move(fn)); });
  stop_driving = true;
  dc::Engine::instance().post([] {});
  driver.join();
}

TEST(Fork, ChildInheritsNoLockOfACodecWorker) {
  // The executor's device queue: its workers run the codec steps.
  auto& queue = dynamic_cast<dc::device::CpuQueue&>(dc::local_queue());
  expect_children_find_lock_free([&queue](std::function<void()> fn) { queue.workers().submit(std::move(fn)); });
}

// What a rendezvous root's thread does: its own io_context, run by a thread ForkParkedRunner started.
TEST(Fork, ChildInheritsNoLockOfAnotherLibraryThread) {
  ParkedIoThread runner;
  expect_children_find_lock_free([&runner](std::function<void()> fn) { boost::asio::post(runner.io, std::move(fn)); });
}

// An idle runner (blocked in epoll) is woken to park: forks do not wait out the park's bound.
TEST(Fork, IdleRunnerDoesNotDelayAFork) {
  ParkedIoThread runner;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(0);
    EXPECT_EQ(wait_child(pid), 0);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, dc::kParkWait) << "5 forks waited for an idle runner";
}

// A fork right after a library thread was started (as a process hosting a root forks its ranks
// right after making the id): the new thread's start allocates, so start() returns only once it
// is registered. Each child starts a thread of its own (whose start allocates too) and must not
// deadlock: under AddressSanitizer, whose allocator has no fork handlers, it would.
TEST(Fork, ForkRightAfterStartingALibraryThread) {
  for (int i = 0; i < 40; ++i) {
    ParkedIoThread runner;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::thread([] { std::make_unique<char[]>(152); }).join();
      _exit(0);
    }
    EXPECT_EQ(wait_child(pid), 0) << "fork " << i;
  }
}

TEST(Fork, ChildUsesDeepCommAfterTheParentDid) {
  dcUniqueId id;
  dcComm_t comm = nullptr;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  ASSERT_EQ(dcCommInitRank(&comm, 1, &id, 0, nullptr), dcSuccess) << dcGetLastError();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dcUniqueId child_id;
    dcComm_t child = nullptr;
    if (dcGetUniqueId(&child_id) != dcSuccess || dcCommInitRank(&child, 1, &child_id, 0, nullptr) != dcSuccess)
      _exit(2);
    float in = 3.0f, out = 0.0f;
    if (dcAllReduce(&in, &out, 1, dcFloat32, dcSum, child, nullptr) != dcSuccess || out != 3.0f) _exit(3);
    _exit(dcCommDestroy(child) == dcSuccess ? 0 : 4);
  }
  EXPECT_EQ(wait_child(pid), 0);
  float in = 2.0f, out = 0.0f;
  EXPECT_EQ(dcAllReduce(&in, &out, 1, dcFloat32, dcSum, comm, nullptr), dcSuccess);
  EXPECT_EQ(out, 2.0f);
  EXPECT_EQ(dcCommDestroy(comm), dcSuccess);
}

}  // namespace
