#include "src/exec/codec_pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <boost/asio/posix/stream_descriptor.hpp>

#include "base/log.h"
#include "device/cpu_queue.h"
#include "src/exec/engine.h"
#include "src/exec/settings.h"

namespace dc {

namespace {

// The queue and the engine's wait on its completion descriptor.
struct WatchedQueue {
  explicit WatchedQueue(int threads) : queue(threads), ready(Engine::instance().io(), dup(queue.completion_fd())) {}

  // Waits (in the engine's epoll) for the descriptor, then runs the completions. The wait is
  // edge-triggered: a completion that arrived after the last poll() but before the wait was queued
  // is caught by has_completions().
  void watch() {
    ready.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
      if (ec) return;
      queue.poll();
      watch();
    });
    if (queue.has_completions()) Engine::instance().post([this] { queue.poll(); });
  }

  device::CpuQueue queue;
  boost::asio::posix::stream_descriptor ready;
};

WatchedQueue* g_queue = nullptr;
std::mutex g_queue_mutex;

// As the engine: a forked child has the parent's memory but none of its threads.
void forget_queue_in_child() {
  new (&g_queue_mutex) std::mutex();
  g_queue = nullptr;
}

}  // namespace

int codec_threads_setting() {
  if (auto n = config::integer_if_set(settings::kCodecThreads)) return static_cast<int>(*n);  // bad: one warning
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::min(4u, std::max(1u, cores / 2)));
}

device::DeviceQueue& local_queue() {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, forget_queue_in_child); });
  std::lock_guard<std::mutex> lock(g_queue_mutex);
  if (!g_queue) {
    g_queue = new WatchedQueue(codec_threads_setting());  // lives until exit, like the engine
    WatchedQueue* watched = g_queue;
    Engine::instance().post([watched] { watched->watch(); });  // the descriptor is the engine's
  }
  return g_queue->queue;
}

}  // namespace dc
