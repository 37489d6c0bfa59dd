#include "device/plugin_stream_queue.h"

#include <memory>
#include <string>

namespace dc::device {

PluginStreamQueue::PluginStreamQueue(const DevicePlugin& plugin) : api_(plugin.api), library_(plugin.library) {
  if (!has_streams(*api_)) fail(dcInvalidUsage, "DeepComm: the device plugin " + library_ + " has no stream functions");
  char error[256] = {};
  const int32_t rc = api_->create(&queue_, error, sizeof error);
  if (rc != 0 || !queue_) {
    error[sizeof error - 1] = '\0';
    fail(rc != 0 ? static_cast<dcResult_t>(rc) : dcInternalError,
         "DeepComm: the device plugin " + library_ + " could not start: " + error);
  }
}

PluginStreamQueue::~PluginStreamQueue() { api_->destroy(queue_); }

void* PluginStreamQueue::alloc_device(size_t bytes, Status* status) {
  void* pointer = api_->alloc_device(queue_, bytes);
  *status = pointer ? Status::success() : status_of(dcSystemError, "device allocation");
  return pointer;
}

Status PluginStreamQueue::free_device(void* pointer) {
  return status_of(api_->free_device(queue_, pointer), "freeing device memory");
}

void* PluginStreamQueue::alloc_pinned(size_t bytes) { return api_->alloc_pinned(queue_, bytes); }

void PluginStreamQueue::free_pinned(void* pointer) { api_->free_pinned(queue_, pointer); }

bool PluginStreamQueue::is_device_memory(const void* pointer) const {
  return api_->is_device_memory(queue_, pointer) == 1;
}

Status PluginStreamQueue::enqueue_copy(Stream stream, void* dst, const void* src, size_t bytes) {
  return status_of(api_->enqueue_copy(queue_, stream.handle, dst, src, bytes), "a copy on a stream");
}

Status PluginStreamQueue::enqueue_doorbell(Stream stream, uint64_t* word, uint64_t value, int wake_fd) {
  return status_of(api_->enqueue_doorbell(queue_, stream.handle, word, value, wake_fd), "a doorbell on a stream");
}

Status PluginStreamQueue::enqueue_gate(Stream stream, const uint64_t* word, uint64_t value) {
  return status_of(api_->enqueue_gate(queue_, stream.handle, word, value), "a gate on a stream");
}

Status PluginStreamQueue::enqueue_gate_reset(Stream stream, uint64_t* word, uint64_t value, uint64_t reset) {
  return status_of(api_->enqueue_gate_reset(queue_, stream.handle, word, value, reset), "a graph's gate on a stream");
}

void PluginStreamQueue::open_gate(uint64_t* word, uint64_t value) { api_->open_gate(queue_, word, value); }

bool PluginStreamQueue::capturing(Stream stream) { return api_->stream_capturing(queue_, stream.handle) == 1; }

uint64_t PluginStreamQueue::encode_workspace_bytes(const dcDeviceEncode_t& encode, Status* status) {
  const uint64_t bytes = api_->encode_workspace_bytes(queue_, &encode);
  *status = bytes ? Status::success() : status_of(dcInvalidArgument, "an encode's workspace");
  return bytes;
}

Status PluginStreamQueue::enqueue_encode(Stream stream, const dcDeviceEncode_t& encode) {
  return status_of(api_->enqueue_encode(queue_, stream.handle, &encode), "an encode on a stream");
}

uint64_t PluginStreamQueue::decode_workspace_bytes(const dcDeviceDecode_t& decode, Status* status) {
  const uint64_t bytes = api_->decode_workspace_bytes(queue_, &decode);
  *status = bytes ? Status::success() : status_of(dcInvalidArgument, "a decode's workspace");
  return bytes;
}

Status PluginStreamQueue::enqueue_decode(Stream stream, const dcDeviceDecode_t& decode) {
  return status_of(api_->enqueue_decode(queue_, stream.handle, &decode), "a decode on a stream");
}

Status PluginStreamQueue::enqueue_step(Stream stream, const dcDeviceStep_t& step) {
  return status_of(api_->enqueue_step(queue_, stream.handle, &step), "an element step on a stream");
}

Status PluginStreamQueue::retain_until_graph_destroyed(Stream stream, std::function<void()> release) {
  auto* owned = new std::function<void()>(std::move(release));
  auto call_once = [](void* arg) {
    std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
    (*fn)();
  };
  const int32_t code = api_->retain_until_graph_destroyed(queue_, stream.handle, call_once, owned);
  if (code != dcSuccess) delete owned;  // the plugin never calls it
  return status_of(code, "keeping a captured operation with its graph");
}

Status PluginStreamQueue::status_of(int32_t code, const char* call) const {
  if (code == dcSuccess) return Status::success();
  const char* why = api_->last_error(queue_);
  return Status::failure(static_cast<dcResult_t>(code), "DeepComm: " + std::string(call) +
                                                            " failed in the device plugin " + library_ + ": " +
                                                            (why ? why : "no message"));
}

}  // namespace dc::device
