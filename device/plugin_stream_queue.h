// The stream contract (stream_queue.h) over a loaded plugin's stream functions (plugin_abi.h,
// version 3), with the device allocations ncclMemAlloc hands out: how the stream bridge reaches
// CUDA (libdeepcomm-cuda.so) or, in tests, a plugin over the CPU stream queue.
#pragma once

#include "device/plugin_loader.h"
#include "device/stream_queue.h"

namespace dc::device {

class PluginStreamQueue : public StreamQueue {
 public:
  // Creates a queue of the plugin. Throws dc::Error with the plugin's message when it cannot, and
  // dc::Error(dcInvalidUsage) when the plugin has no stream functions.
  explicit PluginStreamQueue(const DevicePlugin& plugin);
  ~PluginStreamQueue() override;

  // Device memory (ncclMemAlloc): NULL with status set when the plugin cannot allocate.
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
  uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode, Status* status) override;
  Status enqueue_encode(Stream stream, const dcDeviceEncode_t& encode) override;
  uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode, Status* status) override;
  Status enqueue_decode(Stream stream, const dcDeviceDecode_t& decode) override;
  Status enqueue_step(Stream stream, const dcDeviceStep_t& step) override;

  PluginStreamQueue(const PluginStreamQueue&) = delete;
  PluginStreamQueue& operator=(const PluginStreamQueue&) = delete;

 private:
  Status status_of(int32_t code, const char* call) const;

  const dcDevicePlugin_t* api_;
  std::string library_;
  void* queue_ = nullptr;
};

}  // namespace dc::device
