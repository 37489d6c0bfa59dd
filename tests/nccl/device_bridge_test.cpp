// Device buffers through the NCCL ABI, served by the stream bridge, on the test device plugin
// (tests/device/test_plugin.cpp: the CPU stream queue behind the plugin ABI, named by
// DEEPCOMM_DEVICE_PLUGIN). Ranks are processes over shared memory. What a CUDA program sees:
// ncclMemAlloc gives device memory; a call returns before its stream ran it; completion is
// observed by querying the stream together with ncclCommGetAsyncError, as nccl-tests does; every
// collective and send/receive gives the bytes of the same call on host memory; a killed peer
// releases the stream and shows as an asynchronous error; a group of device calls runs together
// and joins its streams; host and device buffers mixed in a call, or in a group of one
// communicator, are refused with ncclInvalidUsage; a call captured into a graph runs on each
// replay and not at capture; DEEPCOMM_COMPRESS on device buffers is coded by the device's codec and
// gives the bits of the host's sparse all-gather plan (dense q8 and top-k, shm and TCP), and a
// corrupt message from a peer is an asynchronous ncclRemoteError that leaves the streams going.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/device_compression_rounds.h"
#include "tests/support/emulated_device.h"
#include "tests/support/nccl_ranks.h"

namespace {

using Clock = std::chrono::steady_clock;
using dctest::complain;

using dctest::Emulated;
using dctest::wait_for_stream;

std::string run_ranks(int nranks, const std::function<int(int rank, int n, ncclComm_t comm)>& body,
                      const std::vector<int>& killed = {}) {
  return dctest::run_nccl_ranks(nranks, {{"DEEPCOMM_DEVICE_PLUGIN", TEST_STREAM_PLUGIN}}, body, killed);
}

// One call on device memory and on host memory.
struct Call {
  std::string name;
  size_t in_bytes, out_bytes;
  bool defined;  // this rank's output is defined (rooted calls: the root's)
  std::function<ncclResult_t(const void* in, void* out, cudaStream_t stream)> run;
};

std::vector<Call> calls_of(int rank, int n, ncclComm_t comm) {
  const size_t count = 4099;  // odd, and more than the flat board's small messages
  const size_t bytes = count * sizeof(float);
  const int root = 1;
  std::vector<Call> calls = {
      {"all-reduce", bytes, bytes, true,
       [=](const void* in, void* out, cudaStream_t s) {
         return ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s);
       }},
      {"broadcast", bytes, bytes, true,
       [=](const void* in, void* out, cudaStream_t s) {
         return ncclBroadcast(in, out, count, ncclFloat, root, comm, s);
       }},
      {"reduce", bytes, bytes, rank == root,
       [=](const void* in, void* out, cudaStream_t s) {
         return ncclReduce(in, out, count, ncclFloat, ncclMax, root, comm, s);
       }},
      {"all-gather", bytes, n * bytes, true,
       [=](const void* in, void* out, cudaStream_t s) { return ncclAllGather(in, out, count, ncclFloat, comm, s); }},
      {"reduce-scatter", n * bytes, bytes, true,
       [=](const void* in, void* out, cudaStream_t s) {
         return ncclReduceScatter(in, out, count, ncclFloat, ncclProd, comm, s);
       }},
      {"all-to-all", n * bytes, n * bytes, true,
       [=](const void* in, void* out, cudaStream_t s) { return ncclAlltoAll(in, out, count, ncclFloat, comm, s); }},
      {"gather", bytes, n * bytes, rank == root,
       [=](const void* in, void* out, cudaStream_t s) { return ncclGather(in, out, count, ncclFloat, root, comm, s); }},
      {"scatter", n * bytes, bytes, true,
       [=](const void* in, void* out, cudaStream_t s) {
         return ncclScatter(in, out, count, ncclFloat, root, comm, s);
       }},
  };
  // Blocking sends and receives around a ring: even ranks send first, odd ranks receive first.
  const int next = (rank + 1) % n, previous = (rank + n - 1) % n;
  Call send{"send", bytes, 0, false,
            [=](const void* in, void*, cudaStream_t s) { return ncclSend(in, count, ncclFloat, next, comm, s); }};
  Call recv{"receive", 0, bytes, true,
            [=](const void*, void* out, cudaStream_t s) { return ncclRecv(out, count, ncclFloat, previous, comm, s); }};
  calls.push_back(rank % 2 == 0 ? send : recv);
  calls.push_back(rank % 2 == 0 ? recv : send);
  return calls;
}

