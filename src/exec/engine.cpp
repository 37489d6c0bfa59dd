#include "src/exec/engine.h"

#include <pthread.h>

#include <mutex>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "src/base/fork_park.h"
#include "src/base/log.h"

namespace dc {

namespace {

Engine* g_engine = nullptr;
std::mutex g_engine_mutex;

// The child of a fork has the parent's memory but not its engine thread: forget the old engine
// (its memory is deliberately leaked; destroying it would join a thread that does not exist).
void forget_engine_in_child() {
  new (&g_engine_mutex) std::mutex();
  g_engine = nullptr;
}

}  // namespace

Engine& Engine::instance() {
  static std::once_flag atfork_once;
  std::call_once(atfork_once, [] {
    pthread_atfork(nullptr, nullptr, forget_engine_in_child);
  });
  std::lock_guard<std::mutex> lock(g_engine_mutex);
  if (!g_engine) g_engine = new Engine();  // lives until process exit: ranks may outlive statics
  return *g_engine;
}

Engine::Engine() : thread_(ForkParkedRunner::start(io_, [this] { run(); })) {}

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
