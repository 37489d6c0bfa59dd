// The progress engine's baton (src/exec/engine.h): a thread waiting for engine work runs the
// handlers itself, one thread at a time, and the engine thread takes over again when nobody drives.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "base/poll_hooks.h"
#include "src/exec/engine.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

dc::Engine& engine() { return dc::Engine::instance(); }

// What a test's handlers write lives in shared state they hold: a handler still queued when a
// failed expectation ends the test then writes no freed stack frame.
template <class T>
std::shared_ptr<std::atomic<T>> shared(T value) {
  return std::make_shared<std::atomic<T>>(value);
}
using SharedFlag = std::shared_ptr<std::atomic<bool>>;

// Where a handler posted now runs, waiting for it without driving (bounded).
std::thread::id thread_running_a_post() {
  auto ran_on = std::make_shared<std::promise<std::thread::id>>();
  auto result = ran_on->get_future();
  dc::Engine::Waiting waiting(engine());
  engine().post([ran_on] { ran_on->set_value(std::this_thread::get_id()); });
  EXPECT_EQ(result.wait_for(5s), std::future_status::ready) << "nobody ran the engine";
  return result.valid() ? result.get() : std::thread::id();
}

// Waits (sleeping, bounded) until done() is true; whether it became true.
bool wait_for(const std::function<bool()>& done, Clock::duration limit) {
  const auto deadline = Clock::now() + limit;
  while (!done() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  return done();
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// A chain of handlers, each posting the next, until one runs on the thread that drives: the engine
// thread may run the first ones, then lets go of the baton to the caller that asked for it.
void post_until_run_on(std::thread::id caller, SharedFlag ran_on_caller) {
  engine().post([caller, ran_on_caller] {
    if (std::this_thread::get_id() == caller) *ran_on_caller = true;
    else post_until_run_on(caller, ran_on_caller);
  });
}

TEST(Engine, DrivingCallerRunsTheHandlers) {
  const SharedFlag ran_on_caller = shared(false);
  post_until_run_on(std::this_thread::get_id(), ran_on_caller);
  EXPECT_TRUE(engine().drive_until([&] { return ran_on_caller->load(); }, Clock::now() + 5s));
}

TEST(Engine, DriveEndsAtItsDeadline) {
  const auto start = Clock::now();
  EXPECT_FALSE(engine().drive_until([] { return false; }, start + 50ms));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 50ms);
  EXPECT_LT(took, 2s);
}

// After a driver let go, work posted by a thread that only waits is run by the engine thread.
TEST(Engine, EngineThreadTakesOverWhenNobodyDrives) {
  const SharedFlag ran = shared(false);
  engine().post([ran] { *ran = true; });
  ASSERT_TRUE(engine().drive_until([&] { return ran->load(); }, Clock::now() + 5s));
  const std::thread::id runner = thread_running_a_post();
  EXPECT_NE(runner, std::this_thread::get_id());
  EXPECT_NE(runner, std::thread::id());
  // Without any waiter either, the engine thread resumes after the park.
  const SharedFlag late = shared(false);
  engine().post([late] { *late = true; });
  EXPECT_TRUE(wait_for([&] { return late->load(); }, 5s)) << "a post after a driver let go was never run";
}

// One thread drives at a time: a second caller does not, and its work is run by the one that does.
TEST(Engine, SecondCallerDoesNotDriveAlongside) {
  struct State {
    std::atomic<bool> release_driver{false}, driving{false};
    std::atomic<int> concurrent{0}, most{0}, done{0};
  };
  const auto state = std::make_shared<State>();
  std::thread driver([state] {
    engine().post([state] { state->driving = true; });
    engine().drive_until([&] { return state->release_driver.load(); }, Clock::now() + 10s);
  });
  EXPECT_TRUE(wait_for([&] { return state->driving.load(); }, 5s)) << "the first caller never drove";
  for (int i = 0; i < 20; ++i)
    engine().post([state] {
      const int now = ++state->concurrent;
      state->most = std::max(state->most.load(), now);
      std::this_thread::sleep_for(1ms);
      --state->concurrent;
      ++state->done;
    });
  // Returns false at once (another thread drives) or true once the driver ran everything.
  const bool drove = engine().drive_until([&] { return state->done == 20; }, Clock::now() + 5s);
  dc::Engine::Waiting waiting(engine());
  EXPECT_TRUE(wait_for([&] { return state->done == 20; }, 10s))
      << state->done << " of 20 ran; drive_until returned " << drove;
  EXPECT_EQ(state->most, 1) << "handlers ran on two threads at once";
  state->release_driver = true;
  engine().post([] {});
  driver.join();
}

// Handlers that never run dry: each posts the next, until stopped or for 10 s at most.
struct EndlessChain {
  std::atomic<bool> stop{false}, ended{false};
  Clock::time_point until = Clock::now() + 10s;
};

void keep_posting(std::shared_ptr<EndlessChain> chain) {
  engine().post([chain] {
    if (chain->stop || Clock::now() >= chain->until) {
      chain->ended = true;
      return;
    }
    keep_posting(chain);
  });
}

// Stops the chain and waits (without driving, bounded) for its last link to run.
void stop_and_wait(EndlessChain& chain) {
  chain.stop = true;
  dc::Engine::Waiting waiting(engine());
  EXPECT_TRUE(wait_for([&] { return chain.ended.load(); }, 15s)) << "the chain never ended";
}

// While handlers keep becoming ready (issue 32: one re-armed on a descriptor that stayed readable),
// a driver still reads done() and its deadline between them: it returns once its call finished, or
// at its deadline, instead of running the chain for as long as it lasts.
TEST(Engine, DriverReturnsWhileHandlersKeepComing) {
  auto chain = std::make_shared<EndlessChain>();
  keep_posting(chain);
  const SharedFlag ran_on_caller = shared(false);
  post_until_run_on(std::this_thread::get_id(), ran_on_caller);
  auto start = Clock::now();
  EXPECT_TRUE(engine().drive_until([&] { return ran_on_caller->load(); }, start + 20s));
  EXPECT_LT(Clock::now() - start, 2s) << "the driver kept running handlers after its call finished";
  start = Clock::now();
  EXPECT_FALSE(engine().drive_until([] { return false; }, start + 50ms));
  EXPECT_LT(Clock::now() - start, 2s) << "the driver ran past its deadline";
  stop_and_wait(*chain);
}

TEST(Engine, HandlerDoesNotDriveInsideItself) {
  const SharedFlag inner_returned = shared(false), inner_result = shared(true);
  engine().post([inner_returned, inner_result] {
    *inner_result = engine().drive_until([] { return false; }, Clock::now() + 1s);
    *inner_returned = true;
  });
  const auto start = Clock::now();
  ASSERT_TRUE(engine().drive_until([&] { return inner_returned->load(); }, start + 5s));
  EXPECT_FALSE(*inner_result);
  EXPECT_LT(Clock::now() - start, 500ms) << "a nested drive waited for its deadline";
}

// A handler that a handler posted waits in its runner's own queue (base/ready_handlers.h), outside
// asio's call stack: a drive inside it still returns at once, on the engine thread too, where
// waiting for the baton it holds itself would last until the deadline.
TEST(Engine, QueuedHandlerDoesNotDriveInsideItself) {
  const SharedFlag inner_returned = shared(false), inner_result = shared(true);
  const auto inner_took = shared(Clock::duration::max());
  engine().post([=] {
    engine().post([=] {
      const auto start = Clock::now();
      *inner_result = engine().drive_until([] { return false; }, start + 2s);
      *inner_took = Clock::now() - start;
      *inner_returned = true;
    });
  });
  dc::Engine::Waiting waiting(engine());  // the engine thread runs both
  ASSERT_TRUE(wait_for([&] { return inner_returned->load(); }, 10s));
  EXPECT_FALSE(*inner_result);
  EXPECT_LT(inner_took->load(), 500ms) << "a nested drive on the engine thread waited for its deadline";
}

// Handlers that a driver's handlers keep queueing for it (base/ready_handlers.h) never starve the
// io_context: what another thread posts, and the reactor, still get their turn.
TEST(Engine, HandlersQueuedByHandlersDoNotStarveTheIoContext) {
  auto chain = std::make_shared<EndlessChain>();
  keep_posting(chain);  // each link, run by the driver, queues the next for the driver itself
  const SharedFlag posted_ran = shared(false);
  engine().post([posted_ran] { *posted_ran = true; });
  const auto start = Clock::now();
  EXPECT_TRUE(engine().drive_until([&] { return posted_ran->load(); }, start + 5s));
  EXPECT_LT(Clock::now() - start, 2s) << "a post waited behind the driver's own queue";
  stop_and_wait(*chain);
}

// A driver that lets go while handlers it queued for itself are still waiting hands them to the
// engine: they all run, the ones past its last batch on the engine thread.
TEST(Engine, HandlersADriverLeavesQueuedStillRun) {
  constexpr int kQueued = 100;
  const auto ran = shared(0), ran_elsewhere = shared(0);
  const SharedFlag queued = shared(false);
  const auto caller = std::this_thread::get_id();
  engine().post([=] {
    for (int i = 0; i < kQueued; ++i)
      engine().post([=] {
        if (std::this_thread::get_id() != caller) ++*ran_elsewhere;
        ++*ran;
      });
    *queued = true;
  });
  ASSERT_TRUE(engine().drive_until([&] { return queued->load(); }, Clock::now() + 5s));
  dc::Engine::Waiting waiting(engine());
  EXPECT_TRUE(wait_for([&] { return *ran == kQueued; }, 10s))
      << "handlers queued by the driver were lost when it let go: " << *ran << " of " << kQueued << " ran";
  EXPECT_GT(*ran_elsewhere, 0) << "the driver ran every queued handler before it returned";
}

// Waiting costs no core: neither the driving caller (blocked in epoll) nor the parked engine thread
// spins (tests run 8 ranks on 2 cores).
TEST(Engine, DrivingAnIdleEngineDoesNotSpin) {
  const double before = cpu_seconds();
  const auto start = Clock::now();
  engine().drive_until([] { return false; }, start + 500ms);
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LT(cpu_seconds() - before, 0.05 * wall) << "an idle driven engine used CPU";
}

// How long a handler posted right after a short drive waits for the engine thread. The drive (a
// handler holding the caller for 2 ms) makes the engine thread sleep its long look-in
// (kDriverCheck); `left_running` says whether the poster tells the engine. The fastest of several
// tries: load only delays a wake-up, while an engine thread nobody woke runs the post only at its
// look-in, in every try.
// Holds the caller for 2 ms, in a handler passed on until it runs on the caller (the engine thread
// may run the first ones).
void hold_the_caller(std::thread::id caller, SharedFlag held) {
  engine().post([caller, held] {
    if (std::this_thread::get_id() != caller) return hold_the_caller(caller, held);
    std::this_thread::sleep_for(2ms);
    *held = true;
  });
}

Clock::duration fastest_pickup_after_a_drive(bool left_running) {
  Clock::duration fastest = Clock::duration::max();
  for (int i = 0; i < 7; ++i) {
    const SharedFlag drove = shared(false);
    hold_the_caller(std::this_thread::get_id(), drove);
    EXPECT_TRUE(engine().drive_until([&] { return drove->load(); }, Clock::now() + 5s));
    const SharedFlag ran = shared(false);
    const auto posted = Clock::now();
    engine().post([ran] { *ran = true; });
    if (left_running) engine().work_left_running();
    const bool picked_up = wait_for([&] { return ran->load(); }, 5s);
    EXPECT_TRUE(picked_up) << "a post after a drive was never run";
    if (picked_up) fastest = std::min(fastest, Clock::now() - posted);
  }
  return fastest;
}

// A nonblocking call that leaves work running wakes the engine thread: the work waits for the
// sticky park at most, not for the engine thread's next look-in.
TEST(Engine, WorkLeftRunningIsTakenUpAfterThePark) {
  const auto fastest = fastest_pickup_after_a_drive(true);
  EXPECT_LT(fastest, dc::Engine::kDriverCheck / 2)
      << "work left running after a drive waited " << std::chrono::duration<double, std::micro>(fastest).count()
      << " us: the engine thread slept through it";
}

// A driver that lets go while operations are in flight (another thread's, or a nonblocking call's)
// wakes the engine thread for them.
TEST(Engine, ReleaseWithOperationsInFlightWakesTheEngineThread) {
  engine().operation_started();
  const auto fastest = fastest_pickup_after_a_drive(false);
  engine().operation_ended();
  EXPECT_LT(fastest, dc::Engine::kDriverCheck / 2)
      << "an operation in flight when the driver let go waited "
      << std::chrono::duration<double, std::micro>(fastest).count() << " us: the engine thread slept through it";
}

// While a service that peers use without a call here is open (a one-sided channel), the engine
// thread looks in often: what a peer sends it waits kPassiveCheck at most, not kDriverCheck.
TEST(Engine, PassiveServiceShortensTheLookIn) {
  engine().passive_service_opened();
  const auto fastest = fastest_pickup_after_a_drive(false);
  engine().passive_service_closed();
  EXPECT_LT(fastest, dc::Engine::kDriverCheck / 2)
      << "a post while a passive service was open waited " << std::chrono::duration<double, std::micro>(fastest).count()
      << " us: the engine thread looked in only every kDriverCheck";
}

// A poll hook (UCX's worker) is polled while the driver polls, armed before it blocks, and told
// when the driver lets go; the driver's handlers see it polling, the engine thread's do not. The
// drives end on what they wait for, not on a short deadline: on a loaded machine the caller may
// get the baton late, or the core only now and then.
TEST(Engine, DriverPollsTheHooksAndArmsThemBeforeItBlocks) {
  const auto polls = shared(0), arms = shared(0), settles = shared(0);
  const uint64_t id = dc::poll_hooks::add({[polls] {
                                             ++*polls;
                                             return false;
                                           },
                                           [arms] {
                                             ++*arms;
                                             engine().post([] {});  // wakes the driver once it blocks
                                             return true;
                                           },
                                           [settles] { ++*settles; }});
  const auto start = Clock::now();
  EXPECT_TRUE(engine().drive_until([&] { return *arms >= 1; }, start + 10s))
      << "the driver blocked without arming the hook";
  // The arm's post is queued for the driver itself (base/ready_handlers.h): it must not block past it.
  EXPECT_LT(Clock::now() - start, 2s) << "the driver blocked with a handler queued for it";
  dc::poll_hooks::remove(id);
  EXPECT_GT(*polls, 0);
  EXPECT_EQ(*settles, 1);
}

// A hook whose arm says it is busy is polled on and armed again, not slept through.
TEST(Engine, BusyHookKeepsTheDriverPolling) {
  const auto arms = shared(0);
  const uint64_t id = dc::poll_hooks::add({[] { return false; },
                                           [arms] {
                                             if (++*arms <= 3) return false;  // busy three times
                                             engine().post([] {});            // wakes the driver
                                             return true;
                                           },
                                           [] {}});
  EXPECT_TRUE(engine().drive_until([&] { return *arms >= 4; }, Clock::now() + 10s))
      << "a hook that was busy was not armed again";
  dc::poll_hooks::remove(id);
}

// A chain of handlers until one runs on the caller (the engine thread may run the first ones), which
// notes whether it sees the caller polling.
void look_from_the_caller(std::thread::id caller, std::shared_ptr<std::atomic<int>> seen) {
  engine().post([caller, seen] {
    if (std::this_thread::get_id() == caller) *seen = dc::poll_hooks::polling_here();
    else look_from_the_caller(caller, seen);
  });
}

TEST(Engine, OnlyTheDriversHandlersSeeItPolling) {
  const auto seen = shared(-1);
  look_from_the_caller(std::this_thread::get_id(), seen);
  ASSERT_TRUE(engine().drive_until([&] { return *seen >= 0; }, Clock::now() + 5s));
  EXPECT_EQ(*seen, 1);
  EXPECT_FALSE(dc::poll_hooks::polling_here()) << "still marked polling after the drive";
  auto on_engine_thread = std::make_shared<std::promise<bool>>();
  auto result = on_engine_thread->get_future();
  dc::Engine::Waiting waiting(engine());
  engine().post([on_engine_thread] { on_engine_thread->set_value(dc::poll_hooks::polling_here()); });
  ASSERT_EQ(result.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(result.get());
}

TEST(PollHooks, HookMayRemoveItselfWhilePolled) {
  std::atomic<int> polls{0};
  auto id = std::make_shared<uint64_t>(0);
  *id = dc::poll_hooks::add({[&, id] {
                               ++polls;
                               dc::poll_hooks::remove(*id);
                               return true;
                             },
                             [] { return true; }, [] {}});
  EXPECT_TRUE(dc::poll_hooks::poll_all());
  EXPECT_FALSE(dc::poll_hooks::poll_all());
  EXPECT_EQ(polls, 1);
}

}  // namespace
