// The GPU codec behind the device-queue seam (stream_queue.h's enqueue_encode and enqueue_decode):
// on the CPU stream queue and through a plugin's C ABI (the test plugin, whose streams are the CPU
// queue's), an encode of "device" memory runs when its stream reaches it and writes the CPU
// encoder's message and residual; a decode adds the CPU decoder's values, or hands back the fault
// whose words are the CPU decoder's, and the stream goes on; a refused descriptor says why and
// enqueues nothing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "compression/compression.h"
#include "compression/gpu/decode_fault.h"
#include "device/codec_descriptors.h"
#include "device/cpu_stream_queue.h"
#include "device/plugin_stream_queue.h"
#include "kernels/reduce.h"

namespace dc::device {
namespace {

constexpr uint64_t kCount = 20000;

std::vector<float> gradient() {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<float> x(kCount);
  for (float& v : x) v = normal(rng);
  return x;
}

// A dense spec and a top-k one (about 200 of the 20000 kept, in chunks of 4096: sparse chunks).
const char* const kSpecs[] = {"q8:stochastic,huffman,ef:0.9,chunk:4096",
                              "topk:0.01:sampled,q8,huffman,ef:0.9,chunk:4096"};

struct DeviceEncode {
  std::vector<uint8_t> message;
  std::vector<float> residual;
  uint64_t sent = 0;
};

// Two error-feedback steps of `spec_text`, on stream 5: input and residual copied to device
// memory, encoded there, copied back.
template <class Queue, class Sync>
DeviceEncode encode_on(const char* spec_text, Queue& queue, void* (*alloc)(Queue&, size_t), Sync&& synchronize) {
  std::vector<void*> allocated;
  const auto device = [&](size_t bytes) { return allocated.emplace_back(alloc(queue, bytes)); };
  const std::vector<float> x = gradient();
  const compression::Spec spec = compression::parse_spec(spec_text);
  const size_t capacity = compression::max_message_bytes(spec, kCount);
  auto* input = static_cast<float*>(device(4 * kCount));
  auto* residual = static_cast<float*>(device(4 * kCount));
  auto* message = static_cast<uint8_t*>(device(capacity));
  auto* result = static_cast<uint32_t*>(queue.alloc_pinned(12));
  const std::vector<float> zeros(kCount, 0.0f);
  const Stream stream{5};
  EXPECT_TRUE(queue.enqueue_copy(stream, input, x.data(), 4 * kCount).ok());
  EXPECT_TRUE(queue.enqueue_copy(stream, residual, zeros.data(), 4 * kCount).ok());
  dcDeviceEncode_t e{};
  e.datatype = dcFloat32;
  describe_encode(spec, compression::kept_target(spec.fraction, kCount), e);
  e.input = input;
  e.residual = residual;
  e.count = kCount;
  e.message = message;
  e.result = result;
  Status status;
  std::vector<uint8_t> workspace(queue.encode_workspace_bytes(e, &status) + 256);
  EXPECT_TRUE(status.ok()) << status.message;
  e.workspace = workspace.data() + (256 - reinterpret_cast<uintptr_t>(workspace.data()) % 256);
  DeviceEncode out;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    e.seed = seed;
    const Status enqueued = queue.enqueue_encode(stream, e);
    EXPECT_TRUE(enqueued.ok()) << enqueued.message;
  }
  out.residual.resize(kCount);
  EXPECT_TRUE(queue.enqueue_copy(stream, out.residual.data(), residual, 4 * kCount).ok());
  synchronize(stream);
  out.message.assign(message, message + result[0]);
  EXPECT_EQ(result[1], 0u);
  out.sent = result[2];
  queue.free_pinned(result);
  for (void* p : allocated) queue.free_device(p);
  return out;
}

DeviceEncode encode_on_cpu(const char* spec_text) {
  const std::vector<float> x = gradient();
  const compression::Spec spec = compression::parse_spec(spec_text);
  compression::Residual residual(kCount);
  compression::Encoder encoder;
  DeviceEncode out;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    out.message.assign(compression::max_message_bytes(spec, kCount), 0);
    const compression::EncodeResult r = encoder.encode(spec, dcFloat32, x.data(), kCount, &residual, seed, out.message);
    out.message.resize(r.bytes);
    out.sent = r.sent;
  }
  out.residual.assign(residual.data(), residual.data() + kCount);
  return out;
}

void expect_cpu_bytes(const char* spec, const DeviceEncode& got) {
  SCOPED_TRACE(spec);
  const DeviceEncode want = encode_on_cpu(spec);
  EXPECT_EQ(got.sent, want.sent);
  ASSERT_EQ(got.message.size(), want.message.size());
  EXPECT_EQ(0, std::memcmp(got.message.data(), want.message.data(), want.message.size()));
  ASSERT_EQ(got.residual.size(), want.residual.size());
  EXPECT_EQ(0, std::memcmp(got.residual.data(), want.residual.data(), 4 * kCount));
}

