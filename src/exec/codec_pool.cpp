#include "src/exec/codec_pool.h"

#include <pthread.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "base/error.h"
#include "base/fork_park.h"
#include "base/log.h"
#include "src/exec/settings.h"

namespace dc {

namespace {

CodecPool* g_pool = nullptr;
std::mutex g_pool_mutex;

// As the engine: a forked child has the parent's memory but none of its threads.
void forget_pool_in_child() {
  new (&g_pool_mutex) std::mutex();
  g_pool = nullptr;
}

}  // namespace

int codec_threads_setting() {
  if (auto n = config::integer_if_set(settings::kCodecThreads)) return static_cast<int>(*n);  // bad: one warning
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::min(4u, std::max(1u, cores / 2)));
}

CodecPool& CodecPool::instance() {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, forget_pool_in_child); });
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = new CodecPool(codec_threads_setting());  // lives until exit, like the engine
  return *g_pool;
}

CodecPool::CodecPool(int threads) {
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
  for (auto& w : workers_) w.detach();  // the pool is never destroyed; detached, exit does not wait
}

void CodecPool::submit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

void CodecPool::work() {
  pthread_setname_np(pthread_self(), "dc-codec");
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return !jobs_.empty(); });
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& e) {
      // Jobs report their errors through their completions; one that throws is a bug.
      DC_WARN("codec worker: unexpected exception from a job: %s", e.what());
    }
  }
}

}  // namespace dc
