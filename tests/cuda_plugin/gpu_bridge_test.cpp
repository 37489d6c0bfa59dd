// The stream bridge on a real GPU, through libnccl.so.2 and libdeepcomm-cuda.so: the checks of
// nccl_device_bridge_test with cudaMalloc'd buffers and CUDA streams, 1 and 4 ranks sharing GPU 0
// (NVIDIA's NCCL refuses that; DeepComm serves it), and the figures the device check records: 8 B
// all-reduce latency and 64 MiB bus bandwidth on device buffers against the same calls on pinned
// host buffers. Without a GPU every test skips, saying why. The parent makes no CUDA call: a CUDA
// context does not survive fork, so a probe child asks for the device count.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/nccl_ranks.h"

namespace {

using Clock = std::chrono::steady_clock;
using dctest::complain;

// "" when a child process sees a CUDA device, else why not.
std::string no_gpu_reason() {
  const pid_t pid = fork();
  if (pid == 0) {
    int count = 0;
    _exit(cudaGetDeviceCount(&count) == cudaSuccess && count > 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "no GPU here (cudaGetDeviceCount in a child)";
}

// The plugin to load: DEEPCOMM_DEVICE_PLUGIN where the device check sets it (a bundle on another
// machine), else the one this build made.
std::string plugin_library() {
  const char* named = std::getenv("DEEPCOMM_DEVICE_PLUGIN");
  return named && *named ? named : CUDA_PLUGIN_LIBRARY;
}

#define CUDA_OR_COMPLAIN(call)                                                                    \
  do {                                                                                            \
    const cudaError_t e = (call);                                                                 \
    if (e != cudaSuccess) return complain(rank, std::string(#call) + ": " + cudaGetErrorName(e)); \
  } while (0)

std::string run_ranks(int nranks, const std::function<int(int rank, int n, ncclComm_t comm)>& body,
                      const std::vector<int>& killed = {}, std::vector<std::pair<std::string, std::string>> env = {}) {
  auto on_gpu_zero = [](int rank) {
    return cudaSetDevice(0) == cudaSuccess ? 0 : dctest::complain(rank, "cudaSetDevice(0)");
  };
  env.emplace_back("DEEPCOMM_DEVICE_PLUGIN", plugin_library());
  return dctest::run_nccl_ranks(nranks, env, body, killed, 240, on_gpu_zero);
}

// Every collective on cudaMalloc'd buffers gives the bytes of the same call on host memory.
int collectives_match_host(int rank, int n, ncclComm_t comm) {
  const size_t count = 1 << 20;  // 4 MiB of float32
  const size_t bytes = count * sizeof(float);
  std::vector<float> input(n * count);
  for (size_t i = 0; i < input.size(); ++i) input[i] = 0.5f * static_cast<float>(rank + 1) + 1e-3f * float(i % 4093);
  void *in = nullptr, *out = nullptr;
  CUDA_OR_COMPLAIN(cudaMalloc(&in, n * bytes));
  CUDA_OR_COMPLAIN(cudaMalloc(&out, n * bytes));
  cudaStream_t stream = nullptr;
  CUDA_OR_COMPLAIN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_OR_COMPLAIN(cudaMemcpy(in, input.data(), n * bytes, cudaMemcpyHostToDevice));
  struct Call {
    const char* name;
    size_t out_bytes;
    std::function<ncclResult_t(const void*, void*, cudaStream_t)> run;
  };
  const std::vector<Call> calls = {
      {"all-reduce", bytes,
       [&](const void* a, void* b, cudaStream_t s) { return ncclAllReduce(a, b, count, ncclFloat, ncclSum, comm, s); }},
      {"all-gather", n * bytes,
       [&](const void* a, void* b, cudaStream_t s) { return ncclAllGather(a, b, count, ncclFloat, comm, s); }},
      {"reduce-scatter", bytes,
       [&](const void* a, void* b, cudaStream_t s) {
         return ncclReduceScatter(a, b, count, ncclFloat, ncclMax, comm, s);
       }},
      {"broadcast", bytes,
       [&](const void* a, void* b, cudaStream_t s) { return ncclBroadcast(a, b, count, ncclFloat, 0, comm, s); }},
      {"all-to-all", n * bytes,
       [&](const void* a, void* b, cudaStream_t s) { return ncclAlltoAll(a, b, count / n, ncclFloat, comm, s); }},
  };
  int failures = 0;
  for (const Call& c : calls) {
    if (c.run(in, out, stream) != ncclSuccess)
      return complain(rank, std::string(c.name) + ": " + ncclGetLastError(comm));
    CUDA_OR_COMPLAIN(cudaStreamSynchronize(stream));
    std::vector<uint8_t> device_result(c.out_bytes), host_result(c.out_bytes);
    CUDA_OR_COMPLAIN(cudaMemcpy(device_result.data(), out, c.out_bytes, cudaMemcpyDeviceToHost));
    if (c.run(input.data(), host_result.data(), nullptr) != ncclSuccess)
      return complain(rank, std::string(c.name) + " on host memory: " + ncclGetLastError(comm));
    if (device_result != host_result) failures += complain(rank, std::string(c.name) + ": differs from host memory");
  }
  ncclResult_t async = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclSuccess)
    failures += complain(rank, "asynchronous error after the calls");
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(stream);
  return failures;
}

TEST(GpuBridge, OneRankCollectivesMatchHostMemory) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_ranks(1, collectives_match_host), "");
}

TEST(GpuBridge, FourRanksOnOneGpuCollectivesMatchHostMemory) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_ranks(4, collectives_match_host), "");
}

