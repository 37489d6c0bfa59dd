// Threads that complete Work futures, so that future callbacks never run on the thread that waits
// for DeepComm. A callback may block: PowerSGD's issues a nested all-reduce and waits on its
// future, which another thread must complete. So a task never waits for a busy thread: post()
// starts a new thread whenever more tasks are queued than threads are idle. The pool only grows
// to the deepest nesting seen; its threads end with it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace deepcomm_torch {

class CallbackRunner {
 public:
  CallbackRunner() = default;
  ~CallbackRunner();  // runs what is queued, then joins
  CallbackRunner(const CallbackRunner&) = delete;
  CallbackRunner& operator=(const CallbackRunner&) = delete;

  void post(std::function<void()> task);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  size_t idle_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace deepcomm_torch
