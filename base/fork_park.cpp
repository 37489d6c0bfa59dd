#include "base/fork_park.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>

#include "base/log.h"

namespace dc {

struct ForkParkedRunner::Entry {
  Post post;
  boost::asio::io_context* io;  // nullptr: not an io_context runner
  std::thread::id runner;
};

namespace {

// One per process image. The child of a fork gets a fresh one: the parent's may be locked by a
// parked thread, and its runners do not exist there. Old ones are leaked on purpose (a parked
// thread of the parent may still wait on it; forks may come from threads that outlive statics).
struct ParkState {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<ForkParkedRunner::Entry*> runners;
  uint64_t asked = 0;     // forks that asked the runners to park
  size_t parked = 0;      // runners parked for the last of them
  uint64_t released = 0;  // the last fork that is done
};

std::atomic<ParkState*> g_state{nullptr};
std::once_flag g_install_once;
thread_local uint64_t t_fork_number = 0;  // of the fork this thread is making

void park(ParkState* s, uint64_t fork_number) {
  std::unique_lock<std::mutex> lock(s->mutex);
  if (s->released >= fork_number) return;  // came too late: that fork is done
  if (s->asked == fork_number) {
    ++s->parked;
    s->cv.notify_all();
  }
  s->cv.wait(lock, [&] { return s->released >= fork_number; });
}

// The handlers are installed only once g_state exists.
void park_runners_before_fork() {
  ParkState* s = g_state.load();
  std::unique_lock<std::mutex> lock(s->mutex);
  const uint64_t fork_number = ++s->asked;
  t_fork_number = fork_number;
  s->parked = 0;
  size_t expected = 0;
  for (ForkParkedRunner::Entry* e : s->runners) {
    if (e->runner == std::this_thread::get_id() || (e->io && e->io->stopped())) continue;
    ++expected;
    e->post([s, fork_number] { park(s, fork_number); });
  }
  s->cv.wait_for(lock, kParkWait, [&] { return s->parked >= expected; });
}

void release_runners_after_fork() {
  ParkState* s = g_state.load();
  std::lock_guard<std::mutex> lock(s->mutex);
  s->released = std::max(s->released, t_fork_number);
  s->cv.notify_all();
}

void start_afresh_in_child() { g_state.store(new ParkState()); }

ParkState* state() {
  std::call_once(g_install_once, [] {
    g_state.store(new ParkState());
    pthread_atfork(park_runners_before_fork, release_runners_after_fork, start_afresh_in_child);
  });
  return g_state.load();
}

}  // namespace

ForkParkedRunner::ForkParkedRunner(Entry* entry) : entry_(entry) {
  ParkState* s = state();
  std::lock_guard<std::mutex> lock(s->mutex);
  s->runners.push_back(entry_);
}

ForkParkedRunner::~ForkParkedRunner() {
  ParkState* s = g_state.load();
  {
    // Absent after a fork made by this very thread: the child's registry started empty.
    std::lock_guard<std::mutex> lock(s->mutex);
    s->runners.erase(std::remove(s->runners.begin(), s->runners.end(), entry_), s->runners.end());
  }
  delete entry_;
}

std::thread ForkParkedRunner::start(boost::asio::io_context& io, std::function<void()> body) {
  return start_thread([&io](std::function<void()> fn) { boost::asio::post(io, std::move(fn)); }, &io, std::move(body));
}

std::thread ForkParkedRunner::start(Post post, std::function<void()> body) {
  return start_thread(std::move(post), nullptr, std::move(body));
}

std::thread ForkParkedRunner::start_thread(Post post, boost::asio::io_context* io, std::function<void()> body) {
  auto registered = std::make_shared<std::promise<void>>();
  std::future<void> ready = registered->get_future();
  std::thread thread([io, post = std::move(post), body = std::move(body), registered]() mutable {
    ForkParkedRunner runner(new Entry{std::move(post), io, std::this_thread::get_id()});
    registered->set_value();
    body();
  });
  if (ready.wait_for(kStartWait) != std::future_status::ready)
    DC_WARN("a library thread did not start within %d s; a fork now may not park it",
            static_cast<int>(kStartWait.count()));
  return thread;
}

}  // namespace dc
