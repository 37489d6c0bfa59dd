// fork() copies every lock as it is at that moment, and a lock held by a thread that the child does
// not have stays held there for good: if one of the library's own threads is inside the allocator
// (one without fork handlers, such as AddressSanitizer's) or holds any lock when another thread
// forks, the child deadlocks on its first use of it. So every library thread that runs handlers
// or jobs (the progress engine, a rendezvous root, the codec workers) takes part in fork parking
// while it runs: a fork posts a park handler to each, waits (bounded by kParkWait) until they all
// sit in it, holding nothing, and releases them once fork() returned in the parent. In the child
// those threads do not exist: the registry starts empty there.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include <boost/asio/io_context.hpp>

namespace dc {

// A thread that does not reach its park handler within this (a handler running long) is not
// waited for further; the fork goes ahead.
constexpr std::chrono::seconds kParkWait{1};
// How long start() waits for the new thread to register (a thread starts in microseconds).
constexpr std::chrono::seconds kStartWait{5};

// Held by a library thread for as long as it runs handlers or jobs; forks from any other thread park
// it between two of them. Made only by start(), inside the new thread: a thread that is still
// starting cannot be parked (its start allocates), so the starter, which may fork next, waits until
// the new thread is registered.
class ForkParkedRunner {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // A thread that registers itself, then runs body; returned once it is registered (bounded by
  // kStartWait). With io: body runs io, and a park handler is posted to io. With post: body runs
  // jobs that post hands it (the park job must reach this very thread, or a thread of a set that
  // each registers with the same post and runs one job at a time).
  static std::thread start(boost::asio::io_context& io, std::function<void()> body);
  static std::thread start(Post post, std::function<void()> body);
  ~ForkParkedRunner();
  ForkParkedRunner(const ForkParkedRunner&) = delete;
  ForkParkedRunner& operator=(const ForkParkedRunner&) = delete;

  struct Entry;  // the registry's record of a runner (fork_park.cpp)

 private:
  explicit ForkParkedRunner(Entry* entry);  // registers it
  static std::thread start_thread(Post post, boost::asio::io_context* io, std::function<void()> body);
  Entry* entry_;
};

}  // namespace dc
