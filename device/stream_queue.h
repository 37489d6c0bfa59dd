// What the stream bridge (src/core/stream_bridge.h) enqueues on a user's stream, and the memory it
// needs: the device half of the GPU path (docs/architecture.md, "GPU path"). Everything the device
// does for an operation is enqueued at call time, in one go: copies into pinned slots, a doorbell,
// a gate, copies back. The host engine only ever stores to a gate word (open_gate); it never
// enqueues device work later, so a gated stream never waits on work issued after it.
//
// Words. Doorbell and gate words are 64-bit counters in pinned host memory (alloc_pinned), written
// by the stream with memops on a GPU (cuStreamWriteValue64 / cuStreamWaitValue64 GEQ), with atomics
// by the CPU implementation (cpu_stream_queue.h). A gate waits until its word >= the value it was
// given, so one monotonic word per communicator serves every gate of its operations.
//
// Graphs. While a stream captures a CUDA graph, what is enqueued on it is recorded, and a replay
// runs it again with the same values: a GEQ gate on a counter cannot serve that. A captured
// operation has a doorbell the stream sets to 1 (the host takes it and stores 0 again) and a gate
// per stream that it waits to equal 1 and then resets to 0 (enqueue_gate_reset), so every replay
// waits for its own opening. What the captured operation needs lives until the graph goes
// (retain_until_graph_destroyed).
//
// Threads. enqueue_* may be called from several threads, each stream's operations in the order
// its callers enqueued them. open_gate may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "base/error.h"
#include "device/device_queue.h"
#include "device/plugin_abi.h"

namespace dc::device {

class StreamQueue {
 public:
  virtual ~StreamQueue() = default;

  // Pinned host memory: readable and writable by the host and by copies on any stream.
  virtual void* alloc_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* pointer) = 0;
  // Device memory (what ncclMemAlloc returns): null with *status set when there is none.
  virtual void* alloc_device(size_t bytes, Status* status) = 0;
  virtual Status free_device(void* pointer) = 0;
  // Whether pointer lies in memory that only the device's copies may touch.
  virtual bool is_device_memory(const void* pointer) const = 0;

  // Run when the stream reaches them, in the order enqueued on that stream.
  virtual Status enqueue_copy(Stream stream, void* dst, const void* src, size_t bytes) = 0;
  // *word = value, then wake_fd (an eventfd) is written, so a thread blocked on it learns of it.
  virtual Status enqueue_doorbell(Stream stream, uint64_t* word, uint64_t value, int wake_fd) = 0;
  // The stream waits until *word >= value.
  virtual Status enqueue_gate(Stream stream, const uint64_t* word, uint64_t value) = 0;

  // The stream waits until *word == value, then stores reset into it (a gate in a graph).
  virtual Status enqueue_gate_reset(Stream stream, uint64_t* word, uint64_t value, uint64_t reset) = 0;

  // Host side: *word = value, opening the gates waiting for it (a GEQ gate's word never decreases).
  virtual void open_gate(uint64_t* word, uint64_t value) = 0;
  // Whether the stream is capturing a graph (cudaStreamIsCapturing): what is enqueued then is
  // recorded for replays, not run.
  virtual bool capturing(Stream stream) = 0;
  // Only while stream captures: release runs once the graph being captured, and every instance of
  // it, is destroyed and no replay of it runs any more (cudaUserObject).
  virtual Status retain_until_graph_destroyed(Stream stream, std::function<void()> release) = 0;

  // The GPU codec (compression/gpu), run when the stream reaches it (plugin_abi.h's descriptors say
  // what each field is): a dense q8 or top-k encode of device memory, whose message has the CPU
  // encoder's bytes; a decode-and-accumulate of a message into device memory, which adds the CPU
  // decoder's values or writes the fault the CPU decoder reports. *_workspace_bytes: how much
  // workspace it needs (0 with *status set when the descriptor is refused). A refused descriptor
  // enqueues nothing.
  virtual uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode, Status* status) = 0;
  virtual Status enqueue_encode(Stream stream, const dcDeviceEncode_t& encode) = 0;
  virtual uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode, Status* status) = 0;
  virtual Status enqueue_decode(Stream stream, const dcDeviceDecode_t& decode) = 0;
  // An element step run when the stream reaches it (plugin_abi.h's enqueue_step): a refused one
  // enqueues nothing.
  virtual Status enqueue_step(Stream stream, const dcDeviceStep_t& step) = 0;
};

}  // namespace dc::device
