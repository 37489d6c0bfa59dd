#include "src/exec/engine.h"

#include <pthread.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "src/base/fork_park.h"
#include "src/base/log.h"

namespace dc {

namespace {

using Clock = std::chrono::steady_clock;

// How often the parked engine thread looks whether a driving caller let go of the baton (a release
// wakes it only when someone waits for the engine): the longest a release goes unnoticed.
constexpr std::chrono::milliseconds kDriverCheck{1};

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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    io_.stop();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::post(std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); }

void Engine::run_one_handler(Clock::time_point deadline) {
  try {
    if (deadline == Clock::time_point::max()) io_.run_one();  // returns at once once stopped
    else io_.run_one_until(deadline);
  } catch (const std::exception& e) {
    // A handler must never throw; if one does, report it and keep the engine alive.
    DC_WARN("progress engine: unexpected exception from a handler: %s", e.what());
  }
}

bool Engine::engine_thread_reclaims(Clock::time_point now) const {
  return holder_ == Holder::Nobody && wanting_ == 0 && (waiting_ > 0 || now >= released_at_ + kStickyPark);
}

void Engine::run() {
  pthread_setname_np(pthread_self(), "dc-progress");
  auto guard = boost::asio::make_work_guard(io_);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!io_.stopped()) {
    if (holder_ == Holder::EngineThread) {
      if (wanting_ > 0) {  // a caller asked for it (and woke this thread with an empty handler)
        holder_ = Holder::Nobody;
        cv_.notify_all();
        continue;
      }
      lock.unlock();
      run_one_handler(Clock::time_point::max());
      lock.lock();
      continue;
    }
    const auto now = Clock::now();
    if (engine_thread_reclaims(now)) {
      holder_ = Holder::EngineThread;
      continue;
    }
    // A caller drives (its release wakes nobody: look again now and then), or one may take the
    // baton for its next call.
    const auto until = holder_ == Holder::Nobody && wanting_ == 0 ? released_at_ + kStickyPark : now + kDriverCheck;
    cv_.wait_until(lock, until);
  }
}

bool Engine::drive_until(const std::function<bool()>& done, Clock::time_point deadline) {
  if (io_.get_executor().running_in_this_thread()) return done();  // a handler may not drive
  {
    std::unique_lock<std::mutex> lock(mutex_);
    bool asked = false;
    while (holder_ != Holder::Nobody) {
      if (done() || holder_ == Holder::Caller || io_.stopped()) {
        if (asked) --wanting_;
        return done();
      }
      if (!asked) {  // the engine thread holds it, maybe blocked in epoll: wake it to let go
        asked = true;
        ++wanting_;
        boost::asio::post(io_, [] {});
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && holder_ != Holder::Nobody) {
        --wanting_;
        return done();
      }
    }
    if (asked) --wanting_;
    holder_ = Holder::Caller;
  }
  while (!done() && !io_.stopped()) {
    if (Clock::now() >= deadline) break;
    run_one_handler(deadline);
  }
  bool needed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    holder_ = Holder::Nobody;
    released_at_ = Clock::now();
    needed = wanting_ > 0 || waiting_ > 0;
  }
  if (needed) cv_.notify_all();  // a caller asking for the baton, or the engine thread for a waiter
  return done();
}

Engine::Waiting::Waiting(Engine& engine) : engine_(engine) {
  {
    std::lock_guard<std::mutex> lock(engine_.mutex_);
    ++engine_.waiting_;
  }
  engine_.cv_.notify_all();
}

Engine::Waiting::~Waiting() {
  std::lock_guard<std::mutex> lock(engine_.mutex_);
  --engine_.waiting_;
}

}  // namespace dc
