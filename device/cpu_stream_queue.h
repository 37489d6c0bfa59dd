// The CPU implementation of the stream contract (stream_queue.h), so that the whole GPU path runs
// and is tested without a GPU: a stream is an ordered lane with its own thread, "device memory" is
// host memory tagged as such, memops are atomics (a gate blocks its lane in atomic wait; open_gate
// stores and notifies). Tests also enqueue host tasks that stand for a user's kernels, and wait for
// a stream as cudaStreamSynchronize does. Graph capture is emulated too: between begin_capture and
// end_capture a stream records what is enqueued on it instead of running it, and launch replays the
// recording on a stream (cudaStreamBeginCapture, cudaStreamEndCapture, cudaGraphLaunch).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "device/stream_queue.h"

namespace dc::device {

class CpuStreamQueue : public StreamQueue {
 public:
  CpuStreamQueue() = default;
  // Runs what each stream still holds, then joins its thread: every gate must open first.
  ~CpuStreamQueue() override;

  // Host memory tagged as device memory until freed.
  void* alloc_device(size_t bytes);
  void* alloc_device(size_t bytes, Status* status) override;
  Status free_device(void* pointer) override;

  void* alloc_pinned(size_t bytes) override;
  void free_pinned(void* pointer) override;
  bool is_device_memory(const void* pointer) const override;

  Status enqueue_copy(Stream stream, void* dst, const void* src, size_t bytes) override;
  Status enqueue_doorbell(Stream stream, uint64_t* word, uint64_t value, int wake_fd) override;
  Status enqueue_gate(Stream stream, const uint64_t* word, uint64_t value) override;
  Status enqueue_gate_reset(Stream stream, uint64_t* word, uint64_t value, uint64_t reset) override;
  void open_gate(uint64_t* word, uint64_t value) override;
  bool capturing(Stream stream) override;
  Status retain_until_graph_destroyed(Stream stream, std::function<void()> release) override;
  // The kernels run through the emulator (compression/gpu/emulated_*.h), which keeps its own
  // workspace.
  uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode, Status* status) override;
  Status enqueue_encode(Stream stream, const dcDeviceEncode_t& encode) override;
  uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode, Status* status) override;
  Status enqueue_decode(Stream stream, const dcDeviceDecode_t& decode) override;
  Status enqueue_step(Stream stream, const dcDeviceStep_t& step) override;

  // A captured graph: its recorded work, and what runs once it is destroyed and no replay of it
  // runs any more (a replay holds it).
  class Graph {
   public:
    ~Graph();
    size_t size() const { return work_.size(); }

   private:
    friend class CpuStreamQueue;
    std::vector<std::function<void()>> work_;
    std::vector<std::function<void()>> releases_;
  };
  // cudaStreamBeginCapture: what is enqueued on stream from now on is recorded.
  void begin_capture(Stream stream);
  // cudaStreamEndCapture: the recording (empty if the stream was not capturing).
  std::shared_ptr<Graph> end_capture(Stream stream);
  // cudaGraphLaunch: the graph's work, enqueued on stream in the order recorded.
  Status launch(const std::shared_ptr<Graph>& graph, Stream stream);

  // A user's kernel in the emulation: task runs when the stream reaches it.
  Status enqueue_task(Stream stream, std::function<void()> task);
  // cudaStreamSynchronize: true once everything enqueued on stream so far ran; false at timeout.
  bool synchronize(Stream stream, std::chrono::milliseconds timeout);
  // cudaStreamQuery: whether everything enqueued on stream so far ran.
  bool idle(Stream stream);

  CpuStreamQueue(const CpuStreamQueue&) = delete;
  CpuStreamQueue& operator=(const CpuStreamQueue&) = delete;

 private:
  struct Lane {
    std::mutex mutex;
    std::condition_variable changed;  // work queued, work done, or stopping
    std::deque<std::function<void()>> work;
    uint64_t enqueued = 0;
    uint64_t done = 0;
    bool stopping = false;
    std::thread thread;
  };

  Status enqueue(Stream stream, std::function<void()> op);
  Lane& lane_of(Stream stream);
  static void run(Lane& lane);

  std::mutex lanes_mutex_;
  std::unordered_map<uint64_t, std::unique_ptr<Lane>> lanes_;

  std::mutex capture_mutex_;
  std::map<uint64_t, std::shared_ptr<Graph>> capturing_;  // by stream

  mutable std::mutex memory_mutex_;
  std::map<uintptr_t, size_t> device_ranges_;  // start -> bytes
};

}  // namespace dc::device
