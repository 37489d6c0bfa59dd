#include "device/worker_pool.h"

#include <pthread.h>

#include <exception>

#include "base/fork_park.h"
#include "base/log.h"

namespace dc::device {

WorkerPool::WorkerPool(int threads) {
  // A fork's park job goes first: each worker takes at most one (it waits in it), so every worker
  // parks once its current job ended.
  auto park_first = [this](std::function<void()> park) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_front(std::move(park));
    }
    wake_.notify_one();
  };
  for (int i = 0; i < threads; ++i) workers_.push_back(ForkParkedRunner::start(park_first, [this] { work(); }));
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void WorkerPool::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void WorkerPool::work() {
  pthread_setname_np(pthread_self(), "dc-codec");
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return !jobs_.empty() || stopping_; });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& e) {
      // Jobs report their errors through their completions; one that throws is a bug.
      DC_WARN("device worker: unexpected exception from a job: %s", e.what());
    }
  }
}

}  // namespace dc::device
