// The progress engine: one per process, a boost::asio::io_context whose handlers run on one thread
// at a time, blocking in epoll on every transport's sockets (no busy-waiting). Operations are posted
// to it from user threads; transports and the executor run only inside its handlers. A fork() parks
// the thread running handlers between two of them until it is done, so that the child inherits no
// lock it held; the child gets a fresh engine on first use (the parent's thread does not exist there).
//
// Caller-driven progress: a thread waiting for its own operations runs the handlers itself
// (drive_until) instead of sleeping while the engine thread runs them. A call then costs no hand-off
// to the engine thread and no wake-up of the caller at its end, and what it waits for (a peer's
// message, a UCX event) wakes the waiting thread directly. The right to run handlers (the baton)
// passes between the engine thread and one driving caller. After a call the engine thread leaves it
// unclaimed for kStickyPark, so that calls in a loop take it without waking anyone; past that, or
// at once when a thread waits without driving (another thread drives), the engine thread takes it
// back and blocks in epoll as before. While a caller drives, the engine thread sleeps: the caller's
// release wakes it when operations are still in flight (another thread's, or one left running by a
// nonblocking call), and a nonblocking call wakes it when nobody drives (work_left_running), so
// such work waits kStickyPark at most. Otherwise it looks in every kDriverCheck, which bounds only
// how long a peer's frame that no call here awaits sits unread; kPassiveCheck while a service that
// peers use without a call here is open (a one-sided channel taking their puts).
// A driving caller polls briefly (yielding the core) before it blocks in epoll, so that a reply due
// within microseconds costs no sleep and wake-up; it stops polling when a yield ran another thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <boost/asio/io_context.hpp>

namespace dc {

class Engine {
 public:
  static constexpr std::chrono::microseconds kStickyPark{200};
  // How often the engine thread looks whether a driving caller let go of the baton when nothing
  // told it: wake-ups of a thread with nothing to do cost a small call 4-10% at 8 ranks on 2 cores.
  static constexpr std::chrono::milliseconds kDriverCheck{10};
  static constexpr std::chrono::milliseconds kPassiveCheck{1};

  static Engine& instance();

  boost::asio::io_context& io() { return io_; }
  void post(std::function<void()> fn);

  // Runs handlers on the calling thread until done() is true or the deadline passed, when it can
  // take the baton (no other thread drives; not called from inside a handler); returns done().
  // done() is read between handlers and must be cheap.
  bool drive_until(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline);

  // An operation submitted to the engine, and its end: a caller letting go of the baton with
  // operations in flight wakes the engine thread for them.
  void operation_started() { operations_.fetch_add(1, std::memory_order_relaxed); }
  void operation_ended() { operations_.fetch_sub(1, std::memory_order_relaxed); }
  // Called by a thread that returns to its user with operations in flight (a request, a
  // nonblocking communicator): when nobody drives, the engine thread takes the baton for them.
  void work_left_running();
  // A service that peers use without a call here opens and closes (see kPassiveCheck).
  void passive_service_opened() { passive_services_.fetch_add(1, std::memory_order_relaxed); }
  void passive_service_closed() { passive_services_.fetch_sub(1, std::memory_order_relaxed); }

  // Held by a thread that waits for engine work without driving: the engine thread runs meanwhile.
  class Waiting {
   public:
    explicit Waiting(Engine& engine);
    ~Waiting();
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    Engine& engine_;
  };

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

 private:
  enum class Holder { EngineThread, Nobody, Caller };

  Engine();
  void run();
  // Runs one handler (blocking until there is one); a handler that throws is reported.
  void run_one_handler(std::chrono::steady_clock::time_point deadline);
  // Runs handlers ready now without blocking, at most 2 * kPollBatch of them; how many ran.
  size_t poll_handlers();
  // Runs handlers this thread queued (ready_handlers), at most kPollBatch of them; how many ran.
  size_t run_ready_handlers();
  // The driving caller's loop (it holds the baton): polls, then blocks, until done() or the deadline.
  void drive(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline);
  // The engine thread's turn: whether it takes the baton now (mutex_ held).
  bool engine_thread_reclaims(std::chrono::steady_clock::time_point now) const;

  boost::asio::io_context io_;
  std::mutex mutex_;            // guards the baton's state below
  std::condition_variable cv_;  // its changes
  Holder holder_ = Holder::EngineThread;
  int wanting_ = 0;                                      // callers asking the engine thread for the baton
  int waiting_ = 0;                                      // threads waiting without driving (Waiting)
  std::chrono::steady_clock::time_point released_at_{};  // a caller's last release
  std::atomic<int> operations_{0};                       // submitted and not yet ended
  std::atomic<int> passive_services_{0};                 // open (passive_service_opened)
  std::thread thread_;
};

}  // namespace dc
