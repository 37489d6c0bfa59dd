#include "device/cpu_stream_queue.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <span>

#include "compression/gpu/decode.h"
#include "compression/gpu/emulated_decoder.h"
#include "compression/gpu/emulated_encoder.h"
#include "device/abi_step.h"
#include "device/codec_descriptors.h"
#include "device/cpu_steps.h"
#include "device/guarded.h"

namespace dc::device {

CpuStreamQueue::~CpuStreamQueue() {
  for (auto& [handle, lane] : lanes_) {
    {
      std::lock_guard<std::mutex> lock(lane->mutex);
      lane->stopping = true;
    }
    lane->changed.notify_all();
    lane->thread.join();
  }
}

void* CpuStreamQueue::alloc_device(size_t bytes) {
  // At least one byte, so every allocation has an address of its own.
  void* pointer = std::malloc(bytes == 0 ? 1 : bytes);
  if (pointer == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(memory_mutex_);
  device_ranges_[reinterpret_cast<uintptr_t>(pointer)] = bytes == 0 ? 1 : bytes;
  return pointer;
}

void* CpuStreamQueue::alloc_device(size_t bytes, Status* status) {
  void* pointer = alloc_device(bytes);
  *status = pointer ? Status::success()
                    : Status::failure(dcSystemError, "DeepComm: no memory for " + std::to_string(bytes) + " bytes");
  return pointer;
}

Status CpuStreamQueue::free_device(void* pointer) {
  {
    std::lock_guard<std::mutex> lock(memory_mutex_);
    device_ranges_.erase(reinterpret_cast<uintptr_t>(pointer));
  }
  std::free(pointer);
  return Status::success();
}

void* CpuStreamQueue::alloc_pinned(size_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }

void CpuStreamQueue::free_pinned(void* pointer) { std::free(pointer); }

bool CpuStreamQueue::is_device_memory(const void* pointer) const {
  const auto at = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(memory_mutex_);
  auto range = device_ranges_.upper_bound(at);
  if (range == device_ranges_.begin()) return false;
  --range;
  return at - range->first < range->second;
}

Status CpuStreamQueue::enqueue_copy(Stream stream, void* dst, const void* src, size_t bytes) {
  return enqueue(stream, [=] { std::memmove(dst, src, bytes); });
}

Status CpuStreamQueue::enqueue_doorbell(Stream stream, uint64_t* word, uint64_t value, int wake_fd) {
  return enqueue(stream, [=] {
    std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_release);
    const uint64_t one = 1;
    // Only EAGAIN can fail (the counter full), and then the descriptor is readable anyway.
    [[maybe_unused]] ssize_t n = write(wake_fd, &one, sizeof one);
  });
}

Status CpuStreamQueue::enqueue_gate(Stream stream, const uint64_t* word, uint64_t value) {
  return enqueue(stream, [=] {
    std::atomic_ref<uint64_t> gate(*const_cast<uint64_t*>(word));
    for (uint64_t seen = gate.load(std::memory_order_acquire); seen < value;
         seen = gate.load(std::memory_order_acquire))
      gate.wait(seen, std::memory_order_acquire);
  });
}

Status CpuStreamQueue::enqueue_gate_reset(Stream stream, uint64_t* word, uint64_t value, uint64_t reset) {
  return enqueue(stream, [=] {
    std::atomic_ref<uint64_t> gate(*word);
    for (uint64_t seen = gate.load(std::memory_order_acquire); seen != value;
         seen = gate.load(std::memory_order_acquire))
      gate.wait(seen, std::memory_order_acquire);
    gate.store(reset, std::memory_order_release);
  });
}

void CpuStreamQueue::open_gate(uint64_t* word, uint64_t value) {
  std::atomic_ref<uint64_t> gate(*word);
  gate.store(value, std::memory_order_release);
  gate.notify_all();
}

bool CpuStreamQueue::capturing(Stream stream) {
  std::lock_guard<std::mutex> lock(capture_mutex_);
  return capturing_.count(stream.handle) > 0;
}

uint64_t CpuStreamQueue::encode_workspace_bytes(const dcDeviceEncode_t& e, Status* status) {
  uint64_t bytes = 0;
  *status = guarded([&] {
    bytes = encode_workspace_bytes_of(e);
    return Status::success();
  });
  return bytes;
}

Status CpuStreamQueue::enqueue_encode(Stream stream, const dcDeviceEncode_t& e) {
  compression::Spec spec;
  const Status checked = guarded([&] {
    spec = encode_spec_of(e);
    return Status::success();
  });
  if (!checked.ok()) return checked;
  return enqueue(stream, [spec, e] {
    // What a kernel cannot do either: throw. A failed encode (a bug, or no memory) reports 0 bytes.
    const Status done = guarded([&] {
      const size_t capacity = size_t(compression::max_message_bytes(spec, e.count));
      const compression::EncodeResult r = compression::gpu::encode_emulated_keeping(
          spec, encode_kept_of(e), static_cast<dcDataType_t>(e.datatype), e.input, e.count,
          e.residual ? std::span<float>(e.residual, e.count) : std::span<float>(), e.seed,
          std::span<uint8_t>(e.message, capacity));
      e.result[0] = uint32_t(r.bytes);
      e.result[1] = r.nonfinite ? 1 : 0;
      e.result[2] = uint32_t(r.sent);
      return Status::success();
    });
    if (!done.ok()) e.result[0] = 0;
  });
}

uint64_t CpuStreamQueue::decode_workspace_bytes(const dcDeviceDecode_t& d, Status* status) {
  uint64_t bytes = 0;
  *status = guarded([&] {
    bytes = decode_workspace_bytes_of(d);
    return Status::success();
  });
  return bytes;
}

Status CpuStreamQueue::enqueue_decode(Stream stream, const dcDeviceDecode_t& d) {
  const Status checked = guarded([&] {
    check_decode_descriptor(d);
    return Status::success();
  });
  if (!checked.ok()) return checked;
  return enqueue(stream, [d] {
    const compression::Target target{static_cast<dcDataType_t>(d.datatype), d.dst, d.count, d.overwrite != 0};
    // Read as a GPU reads it (the gate before this decode orders the writer's store before it).
    const uint64_t bytes = compression::gpu::message_bytes_now(d.message_bytes, d.message_bytes_at);
    compression::gpu::pack_decode_error(
        compression::gpu::decode_emulated(std::span<const uint8_t>(d.message, bytes), target), d.error);
  });
}

Status CpuStreamQueue::enqueue_step(Stream stream, const dcDeviceStep_t& abi) {
  const LocalStep step = local_step_of(abi);
  if (const Status refused = check_stream_step(step); !refused.ok()) return refused;
  // A kernel cannot fail once launched: the step was checked.
  return enqueue(stream, [step] { (void)run_element_step(step); });
}

Status CpuStreamQueue::retain_until_graph_destroyed(Stream stream, std::function<void()> release) {
  std::lock_guard<std::mutex> lock(capture_mutex_);
  auto graph = capturing_.find(stream.handle);
  if (graph == capturing_.end()) return Status::failure(dcInvalidUsage, "DeepComm: the stream is not capturing");
  graph->second->releases_.push_back(std::move(release));
  return Status::success();
}

CpuStreamQueue::Graph::~Graph() {
  for (auto& release : releases_) release();
}

void CpuStreamQueue::begin_capture(Stream stream) {
  std::lock_guard<std::mutex> lock(capture_mutex_);
  capturing_[stream.handle] = std::make_shared<Graph>();
}

std::shared_ptr<CpuStreamQueue::Graph> CpuStreamQueue::end_capture(Stream stream) {
  std::lock_guard<std::mutex> lock(capture_mutex_);
  auto graph = capturing_.find(stream.handle);
  if (graph == capturing_.end()) return std::make_shared<Graph>();
  std::shared_ptr<Graph> captured = std::move(graph->second);
  capturing_.erase(graph);
  return captured;
}

Status CpuStreamQueue::launch(const std::shared_ptr<Graph>& graph, Stream stream) {
  for (const auto& work : graph->work_) {
    Status status = enqueue(stream, work);
    if (!status.ok()) return status;
  }
  return enqueue(stream, [graph] {});  // the replay holds the graph until the stream passed it
}

Status CpuStreamQueue::enqueue_task(Stream stream, std::function<void()> task) {
  return enqueue(stream, std::move(task));
}

bool CpuStreamQueue::synchronize(Stream stream, std::chrono::milliseconds timeout) {
  Lane& lane = lane_of(stream);
  std::unique_lock<std::mutex> lock(lane.mutex);
  const uint64_t target = lane.enqueued;
  return lane.changed.wait_for(lock, timeout, [&] { return lane.done >= target; });
}

bool CpuStreamQueue::idle(Stream stream) {
  Lane& lane = lane_of(stream);
  std::lock_guard<std::mutex> lock(lane.mutex);
  return lane.done == lane.enqueued;
}

Status CpuStreamQueue::enqueue(Stream stream, std::function<void()> op) {
  {
    std::lock_guard<std::mutex> lock(capture_mutex_);
    auto graph = capturing_.find(stream.handle);
    if (graph != capturing_.end()) {
      graph->second->work_.push_back(std::move(op));
      return Status::success();
    }
  }
  Lane& lane = lane_of(stream);
  {
    std::lock_guard<std::mutex> lock(lane.mutex);
    lane.work.push_back(std::move(op));
    ++lane.enqueued;
  }
  lane.changed.notify_all();
  return Status::success();
}

// Handle 0 is a stream like any other here (CUDA's legacy default stream).
CpuStreamQueue::Lane& CpuStreamQueue::lane_of(Stream stream) {
  std::lock_guard<std::mutex> lock(lanes_mutex_);
  std::unique_ptr<Lane>& lane = lanes_[stream.handle];
  if (!lane) {
    lane = std::make_unique<Lane>();
    lane->thread = std::thread(&CpuStreamQueue::run, std::ref(*lane));
  }
  return *lane;
}

void CpuStreamQueue::run(Lane& lane) {
  std::unique_lock<std::mutex> lock(lane.mutex);
  for (;;) {
    lane.changed.wait(lock, [&] { return !lane.work.empty() || lane.stopping; });
    if (lane.work.empty()) return;  // stopping, and everything ran
    std::function<void()> op = std::move(lane.work.front());
    lane.work.pop_front();
    lock.unlock();
    op();
    lock.lock();
    ++lane.done;
    lane.changed.notify_all();
  }
}

}  // namespace dc::device
