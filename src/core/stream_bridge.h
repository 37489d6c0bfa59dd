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
// what was issued before them. An operation's doorbell and retirement words live at the head of its
// pinned block, one of each per stream among its calls; the block is freed once every retirement
// doorbell rang.
//
// Graphs. A call on a stream that captures a CUDA graph becomes a captured operation: its pinned
// block lives as long as the graph (the stream contract's retain_until_graph_destroyed), and every
// stream among its calls gets a doorbell the stream sets to 1 and a gate it waits to equal 1 and
// then resets to 0, so each replay rings, waits and runs anew. The issuing thread runs a captured
// operation whenever all its doorbells rang (taking them back to 0), then sets its gates to 1.
// Captured operations run in the order their doorbells ring, interleaved with the others: every
// rank must replay its graphs in the same order, as with NCCL.
//
// Faults. An operation that fails (a dead peer, a timeout, an abort of the communicator) records
// the bridge's asynchronous error and opens every gate, present and future: no stream waits
// forever. Later calls return that error, and captured operations whose doorbells ring open their
// gates without running. Destroying the bridge opens every gate too; a graph replayed after its
// communicator was destroyed (invalid usage, as with NCCL) passes its gates without running, served
// by the process's keeper (captured_operations.h), which frees the pinned block once the graph goes.
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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "device/pinned_pool.h"
#include "device/stream_queue.h"
#include "src/core/captured_operations.h"
#include "src/core/device_compressed_call.h"
#include "src/core/device_residuals.h"

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
  Status async_error();
  // Pinned memory the bridge keeps for later calls (its pool's cached blocks), and freeing it
  // (ncclCommSuspend; on the calling thread).
  size_t cached_bytes() const { return pool_.cached_bytes(); }
  void release_cached_memory() { pool_.release_cached(); }
  // Captured operations whose graphs still live (their pinned blocks are held).
  size_t captured_operations() const;
  // Waits until every operation called so far ran, or the bridge failed; false at the timeout.
  bool wait_until_run(std::chrono::milliseconds timeout);
  // Fails the bridge (an abort): status becomes its asynchronous error unless one came first, and
  // every gate opens.
  void fail(Status status);

  // Groups (ncclGroupStart/End): the calls between begin_group and end_group are collected, and
  // end_group enqueues them as one operation. It runs them as one group of the communicator once
  // every stream among them reached it, and each of those streams waits for all of them.
  void begin_group();
  dcResult_t end_group();
  void drop_group();  // the collected calls are forgotten (a simulated group end)

  StreamBridge(const StreamBridge&) = delete;
  StreamBridge& operator=(const StreamBridge&) = delete;

 private:
  // The operation on its slots, run by the issuing thread.
  using Run = std::function<dcResult_t(const void* in, void* out)>;
  // One call's share of an operation.
  struct Part {
    device::Stream stream;
    const void* send = nullptr;
    size_t in_bytes = 0;
    void* recv = nullptr;
    size_t out_bytes = 0;       // copied out to recv (0: none)
    size_t slot_out_bytes = 0;  // the output slot (a reduce's non-root has one it does not copy)
    Run run;
    size_t in_at = 0, out_at = 0;  // the slots' offsets in the operation's block
    // A compressed all-reduce coded on the device: an encode instead of the copy in, decodes
    // instead of the copy out, its words and messages in the output slot.
    std::shared_ptr<DeviceCompressedCall> compressed;
  };
  struct Op {
    uint64_t number = 0;       // 1, 2, ... in call order
    uint8_t* block = nullptr;  // pinned: a doorbell and a retirement word per stream, then the slots
    size_t lanes = 0;          // the streams among its parts
    std::vector<Part> parts;
    uint64_t* doorbells() const { return reinterpret_cast<uint64_t*>(block); }
    uint64_t* retirements() const { return doorbells() + lanes; }
    bool rung() const;     // on every stream
    bool retired() const;  // on every stream
  };
  // A captured operation: its block (captured_operations.h) and what each replay runs.
  struct Captured : CapturedBlock {
    std::vector<Part> parts;
  };
  // Opens every gate: far above any operation number, yet a positive distance from each (a GPU
  // gate compares (int64_t)(word - value) >= 0).
  static constexpr uint64_t kAllGates = uint64_t{1} << 62;
  static constexpr size_t kBadSize = SIZE_MAX;

  // count elements of type, times blocks; kBadSize for an unknown type or an overflow.
  static size_t bytes_of(size_t count, int blocks, dcDataType_t type);
  static dcResult_t refuse(dcResult_t code, const std::string& message);
  // The streams among parts, in order of first use, and each part's slot offsets in a block that
  // starts with two words per stream (*word_bytes of them); *bytes is the block's size.
  static std::vector<device::Stream> lay_out(std::vector<Part>& parts, size_t* word_bytes, size_t* bytes);
  // A call: to the open group, or enqueued as an operation of its own. copies_out: whether the
  // stream copies the output slot to recv (a rooted call's non-root does not).
  dcResult_t add(device::Stream stream, const void* send, size_t in_bytes, void* recv, size_t out_bytes, Run run,
                 bool copies_out = true);
  // A sum or avg all-reduce DEEPCOMM_COMPRESS applies to, with a spec the GPU encoder takes, outside a
  // group and a capture: coded on the device (device_compressed_call.h). Null: any other.
  std::shared_ptr<DeviceCompressedCall> device_compressed(const void* send, void* recv, size_t count, dcDataType_t type,
                                                          dcRedOp_t op, device::Stream stream, Status* status);
  // The device residual of the user's buffer for this call (device_residuals.h).
  float* device_residual(const void* buffer, size_t count, dcDataType_t type, device::Stream stream, Status* status);
  // mutex_ held: records the first refusal of a decode by an operation that retired.
  void collect_decode_faults();
  dcResult_t enqueue(std::vector<Part> parts);
  // The same on streams that capture a graph.
  dcResult_t enqueue_captured(std::vector<Part> parts);
  // Enqueues on stream lane the copies of its parts into (copy_in) or out of (copy_out) their slots
  // in block; the first failure stops them.
  Status copy_in(device::Stream lane, const std::vector<Part>& parts, uint8_t* block);
  Status copy_out(device::Stream lane, const std::vector<Part>& parts, uint8_t* block);
  int wake_fd() const { return captured_->wake_event().fd(); }
  void issue_loop();
  // Issuing thread: frees the blocks of captured operations whose graphs are gone, then runs
  // those whose doorbells rang (skipped, gates opened, once the bridge failed).
  void run_captured();
  // mutex_ held (released while an operation runs): runs the operations whose doorbells rang, in
  // call order, up to the first that has not rung.
  void run_rung(std::unique_lock<std::mutex>& lock);
  Status run(const std::vector<Part>& parts, uint8_t* block);
  void free_retired();                 // mutex_ held
  void record_failure(Status status);  // mutex_ held: the first failure stays; every gate opens
  // mutex_ held: a call's refusal once the bridge failed (dcSuccess while it has not).
  dcResult_t refusal_after_failure() const;

  dcComm_t comm_;
  int nranks_ = 0;
  int rank_ = 0;
  device::StreamQueue& streams_;
  device::PinnedPool pool_;        // the operations' blocks, taken by callers and given back on retirement
  uint64_t* gate_word_ = nullptr;  // pinned: the number of the last operation that ended

  mutable std::mutex mutex_;
  std::condition_variable ran_changed_;  // run_ or error_ changed
  std::deque<Op> ops_;                   // called and not yet retired, in call order
  uint64_t called_ = 0;                  // the number of the last operation called
  uint64_t run_ = 0;                     // the number of the last operation run (or skipped)
  Status error_;
  bool stopping_ = false;
  bool grouping_ = false;    // between begin_group and end_group (the caller's thread only)
  std::vector<Part> group_;  // the open group's calls
  // The captured operations, with the eventfd that every doorbell (and the destructor) writes:
  // shared with the graphs, which may outlive the bridge.
  std::shared_ptr<CapturedList> captured_;
  // The device residuals of DEEPCOMM_COMPRESS's error feedback, and the codec's workspace of each
  // stream. Device memory is freed only when the bridge is destroyed (see StreamWorkspace).
  DeviceResidualStore residuals_;
  std::map<uint64_t, StreamWorkspace> workspaces_;
  uint64_t compressed_calls_ = 0;  // keys the stochastic rounding of each
  std::thread issuer_;
};

}  // namespace dc
