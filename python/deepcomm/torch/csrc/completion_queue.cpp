#include "completion_queue.h"

#include <c10/util/Exception.h>

namespace deepcomm_torch {

CompletionQueue::CompletionQueue(dcComm_t comm, std::chrono::milliseconds timeout)
    : comm_(comm), timeout_(timeout), completer_([this] { complete_loop(); }), watchdog_([this] { watch_loop(); }) {}

CompletionQueue::~CompletionQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  completer_.join();
  watchdog_.join();
}

void CompletionQueue::begin(c10::intrusive_ptr<DeepCommWork> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back({std::move(work), Clock::now() + timeout_});
  }
  changed_.notify_all();
}

void CompletionQueue::started() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.back().started = true;
  }
  changed_.notify_all();
}

bool CompletionQueue::revoked() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return revoked_;
}

void CompletionQueue::complete_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_.empty() ? stopping_ : pending_.front().started; });
    if (pending_.empty()) return;
    c10::intrusive_ptr<DeepCommWork> work = pending_.front().work;  // stays queued for the watchdog
    lock.unlock();
    std::exception_ptr error = finish(*work, false);
    lock.lock();
    if (error && timed_out_ == work.get()) {
      lock.unlock();
      error = finish(*work, true);  // requests are done; this only rewrites the message
      lock.lock();
    }
    pending_.pop_front();
    lock.unlock();
    changed_.notify_all();
    work->complete(error);
    work.reset();  // maybe the last reference, whose tensors' Python objects take the GIL to free
    lock.lock();
  }
}

// Waits on work's requests (all of them, also after one failed) and runs its completion steps;
// returns the error torch should see. Called again with timed_out only to word the error.
std::exception_ptr CompletionQueue::finish(DeepCommWork& work, bool timed_out) {
  if (timed_out) {
    try {
      C10_THROW_ERROR(DistBackendError, "deepcomm: " + work.name + " did not complete within the group's timeout of " +
                                            std::to_string(timeout_.count()) +
                                            " ms; the communicator was revoked on every rank");
    } catch (...) {
      return std::current_exception();
    }
  }
  std::exception_ptr error = work.start_error;
  for (dcRequest_t request : work.requests) {
    dcResult_t result = dcWait(request);
    if (result != dcSuccess && !error) {
      try {
        C10_THROW_ERROR(DistBackendError,
                        "deepcomm: " + work.name + " failed: " + dcGetErrorString(result) + ": " + dcGetLastError());
      } catch (...) {
        error = std::current_exception();
      }
    }
  }
  work.requests.clear();
  if (!error && work.on_success) {
    try {
      work.on_success();
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (work.cleanup) work.cleanup();
  work.cleanup = nullptr;
  work.keep_alive.clear();
  return error;
}

void CompletionQueue::watch_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!(stopping_ && pending_.empty())) {
    if (pending_.empty() || revoked_) {
      changed_.wait(lock);
      continue;
    }
    const Pending& oldest = pending_.front();
    if (Clock::now() < oldest.deadline) {
      changed_.wait_until(lock, oldest.deadline);
      continue;
    }
    timed_out_ = oldest.work.get();
    revoked_ = true;
    lock.unlock();
    dcCommRevoke(comm_);  // the completer's dcWait returns with the error
    lock.lock();
  }
}

}  // namespace deepcomm_torch
