// The stream bridge: collectives and point-to-point calls on device buffers with NCCL's stream
// semantics, served by the host engine (docs/architecture.md, "GPU path"). A call enqueues on the
// user's stream, at once and in one go: a copy of the input into a pinned slot, a doorbell, a gate,
// a copy of the output out of the slot, and a retirement doorbell; then it returns. The input is
// read when the stream reaches the operation, and later work on the stream sees the output.
//
// The bridge's issuing thread sleeps on an eventfd that doorbells write. It runs the operations in
// call order, each as the ordinary blocking operation of the communicator on its slots (the engine
// runs its plan), and then opens the gate with a store. One gate word per bridge, counting the
// operations that ended: a gate waits for its operation's number (GEQ), so streams wait only for
// what was issued before them. An operation's slots are freed once its retirement doorbell rang.
//
// Faults. An operation that fails (a dead peer, a timeout, an abort of the communicator) records
// the bridge's asynchronous error and opens every gate, present and future: no stream waits
// forever. Later calls return that error. Destroying the bridge opens every gate too.
//
// Threads. The issuing thread is the communicator's user while the bridge lives: the caller must
// not run operations of the same communicator itself meanwhile. Calls may come from any one thread
// at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "device/stream_queue.h"

namespace dc {

class StreamBridge {
 public:
  StreamBridge(dcComm_t comm, device::StreamQueue& streams);
  ~StreamBridge();

  dcResult_t all_reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op,
                        device::Stream stream);
  dcResult_t broadcast(const void* send, void* recv, size_t count, dcDataType_t type, int root, device::Stream stream);
  dcResult_t reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op, int root,
                    device::Stream stream);
  dcResult_t all_gather(const void* send, void* recv, size_t send_count, dcDataType_t type, device::Stream stream);
  dcResult_t reduce_scatter(const void* send, void* recv, size_t recv_count, dcDataType_t type, dcRedOp_t op,
                            device::Stream stream);
  dcResult_t all_to_all(const void* send, void* recv, size_t count, dcDataType_t type, device::Stream stream);
  dcResult_t gather(const void* send, void* recv, size_t count, dcDataType_t type, int root, device::Stream stream);
  dcResult_t scatter(const void* send, void* recv, size_t count, dcDataType_t type, int root, device::Stream stream);
  dcResult_t send(const void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream);
  dcResult_t recv(void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream);

  // The first failure of an operation run for the bridge (ok while none): ncclCommGetAsyncError.
  Status async_error() const;
  // Waits until every operation called so far ran, or the bridge failed; false at the timeout.
  bool wait_until_run(std::chrono::milliseconds timeout);
  // Fails the bridge (an abort): status becomes its asynchronous error unless one came first, and
  // every gate opens.
  void fail(Status status);

  StreamBridge(const StreamBridge&) = delete;
  StreamBridge& operator=(const StreamBridge&) = delete;

 private:
  // The operation on its slots, run by the issuing thread.
  using Run = std::function<dcResult_t(const void* in, void* out)>;
  struct Op {
    uint64_t number = 0;      // 1, 2, ... in call order
    uint8_t* slot = nullptr;  // pinned: the input, then the output at out_at
    size_t out_at = 0;
    Run run;
    bool ran = false;
  };
  static constexpr uint64_t kRing = 1024;  // operations in flight at most: doorbell words per kind
  // Opens every gate: far above any operation number, yet a positive distance from each (a GPU
  // gate compares (int64_t)(word - value) >= 0).
  static constexpr uint64_t kAllGates = uint64_t{1} << 62;
  static constexpr size_t kBadSize = SIZE_MAX;

  // count elements of type, times blocks; kBadSize for an unknown type or an overflow.
  static size_t bytes_of(size_t count, int blocks, dcDataType_t type);
  static dcResult_t refuse(dcResult_t code, const std::string& message);
  // copies_out: whether the stream copies the output slot to recv (a reduce's non-root does not).
  dcResult_t enqueue(device::Stream stream, const void* send, size_t in_bytes, void* recv, size_t out_bytes, Run run,
                     bool copies_out = true);
  void issue_loop();
  // mutex_ held (released while an operation runs): runs the operations whose doorbells rang, in
  // call order, up to the first that has not rung.
  void run_rung(std::unique_lock<std::mutex>& lock);
  void free_retired();                 // mutex_ held
  void record_failure(Status status);  // mutex_ held: the first failure stays; every gate opens
  uint64_t& rung_word(uint64_t number) { return words_[number % kRing]; }
  uint64_t& retired_word(uint64_t number) { return words_[kRing + number % kRing]; }

  dcComm_t comm_;
  int nranks_ = 0;
  int rank_ = 0;
  device::StreamQueue& streams_;
  int wake_fd_ = -1;  // doorbells (and the destructor) write it
  uint64_t* words_;   // pinned: kRing doorbell words, kRing retirement words, the gate word
  uint64_t* gate_word_;

  mutable std::mutex mutex_;
  std::condition_variable ran_changed_;  // run_ or error_ changed
  std::deque<Op> ops_;                   // called and not yet retired, in call order
  uint64_t called_ = 0;                  // the number of the last operation called
  uint64_t run_ = 0;                     // the number of the last operation run (or skipped)
  Status error_;
  bool stopping_ = false;
  std::thread issuer_;
};

}  // namespace dc
