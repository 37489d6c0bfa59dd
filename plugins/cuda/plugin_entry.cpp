// libdeepcomm-cuda.so's one export, deepcommDevicePlugin (device/plugin_abi.h, version 2): the
// table of C functions over CudaQueue (element steps) and CudaStreams (the stream bridge). No
// exception crosses it: a dc::Error becomes its code (and create's message, or the thread's last
// error), anything else dcInternalError.
#include <cstdio>
#include <exception>
#include <string>

#include "base/error.h"
#include "device/plugin_abi.h"
#include "plugins/cuda/codec_launch.h"
#include "plugins/cuda/cuda_queue.h"
#include "plugins/cuda/cuda_streams.h"
#include "plugins/cuda/element_launch.h"

namespace dc::cuda {
namespace {

struct Plugin {
  CudaQueue queue;
  CudaStreams streams;
};

Plugin& plugin(void* handle) { return *static_cast<Plugin*>(handle); }
cudaStream_t stream_of(uint64_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

thread_local std::string t_last_error;

// Runs body; its dc::Error's code (and message, for last_error), or dcInternalError.
template <class Body>
int32_t guarded(Body&& body) {
  try {
    body();
    return dcSuccess;
  } catch (const Error& e) {
    t_last_error = e.what();
    return e.code();
  } catch (const std::exception& e) {
    t_last_error = std::string("DeepComm CUDA plugin: ") + e.what();
    return dcInternalError;
  }
}

int32_t create(void** handle, char* error, size_t error_size) {
  const int32_t result = guarded([&] { *handle = new Plugin; });
  if (result != dcSuccess) std::snprintf(error, error_size, "%s", t_last_error.c_str());
  return result;
}

void destroy(void* handle) { delete static_cast<Plugin*>(handle); }

// Every step is accepted (and completes through poll) or refused inside post; none ends there.
int32_t post(void* handle, const dcDeviceStep_t* step, uint64_t stream, uint64_t tag, int32_t* result) {
  *result = guarded([&] { plugin(handle).queue.post(*step, stream, tag); });
  return *result == dcSuccess ? 0 : 1;
}

int32_t poll(void* handle, dcDeviceCompletion_t* out, int32_t max) { return plugin(handle).queue.poll(out, max); }

int32_t completion_fd(void*) { return -1; }  // the caller polls

void* alloc_pinned(void* handle, uint64_t bytes) {
  void* pointer = nullptr;
  guarded([&] { pointer = plugin(handle).streams.alloc_pinned(bytes); });
  return pointer;
}

void free_pinned(void* handle, void* pointer) {
  guarded([&] { plugin(handle).streams.free_pinned(pointer); });
}

void* alloc_device(void* handle, uint64_t bytes) {
  void* pointer = nullptr;
  guarded([&] { pointer = plugin(handle).streams.alloc_device(bytes); });
  return pointer;
}

int32_t free_device(void* handle, void* pointer) {
  return guarded([&] { plugin(handle).streams.free_device(pointer); });
}

int32_t is_device_memory(void* handle, const void* pointer) {
  return plugin(handle).streams.is_device_memory(pointer) ? 1 : 0;
}

int32_t enqueue_copy(void* handle, uint64_t stream, void* dst, const void* src, uint64_t bytes) {
  return guarded([&] { plugin(handle).streams.enqueue_copy(stream_of(stream), dst, src, bytes); });
}

int32_t enqueue_doorbell(void* handle, uint64_t stream, uint64_t* word, uint64_t value, int32_t wake_fd) {
  return guarded([&] { plugin(handle).streams.enqueue_doorbell(stream_of(stream), word, value, wake_fd); });
}

int32_t enqueue_gate(void* handle, uint64_t stream, const uint64_t* word, uint64_t value) {
  return guarded([&] { plugin(handle).streams.enqueue_gate(stream_of(stream), word, value); });
}

void open_gate(void*, uint64_t* word, uint64_t value) { CudaStreams::open_gate(word, value); }

// A failed query reads as capturing, so that the call is refused with its message.
int32_t stream_capturing(void*, uint64_t stream) {
  bool on = true;
  guarded([&] { on = CudaStreams::capturing(stream_of(stream)); });
  return on ? 1 : 0;
}

const char* last_error(void*) { return t_last_error.c_str(); }

int32_t enqueue_gate_reset(void* handle, uint64_t stream, uint64_t* word, uint64_t value, uint64_t reset) {
  return guarded([&] { plugin(handle).streams.enqueue_gate_reset(stream_of(stream), word, value, reset); });
}

int32_t retain_until_graph_destroyed(void*, uint64_t stream, void (*release)(void*), void* arg) {
  return guarded([&] { CudaStreams::retain_until_graph_destroyed(stream_of(stream), release, arg); });
}

uint64_t encode_workspace_bytes(void*, const dcDeviceEncode_t* encode) {
  uint64_t bytes = 0;
  guarded([&] { bytes = cuda::encode_workspace_bytes(*encode); });
  return bytes;
}

int32_t enqueue_encode(void* handle, uint64_t stream, const dcDeviceEncode_t* encode) {
  return guarded([&] { cuda::enqueue_encode(*encode, stream_of(stream), plugin(handle).queue.max_blocks()); });
}

uint64_t decode_workspace_bytes(void*, const dcDeviceDecode_t* decode) {
  uint64_t bytes = 0;
  guarded([&] { bytes = cuda::decode_workspace_bytes(*decode); });
  return bytes;
}

int32_t enqueue_decode(void* handle, uint64_t stream, const dcDeviceDecode_t* decode) {
  return guarded([&] { cuda::enqueue_decode(*decode, stream_of(stream), plugin(handle).queue.max_blocks()); });
}

int32_t enqueue_step(void* handle, uint64_t stream, const dcDeviceStep_t* step) {
  return guarded([&] { cuda::launch_element_kernel(*step, stream_of(stream), plugin(handle).queue.max_blocks()); });
}

const dcDevicePlugin_t kPlugin = {DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION,
                                  sizeof(dcDevicePlugin_t),
                                  "cuda",
                                  0,  // steps without a stream end later, on the device
                                  create,
                                  destroy,
                                  post,
                                  poll,
                                  completion_fd,
                                  alloc_pinned,
                                  free_pinned,
                                  alloc_device,
                                  free_device,
                                  is_device_memory,
                                  enqueue_copy,
                                  enqueue_doorbell,
                                  enqueue_gate,
                                  open_gate,
                                  stream_capturing,
                                  last_error,
                                  enqueue_gate_reset,
                                  retain_until_graph_destroyed,
                                  encode_workspace_bytes,
                                  enqueue_encode,
                                  decode_workspace_bytes,
                                  enqueue_decode,
                                  enqueue_step};

}  // namespace
}  // namespace dc::cuda

extern "C" DEEPCOMM_DEVICE_PLUGIN_EXPORT const dcDevicePlugin_t* deepcommDevicePlugin() { return &dc::cuda::kPlugin; }
