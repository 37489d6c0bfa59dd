// The real libdeepcomm-cuda.so through the plugin loader (device/plugin_loader.h) and the queue
// over its C ABI (device/plugin_queue.h). Everywhere: the loader accepts it (ABI version, table
// size, name). Without a GPU: making a queue fails with a clear code and message, naming the
// missing driver or device. With one: copy, reduce (every op), pre-multiply and finalize of an
// average on device memory, for every datatype, bit for bit against the CPU queue (NaN as NaN: a
// GPU returns its canonical NaN), on the queue's stream and on the caller's, and bad steps refused.
// The test uses the CUDA runtime directly (tests are not rooms) for device memory and to tell
// whether a GPU is there.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/cpu_queue.h"
#include "device/plugin_loader.h"
#include "device/plugin_queue.h"
#include "kernels/element_kernels.h"
#include "kernels/reduce.h"

namespace dc::device {
namespace {

// The plugin to load: DEEPCOMM_DEVICE_PLUGIN where the device check sets it (a bundle on another
// machine), else the one this build made.
std::string plugin_library() {
  const char* named = std::getenv("DEEPCOMM_DEVICE_PLUGIN");
  return named && *named ? named : CUDA_PLUGIN_LIBRARY;
}

// Why there is no usable GPU here, or "" when there is one.
std::string no_gpu_reason(cudaError_t* error) {
  int count = 0;
  *error = cudaGetDeviceCount(&count);
  if (*error != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(*error);
  if (count == 0) return "cudaGetDeviceCount: no device";
  return "";
}

TEST(CudaPlugin, TheLoaderAcceptsIt) {
  const DevicePlugin plugin = load_device_plugin(plugin_library());
  ASSERT_NE(plugin.api, nullptr);
  EXPECT_EQ(plugin.api->abi_version, uint32_t(DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION));
  EXPECT_EQ(plugin.api->struct_size, sizeof(dcDevicePlugin_t));
  EXPECT_TRUE(has_streams(*plugin.api));  // the stream bridge's functions, all of them
  EXPECT_STREQ(plugin.api->name, "cuda");
  EXPECT_EQ(plugin.api->flags & DEEPCOMM_DEVICE_PLUGIN_ENDS_ELEMENT_STEPS_AT_POST, 0u);  // steps end on the device
}

TEST(CudaPlugin, CreateFailsCleanlyWithoutAGpu) {
  cudaError_t error = cudaSuccess;
  const std::string why = no_gpu_reason(&error);
  if (why.empty()) GTEST_SKIP() << "a GPU is present: StepsOnDeviceMemoryMatchTheCpuQueue runs instead";
  const std::string expected = error == cudaErrorInsufficientDriver ? "no CUDA driver"
                               : error == cudaErrorNoDevice         ? "no CUDA device"
                                                                    : "";
  ASSERT_FALSE(expected.empty()) << "unexpected: " << why;
  const DevicePlugin plugin = load_device_plugin(plugin_library());

  // Through the C ABI: a code, no queue, the message in the caller's buffer.
  void* queue = nullptr;
  char message[256] = {};
  EXPECT_EQ(plugin.api->create(&queue, message, sizeof message), dcSystemError);
  EXPECT_EQ(queue, nullptr);
  EXPECT_NE(std::string(message).find(expected), std::string::npos) << message;

  // Through PluginQueue: a dc::Error naming the library and the reason.
  try {
    PluginQueue refused(plugin);
    FAIL() << "made a CUDA queue without a GPU (" << why << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcSystemError);
    const std::string what = e.what();
    EXPECT_NE(what.find(expected), std::string::npos) << what;
    EXPECT_NE(what.find(plugin_library()), std::string::npos) << what;
  }
}

// ---- With a GPU ----

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << #call

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceBuffer() { cudaFree(p); }
  uint8_t* at(size_t offset) const { return static_cast<uint8_t*>(p) + offset; }
};

struct Completions {
  std::vector<uint64_t> tags;
  std::vector<Status> statuses;
  static void record(void* self, uint64_t tag, const Status& s) {
    static_cast<Completions*>(self)->tags.push_back(tag);
    static_cast<Completions*>(self)->statuses.push_back(s);
  }
};

// Posts a step that must be accepted, then polls until it completed (10 s at most).
void run_step(PluginQueue& queue, const LocalStep& step, Stream stream) {
  Completions done;
  const Posted p = queue.post(step, stream, Completion{Completions::record, &done, 7});
  ASSERT_FALSE(p.done) << "the CUDA plugin ended a step inside post: " << p.status.message;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (done.tags.empty() && std::chrono::steady_clock::now() < deadline) queue.poll();
  ASSERT_EQ(done.tags.size(), 1u) << "no completion within 10 s";
  ASSERT_TRUE(done.statuses[0].ok()) << done.statuses[0].message;
}

template <class Fmt>
bool same_element(const uint8_t* x, const uint8_t* y) {
  using Bits = typename Fmt::Bits;
  Bits a, b;
  std::memcpy(&a, x, sizeof a), std::memcpy(&b, y, sizeof b);
  if (std::memcmp(&a, &b, sizeof a) == 0) return true;
  if constexpr (std::is_integral_v<typename Fmt::Compute>) return false;
  else return std::isnan(Fmt::widen1(a)) && std::isnan(Fmt::widen1(b));
}

void expect_same(dcDataType_t dt, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                 const std::string& what) {
  const size_t w = datatype_size(dt);
  kernels::with_format(dt, [&](auto fmt) {
    for (size_t i = 0; i * w < got.size(); ++i)
      if (!same_element<decltype(fmt)>(&got[i * w], &want[i * w])) {
        ADD_FAILURE() << what << ": element " << i << " differs from the CPU queue's";
        return;
      }
  });
}

TEST(CudaPlugin, StepsOnDeviceMemoryMatchTheCpuQueue) {
  cudaError_t error = cudaSuccess;
  const std::string why = no_gpu_reason(&error);
  if (!why.empty()) GTEST_SKIP() << "no GPU here (" << why << "): CreateFailsCleanlyWithoutAGpu ran instead";
  const DevicePlugin plugin = load_device_plugin(plugin_library());
  PluginQueue queue(plugin);
  EXPECT_EQ(queue.completion_fd(), -1);
  EXPECT_FALSE(queue.element_steps_end_at_post());
  CpuQueue cpu(1);
  cudaStream_t user_stream = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&user_stream, cudaStreamNonBlocking));
  std::mt19937_64 rng(0xc0da);

  // An odd count, at an element offset of 0 (aligned packs) and 1 (head and tail).
  const size_t n = 100003;
  for (int t = 0; t < dcNumTypes; ++t) {
    const auto dt = static_cast<dcDataType_t>(t);
    const size_t w = datatype_size(dt);
    const size_t bytes = n * w;
    for (size_t offset : {size_t(0), w}) {
      for (Stream stream : {Stream{0}, Stream{reinterpret_cast<uint64_t>(user_stream)}}) {
        const std::string where = std::string(datatype_name(dt)) + " offset " + std::to_string(offset) +
                                  (stream.handle ? " user stream" : " own stream");
        std::vector<uint8_t> a(bytes), b(bytes), got(bytes), want(bytes);
        for (auto& x : a) x = uint8_t(rng());
        for (auto& x : b) x = uint8_t(rng());
        DeviceBuffer da(bytes + 16), db(bytes + 16), dd(bytes + 16);
        ASSERT_CUDA(cudaMemcpy(da.at(offset), a.data(), bytes, cudaMemcpyHostToDevice));
        ASSERT_CUDA(cudaMemcpy(db.at(offset), b.data(), bytes, cudaMemcpyHostToDevice));

        run_step(queue, LocalStep::copy(dd.at(offset), da.at(offset), bytes), stream);
        ASSERT_CUDA(cudaMemcpy(got.data(), dd.at(offset), bytes, cudaMemcpyDeviceToHost));
        EXPECT_EQ(got, a) << where << ": copy";

        for (dcRedOp_t op : {dcSum, dcProd, dcMax, dcMin, dcAvg}) {
          run_step(queue, LocalStep::reduce(dt, op, dd.at(offset), da.at(offset), db.at(offset), n), stream);
          ASSERT_TRUE(cpu.post(LocalStep::reduce(dt, op, want.data(), a.data(), b.data(), n), {}, {}).status.ok());
          if (op == dcAvg) {
            run_step(queue, LocalStep::finalize_avg(dt, dd.at(offset), n, 3), stream);
            ASSERT_TRUE(cpu.post(LocalStep::finalize_avg(dt, want.data(), n, 3), {}, {}).status.ok());
          }
          ASSERT_CUDA(cudaMemcpy(got.data(), dd.at(offset), bytes, cudaMemcpyDeviceToHost));
          expect_same(dt, got, want, where + " " + redop_name(op));
        }

        uint8_t scalar[8] = {};
        std::memcpy(scalar, b.data(), w);  // any value of the type
        run_step(queue, LocalStep::premultiply(dt, dd.at(offset), da.at(offset), n, scalar), stream);
        ASSERT_TRUE(cpu.post(LocalStep::premultiply(dt, want.data(), a.data(), n, scalar), {}, {}).status.ok());
        ASSERT_CUDA(cudaMemcpy(got.data(), dd.at(offset), bytes, cudaMemcpyDeviceToHost));
        expect_same(dt, got, want, where + " premultiply");
      }
    }
  }

  // Steps on one stream complete in post order; an overlapping copy moves the bytes as memmove.
  DeviceBuffer buf(4096);
  std::vector<uint8_t> bytes(4096);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7);
  ASSERT_CUDA(cudaMemcpy(buf.p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  Completions order;
  const Stream user{reinterpret_cast<uint64_t>(user_stream)};
  ASSERT_FALSE(queue.post(LocalStep::copy(buf.at(1), buf.at(0), 4000), user, {Completions::record, &order, 1}).done);
  ASSERT_FALSE(queue.post(LocalStep::copy(buf.at(0), buf.at(3), 4000), user, {Completions::record, &order, 2}).done);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (order.tags.size() < 2 && std::chrono::steady_clock::now() < deadline) queue.poll();
  EXPECT_EQ(order.tags, (std::vector<uint64_t>{1, 2}));
  std::vector<uint8_t> want = bytes;
  std::memmove(want.data() + 1, want.data(), 4000);
  std::memmove(want.data(), want.data() + 3, 4000);
  std::vector<uint8_t> got(4096);
  ASSERT_CUDA(cudaMemcpy(got.data(), buf.p, got.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, want);

  // Bad steps end inside post with dcInvalidArgument: an unknown datatype, a pointer off its
  // element's alignment, a divisor of 0.
  float* f = reinterpret_cast<float*>(buf.at(0));
  Posted p = queue.post(LocalStep::reduce(dcNumTypes, dcSum, f, f, f, 4), {}, {});
  EXPECT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidArgument);
  p = queue.post(LocalStep::reduce(dcFloat32, dcSum, buf.at(1), f, f, 4), {}, {});
  EXPECT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidArgument);
  p = queue.post(LocalStep::finalize_avg(dcFloat32, f, 4, 0), {}, {});
  EXPECT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidArgument);
  ASSERT_CUDA(cudaStreamDestroy(user_stream));
}

}  // namespace
}  // namespace dc::device