TEST(DeviceCodec, OnTheCpuStreamQueueWritesTheCpuEncodersBytes) {
  CpuStreamQueue queue;
  for (const char* spec : kSpecs) {
    const DeviceEncode got = encode_on(
        spec, queue, +[](CpuStreamQueue& q, size_t bytes) { return q.alloc_device(bytes); },
        [&](Stream s) { ASSERT_TRUE(queue.synchronize(s, std::chrono::seconds(60))); });
    expect_cpu_bytes(spec, got);
  }
}

TEST(DeviceCodec, ThroughThePluginAbiWritesTheCpuEncodersBytes) {
  const DevicePlugin plugin = load_device_plugin(TEST_PLUGIN_GOOD);
  PluginStreamQueue queue(plugin);
  auto synchronize = reinterpret_cast<int (*)(uint64_t, int)>(dlsym(plugin.handle, "testPluginSynchronize"));
  ASSERT_NE(synchronize, nullptr);
  for (const char* spec : kSpecs) {
    const DeviceEncode got = encode_on(
        spec, queue,
        +[](PluginStreamQueue& q, size_t bytes) {
          Status status;
          return q.alloc_device(bytes, &status);
        },
        [&](Stream s) { ASSERT_EQ(synchronize(s.handle, 60000), 1); });
    expect_cpu_bytes(spec, got);
  }
}

// Decodes msg into "device" memory holding `start` on stream 6 (overwrite or add); the values, and
// the CPU decoder's words for the fault the stream reported ("" when none).
std::pair<std::vector<float>, std::string> decode_on(CpuStreamQueue& queue, const std::vector<uint8_t>& msg,
                                                     const std::vector<float>& start, bool overwrite) {
  auto* dst = static_cast<float*>(queue.alloc_device(4 * start.size()));
  auto* message = static_cast<uint8_t*>(queue.alloc_device(msg.size()));
  auto* error = static_cast<uint64_t*>(queue.alloc_pinned(3 * sizeof(uint64_t)));
  const Stream stream{6};
  EXPECT_TRUE(queue.enqueue_copy(stream, dst, start.data(), 4 * start.size()).ok());
  EXPECT_TRUE(queue.enqueue_copy(stream, message, msg.data(), msg.size()).ok());
  dcDeviceDecode_t d{dcFloat32, overwrite ? 1u : 0u, message, msg.size(), dst, start.size(), nullptr, error};
  Status status;
  std::vector<uint8_t> workspace(queue.decode_workspace_bytes(d, &status));
  EXPECT_TRUE(status.ok()) << status.message;
  d.workspace = workspace.data();
  EXPECT_TRUE(queue.enqueue_decode(stream, d).ok());
  std::vector<float> out(start.size());
  EXPECT_TRUE(queue.enqueue_copy(stream, out.data(), dst, 4 * start.size()).ok());
  EXPECT_TRUE(queue.synchronize(stream, std::chrono::seconds(60)));
  const compression::gpu::DecodeError e = compression::gpu::unpack_decode_error(error);
  const std::string why = e.fault == compression::gpu::DecodeFault::none ? "" : compression::decode_error_message(e);
  queue.free_pinned(error);
  queue.free_device(message);
  queue.free_device(dst);
  return {out, why};
}

TEST(DeviceCodec, ADecodeAddsTheCpuDecodersValuesOrItsFault) {
  CpuStreamQueue queue;
  const DeviceEncode encoded = encode_on_cpu(kSpecs[0]);
  const std::vector<float> start = gradient();
  for (bool overwrite : {false, true}) {
    std::vector<float> want = start;
    compression::decode_accumulate(encoded.message, {dcFloat32, want.data(), kCount, overwrite});
    const auto [got, why] = decode_on(queue, encoded.message, start, overwrite);
    EXPECT_EQ(why, "");
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 4 * kCount)) << "overwrite " << overwrite;
  }
  // A corrupt chunk: the CPU decoder's words; a wrong count: the target's fault. The stream goes on.
  std::vector<uint8_t> corrupt = encoded.message;
  corrupt[corrupt.size() - 3] ^= 0x10;
  std::string cpu_why;
  std::vector<float> scratch = start;
  try {
    compression::decode_accumulate(corrupt, {dcFloat32, scratch.data(), kCount});
  } catch (const Error& e) {
    cpu_why = e.what();
  }
  ASSERT_NE(cpu_why, "");
  EXPECT_EQ(decode_on(queue, corrupt, start, false).second, cpu_why);
  const std::vector<float> shorter(kCount - 1, 0.0f);
  EXPECT_NE(decode_on(queue, encoded.message, shorter, false).second.find("decoded into a buffer of"),
            std::string::npos);
}

