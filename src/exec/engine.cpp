#include "src/exec/engine.h"

#include <pthread.h>
#include <sched.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "base/fork_park.h"
#include "base/log.h"
#include "base/poll_hooks.h"
#include "base/ready_handlers.h"
#include "base/wake_slice.h"

namespace dc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a driving caller polls for events (yielding the core between polls) before it blocks
// in epoll: a peer's reply due within this then costs no sleep and wake-up. With 8 ranks on 2
// cores a small all-reduce took a third less time polling 150 us (the stop below then at 50 us)
// than polling 40 us with the stop at 10 us.
constexpr std::chrono::microseconds kDriverSpin{150};
// A poll and yield that took longer than this ran another thread for a long slice (a busy thread's
// scheduler slice, about 1.5 ms on this 2-core machine, or a peer's long copies): the core is
// wanted, sleep instead. Shorter ones ran other ranks' rounds: at 8 ranks on 2 cores a yield runs
// three of them, often past 50 us, and a stop there put a small all-reduce's ranks to sleep
// 4.6 times a call (docs/performance.md, "The driver's stop at a long yield").
constexpr std::chrono::microseconds kYieldedAway{500};
// Handlers a driving caller runs between two looks at done() and its deadline, of each kind (those
// it queued for itself, and the io_context's). io_context::poll() would run until none is ready,
// which is never while handlers keep becoming ready (issue 32: one re-armed on a descriptor that
// stayed readable): the caller then never returned.
constexpr size_t kPollBatch = 16;

// Runs handlers through `run` (one of the io_context's run calls); a handler must never throw, and
// if one does it is reported and the engine goes on.
template <class Run>
size_t guarded(Run run) {
  try {
    return run();
  } catch (const std::exception& e) {
    DC_WARN("progress engine: unexpected exception from a handler: %s", e.what());
    return 1;
  }
}

// Runs at most `limit` of the handlers this thread queued (ready_handlers); how many ran.
size_t run_ready_up_to(size_t limit) {
  size_t ran = 0;
  while (ran < limit && ready_handlers::run_one()) ++ran;
  return ran;
}

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
  std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, forget_engine_in_child); });
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

void Engine::post(std::function<void()> fn) { ready_handlers::post(io_, std::move(fn)); }

size_t Engine::poll_handlers() {
  return guarded([this] {
    // Handlers this thread queued first, then the io_context's (its reactor, and what other threads
    // posted), each followed by what it queued: the io_context gets its turn however many keep
    // coming here, and a transport's completion runs without another pass through the reactor.
    size_t ran = run_ready_up_to(kPollBatch);
    while (ran < 2 * kPollBatch && io_.poll_one()) {
      ++ran;
      ran += run_ready_up_to(2 * kPollBatch - ran);
    }
    return ran;
  });
}

size_t Engine::run_ready_handlers() {
  return guarded([] { return run_ready_up_to(kPollBatch); });
}

void Engine::run_one_handler(Clock::time_point deadline) {
  guarded([this, deadline] {
    // run_one returns at once when the io_context is stopped; run_one_until would retry until then.
    return deadline == Clock::time_point::max() ? io_.run_one() : io_.run_one_until(deadline);
  });
}

bool Engine::engine_thread_reclaims(Clock::time_point now) const {
  return holder_ == Holder::Nobody && wanting_ == 0 && (waiting_ > 0 || now >= released_at_ + kStickyPark);
}

void Engine::run() {
  pthread_setname_np(pthread_self(), "dc-progress");
  use_short_wake_slice();
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
      {
        ready_handlers::DrainingScope draining(io_);
        run_one_handler(Clock::time_point::max());
        run_ready_handlers();
      }  // what it queued beyond a batch goes through the io_context
      lock.lock();
      continue;
    }
    const auto now = Clock::now();
    if (engine_thread_reclaims(now)) {
      holder_ = Holder::EngineThread;
      continue;
    }
    // A caller drives (its release wakes this thread only when work is left: look again now and
    // then), or one may take the baton for its next call.
    const auto look_in = passive_services_.load(std::memory_order_relaxed) > 0 ? kPassiveCheck : kDriverCheck;
    const auto until = holder_ == Holder::Nobody && wanting_ == 0 ? released_at_ + kStickyPark : now + look_in;
    cv_.wait_until(lock, until);
  }
}

bool Engine::drive_until(const std::function<bool()>& done, Clock::time_point deadline) {
  // A handler may not drive.
  if (io_.get_executor().running_in_this_thread() || ready_handlers::draining_for(io_)) return done();
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
      use_short_wake_slice();  // a peer's wake-up then preempts what runs here
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && holder_ != Holder::Nobody) {
        --wanting_;
        return done();
      }
    }
    if (asked) --wanting_;
    holder_ = Holder::Caller;
  }
  drive(done, deadline);
  poll_hooks::settle_all();
  bool needed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    holder_ = Holder::Nobody;
    released_at_ = Clock::now();
    needed = wanting_ > 0 || waiting_ > 0 || operations_.load(std::memory_order_relaxed) > 0;
  }
  // A caller asking for the baton, or the engine thread for a waiter or for work left in flight.
  if (needed) cv_.notify_all();
  return done();
}

void Engine::drive(const std::function<bool()>& done, Clock::time_point deadline) {
  poll_hooks::PollingScope polling;  // a poll hook may leave its wake-up unarmed meanwhile
  ready_handlers::DrainingScope draining(io_);
  auto spin_end = Clock::now() + kDriverSpin;
  while (!done() && !io_.stopped()) {
    const auto now = Clock::now();
    if (now >= deadline) break;
    // Poll the poll hooks and epoll (without blocking), yielding the core between polls. The hooks
    // go first: what they deliver (a UCX message that came during the yield) queues its completion
    // here, and poll_handlers runs it before the reactor's epoll_wait, not after one.
    if (now < spin_end) {
      const bool hooked = poll_hooks::poll_all();
      if (poll_handlers() > 0 || hooked) {
        spin_end = Clock::now() + kDriverSpin;
      } else {
        sched_yield();
        // Other threads wanted this core (the yield ran them): sleep instead of polling on.
        if (Clock::now() - now > kYieldedAway) spin_end = now;
      }
      continue;
    }
    // Work came meanwhile (a hook's event, or a handler queued here, by a hook's arm too): poll on.
    if (!poll_hooks::arm_all() || run_ready_handlers() > 0) {
      spin_end = Clock::now() + kDriverSpin;
      continue;
    }
    use_short_wake_slice();
    run_one_handler(deadline);
    spin_end = Clock::now() + kDriverSpin;
  }
}

void Engine::work_left_running() {
  bool nobody_drives;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    nobody_drives = holder_ == Holder::Nobody;
  }
  if (nobody_drives) cv_.notify_all();  // the engine thread takes the baton when kStickyPark ends
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
