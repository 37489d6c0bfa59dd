// compress_perf's GPU engine: one buffer's encodes and decodes on a device through the device
// plugin's GPU codec (device/stream_queue.h's enqueue_encode and enqueue_decode). The input, the
// residual and the decoded buffer stay in device memory from call to call, as a training step's
// would; a call is timed from its enqueue to the stream's doorbell, so it counts the kernels, not
// the copies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/event_fd.h"
#include "compression/compression.h"
#include "device/plugin_stream_queue.h"

namespace dc::bench {

class DeviceCodec {
 public:
  // Loads `library` (a device plugin) and copies x to the device. Throws dc::Error when the plugin
  // cannot start or refuses the spec (dense q8 specs only).
  DeviceCodec(const std::string& library, const compression::Spec& spec, const std::vector<float>& x);
  ~DeviceCodec();

  // One encode with this seed: the message's bytes, whether an element was not finite, how many
  // elements it sent (a top-k's k; every element of a dense spec), and the seconds from enqueue to
  // completion.
  struct Call {
    uint64_t bytes;
    bool nonfinite;
    uint64_t sent;
    double seconds;
  };
  Call encode(uint64_t seed);
  // The last encode's message, copied from the device.
  std::vector<uint8_t> message(uint64_t bytes);
  // Copies `message` to the device for decode().
  void upload(const std::vector<uint8_t>& message);
  // Decodes the uploaded message over a buffer of x's size: the seconds it took; throws dc::Error
  // with the decoder's words when it refuses the message.
  double decode();
  // The last decode's values, copied from the device.
  std::vector<float> decoded();

  DeviceCodec(const DeviceCodec&) = delete;
  DeviceCodec& operator=(const DeviceCodec&) = delete;

 private:
  void* device_alloc(size_t bytes);
  void synchronize();

  device::DevicePlugin plugin_;
  std::unique_ptr<device::PluginStreamQueue> queue_;
  std::vector<void*> device_memory_;
  dcDeviceEncode_t descriptor_{};
  dcDeviceDecode_t decode_{};
  uint64_t* doorbell_ = nullptr;  // pinned
  uint64_t rings_ = 0;
  const EventFd wake_{"compress_perf's device stream"};
  const device::Stream stream_{1};
};

}  // namespace dc::bench