// message_bytes_at: the stream reads the length when it reaches the decode (here after a gate the
// host opens once it wrote the length); message_bytes is the buffer's capacity, and a longer
// length is taken as the capacity.
TEST(DeviceCodec, ADecodeReadsItsLengthWhenTheStreamRunsIt) {
  CpuStreamQueue queue;
  const DeviceEncode encoded = encode_on_cpu(kSpecs[1]);
  const std::vector<float> start = gradient();
  const size_t capacity = encoded.message.size() + 100;
  auto* message = static_cast<uint8_t*>(queue.alloc_device(capacity));
  std::memcpy(message, encoded.message.data(), encoded.message.size());
  std::memset(message + encoded.message.size(), 0x5a, 100);
  auto* words = static_cast<uint64_t*>(queue.alloc_pinned(5 * sizeof(uint64_t)));  // gate, length, error
  auto* dst = static_cast<float*>(queue.alloc_device(4 * kCount));
  const auto decode_with_length = [&](uint64_t length) {
    std::memcpy(dst, start.data(), 4 * kCount);
    std::memset(words, 0, 5 * sizeof(uint64_t));
    const Stream stream{8};
    dcDeviceDecode_t d{dcFloat32, 0, message, capacity, dst, kCount, nullptr, words + 2, words + 1};
    Status status;
    std::vector<uint8_t> workspace(queue.decode_workspace_bytes(d, &status));
    d.workspace = workspace.data();
    EXPECT_TRUE(queue.enqueue_gate(stream, words, 1).ok());
    EXPECT_TRUE(queue.enqueue_decode(stream, d).ok());
    words[1] = length;  // after the enqueue, before the stream gets there
    queue.open_gate(words, 1);
    EXPECT_TRUE(queue.synchronize(stream, std::chrono::seconds(60)));
    const compression::gpu::DecodeError e = compression::gpu::unpack_decode_error(words + 2);
    return e.fault == compression::gpu::DecodeFault::none ? std::string() : compression::decode_error_message(e);
  };
  const auto cpu_error = [&](size_t length) {
    std::vector<float> scratch = start;
    try {
      compression::decode_accumulate(std::span<const uint8_t>(message, length), {dcFloat32, scratch.data(), kCount});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::vector<float> want = start;
  compression::decode_accumulate(encoded.message, {dcFloat32, want.data(), kCount});
  EXPECT_EQ(decode_with_length(encoded.message.size()), "");
  EXPECT_EQ(0, std::memcmp(dst, want.data(), 4 * kCount));
  EXPECT_EQ(decode_with_length(encoded.message.size() - 1), cpu_error(encoded.message.size() - 1));
  EXPECT_NE(cpu_error(encoded.message.size() - 1), "");
  EXPECT_EQ(decode_with_length(capacity + 5000), cpu_error(capacity));
  EXPECT_NE(cpu_error(capacity), "");
  queue.free_device(dst);
  queue.free_pinned(words);
  queue.free_device(message);
}

TEST(DeviceCodec, ARefusedDescriptorSaysWhyAndEnqueuesNothing) {
  CpuStreamQueue queue;
  std::vector<float> x(10, 1.0f);
  std::vector<uint8_t> message(1000);
  uint32_t result[3] = {7, 7, 7};
  dcDeviceEncode_t e{dcInt32, 0, 256, 12, 0, 1.0f, x.data(), nullptr, 10, 0, message.data(), nullptr, result};
  Status status = queue.enqueue_encode(Stream{1}, e);
  EXPECT_EQ(status.code, dcInvalidArgument);
  EXPECT_NE(status.message.find("float32, float16 or bfloat16"), std::string::npos) << status.message;
  e.datatype = dcFloat32;
  e.block = 5;
  status = queue.enqueue_encode(Stream{1}, e);
  EXPECT_NE(status.message.find("block of 5"), std::string::npos) << status.message;
  e.block = 256;
  e.chunk_log2 = 30;
  EXPECT_EQ(queue.encode_workspace_bytes(e, &status), 0u);
  EXPECT_NE(status.message.find("chunk of 2^30"), std::string::npos) << status.message;
  e.chunk_log2 = 12;
  e.selection = 3;
  status = queue.enqueue_encode(Stream{1}, e);
  EXPECT_NE(status.message.find("selection 3"), std::string::npos) << status.message;
  e.selection = DEEPCOMM_DEVICE_SELECT_TOPK_EXACT;
  e.kept = 11;
  status = queue.enqueue_encode(Stream{1}, e);
  EXPECT_NE(status.message.find("a top-k of 11 of 10 elements"), std::string::npos) << status.message;
  e.selection = DEEPCOMM_DEVICE_SELECT_DENSE;
  e.values = DEEPCOMM_DEVICE_VALUES_FLOAT32;
  status = queue.enqueue_encode(Stream{1}, e);
  EXPECT_NE(status.message.find("a dense encode sends q8 values"), std::string::npos) << status.message;
  dcDeviceDecode_t d{dcFloat32, 0, nullptr, 100, x.data(), 10, nullptr, nullptr};
  EXPECT_EQ(queue.enqueue_decode(Stream{1}, d).code, dcInvalidArgument);
  ASSERT_TRUE(queue.synchronize(Stream{1}, std::chrono::seconds(10)));
  EXPECT_EQ(result[0], 7u);  // nothing ran
}

// An element step on a stream (plugin ABI 6's enqueue_step, a compressed average's finalize): it
// runs when the stream reaches it, after what came before, with the host kernel's bits, through
// the CPU stream queue and the plugin's C ABI; a step the CUDA plugin would refuse is refused here
// too, naming why, and enqueues nothing.
template <class Queue, class Sync>
void finalize_on(Queue& queue, float* values, Sync&& synchronize) {
  const std::vector<float> sums = {3.0f, -7.5f, 1e-3f, 22.0f, 0.1f};
  std::vector<float> want = sums;
  finalize_avg(dcFloat32, want.data(), want.size(), 3);
  const Stream stream{9};
  ASSERT_TRUE(queue.enqueue_copy(stream, values, sums.data(), 4 * sums.size()).ok());
  dcDeviceStep_t step{};
  step.kind = dcDeviceStepFinalizeAvg;
  step.datatype = dcFloat32;
  step.divisor = 3;
  step.dst = values;
  step.count = sums.size();
  const Status enqueued = queue.enqueue_step(stream, step);
  ASSERT_TRUE(enqueued.ok()) << enqueued.message;
  std::vector<float> got(sums.size());
  ASSERT_TRUE(queue.enqueue_copy(stream, got.data(), values, 4 * got.size()).ok());
  synchronize(stream);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), 4 * got.size()), 0);
}

