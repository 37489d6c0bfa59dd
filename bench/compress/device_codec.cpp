#include "bench/compress/device_codec.h"

#include <chrono>
#include <cstring>

#include "base/error.h"
#include "compression/gpu/decode_fault.h"
#include "compression/gpu/emulated_encoder.h"
#include "device/codec_descriptors.h"

namespace dc::bench {
namespace {

void check(const Status& status) {
  if (!status.ok()) fail(status.code, status.message);
}

}  // namespace

DeviceCodec::DeviceCodec(const std::string& library, const compression::Spec& spec, const std::vector<float>& x)
    : plugin_(device::load_device_plugin(library)), queue_(std::make_unique<device::PluginStreamQueue>(plugin_)) {
  if (!compression::gpu::device_encodes(spec))
    fail(dcInvalidArgument,
         "compress_perf: the GPU encoder takes dense q8 and top-k specs, not '" + spec.to_string() + "'");
  const uint64_t n = x.size();
  descriptor_.datatype = dcFloat32;
  device::describe_encode(spec, compression::kept_target(spec.fraction, n), descriptor_);
  void* input = device_alloc(4 * n);
  descriptor_.input = input;
  descriptor_.residual = spec.error_feedback ? static_cast<float*>(device_alloc(4 * n)) : nullptr;
  descriptor_.count = n;
  descriptor_.message = static_cast<uint8_t*>(device_alloc(compression::max_message_bytes(spec, n)));
  // Pinned: the doorbell word, the decode's error words, the encode's result words.
  doorbell_ = static_cast<uint64_t*>(queue_->alloc_pinned(6 * sizeof(uint64_t)));
  if (!doorbell_) fail(dcSystemError, "compress_perf: no pinned memory");
  std::memset(doorbell_, 0, 6 * sizeof(uint64_t));
  descriptor_.result = reinterpret_cast<uint32_t*>(doorbell_ + 4);
  Status status;
  descriptor_.workspace = device_alloc(queue_->encode_workspace_bytes(descriptor_, &status));
  check(status);
  decode_ = {dcFloat32, 1, nullptr, 0, device_alloc(4 * n), n, nullptr, doorbell_ + 1};
  decode_.workspace = device_alloc(queue_->decode_workspace_bytes(decode_, &status));
  check(status);
  check(queue_->enqueue_copy(stream_, input, x.data(), 4 * n));
  const std::vector<float> zeros(descriptor_.residual ? n : 0, 0.0f);
  if (descriptor_.residual) check(queue_->enqueue_copy(stream_, descriptor_.residual, zeros.data(), 4 * n));
  synchronize();
}

DeviceCodec::~DeviceCodec() {
  for (void* p : device_memory_) queue_->free_device(p);
  if (doorbell_) queue_->free_pinned(doorbell_);
}

void* DeviceCodec::device_alloc(size_t bytes) {
  Status status;
  void* p = queue_->alloc_device(bytes, &status);
  check(status);
  device_memory_.push_back(p);
  return p;
}

// Rings the doorbell behind what the stream holds and waits for it (at most a minute).
void DeviceCodec::synchronize() {
  check(queue_->enqueue_doorbell(stream_, doorbell_, ++rings_, wake_.fd()));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (__atomic_load_n(doorbell_, __ATOMIC_ACQUIRE) < rings_) {
    if (std::chrono::steady_clock::now() > deadline) fail(dcSystemError, "compress_perf: the device stream hangs");
    wake_.wait_and_drain(100);
  }
}

DeviceCodec::Call DeviceCodec::encode(uint64_t seed) {
  descriptor_.seed = seed;
  const auto start = std::chrono::steady_clock::now();
  check(queue_->enqueue_encode(stream_, descriptor_));
  synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (descriptor_.result[0] == 0) fail(dcInternalError, "compress_perf: the device encode failed");
  return {descriptor_.result[0], descriptor_.result[1] != 0, descriptor_.result[2], seconds};
}

std::vector<uint8_t> DeviceCodec::message(uint64_t bytes) {
  std::vector<uint8_t> out(bytes);
  check(queue_->enqueue_copy(stream_, out.data(), descriptor_.message, bytes));
  synchronize();
  return out;
}

void DeviceCodec::upload(const std::vector<uint8_t>& message) {
  auto* copy = static_cast<uint8_t*>(device_alloc(message.size()));
  check(queue_->enqueue_copy(stream_, copy, message.data(), message.size()));
  synchronize();
  decode_.message = copy;
  decode_.message_bytes = message.size();
}

double DeviceCodec::decode() {
  const auto start = std::chrono::steady_clock::now();
  check(queue_->enqueue_decode(stream_, decode_));
  synchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const compression::gpu::DecodeError error = compression::gpu::unpack_decode_error(decode_.error);
  if (error.fault != compression::gpu::DecodeFault::none)
    fail(dcInvalidArgument, compression::decode_error_message(error));
  return seconds;
}

std::vector<float> DeviceCodec::decoded() {
  std::vector<float> out(decode_.count);
  check(queue_->enqueue_copy(stream_, out.data(), decode_.dst, 4 * out.size()));
  synchronize();
  return out;
}

}  // namespace dc::bench