TEST(NcclDeviceBridge, DeviceCallsFollowTheirStreamAndGiveTheBytesOfHostMemory) {
  EXPECT_EQ(
      run_ranks(
          4,
          [](int rank, int n, ncclComm_t comm) {
            Emulated device;
            if (!device.load(TEST_STREAM_PLUGIN)) return complain(rank, std::string("test plugin: ") + dlerror());
            const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x51});
            const std::vector<Call> calls = calls_of(rank, n, comm);
            std::vector<void*> in(calls.size()), out(calls.size());
            std::vector<std::vector<float>> inputs;
            for (size_t c = 0; c < calls.size(); ++c) {
              if (ncclMemAlloc(&in[c], calls[c].in_bytes) != ncclSuccess ||
                  ncclMemAlloc(&out[c], calls[c].out_bytes) != ncclSuccess)
                return complain(rank, std::string("ncclMemAlloc: ") + ncclGetLastError(comm));
              inputs.emplace_back(calls[c].in_bytes / sizeof(float));
              for (size_t i = 0; i < inputs[c].size(); ++i)
                inputs[c][i] = 0.5f * static_cast<float>(rank + 1) + 1e-3f * static_cast<float>((i * 7 + c) % 997);
              // cudaMemcpy, in the emulation (a send has no output, a receive no input: no buffer)
              if (calls[c].in_bytes > 0) std::memcpy(in[c], inputs[c].data(), calls[c].in_bytes);
              if (calls[c].out_bytes > 0) std::memset(out[c], 0xff, calls[c].out_bytes);
            }
            // The stream is busy with earlier work: every call must return before it ran.
            device.busy(reinterpret_cast<uint64_t>(stream), 200);
            const auto start = Clock::now();
            for (size_t c = 0; c < calls.size(); ++c)
              if (calls[c].run(in[c], out[c], stream) != ncclSuccess)
                return complain(rank, calls[c].name + ": " + ncclGetLastError(comm));
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            if (ms > 150) return complain(rank, "the calls waited for their work: " + std::to_string(ms) + " ms");
            for (size_t c = 0; c < calls.size(); ++c)
              for (size_t b = 0; b < calls[c].out_bytes; ++b)
                if (static_cast<uint8_t*>(out[c])[b] != 0xff)
                  return complain(rank, calls[c].name + " wrote its output before its stream got there");
            if (const ncclResult_t r = wait_for_stream(device, stream, comm, 30000); r != ncclSuccess)
              return complain(rank, std::string("the stream: ") + ncclGetErrorString(r) + " " + ncclGetLastError(comm));
            int failures = 0;
            for (size_t c = 0; c < calls.size(); ++c) {
              std::vector<uint8_t> host_out(calls[c].out_bytes, 0xff);
              // Host memory: the stream argument is ignored, the call is complete on return.
              if (calls[c].run(inputs[c].data(), host_out.data(), nullptr) != ncclSuccess)
                return complain(rank, calls[c].name + " on host memory: " + ncclGetLastError(comm));
              if (calls[c].defined && std::memcmp(host_out.data(), out[c], calls[c].out_bytes) != 0)
                failures += complain(rank, calls[c].name + ": device memory got other bytes than host memory");
            }
            // Registering device memory works: the bridge stages it.
            void* handle = nullptr;
            if (ncclCommRegister(comm, in[0], calls[0].in_bytes, &handle) != ncclSuccess || handle == nullptr ||
                ncclCommDeregister(comm, handle) != ncclSuccess)
              failures += complain(rank, std::string("registering device memory: ") + ncclGetLastError(comm));
            if (ncclCommDeregister(comm, handle) != ncclInvalidArgument)
              failures += complain(rank, "a handle deregistered twice was accepted");
            for (size_t c = 0; c < calls.size(); ++c)
              if (ncclMemFree(in[c]) != ncclSuccess || ncclMemFree(out[c]) != ncclSuccess)
                failures += complain(rank, std::string("ncclMemFree: ") + ncclGetLastError(comm));
            return failures;
          }),
      "");
}