TEST(DeviceCodec, AnElementStepRunsWhenTheStreamReachesIt) {
  CpuStreamQueue cpu;
  auto* values = static_cast<float*>(cpu.alloc_device(64));
  finalize_on(cpu, values, [&](Stream s) { ASSERT_TRUE(cpu.synchronize(s, std::chrono::seconds(10))); });
  cpu.free_device(values);

  const DevicePlugin plugin = load_device_plugin(TEST_PLUGIN_GOOD);
  PluginStreamQueue queue(plugin);
  auto synchronize = reinterpret_cast<int (*)(uint64_t, int)>(dlsym(plugin.handle, "testPluginSynchronize"));
  ASSERT_NE(synchronize, nullptr);
  Status status;
  values = static_cast<float*>(queue.alloc_device(64, &status));
  ASSERT_TRUE(status.ok()) << status.message;
  finalize_on(queue, values, [&](Stream s) { ASSERT_EQ(synchronize(s.handle, 10000), 1); });
  (void)queue.free_device(values);
}

TEST(DeviceCodec, ARefusedElementStepSaysWhyAndEnqueuesNothing) {
  CpuStreamQueue queue;
  std::vector<float> x(4, 6.0f);
  dcDeviceStep_t step{};
  step.kind = dcDeviceStepFinalizeAvg;
  step.datatype = dcFloat32;
  step.dst = x.data();
  step.count = x.size();
  const auto refusal = [&] {
    const Status status = queue.enqueue_step(Stream{2}, step);
    EXPECT_EQ(status.code, dcInvalidArgument);
    return status.message;
  };
  step.divisor = 0;
  EXPECT_NE(refusal().find("divisor below 1"), std::string::npos);
  step.divisor = 2;
  step.kind = dcDeviceStepCopy;
  EXPECT_NE(refusal().find("not a reduce, pre-multiply or finalize"), std::string::npos);
  step.kind = dcDeviceStepReduce;
  step.src = step.src2 = x.data();
  step.op = dcAvg;
  EXPECT_NE(refusal().find("reduce op 4"), std::string::npos);
  step.op = dcSum;
  step.src2 = nullptr;
  EXPECT_NE(refusal().find("null pointer"), std::string::npos);
  step.kind = dcDeviceStepFinalizeAvg;
  step.datatype = 99;
  EXPECT_NE(refusal().find("unknown datatype 99"), std::string::npos);
  step.datatype = dcFloat32;
  step.dst = reinterpret_cast<uint8_t*>(x.data()) + 1;
  EXPECT_NE(refusal().find("not aligned"), std::string::npos);
  ASSERT_TRUE(queue.synchronize(Stream{2}, std::chrono::seconds(10)));
  EXPECT_EQ(x, std::vector<float>(4, 6.0f));  // nothing ran
}

}  // namespace
}  // namespace dc::device
