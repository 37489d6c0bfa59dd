// fork() while the progress engine runs: the child must not inherit a lock that the engine thread
// held at that moment (it would stay held for good, the thread does not exist in the child). The
// engine here runs handlers that each hold a lock for a while; every child of 40 forks must find
// it free, and a child can still use DeepComm (a fresh engine, a one-rank all-reduce).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "deepcomm/deepcomm.h"
#include "src/exec/engine.h"

namespace {

std::mutex held_by_handlers;

// Re-posts itself until told to stop: the engine spends most of its time holding the lock.
void busy_handler(std::shared_ptr<std::atomic<bool>> stop, std::shared_ptr<std::atomic<int>> runs) {
  if (*stop) return;
  {
    std::lock_guard<std::mutex> lock(held_by_handlers);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  ++*runs;
  dc::Engine::instance().post([stop, runs] { busy_handler(stop, runs); });
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

TEST(Fork, ChildInheritsNoLockOfTheEngineThread) {
  auto stop = std::make_shared<std::atomic<bool>>(false);
  auto runs = std::make_shared<std::atomic<int>>(0);
  dc::Engine::instance().post([stop, runs] { busy_handler(stop, runs); });
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
  EXPECT_EQ(locked_in_child, 0) << "children of a fork found the engine thread's lock held";
  EXPECT_GT(*runs, 40) << "the engine stopped running its handlers";
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
    if (dcGetUniqueId(&child_id) != dcSuccess || dcCommInitRank(&child, 1, &child_id, 0, nullptr) != dcSuccess) _exit(2);
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