TEST(GpuBridge, AKilledPeerReleasesTheStream) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  const int victim = 2;
  EXPECT_EQ(
      run_ranks(3,
                [](int rank, int, ncclComm_t comm) {
                  if (rank == victim) raise(SIGKILL);
                  void* buffer = nullptr;
                  CUDA_OR_COMPLAIN(cudaMalloc(&buffer, 1 << 20));
                  cudaStream_t stream = nullptr;
                  CUDA_OR_COMPLAIN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
                  const auto start = Clock::now();
                  if (ncclAllReduce(buffer, buffer, (1 << 20) / 4, ncclFloat, ncclSum, comm, stream) != ncclSuccess)
                    return complain(rank, ncclGetLastError(comm));
                  CUDA_OR_COMPLAIN(cudaStreamSynchronize(stream));  // the gate opened
                  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
                  ncclResult_t async = ncclSuccess;
                  ncclCommGetAsyncError(comm, &async);
                  std::printf("rank %d: stream released after %.1f ms, async error %d\n", rank, ms, int(async));
                  if (async == ncclSuccess) return complain(rank, "no asynchronous error");
                  return ms <= 2000 ? 0 : complain(rank, "released after " + std::to_string(ms) + " ms");
                },
                {victim}),
      "");
}

// CUDA graphs, global and relaxed capture: an in-place all-reduce captured once and replayed five
// times: each replay multiplies what the n ranks hold by n. Nothing runs at capture.
int captured_all_reduce_replays(int rank, int n, ncclComm_t comm, cudaStreamCaptureMode mode) {
  const size_t count = 1 << 16;
  std::vector<float> ones(count, 1.0f), result(count);
  float* buffer = nullptr;
  CUDA_OR_COMPLAIN(cudaMalloc(&buffer, count * sizeof(float)));
  CUDA_OR_COMPLAIN(cudaMemcpy(buffer, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t stream = nullptr;
  CUDA_OR_COMPLAIN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_OR_COMPLAIN(cudaStreamBeginCapture(stream, mode));
  const ncclResult_t captured = ncclAllReduce(buffer, buffer, count, ncclFloat, ncclSum, comm, stream);
  cudaGraph_t graph = nullptr;
  CUDA_OR_COMPLAIN(cudaStreamEndCapture(stream, &graph));
  if (captured != ncclSuccess) return complain(rank, std::string("captured all-reduce: ") + ncclGetLastError(comm));
  cudaGraphExec_t exec = nullptr;
  CUDA_OR_COMPLAIN(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OR_COMPLAIN(cudaMemcpy(result.data(), buffer, count * sizeof(float), cudaMemcpyDeviceToHost));
  if (result[0] != 1.0f) return complain(rank, "the capture ran the all-reduce");
  const int replays = 5;
  for (int r = 0; r < replays; ++r) CUDA_OR_COMPLAIN(cudaGraphLaunch(exec, stream));
  CUDA_OR_COMPLAIN(cudaStreamSynchronize(stream));
  CUDA_OR_COMPLAIN(cudaMemcpy(result.data(), buffer, count * sizeof(float), cudaMemcpyDeviceToHost));
  float want = 1.0f;
  for (int r = 0; r < replays; ++r) want *= static_cast<float>(n);
  int failures = 0;
  if (result[0] != want || result[count - 1] != want)
    failures += complain(rank, "after " + std::to_string(replays) + " replays " + std::to_string(result[0]) + ", not " +
                                   std::to_string(want));
  ncclResult_t async = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclSuccess)
    failures += complain(rank, "asynchronous error after the replays");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(buffer);
  return failures;
}

TEST(GpuBridge, FourRanksReplayACapturedAllReduceGlobalMode) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_ranks(4,
                      [](int rank, int n, ncclComm_t comm) {
                        return captured_all_reduce_replays(rank, n, comm, cudaStreamCaptureModeGlobal);
                      }),
            "");
}

