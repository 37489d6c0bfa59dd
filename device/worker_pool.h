// Worker threads of the CPU device queue: they run the steps that must not hold up the progress
// engine (encoding, decoding), one job at a time each, in submission order. Idle workers sleep on
// a condition variable. A fork() parks every worker between jobs (base/fork_park.h); the pool is
// not usable in the child (its threads do not exist there), whose owner makes a new one.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dc::device {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  // Runs the jobs already submitted, then joins the workers.
  ~WorkerPool();

  // Runs job on a worker (in submission order when there is one worker). Any thread.
  void submit(std::function<void()> job);
  int threads() const { return static_cast<int>(workers_.size()); }

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace dc::device
