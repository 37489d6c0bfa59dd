#include "src/exec/engine.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "src/base/log.h"

namespace dc {

namespace {

Engine* g_engine = nullptr;
std::mutex g_engine_mutex;

// fork() copies every lock as it is at that moment, and a lock held by a thread that the child
// does not have stays held there for good: if the engine thread is inside the allocator (one
// without fork handlers, such as AddressSanitizer's) or holds any lock when another thread forks,
// the child deadlocks on its first use of it. So a fork parks the engine thread between two
// handlers (holding nothing) until the fork is done. Bounded: an engine that does not reach the
// park within kParkWait (a handler running long) is not waited for.
constexpr auto kParkWait = std::chrono::seconds(1);
struct ForkPark {
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t asked = 0;     // forks that asked the engine to park
  uint64_t parked = 0;    // the last of them the engine parked for
  uint64_t released = 0;  // the last of them that is done
};
ForkPark* g_park = new ForkPark();  // leaked: forks may come from threads that outlive statics

void park_engine_before_fork() {
  Engine* engine = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_engine_mutex);
    engine = g_engine;
  }
  if (!engine || engine->on_engine_thread()) return;
  ForkPark& park = *g_park;
  uint64_t fork_number = 0;
  {
    std::lock_guard<std::mutex> lock(park.mutex);
    fork_number = ++park.asked;
  }
  engine->post([&park, fork_number] {
    std::unique_lock<std::mutex> lock(park.mutex);
    park.parked = fork_number;
    park.cv.notify_all();
    park.cv.wait(lock, [&] { return park.released >= fork_number; });
  });
  std::unique_lock<std::mutex> lock(park.mutex);
  park.cv.wait_for(lock, kParkWait, [&] { return park.parked >= fork_number; });
}

void release_engine_after_fork() {
  ForkPark& park = *g_park;
  std::lock_guard<std::mutex> lock(park.mutex);
  park.released = park.asked;
  park.cv.notify_all();
}

// The child of a fork has the parent's memory but not its engine thread: forget the old engine
// (its memory is deliberately leaked; destroying it would join a thread that does not exist).
void forget_engine_in_child() {
  new (&g_engine_mutex) std::mutex();
  g_engine = nullptr;
  g_park = new ForkPark();  // the parent's may be locked by its parked engine thread
}

}  // namespace

Engine& Engine::instance() {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] {
    pthread_atfork(park_engine_before_fork, release_engine_after_fork, forget_engine_in_child);
  });
  std::lock_guard<std::mutex> lock(g_engine_mutex);
  if (!g_engine) g_engine = new Engine();  // lives until process exit: ranks may outlive statics
  return *g_engine;
}

Engine::Engine() : thread_([this] { run(); }) {}

Engine::~Engine() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void Engine::post(std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); }

void Engine::run() {
  pthread_setname_np(pthread_self(), "dc-progress");
  auto guard = boost::asio::make_work_guard(io_);
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& e) {
      // A handler must never throw; if one does, report it and keep the engine alive.
      DC_WARN("progress engine: unexpected exception from a handler: %s", e.what());
    }
  }
}

}  // namespace dc
