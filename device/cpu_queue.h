// The CPU implementation of the device-queue contract (device_queue.h), on host memory. Element
// steps (copy, reduce, pre-multiply, finalize) end inside post() on the posting thread, unless
// their stream still has a step pending; codec steps (encode, decode) and element steps queued
// behind a stream's pending step run on worker threads (worker_pool.h). Completions wait in a list
// that poll() empties; an eventfd (completion_fd) becomes readable when one is queued, and every
// poll() clears it first.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/event_fd.h"
#include "device/cpu_steps.h"
#include "device/device_queue.h"
#include "device/worker_pool.h"

namespace dc::device {

class CpuQueue : public DeviceQueue {
 public:
  // workers: threads for the steps that do not end in post() (at least 1).
  explicit CpuQueue(int workers);
  // Every step must have ended (its completion ran) before the queue is destroyed.
  ~CpuQueue() override = default;

  Posted post(const LocalStep& step, Stream stream, Completion completion) override;
  void feed(uint64_t id, size_t available, const Status* ended) override;
  size_t poll() override;
  int completion_fd() const override { return event_.fd(); }
  bool has_completions() const override { return ready_.load(std::memory_order_acquire) > 0; }
  bool element_steps_end_at_post() const override { return true; }

  WorkerPool& workers() { return workers_; }

  CpuQueue(const CpuQueue&) = delete;
  CpuQueue& operator=(const CpuQueue&) = delete;

 private:
  struct Queued {
    LocalStep step;
    Completion completion;
    uint64_t stream = 0;
  };
  struct Ended {
    Completion completion;
    Status status;
    uint64_t stream = 0;
  };
  // A stream's steps not yet delivered: `waiting` have not started, one runs while `running`.
  struct Lane {
    std::deque<Queued> waiting;  // in post order
    bool running = false;
    size_t undelivered = 0;  // accepted steps whose completion has not run yet
  };

  // On a worker: runs the step, queues its completion, starts its stream's next step.
  void run_on_worker(Queued queued);
  void start_on_worker(Queued queued);
  void ended(const Completion& completion, Status status, uint64_t stream);

  // Closed last: workers joining may still write it.
  EventFd event_{"the CPU device queue"};

  std::mutex lanes_mutex_;  // lanes_: the posting thread, workers and poll()
  std::unordered_map<uint64_t, Lane> lanes_;

  std::mutex ended_mutex_;    // taken inside lanes_mutex_ by workers, never the other way round
  std::vector<Ended> ended_;  // completions for poll(), in the order the steps ended
  std::atomic<size_t> ready_{0};

  // DecodeArriving steps fed by the posting thread, until their receive ended.
  struct Arriving {
    std::shared_ptr<ArrivingMessage> message;
    Completion completion;
  };
  std::unordered_map<uint64_t, Arriving> arriving_;
  uint64_t next_id_ = 1;

  WorkerPool workers_;  // last: destroyed first, so the workers end before the state they use
};

}  // namespace dc::device