TEST(GpuBridge, TwoRanksReplayACapturedAllReduceRelaxedMode) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(run_ranks(2,
                      [](int rank, int n, ncclComm_t comm) {
                        return captured_all_reduce_replays(rank, n, comm, cudaStreamCaptureModeRelaxed);
                      }),
            "");
}

// Median of iters timed calls (after warm-up), device buffers or pinned host buffers.
constexpr int kWarmupCalls = 5;  // median_us's untimed calls before its timed ones

double median_us(const std::function<void()>& call, cudaStream_t stream, int iters) {
  std::vector<double> us;
  for (int i = 0; i < iters + kWarmupCalls; ++i) {
    const auto start = Clock::now();
    call();
    if (stream) cudaStreamSynchronize(stream);
    if (i >= kWarmupCalls) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// Figures, not assertions: printed for tools/device-check to record.
TEST(GpuBridge, FourRanksLatencyAndBandwidthAgainstPinnedHostBuffers) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(
      run_ranks(4,
                [](int rank, int n, ncclComm_t comm) {
                  for (size_t bytes : {size_t{8}, size_t{64} << 20}) {
                    const size_t count = bytes / sizeof(float);
                    void *device = nullptr, *host = nullptr;
                    CUDA_OR_COMPLAIN(cudaMalloc(&device, bytes));
                    CUDA_OR_COMPLAIN(cudaMallocHost(&host, bytes));
                    cudaStream_t stream = nullptr;
                    CUDA_OR_COMPLAIN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
                    const int iters = bytes <= 8 ? 200 : 10;
                    const double on_device = median_us(
                        [&] { ncclAllReduce(device, device, count, ncclFloat, ncclSum, comm, stream); }, stream, iters);
                    const double on_host = median_us(
                        [&] { ncclAllReduce(host, host, count, ncclFloat, ncclSum, comm, nullptr); }, nullptr, iters);
                    const double busbw = [&](double us) {
                      return 2.0 * (n - 1) / n * double(bytes) / us / 1e3;
                    }(on_device);
                    if (rank == 0)
                      std::printf(
                          "all-reduce %zu B, %d ranks on one GPU: device %.1f us (busbw %.2f GB/s), pinned host "
                          "%.1f us (busbw %.2f GB/s)\n",
                          bytes, n, on_device, busbw, on_host, 2.0 * (n - 1) / n * double(bytes) / on_host / 1e3);
                    cudaFree(device);
                    cudaFreeHost(host);
                    cudaStreamDestroy(stream);
                  }
                  return 0;
                }),
      "");
}

// Bytes the loopback interface has sent: over TCP on one machine, every rank's traffic (headers
// included); 0 where the kernel does not say.
uint64_t loopback_tx_bytes() {
  unsigned long long bytes = 0;
  if (FILE* f = std::fopen("/sys/class/net/lo/statistics/tx_bytes", "r")) {
    if (std::fscanf(f, "%llu", &bytes) != 1) bytes = 0;
    std::fclose(f);
  }
  return bytes;
}

// DEEPCOMM_COMPRESS on device buffers, coded by the GPU's kernels (issue 31's end-to-end figure):
// 4 ranks on one GPU over TCP, a 100 MB float32 gradient, topk:0.001,q8,huffman,ef. Its bits must be
// the host sparsegather plan's on the same inputs (error feedback included, three rounds); then
// the median time of the compressed device call against a dense device all-reduce of the same
// bytes (int32, which DEEPCOMM_COMPRESS leaves dense), and the bytes each puts on the wire, are
// printed for tools/device-check.
TEST(GpuBridge, FourRanksCompressedAllReduceCodedOnTheGpu) {
  if (const std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << why;
  const auto body = [](int rank, int n, ncclComm_t comm) {
    const size_t count = 25 << 20;  // 100 MiB of float32
    const size_t bytes = count * sizeof(float);
    std::vector<float> input(count), want(count), got(count);
    for (size_t i = 0; i < count; ++i)
      input[i] = std::sin(0.001f * float(i) + float(rank)) * (1.0f + float(i % 97)) * 1e-3f;
    void *in = nullptr, *out = nullptr;
    CUDA_OR_COMPLAIN(cudaMalloc(&in, bytes));
    CUDA_OR_COMPLAIN(cudaMalloc(&out, bytes));
    cudaStream_t stream = nullptr;
    CUDA_OR_COMPLAIN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_OR_COMPLAIN(cudaMemcpy(in, input.data(), bytes, cudaMemcpyHostToDevice));
    int failures = 0;
    for (int round = 0; round < 3; ++round) {
      if (ncclAllReduce(input.data(), want.data(), count, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess ||
          ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, stream) != ncclSuccess)
        return complain(rank, ncclGetLastError(comm));
      CUDA_OR_COMPLAIN(cudaStreamSynchronize(stream));
      CUDA_OR_COMPLAIN(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
      if (std::memcmp(got.data(), want.data(), bytes) != 0)
        failures +=
            complain(rank, "round " + std::to_string(round) + ": the GPU-coded all-reduce differs from the host's");
    }
    // The wire's bytes between two fences: every rank's calls before the first have ended, and none
    // after the second has begun, when rank 0 reads the counter.
    const auto wire_bytes = [&] {
      int one = 1;
      ncclAllReduce(&one, &one, 1, ncclInt32, ncclSum, comm, nullptr);
      const uint64_t bytes = loopback_tx_bytes();
      ncclAllReduce(&one, &one, 1, ncclInt32, ncclSum, comm, nullptr);
      return bytes;
    };
    const int iters = 5;
    const uint64_t before = wire_bytes();
    const double compressed =
        median_us([&] { ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, stream); }, stream, iters);
    const uint64_t between = wire_bytes();
    const double dense =
        median_us([&] { ncclAllReduce(in, out, count, ncclInt32, ncclSum, comm, stream); }, stream, iters);
    const uint64_t after = wire_bytes();
    const double calls = iters + kWarmupCalls;
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async != ncclSuccess)
      failures += complain(rank, "asynchronous error after the calls");
    if (rank == 0)
      std::printf(
          "compressed all-reduce %zu B, %d ranks on one GPU over TCP, topk:0.001,q8,huffman,ef coded on the GPU: "
          "%.1f ms, %.2f MB a call on the wire; dense device all-reduce of the same bytes: %.1f ms, %.2f MB a call "
          "(all ranks' loopback bytes)\n",
          bytes, n, compressed / 1e3, double(between - before) / calls / 1e6, dense / 1e3,
          double(after - between) / calls / 1e6);
    cudaFree(in);
    cudaFree(out);
    cudaStreamDestroy(stream);
    return failures;
  };
  EXPECT_EQ(run_ranks(4, body, {},
                      {{"DEEPCOMM_COMPRESS", "topk:0.001,q8,huffman,ef"},
                       {"DEEPCOMM_COMPRESS_MIN_BYTES", "0"},
                       {"DEEPCOMM_ALGO", "sparsegather"},
                       {"DEEPCOMM_TRANSPORT", "tcp"}}),
            "");
}

}  // namespace
