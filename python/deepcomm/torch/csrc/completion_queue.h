// Completes a group's operations in the order they were started, on one thread that waits on their
// DeepComm requests, and enforces the group's timeout: a watchdog thread revokes the communicator
// when the oldest pending operation outlives it, which fails that operation (and every later one)
// on every rank instead of leaving anyone waiting. It never runs future callbacks (work.h).
#pragma once

#include "work.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace deepcomm_torch {

class CompletionQueue {
 public:
  CompletionQueue(dcComm_t comm, std::chrono::milliseconds timeout);
  // Completes what is pending (each within its deadline), then stops the threads.
  ~CompletionQueue();
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  // An operation about to start its DeepComm calls: its deadline runs from here, because a call
  // may complete a small operation before it returns (DeepComm's flat path), waiting for the peers
  // in the calling thread; the watchdog's revoke wakes it.
  void begin(c10::intrusive_ptr<DeepCommWork> work);
  // The operation of the last begin() made its calls; the queue owns its requests from here.
  // begin/started pairs do not interleave (the backend's issue lock).
  void started();

  // True once the watchdog revoked the communicator (it is unusable; destroy, not finalize).
  bool revoked() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    c10::intrusive_ptr<DeepCommWork> work;
    Clock::time_point deadline;
    bool started = false;
  };

  void complete_loop();
  void watch_loop();
  std::exception_ptr finish(DeepCommWork& work, bool timed_out);

  const dcComm_t comm_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Pending> pending_;              // front: the operation being completed
  const DeepCommWork* timed_out_ = nullptr;  // the operation the watchdog revoked for
  bool revoked_ = false;
  bool stopping_ = false;
  std::thread completer_;
  std::thread watchdog_;
};

}  // namespace deepcomm_torch