// A group of device calls on two streams: every rank sends before it receives (which only a group
// allows), and each stream waits for the whole group.
TEST(NcclDeviceBridge, AGroupRunsItsDeviceCallsTogetherOnSeveralStreams) {
  EXPECT_EQ(
      run_ranks(
          4,
          [](int rank, int n, ncclComm_t comm) {
            Emulated device;
            if (!device.load(TEST_STREAM_PLUGIN)) return complain(rank, std::string("test plugin: ") + dlerror());
            const size_t count = 1 << 15;
            const size_t bytes = count * sizeof(float);
            const auto sends = reinterpret_cast<cudaStream_t>(uintptr_t{0x61});
            const auto receives = reinterpret_cast<cudaStream_t>(uintptr_t{0x62});
            void *send = nullptr, *recv = nullptr, *in = nullptr, *sum = nullptr;
            for (void** p : {&send, &recv, &in, &sum})
              if (ncclMemAlloc(p, bytes) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
            std::vector<float> mine(count), summand(count);
            for (size_t i = 0; i < count; ++i) {
              mine[i] = static_cast<float>(rank * 100000 + i);
              summand[i] = 0.125f * static_cast<float>(rank + 1) + static_cast<float>(i % 31);
            }
            std::memcpy(send, mine.data(), bytes);
            std::memcpy(in, summand.data(), bytes);
            device.busy(reinterpret_cast<uint64_t>(sends), 100);  // one stream gets there late
            const int next = (rank + 1) % n, previous = (rank + n - 1) % n;
            if (ncclGroupStart() != ncclSuccess || ncclSend(send, count, ncclFloat, next, comm, sends) != ncclSuccess ||
                ncclRecv(recv, count, ncclFloat, previous, comm, receives) != ncclSuccess ||
                ncclAllReduce(in, sum, count, ncclFloat, ncclSum, comm, receives) != ncclSuccess ||
                ncclGroupEnd() != ncclSuccess)
              return complain(rank, std::string("group: ") + ncclGetLastError(comm));
            // The receiving stream is free, but its calls wait for the group's other stream.
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (device.idle(reinterpret_cast<uint64_t>(receives)))
              return complain(rank, "a stream of the group went on before the group's other stream got there");
            for (cudaStream_t s : {sends, receives})
              if (wait_for_stream(device, s, comm, 30000) != ncclSuccess)
                return complain(rank, std::string("stream: ") + ncclGetLastError(comm));
            std::vector<float> from_previous(count), want_sum(count);
            for (size_t i = 0; i < count; ++i) from_previous[i] = static_cast<float>(previous * 100000 + i);
            if (ncclAllReduce(summand.data(), want_sum.data(), count, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess)
              return complain(rank, ncclGetLastError(comm));
            int failures = 0;
            if (std::memcmp(recv, from_previous.data(), bytes) != 0)
              failures += complain(rank, "received other data than the previous rank sent");
            if (std::memcmp(sum, want_sum.data(), bytes) != 0)
              failures += complain(rank, "the group's all-reduce differs from host memory");
            for (void* p : {send, recv, in, sum}) ncclMemFree(p);
            return failures;
          }),
      "");
}

// The bridge keeps the pinned blocks of retired calls for later ones: ncclCommMemStats counts them
// as releasable, suspending frees them, and after resuming device calls give the same results.
TEST(NcclDeviceBridge, SuspendingFreesTheBridgesCachedPinnedBlocks) {
  EXPECT_EQ(
      run_ranks(2,
                [](int rank, int, ncclComm_t comm) {
                  Emulated device;
                  if (!device.load(TEST_STREAM_PLUGIN)) return complain(rank, std::string("test plugin: ") + dlerror());
                  const size_t count = 1 << 18;
                  const size_t bytes = count * sizeof(float);
                  const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x71});
                  void *in = nullptr, *out = nullptr;
                  for (void** p : {&in, &out})
                    if (ncclMemAlloc(p, bytes) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
                  std::vector<float> mine(count), want(count);
                  for (size_t i = 0; i < count; ++i)
                    mine[i] = 0.5f * static_cast<float>(rank + 1) + static_cast<float>(i % 97);
                  std::memcpy(in, mine.data(), bytes);
                  if (ncclAllReduce(mine.data(), want.data(), count, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess)
                    return complain(rank, ncclGetLastError(comm));
                  const auto device_all_reduce = [&] {
                    std::memset(out, 0, bytes);
                    return ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, stream) == ncclSuccess &&
                           wait_for_stream(device, stream, comm, 30000) == ncclSuccess &&
                           std::memcmp(out, want.data(), bytes) == 0;
                  };
                  const auto stat = [comm](ncclCommMemStat_t which) {
                    uint64_t value = 0;
                    ncclCommMemStats(comm, which, &value);
                    return value;
                  };
                  const uint64_t host_only = stat(ncclStatGpuMemSuspend);
                  if (!device_all_reduce())
                    return complain(rank, std::string("device all-reduce: ") + ncclGetLastError(comm));
                  // The operation's block (both slots) is back in the pool once its stream retired it.
                  const auto deadline = Clock::now() + std::chrono::seconds(5);
                  while (stat(ncclStatGpuMemSuspend) < host_only + 2 * bytes && Clock::now() < deadline)
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                  const uint64_t releasable = stat(ncclStatGpuMemSuspend), total = stat(ncclStatGpuMemTotal);
                  if (releasable < host_only + 2 * bytes)
                    return complain(rank,
                                    "releasable " + std::to_string(releasable) + " bytes: the cached block is missing");
                  if (ncclCommSuspend(comm, NCCL_SUSPEND_MEM) != ncclSuccess)
                    return complain(rank, ncclGetLastError(comm));
                  int failures = 0;
                  if (stat(ncclStatGpuMemSuspend) != 0 || stat(ncclStatGpuMemTotal) > total - releasable)
                    failures += complain(rank, "suspending left " + std::to_string(stat(ncclStatGpuMemTotal)) + " of " +
                                                   std::to_string(total) + " bytes");
                  if (ncclCommResume(comm) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
                  if (!device_all_reduce()) failures += complain(rank, "the device all-reduce after resuming differs");
                  for (void* p : {in, out}) ncclMemFree(p);
                  return failures;
                }),
      "");
}

TEST(NcclDeviceBridge, MixedBuffersAreRefusedAndACapturedCallReplays) {
  EXPECT_EQ(
      run_ranks(2,
                [](int rank, int, ncclComm_t comm) {
                  void* device_buffer = nullptr;
                  if (ncclMemAlloc(&device_buffer, 64) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
                  std::vector<float> host(16, 1.0f);
                  int failures = 0;
                  auto expect_refused = [&](ncclResult_t r, const char* words, const char* what) {
                    const std::string message = ncclGetLastError(comm);
                    if (r != ncclInvalidUsage || message.find(words) == std::string::npos)
                      failures +=
                          complain(rank, std::string(what) + ": " + ncclGetErrorString(r) + " '" + message + "'");
                  };
                  expect_refused(ncclAllReduce(device_buffer, host.data(), 16, ncclFloat, ncclSum, comm, nullptr),
                                 "mixes host and device", "device input, host output");
                  // One group, one communicator, host and device calls: refused whichever comes first.
                  if (ncclGroupStart() != ncclSuccess) return complain(rank, "group start");
                  if (ncclAllReduce(device_buffer, device_buffer, 16, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess)
                    failures += complain(rank, std::string("device call in a group: ") + ncclGetLastError(comm));
                  expect_refused(ncclAllReduce(host.data(), host.data(), 16, ncclFloat, ncclSum, comm, nullptr),
                                 "host-memory and device-memory calls", "a host call after a device call");
                  if (ncclGroupEnd() != ncclSuccess) failures += complain(rank, "group end");
                  if (ncclGroupStart() != ncclSuccess) return complain(rank, "group start");
                  if (ncclAllReduce(host.data(), host.data(), 16, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess)
                    failures += complain(rank, std::string("host call in a group: ") + ncclGetLastError(comm));
                  expect_refused(ncclAllReduce(device_buffer, device_buffer, 16, ncclFloat, ncclSum, comm, nullptr),
                                 "host-memory and device-memory calls", "a device call after a host call");
                  if (ncclGroupEnd() != ncclSuccess) failures += complain(rank, "group end");
                  if (host[0] != 2.0f) failures += complain(rank, "the grouped host all-reduce");
                  // A call captured into a graph (cudaStreamBeginCapture ... EndCapture): nothing
                  // runs at capture, and each replay runs the in-place all-reduce anew (2 ranks:
                  // the values double).
                  Emulated device;
                  if (!device.load(TEST_STREAM_PLUGIN)) return complain(rank, std::string("test plugin: ") + dlerror());
                  const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x91});
                  const auto handle = reinterpret_cast<uint64_t>(stream);
                  // The grouped device all-reduce above runs on the default stream: let it end
                  // before writing the buffer (the emulation's device memory is host memory).
                  if (!device.synchronize(0, 30000)) return complain(rank, "the default stream did not drain");
                  auto* values = static_cast<float*>(device_buffer);
                  std::fill(values, values + 16, 1.0f);
                  device.begin_capture(handle);
                  const ncclResult_t captured =
                      ncclAllReduce(device_buffer, device_buffer, 16, ncclFloat, ncclSum, comm, stream);
                  const int graph = device.end_capture(handle);
                  if (captured != ncclSuccess)
                    return complain(rank, std::string("captured all-reduce: ") + ncclGetLastError(comm));
                  if (!device.idle(handle) || values[0] != 1.0f) failures += complain(rank, "the capture ran work");
                  for (int replay = 0; replay < 3; ++replay)
                    if (!device.launch(graph, handle)) failures += complain(rank, "launch failed");
                  if (!device.synchronize(handle, 30000)) return complain(rank, "the replays did not drain");
                  if (values[0] != 8.0f || values[15] != 8.0f)
                    failures += complain(rank, "after 3 replays: " + std::to_string(values[0]) + ", not 8");
                  device.destroy_graph(graph);
                  ncclMemFree(device_buffer);
                  return failures;
                }),
      "");
}

// DEEPCOMM_COMPRESS on device buffers: the device's codec encodes each rank's message into the
// operation's pinned block and decodes every rank's message into the output, as the host's
// sparse all-gather plan does on host buffers; with that plan chosen for the host calls, the bits
// are the same, round after round (the later rounds' bits depend on the residuals, which live in
// device memory per user buffer: two buffers all-reduced in turn must not share one). Dense q8 and
// a sampled top-k, over shared memory and TCP, 3 ranks; each device call is one encode of the test
// plugin's codec. (Stochastic rounding is left out: its noise is keyed by the call, which differs
// between the host and the device call of a round.) `env` adds settings (the residuals' cap);
// DEEPCOMM_COMPRESS_RESET is set from the first call and changed in round reset_round (-1: unset).
// op: ncclSum, or ncclAvg (the device divides the decoded sum on the stream, as the host plan does).
void device_compression_matches_host(const char* spec, const char* transport,
                                     std::vector<std::pair<std::string, std::string>> env = {}, int reset_round = -1,
                                     ncclRedOp_t op = ncclSum) {
  const auto body = [reset_round, op](int rank, int n, ncclComm_t comm) {
    return dctest::device_compression_rounds(rank, n, comm, TEST_STREAM_PLUGIN, op, reset_round);
  };
  env.insert(env.end(), {{"DEEPCOMM_DEVICE_PLUGIN", TEST_STREAM_PLUGIN},
                         {"DEEPCOMM_COMPRESS", spec},
                         {"DEEPCOMM_COMPRESS_MIN_BYTES", "0"},
                         {"DEEPCOMM_ALGO", "sparsegather"},
                         {"DEEPCOMM_TRANSPORT", transport}});
  EXPECT_EQ(dctest::run_nccl_ranks(3, env, body), "") << spec << " over " << transport;
}

TEST(NcclDeviceBridge, CompressionCodedOnTheDeviceGivesTheHostPlansBits) {
  for (const char* transport : {"shm", "tcp"})
    for (const char* spec : {"q8,ef", "topk:0.01:sampled,q8,huffman,ef:0.9"})
      device_compression_matches_host(spec, transport);
}

TEST(NcclDeviceBridge, AnAverageIsCodedOnTheDeviceToo) {
  for (const char* spec : {"q8,ef", "topk:0.01:sampled,q8,huffman,ef:0.9"})
    device_compression_matches_host(spec, "shm", {}, -1, ncclAvg);
}

// The device residuals follow the host store's rules: with DEEPCOMM_COMPRESS_EF_BYTES room for one
// buffer's residual, the two buffers drop each other's (each call starts from zero); with room for
// none, every call gets a residual of its own; a change of DEEPCOMM_COMPRESS_RESET drops them all.
// Each gives the host calls' bits (keeping the residuals, as before, does not).
TEST(NcclDeviceBridge, TheDeviceResidualsFollowTheHostStoresCapAndReset) {
  const std::string one_residual = std::to_string(30011 * sizeof(float) + 64);
  device_compression_matches_host("q8,ef", "shm", {{"DEEPCOMM_COMPRESS_EF_BYTES", one_residual}});
  device_compression_matches_host("topk:0.01:sampled,q8,huffman,ef:0.9", "shm",
                                  {{"DEEPCOMM_COMPRESS_EF_BYTES", "4096"}});
  device_compression_matches_host("q8,ef", "tcp", {}, 1);
}

// Rank 1's device codec fails (how 1: its message's header checksum is flipped; how 2: its encode
// reports 0 bytes): every rank's stream passes the operation (released, not blocked), and each
// communicator shows `want` (rank 1's: `want_on_1`) naming rank 1 and `words`, within 2 s of the
// stream passing. The ranks wait for each other (a file each) before aborting: a peer's abort is
// an error too.
void a_failed_codec_on_rank_1(int how, ncclResult_t want, ncclResult_t want_on_1, const char* words) {
  char folder[] = "/tmp/dc-corrupt-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string marks = folder;
  const auto body = [=](int rank, int n, ncclComm_t comm) {
    Emulated device;
    if (!device.load(TEST_STREAM_PLUGIN)) return complain(rank, std::string("test plugin: ") + dlerror());
    device.corrupt_encodes(rank == 1 ? how : 0);
    const size_t count = 20000;
    void *in = nullptr, *out = nullptr;
    if (ncclMemAlloc(&in, count * 4) != ncclSuccess || ncclMemAlloc(&out, count * 4) != ncclSuccess)
      return complain(rank, ncclGetLastError(comm));
    std::vector<float> x(count, 0.25f * float(rank + 1));
    std::memcpy(in, x.data(), count * 4);
    const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x79});
    if (ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, stream) != ncclSuccess)
      return complain(rank, ncclGetLastError(comm));
    if (device.synchronize(reinterpret_cast<uint64_t>(stream), 10000) != 1)
      return complain(rank, "the stream stayed blocked");
    const auto passed = Clock::now();
    ncclResult_t async = ncclSuccess;
    while (async == ncclSuccess && Clock::now() - passed < std::chrono::seconds(2)) {
      if (ncclCommGetAsyncError(comm, &async) != ncclSuccess) return complain(rank, "ncclCommGetAsyncError");
      if (async == ncclSuccess) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    int failures = 0;
    if (async != (rank == 1 ? want_on_1 : want))
      failures += complain(rank, "asynchronous error " + std::to_string(async));
    const std::string why = ncclGetLastError(comm);
    if (why.find("rank 1") == std::string::npos || why.find(words) == std::string::npos)
      failures += complain(rank, "the error does not name rank 1 and '" + std::string(words) + "': " + why);
    std::fclose(std::fopen((marks + "/" + std::to_string(rank)).c_str(), "w"));
    const auto all_checked = [&] {
      for (int r = 0; r < n; ++r)
        if (!std::filesystem::exists(marks + "/" + std::to_string(r))) return false;
      return true;
    };
    for (int waited_ms = 0; !all_checked() && waited_ms < 10000; waited_ms += 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ncclMemFree(in);
    ncclMemFree(out);
    return failures + (ncclCommAbort(comm) == ncclSuccess ? 0 : complain(rank, "abort"));
  };
  EXPECT_EQ(dctest::run_nccl_ranks(3,
                                   {{"DEEPCOMM_DEVICE_PLUGIN", TEST_STREAM_PLUGIN},
                                    {"DEEPCOMM_COMPRESS", "q8,huffman"},
                                    {"DEEPCOMM_COMPRESS_MIN_BYTES", "0"}},
                                   body),
            "")
      << "how " << how;
  std::filesystem::remove_all(marks);
}

TEST(NcclDeviceBridge, ACorruptMessageFromAPeerIsARemoteErrorAndTheStreamGoesOn) {
  a_failed_codec_on_rank_1(1, ncclRemoteError, ncclRemoteError, "checksum");
}

TEST(NcclDeviceBridge, AFailedEncodeFailsEveryRankAndTheStreamsGoOn) {
  a_failed_codec_on_rank_1(2, ncclRemoteError, ncclInternalError, "device encode");
}

TEST(NcclDeviceBridge, AKilledPeerReleasesTheStreamWithAnAsyncError) {
  const int victim = 2;
  EXPECT_EQ(run_ranks(3,
                      [](int rank, int, ncclComm_t comm) {
                        if (rank == victim) raise(SIGKILL);
                        Emulated device;
                        if (!device.load(TEST_STREAM_PLUGIN))
                          return complain(rank, std::string("test plugin: ") + dlerror());
                        const size_t count = 1 << 16;
                        void *in = nullptr, *out = nullptr;
                        if (ncclMemAlloc(&in, count * 4) != ncclSuccess || ncclMemAlloc(&out, count * 4) != ncclSuccess)
                          return complain(rank, ncclGetLastError(comm));
                        const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x77});
                        const auto start = Clock::now();
                        if (ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, stream) != ncclSuccess)
                          return complain(rank, ncclGetLastError(comm));
                        const ncclResult_t r = wait_for_stream(device, stream, comm, 10000);
                        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
                        if (r == ncclSuccess || (r == ncclSystemError && ms >= 10000))
                          return complain(rank, "no asynchronous error after " + std::to_string(ms) + " ms");
                        if (ms > 2000)
                          return complain(rank, "the error showed only after " + std::to_string(ms) + " ms");
                        if (!device.idle(reinterpret_cast<uint64_t>(stream)) &&
                            wait_for_stream(device, stream, comm, 5000) == ncclSystemError)
                          return complain(rank, "the stream stayed blocked");
                        return ncclCommAbort(comm) == ncclSuccess ? 0 : complain(rank, "abort");
                      },
                      {victim}),
            "");
}

}  // namespace
